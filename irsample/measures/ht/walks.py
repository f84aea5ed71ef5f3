"""Numba walks behind the design-based (Horvitz-Thompson) estimators of ``ht/estimator.py``.

Every ranked position carries its document's first-order inclusion probability ``pi`` (0: not
sampled, i.e. not judged), its cell (stratum of the topic) and a pair factor ``g`` such that two
distinct documents d, e of one cell are both sampled with probability
pi_de = pi_d pi_e g_d g_e (documents of different cells: pi_d pi_e). For a simple random sample
of n of N documents, g^2 = (n - 1) N / (n (N - 1)) exactly; see ``ht/inclusion.py``.

The walks are O(n x strata) per ranking: the pairwise sums of average precision's quadratic form
are running sums by cell, never loops over pairs.

Every walk takes the 1-based rank of each position (``pos_rank``) instead of reading it from the
position's index, so it can walk the sampled positions alone (:func:`sampled_positions`: a
uniform 5% sample of TREC-8's depth-100 pool sits at 0.14 million of its 6.3 million ranked
positions, a 30% sample at 0.84 million): the positions it skips have pi = 0 and add nothing,
so the sums are the same, term by term and in the same order.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..._threads import parallel_when_large

#: the cut-off of a measure without one (``weighted_prefix``, ``ap_walk``): past every rank
NO_CUTOFF = np.iinfo(np.int64).max


@parallel_when_large
def ap_walk(offsets, pos_rank, seg_topic, pos_rel, pos_pi, pos_cell, pos_g, n_cells, cutoff):
    """Per position of a sampled relevant document d at rank k <= ``cutoff``:

    - ``prec[i]`` = (1/k) (1 + sum over sampled relevant j above d of 1/pi_{j|d}), with
      pi_{j|d} = pi_jd / pi_d (the estimated precision at d given that d is sampled: unbiased
      for prec(d) = (1/k) * (relevant documents at or above k));
    - ``influence[i]`` = prec[i] + sum over sampled relevant e below d (rank m <= cutoff) of
      1 / (m pi_{e|d}): d's first-order (Hoeffding) influence on the numerator
      N = sum_k rel_k/k + sum_{j<k} rel_j rel_k / k of AP.

    The numerator's Horvitz-Thompson estimate is N^ = sum_d prec[d] / pi_d (returned per
    segment). 0 at every other position.
    """
    n_pos = pos_rel.shape[0]
    prec = np.zeros(n_pos)
    influence = np.zeros(n_pos)
    num = np.zeros(offsets.shape[0] - 1)
    for s in prange(offsets.shape[0] - 1):
        a = offsets[s]
        n = within(offsets, pos_rank, s, cutoff)
        _sweep(a, n, True, pos_rank, pos_rel, pos_pi, pos_cell, pos_g, n_cells, prec)  # above
        acc = 0.0
        for i in range(n):
            p = pos_pi[a + i]
            if p > 0.0 and pos_rel[a + i] != 0:
                prec[a + i] = (1.0 + prec[a + i]) / pos_rank[a + i]
                acc += prec[a + i] / p
        num[s] = acc
        _sweep(a, n, False, pos_rank, pos_rel, pos_pi, pos_cell, pos_g, n_cells, influence)
        for i in range(n):
            influence[a + i] += prec[a + i]
    return num, prec, influence


@njit(cache=True, nogil=True)
def within(offsets, pos_rank, s, cutoff):
    """How many positions of segment ``s`` are ranked at most ``cutoff`` (ranks ascend)."""
    a = offsets[s]
    n = offsets[s + 1] - a
    if n == 0 or pos_rank[a + n - 1] <= cutoff:
        return n
    k = 0
    while pos_rank[a + k] <= cutoff:
        k += 1
    return k


@njit(cache=True, nogil=True)
def _sweep(a, n, downward, pos_rank, pos_rel, pos_pi, pos_cell, pos_g, n_cells, out):
    """One pass over the sampled relevant positions a .. a+n-1 of a ranking, down the ranking
    (``downward``) or up it: at each such document d, ``out`` gets the sum over the documents e
    passed so far of v_e / pi_{e|d}, then d's own v_d joins them (v = 1 going down, 1/rank going
    up). pi_{e|d} = pi_e g_e g_d in d's cell, pi_e elsewhere; certain documents (pi = 1) are
    kept in a cell of their own (index ``n_cells``, g = 1), so a cell may mix both."""
    plain = np.zeros(n_cells + 1)  # sum of v/pi by cell
    scaled = np.zeros(n_cells + 1)  # sum of v/(pi g) by cell
    total = 0.0
    for step in range(n):
        i = step if downward else n - 1 - step
        p = pos_pi[a + i]
        if p <= 0.0 or pos_rel[a + i] == 0:
            continue
        c = pos_cell[a + i] if p < 1.0 else n_cells
        g = pos_g[a + i] if p < 1.0 else 1.0
        passed = total - plain[c]
        if g > 0.0:
            passed += scaled[c] / g
        out[a + i] = passed
        v = 1.0 / p if downward else 1.0 / (p * pos_rank[a + i])
        total += v
        plain[c] += v
        if g > 0.0:
            scaled[c] += v / g


@parallel_when_large
def cell_sums(offsets, pos_value, pos_pi, pos_cell, pos_tdi, tdi_other, n_cells):
    """Per segment and cell, over the sampled positions with 0 < pi < 1 (certain documents add no
    variance) with x = value / pi:
    sum x, sum (1 - pi) x, sum (1 - pi) x^2 and sum (1 - pi) x y, y = tdi_other[tdi] / pi (the
    document's value in a second, topic-level total such as R)."""
    n_seg = offsets.shape[0] - 1
    sx = np.zeros((n_seg, n_cells))
    swx = np.zeros((n_seg, n_cells))
    swxx = np.zeros((n_seg, n_cells))
    swxy = np.zeros((n_seg, n_cells))
    for s in prange(n_seg):
        for i in range(offsets[s], offsets[s + 1]):
            p = pos_pi[i]
            v = pos_value[i]
            if p <= 0.0 or p >= 1.0 or v == 0.0:
                continue
            c = pos_cell[i]
            x = v / p
            w = 1.0 - p
            sx[s, c] += x
            swx[s, c] += w * x
            swxx[s, c] += w * x * x
            swxy[s, c] += w * x * tdi_other[pos_tdi[i]] / p
    return sx, swx, swxx, swxy


@parallel_when_large
def weighted_prefix(offsets, pos_rank, pos_value, pos_pi, weight_of_rank, cutoff):
    """Per segment: sum over sampled positions at rank r <= cutoff of
    value * weight_of_rank[r - 1] / pi (a linear Horvitz-Thompson total), and the per-position
    terms value * weight_of_rank[r - 1] (0 beyond the cut-off or where not sampled)."""
    n_seg = offsets.shape[0] - 1
    total = np.zeros(n_seg)
    term = np.zeros(pos_value.shape[0])
    last = min(cutoff, weight_of_rank.shape[0])
    for s in prange(n_seg):
        a = offsets[s]
        n = within(offsets, pos_rank, s, last)
        acc = 0.0
        for i in range(n):
            p = pos_pi[a + i]
            if p <= 0.0:
                continue
            t = pos_value[a + i] * weight_of_rank[pos_rank[a + i] - 1]
            term[a + i] = t
            acc += t / p
        total[s] = acc
    return total, term


@njit(cache=True, nogil=True)
def gather_design(index, pi, cell, g):
    """``(pi[index], cell[index], g[index])`` in one pass over the ranked positions."""
    n = index.shape[0]
    out_pi = np.empty(n)
    out_cell = np.empty(n, dtype=np.int64)
    out_g = np.empty(n)
    for i in range(n):
        d = index[i]
        out_pi[i] = pi[d]
        out_cell[i] = cell[d]
        out_g[i] = g[d]
    return out_pi, out_cell, out_g


@parallel_when_large
def sampled_positions(offsets, pos_tdi, local):
    """The ranked positions whose document is sampled (``local[tdi]`` >= 0: its index among
    the sampled documents), segment by segment in rank order: ``(offsets, index, rank, doc)``
    with ``index`` the position among all ranked ones, ``rank`` its 1-based rank and ``doc``
    its document's ``local``. One lookup per position (a mask), then the compaction reads the
    mask."""
    n_seg = offsets.shape[0] - 1
    keep = np.empty(pos_tdi.shape[0], dtype=np.uint8)
    counts = np.zeros(n_seg + 1, dtype=np.int64)
    for s in prange(n_seg):
        n = 0
        for i in range(offsets[s], offsets[s + 1]):
            k = local[pos_tdi[i]] >= 0
            keep[i] = k
            n += k
        counts[s + 1] = n
    out_offsets = np.cumsum(counts)
    index = np.empty(out_offsets[-1], dtype=np.int64)
    rank = np.empty(out_offsets[-1], dtype=np.int64)
    doc = np.empty(out_offsets[-1], dtype=np.int32)
    for s in prange(n_seg):
        w = out_offsets[s]
        a = offsets[s]
        for i in range(a, offsets[s + 1]):
            if keep[i]:
                index[w] = i
                rank[w] = i - a + 1
                doc[w] = local[pos_tdi[i]]
                w += 1
    return out_offsets, index, rank, doc
