"""Numba passes of the anticipated variance (``ht/anticipated.py``) over the ranked positions of
the frame's documents: AP's numerator weights along each ranking, the per segment and stratum
sums of the linearised variable's moments, and the per segment sums over a run's reach that the
reliability rule's expected sample reads (``ht/expected.py``); each one pass in position order:
the sums ``np.bincount`` would take, in its order."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def ap_numerator_weights(offsets, rank, p):
    """Per position at rank k: (1 + sum_{j before} p_j) / k + sum_{i after} p_i / rank_i, the
    sums within the position's segment (``anticipated_terms.ap_weights``)."""
    out = np.empty(p.shape[0])
    for s in range(offsets.shape[0] - 1):
        total = 0.0
        for i in range(offsets[s], offsets[s + 1]):
            total += p[i] / rank[i]
        before = 0.0
        running = 0.0
        for i in range(offsets[s], offsets[s + 1]):
            running += p[i] / rank[i]
            out[i] = (1.0 + before) / rank[i] + (total - running)
            before += p[i]
    return out


@njit(cache=True, nogil=True)
def segment_stratum_moments(seg, doc, weight, doc_stratum, m_g, m_gg, m_gs, m_s, n_seg,
                            n_cells):
    """(5, segments, strata): over the positions of nonzero ``weight`` w of document d, the sums
    of w m_g, w^2 m_gg, w m_gs, (w m_g)^2 and w m_g m_s by the position's segment and d's
    stratum (``anticipated.ratio_variance``: a1, a2, ab, a11, a1b1)."""
    out = np.zeros((5, n_seg, n_cells))
    for i in range(seg.shape[0]):
        w = weight[i]
        if w == 0.0:
            continue
        d = doc[i]
        s = seg[i]
        c = doc_stratum[d]
        wg = w * m_g[d]
        out[0, s, c] += wg
        out[1, s, c] += w * w * m_gg[d]
        out[2, s, c] += w * m_gs[d]
        out[3, s, c] += wg * wg
        out[4, s, c] += wg * m_s[d]
    return out


@njit(cache=True, nogil=True)
def segment_reach_total(seg, doc, rank, cutoff, per_doc, n_seg):
    """Per segment: ``per_doc`` of the positions' documents summed over the positions at rank
    ``cutoff`` or better (``expected._reach_total``)."""
    out = np.zeros(n_seg)
    for i in range(seg.shape[0]):
        if rank[i] <= cutoff:
            out[seg[i]] += per_doc[doc[i]]
    return out


@njit(cache=True, nogil=True)
def segment_chance_sums(seg, doc, rank, cutoff, certain, doc_stratum, fitted, slope, x, n_seg,
                        n_strata):
    """Over the positions at rank ``cutoff`` or better whose document is not ``certain``
    (judged with certainty: a constant), by the position's segment: the fitted relevance
    (segments, strata: by the document's stratum), the model's slope (segments) and slope x
    features (segments, features), d the position's document: what ``expected.expected_sample``
    sums, one pass instead of a gather and a ``np.bincount`` for each."""
    relevant = np.zeros((n_seg, n_strata))
    topic_gradient = np.zeros(n_seg)
    gradient = np.zeros((n_seg, x.shape[1]))
    for i in range(seg.shape[0]):
        d = doc[i]
        if rank[i] > cutoff or certain[d]:
            continue
        s = seg[i]
        relevant[s, doc_stratum[d]] += fitted[d]
        w = slope[d]
        topic_gradient[s] += w
        for j in range(x.shape[1]):
            gradient[s, j] += w * x[d, j]
    return relevant, topic_gradient, gradient
