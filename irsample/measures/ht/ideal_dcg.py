"""The ideal DCG of estimated counts per grade, and the donor weights of ht(nDCG)'s imputation
(``ht/estimator.py``, module docstring: nDCG, "Sparse topics")."""

from __future__ import annotations

import numpy as np

from ...model import JUDGED
from ..trec_eval.gain_tables import gain_tables
from .inclusion import HTDesign, topic_total, total_variance


def single_hit_weights(ctx, d: HTDesign, relevant: np.ndarray) -> np.ndarray:
    """Per topic: 1 - pi_d when the topic's sample holds exactly one ``relevant`` document d,
    else 0: the donors that impute a topic whose sample holds none (module docstring,
    "Sparse topics")."""
    docs = d.sampled_tdi  # only sampled documents can hit: the same terms, in the same order
    topic = ctx.collection.tdi_topic[docs]
    hit = relevant[docs]
    k = np.bincount(topic, weights=hit.astype(np.float64), minlength=ctx.n_topics)
    miss = np.bincount(topic, weights=np.where(hit, 1.0 - d.tdi_pi[docs], 0.0),
                       minlength=ctx.n_topics)
    outside = d.outside[:, :, 1:].sum(axis=2)  # sampled relevant documents no run retrieved
    k = k + outside.sum(axis=1)
    miss = miss + (outside * (1.0 - d.outside_pi)).sum(axis=1)
    return np.where(k == 1, np.maximum(miss, 0.0), 0.0)


def grade_counts(ctx, d: HTDesign):
    """Per topic and grade v >= 1: the Horvitz-Thompson count C^_v of frame documents of grade
    v, its design variance v(C^_v), and the gain of each grade (topic x grade arrays)."""
    j = ctx.judgments
    gain_of_level = gain_tables(ctx, ())[0]  # (T, levels)
    n_grades = j.stratum_grades.shape[2]
    counts = np.zeros((ctx.n_topics, n_grades))
    count_var = np.zeros((ctx.n_topics, n_grades))
    sampled = (j.state == JUDGED) & (j.grade > 0)
    for v in range(1, n_grades):
        grade_value = np.zeros((ctx.n_topics, n_grades))
        grade_value[:, v] = 1.0
        total = topic_total(ctx, d, (sampled & (j.grade == v)).astype(np.float64), grade_value)
        counts[:, v] = total.value
        count_var[:, v] = total_variance(d, total)
    gains = np.zeros((ctx.n_topics, n_grades))
    width = min(gain_of_level.shape[1], n_grades)
    gains[:, :width] = gain_of_level[:, :width]
    return counts, count_var, gains


def ideal_linearisation(ctx, d: HTDesign, cutoff: int):
    """ht(nDCG)'s denominator before its concavity correction: :func:`grade_counts` (counts,
    their variances, gains), the ideal DCG of the counts and its slopes per topic and grade
    (:func:`ideal_and_slopes`), and per tdi the slope of the document's grade (0 unless judged
    with a positive grade)."""
    j = ctx.judgments
    counts, count_var, gains = grade_counts(ctx, d)
    ideal, slope = ideal_and_slopes(counts, gains, cutoff)
    sampled = (j.state == JUDGED) & (j.grade > 0)
    grade = np.clip(j.grade, 0, counts.shape[1] - 1)
    tdi_slope = np.where(sampled, slope[ctx.collection.tdi_topic, grade], 0.0)
    return counts, count_var, gains, ideal, slope, tdi_slope


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
