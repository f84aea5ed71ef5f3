"""The ideal DCG of estimated counts per grade, its linearisation and second-order bias, and the
donor weights of ht(nDCG)'s imputation (``ht/estimator.py``, module docstring: nDCG, "Sparse
topics")."""

from __future__ import annotations

import numpy as np

from ...model import JUDGED
from ..trec_eval.gain_tables import gain_tables
from .inclusion import HTDesign, topic_total, total_variance


def hits_and_donors(ctx, d: HTDesign, relevant: np.ndarray):
    """Per topic: the ``relevant`` documents its sample holds, k, and the donor weight, 1 - pi_d
    when k is 1 (the document d), else 0: the donors that impute a topic whose sample holds
    none (module docstring, "Sparse topics")."""
    docs = d.sampled_tdi  # only sampled documents can hit: the same terms, in the same order
    topic = ctx.collection.tdi_topic[docs]
    hit = relevant[docs]
    k = np.bincount(topic, weights=hit.astype(np.float64), minlength=ctx.n_topics)
    miss = np.bincount(topic, weights=np.where(hit, 1.0 - d.tdi_pi[docs], 0.0),
                       minlength=ctx.n_topics)
    outside = d.outside[:, :, 1:].sum(axis=2)  # sampled relevant documents no run retrieved
    k = k + outside.sum(axis=1)
    miss = miss + (outside * (1.0 - d.outside_pi)).sum(axis=1)
    return k, np.where(k == 1, np.maximum(miss, 0.0), 0.0)


def grade_gains(ctx) -> np.ndarray:
    """(topics, grades): the gain of each grade of the judgments (0 past the gain table)."""
    gain_of_level = gain_tables(ctx, ())[0]  # (T, levels)
    n_grades = ctx.judgments.stratum_grades.shape[2]
    gains = np.zeros((ctx.n_topics, n_grades))
    width = min(gain_of_level.shape[1], n_grades)
    gains[:, :width] = gain_of_level[:, :width]
    return gains


def grade_counts(ctx, d: HTDesign):
    """Per topic and grade v >= 1: the Horvitz-Thompson count C^_v of frame documents of grade
    v, and the gain of each grade (topic x grade arrays, :func:`grade_gains`)."""
    j = ctx.judgments
    n_grades = j.stratum_grades.shape[2]
    counts = np.zeros((ctx.n_topics, n_grades))
    sampled = (j.state == JUDGED) & (j.grade > 0)
    for v in range(1, n_grades):
        grade_value = np.zeros((ctx.n_topics, n_grades))
        grade_value[:, v] = 1.0
        total = topic_total(ctx, d, (sampled & (j.grade == v)).astype(np.float64), grade_value)
        counts[:, v] = total.value
    return counts, grade_gains(ctx)


def ideal_linearisation(ctx, d: HTDesign, cutoff: int):
    """ht(nDCG)'s denominator before its concavity correction (:func:`concavity_bias`):
    :func:`grade_counts` (counts, gains), the ideal DCG of the counts and its slopes per topic
    and grade (:func:`ideal_and_slopes`), and per tdi the slope of the document's grade (0 unless
    judged with a positive grade)."""
    j = ctx.judgments
    counts, gains = grade_counts(ctx, d)
    ideal, slope = ideal_and_slopes(counts, gains, cutoff)
    sampled = (j.state == JUDGED) & (j.grade > 0)
    grade = np.clip(j.grade, 0, counts.shape[1] - 1)
    tdi_slope = np.where(sampled, slope[ctx.collection.tdi_topic, grade], 0.0)
    return counts, gains, ideal, slope, tdi_slope


def concavity_bias(ctx, d: HTDesign, gains: np.ndarray, cutoff: int) -> np.ndarray:
    """Per topic: the second-order bias of the ideal DCG of the estimated counts,
    E[IDCG(C^)] - IDCG(C) ~ (1/2) sum_k (g_(k) - g_(k+1)) D''(S_k) v(S^_k).

    Why this form: with the levels in decreasing order of gain g_(1) >= g_(2) >= ... (those of
    positive gain; g_(K+1) = 0) and S_k the number of frame documents of the k highest levels,
    the ideal ranking puts S_1 documents first, then S_2 - S_1, ..., so
    IDCG = sum_k g_(k) (D(S_k) - D(S_{k-1})) = sum_k (g_(k) - g_(k+1)) D(S_k), D the cumulative
    discount (:func:`_cumulative_discount`). Each term depends on one S_k alone and D is
    concave, so a second-order Taylor expansion (Cochran, *Sampling Techniques* §6.8; Särndal,
    Swensson & Wretman §5.5) gives the bias above, with D''(S) the second difference
    D(S + 1) - 2 D(S) + D(S - 1) at the estimate (0 below one document) and v(S^_k) the design
    variance of the HT count of the k highest levels, which holds the covariances of the grade
    counts. (Differences of IDCG in one grade count at a time miss those covariances; taken
    around an already corrected IDCG they compound.) With binary grades it is the one term
    (1/2) D''(R^) v(R^)."""
    j = ctx.judgments
    step, position = level_steps(gains)
    sampled = (j.state == JUDGED) & (j.grade > 0)
    grade = np.clip(j.grade, 0, gains.shape[1] - 1)
    topic = ctx.collection.tdi_topic
    bias = np.zeros(gains.shape[0])
    for k in range(gains.shape[1]):
        if not (step[:, k] > 0).any():
            continue
        member = (position <= k) & (gains > 0)  # (T, G): the k + 1 highest levels
        total = topic_total(ctx, d, (sampled & member[topic, grade]).astype(np.float64),
                            member.astype(np.float64))
        bias += 0.5 * step[:, k] * concavity_curve(total.value, cutoff) * total_variance(d, total)
    return bias


def level_steps(gains: np.ndarray):
    """Per topic (rows of ``gains``, topics x grades), the levels in decreasing order of gain
    (those of positive gain; g_(K+1) = 0): ``step[t, k]`` = g_(k) - g_(k+1) and
    ``position[t, v]`` the place of level v in that order (as :func:`ideal_dcg` ranks them)."""
    n_topics, n_grades = gains.shape
    rows = np.arange(n_topics)[:, None]
    order = np.argsort(-gains, axis=1, kind="stable")
    ranked = np.maximum(np.take_along_axis(gains, order, axis=1), 0.0)
    step = ranked - np.concatenate([ranked[:, 1:], np.zeros((n_topics, 1))], axis=1)
    position = np.empty_like(order)
    position[rows, order] = np.arange(n_grades)
    return step, position


def concavity_curve(s: np.ndarray, cutoff: int) -> np.ndarray:
    """D''(S) as :func:`concavity_bias` takes it: the second difference D(S + 1) - 2 D(S) +
    D(S - 1) of the cumulative discount at S, 0 below one document."""
    curve = (_cumulative_discount(s + 1.0, cutoff) - 2.0 * _cumulative_discount(s, cutoff)
             + _cumulative_discount(np.maximum(s - 1.0, 0.0), cutoff))
    return np.where(s >= 1.0, curve, 0.0)


def _cumulative_discount(x: np.ndarray, cutoff: int) -> np.ndarray:
    """sum_{i <= x} 1/log2(i+1) for real x >= 0 (linear between integers), x capped at cutoff."""
    x = np.minimum(x, cutoff)
    whole = np.floor(x).astype(np.int64)
    top = int(whole.max(initial=0)) + 2
    discounts = 1.0 / np.log2(np.arange(2, top + 2, dtype=np.float64))
    table = np.concatenate([[0.0], np.cumsum(discounts)])
    return table[whole] + (x - whole) * (table[whole + 1] - table[whole])


def ideal_and_slopes(counts: np.ndarray, gains: np.ndarray, cutoff: int):
    """The ideal DCG per topic of ``counts`` (:func:`ideal_dcg`) and its linearisation:
    ``slope[t, v]``, the change of the ideal DCG when topic t has one more document of grade v
    (v >= 1; 0 for grade 0)."""
    ideal = ideal_dcg(counts, gains, cutoff)
    slope = np.zeros_like(counts)
    for v in range(1, counts.shape[1]):
        bumped = counts.copy()
        bumped[:, v] += 1.0
        slope[:, v] = ideal_dcg(bumped, gains, cutoff) - ideal
    return ideal, slope


def ideal_dcg(counts: np.ndarray, gains: np.ndarray, cutoff: int) -> np.ndarray:
    """Ideal DCG per topic of ``counts[t, v]`` documents of each level, highest gain first."""
    order = np.argsort(-gains, axis=1, kind="stable")
    start = np.zeros(counts.shape[0])
    total = np.zeros(counts.shape[0])
    rows = np.arange(counts.shape[0])
    for col in range(counts.shape[1]):
        v = order[:, col]
        g = gains[rows, v]
        c = np.where(g > 0, counts[rows, v], 0.0)
        end = start + c
        total += g * (_cumulative_discount(end, cutoff) - _cumulative_discount(start, cutoff))
        start = end
    return total
