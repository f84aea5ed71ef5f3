r"""The terms of a ratio's anticipated variance, for one run and for the difference of two.

:func:`anticipated_terms` gives, for ht(AP) and ht(nDCG) on a stratified simple random sample,
what their anticipated variance (``ht/anticipated.py``) is built from: per frame position the
numerator weight a, the gain and slope tables by grade, the model's centre theta_m per segment
and denominator Y per segment. The estimate (``estimator.py``) and the differences of runs
(``pairs.py``) read them from here, so that both linearise the same variable.

The difference of runs r and s on a topic (:func:`anticipated_pair_variance`) has the
linearised variable z_d = ((a_rd - a_sd) g(x_d) - delta b(x_d)) / Y, delta = theta_r - theta_s
the difference of the model's centres, a_rd = 0 where run r does not rank d within the cut-off
(the same Y: the denominator is the topic's). Its anticipated variance is the cell formula of
``ht/anticipated.py`` (Cochran eq. 5.6 with each unjudged document's grade drawn from the
relevance model) for this z: the run-by-run moments of ``RatioMoments`` enter as differences
(sum (a_r - a_s) E g, sum (a_r - a_s) E[g b], sum (a_r - a_s) E g E b) and the squares as
sum a_r^2 E g^2 + sum a_s^2 E g^2 - 2 sum a_r a_s E g^2 (and likewise for (a E g)^2): the cross
sums over each cell's documents are one matrix product per topic and cell.

Why: the sample's own variance of a difference (the stratified jackknife for AP, ``pairs.py``)
is 0 on a topic whose open cells show no sampled relevant document, though the runs rank
unjudged documents differently there. On CACM's two-strata samples from 74% of the pool (ranks
1-20 judged whole, the rest sampled) the twins of ``irsample simulate comparisons`` were
rejected 0.11-0.25 of the time at 0.05 (40-100 draws); at 74% and 80%, 81% and 56% of the twin
pairs had such a topic, and those were rejected 0.30 and 0.20 of the time, the others 0.000 and
0.057 (REPRODUCTION.md, "compare at high judged shares"). The model gives every unjudged
document its probability of relevance, as it does for the runs' means; ``pairs.py`` takes its
variance on those topics alone.
"""

from __future__ import annotations

import numpy as np

from ..context import safe_divide
from ..trec_eval.average_precision import AP
from ..trec_eval.gain import NDCG
from ..trec_eval.precision import P
from .anticipated import (
    frame_positions,
    grade_probabilities,
    open_moment,
    rank_weights,
    ratio_moments,
    ratio_probabilities,
    relevance_gains,
)
from .frame_sums import ap_numerator_weights
from .ideal_dcg import grade_gains, ideal_and_slopes
from .inclusion import HTDesign
from .walks import NO_CUTOFF


def anticipated_terms(ctx, d: HTDesign, m, probs=None):
    """``(probs, weight, gain, slope, theta_m, y)`` of ht(``m``)'s anticipated variance, ``m``
    AP, nDCG (module docstring) or P@k (a total: slope 0, theta_m 0, y 1), under the relevance
    model's grade probabilities ``probs`` (default: ht's, ``anticipated.ratio_probabilities``
    for the ratios, ``grade_probabilities`` for P@k); None where that variance does not apply
    (not a stratified simple random sample, or, for the ratios, a top-up)."""
    if probs is None:
        probs = (grade_probabilities if isinstance(m, P) else ratio_probabilities)(ctx, d)
    if probs is None:
        return None
    if isinstance(m, P):
        gain = relevance_gains(ctx, probs)
        weight = rank_weights(ctx, np.full(m.k, 1.0 / m.k), m.k)
        zero = np.zeros(ctx.n_seg)
        return probs, weight, gain, np.zeros_like(gain), zero, zero + 1.0
    cutoff = NO_CUTOFF if m.k is None else m.k
    if isinstance(m, AP):
        gain = relevance_gains(ctx, probs)
        theta_m, r_m = model_ap(ctx, probs, ctx.rel_level, cutoff)
        return (probs, ap_weights(ctx, probs, ctx.rel_level, cutoff), gain, gain, theta_m,
                r_m[ctx.seg_topic])
    if isinstance(m, NDCG):
        longest = int(ctx.seg_len.max(initial=0))
        discount = 1.0 / np.log2(np.arange(2, longest + 2, dtype=np.float64))
        gains = grade_gains(ctx)
        weight = rank_weights(ctx, discount, cutoff)
        theta_m, ideal_m, slope_m = model_ndcg(ctx, probs, gains, weight, cutoff)
        return probs, weight, gains, slope_m, theta_m, ideal_m[ctx.seg_topic]
    return None


def anticipated_pair_variance(ctx, d: HTDesign, terms, first, second, where=None,
                              moments=None) -> np.ndarray:
    """(pairs, topics): the anticipated variance of run ``first[k]``'s ratio minus run
    ``second[k]``'s on each topic (module docstring), from ``terms`` =
    :func:`anticipated_terms` (and the runs' ``moments`` from them, ``RatioMoments``, when the
    estimate has them already); only where ``where`` (pairs, topics) holds when it is given (0
    elsewhere: a topic's cross sums are formed for its pairs that need them). Not floored (the
    caller scales it as the runs' variances are)."""
    probs, weight, gain, slope, theta, y = terms
    first, second = np.asarray(first), np.asarray(second)
    n_topics = ctx.n_topics
    where = np.ones((len(first), n_topics), bool) if where is None else np.asarray(where, bool)
    out = np.zeros((len(first), n_topics))
    if not where.any():
        return out
    mo = ratio_moments(ctx, d, probs, weight, gain, slope, y) if moments is None else moments
    fp = frame_positions(ctx)
    m_g, m_gg = open_moment(ctx, d, probs, gain), open_moment(ctx, d, probs, gain * gain)
    live = np.flatnonzero(weight != 0.0)  # the positions, topic by topic
    live = live[np.argsort(fp.seg[live] % n_topics, kind="stable")]
    bounds = np.searchsorted(fp.seg[live] % n_topics, np.arange(n_topics + 1))
    for t in np.flatnonzero(where.any(axis=0)):
        k = np.flatnonzero(where[:, t])
        a, b = first[k] * n_topics + t, second[k] * n_topics + t
        at = live[bounds[t]:bounds[t + 1]]
        x2, x11 = _cross_sums(fp, at, fp.seg[at] // n_topics, weight, m_g, m_gg, ctx.n_runs,
                              d.n_cells, first[k], second[k])
        delta = (theta[a] - theta[b])[:, None]
        a2 = mo.a2[a] + mo.a2[b] - 2.0 * x2
        a11 = mo.a11[a] + mo.a11[b] - 2.0 * x11
        ab, a1, a1b1 = (x[a] - x[b] for x in (mo.ab, mo.a1, mo.a1b1))
        second_moment = a2 - 2.0 * delta * ab + delta * delta * mo.s2[a]
        mean = a1 - delta * mo.s1[a]
        spread = second_moment - (a11 - 2.0 * delta * a1b1 + delta * delta * mo.s11[a])
        ss = np.maximum(second_moment - safe_divide(mean * mean + spread, mo.size[a]), 0.0)
        yy = y[a]
        out[k, t] = np.where(yy > 0, (mo.factor[a] * ss).sum(axis=1)
                             / np.where(yy > 0, yy * yy, 1.0), 0.0)
    return out


def _cross_sums(fp, at, run, weight, m_g, m_gg, n_runs, n_cells, first, second):
    """(pairs, cells) twice, over one topic's positions ``at`` (of the runs ``run``): sum
    a_rd a_sd E g(x_d)^2 and sum a_rd a_sd (E g(x_d))^2 over each cell's documents (one matrix
    product per cell)."""
    x2 = np.zeros((len(first), n_cells))
    x11 = np.zeros_like(x2)
    if len(at) == 0:
        return x2, x11
    docs, local = np.unique(fp.doc[at], return_inverse=True)
    w = np.zeros((n_runs, len(docs)))
    w[run, local] = weight[at]
    for c in np.unique(fp.stratum[docs]):
        inside = fp.stratum[docs] == c
        wc, cols = w[:, inside], docs[inside]
        x2[:, c] = ((wc * m_gg[cols]) @ wc.T)[first, second]
        g = wc * m_g[cols]
        x11[:, c] = (g @ g.T)[first, second]
    return x2, x11


def model_ap(ctx, probs: np.ndarray, rel_level: int, cutoff: int):
    """(theta per segment, R per topic): AP and R of the population the model anticipates,
    E[N] / E[R] with E[N] = sum_k p_k (1 + sum_{j<k} p_j) / k over the ranking's top
    ``cutoff`` (documents independent; judged ones at their grade) and E[R] = sum p_d over the
    frame: the point the anticipated variance is linearised at (``anticipated.py``, "Centre")."""
    fp = frame_positions(ctx)
    p_doc = probs[:, rel_level:].sum(axis=1)
    p = np.where(fp.rank <= cutoff, p_doc[fp.doc], 0.0)
    total = np.cumsum(p)
    start = np.concatenate([[0.0], total])[fp.offsets[:-1]]
    before = total - p - np.repeat(start, np.diff(fp.offsets))
    num = np.bincount(fp.seg, weights=p * (1.0 + before) / fp.rank, minlength=ctx.n_seg)
    r = np.bincount(fp.topic, weights=p_doc, minlength=ctx.n_topics)
    return safe_divide(num, r[ctx.seg_topic]), r


def model_ndcg(ctx, probs: np.ndarray, gains: np.ndarray, weight: np.ndarray, cutoff: int):
    """(theta per segment, ideal DCG per topic, its slopes (T, G)): nDCG of the population the
    model anticipates, E[DCG] / IDCG(E[counts]), ``weight`` the discount per position of
    :func:`frame_positions` (0 beyond the cut-off), ``gains`` (T, G) by grade."""
    fp = frame_positions(ctx)
    m_g = (probs * gains[fp.topic]).sum(axis=1)
    dcg = np.bincount(fp.seg, weights=weight * m_g[fp.doc], minlength=ctx.n_seg)
    counts = np.stack([np.bincount(fp.topic, weights=probs[:, g], minlength=ctx.n_topics)
                       for g in range(probs.shape[1])], axis=1)
    ideal, slope = ideal_and_slopes(counts, gains, cutoff)
    return safe_divide(dcg, ideal[ctx.seg_topic]), ideal, slope


def ap_weights(ctx, probs: np.ndarray, rel_level: int, cutoff: int) -> np.ndarray:
    """Per position of :func:`frame_positions`: AP's numerator weight a_d at rank k <= K
    (module docstring), with p the documents' probability of grade >= ``rel_level``; 0 beyond
    the cut-off."""
    fp = frame_positions(ctx)
    inside = fp.rank <= cutoff
    p = np.where(inside, probs[:, rel_level:].sum(axis=1)[fp.doc], 0.0)
    weights = ap_numerator_weights(fp.offsets, fp.rank.astype(np.float64), p)
    return np.where(inside, weights, 0.0)
