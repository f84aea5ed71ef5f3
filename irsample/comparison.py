"""Comparisons of runs evaluated on one judged sample: all pairs, with intervals and decisions.

For a design-based measure ``ht(M)``, :func:`compare_collection` estimates for every pair of runs
the difference of their means over topics with its own variance (shared sampled documents:
:mod:`irsample.measures.ht.pairs`), an interval at level ``ci`` (normal; a t on
Satterthwaite's degrees of freedom of its jackknife for ht(AP); with ``variance="topics"`` a t
on k - 1, k the topics not imputed, or the design's where its variance, the floor, is taken),
a two-sided p-value, the p-value adjusted over all pairs
(Holm or Benjamini-Hochberg, :mod:`irsample.stats.multiple`) and whether the pair is decided
(adjusted p < 1 - ci), and the status of the pair's interval: ``ok``, or ``unreliable`` with
the reason and the topic ids that cause it
(:func:`irsample.measures.pair_reliability.assess_pair`: either run's mean rests on too few
judged relevant documents or too many weak topics, or the difference's estimated bias exceeds
a share of its standard error).

For score intervals [B, T] (paper 004), :func:`interval_outcomes` compares every pair of runs
topic by topic with the paper's pessimistic rule
(:func:`~irsample.measures.incomplete.score_intervals.compare_intervals`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from .errors import MeasureError
from .evaluation import Evaluation
from .measures import Measure, parse
from .measures.context import EvalContext
from .measures.ht.measure import HT
from .measures.ht.pairs import pair_estimates
from .measures.incomplete.score_intervals import compare_intervals
from .measures.pair_reliability import assess_pair
from .measures.reliability import assess
from .model import Collection, Judgments
from .stats.intervals import ROUNDING, quantile
from .stats.multiple import adjust

COLUMNS = ["run_a", "run_b", "measure", "diff", "se", "df", "low", "high", "p", "p_adjusted",
           "decided", "status", "reason", "causes"]


def comparison_measure(measure: str | Measure) -> HT:
    """The ``ht(...)`` measure to compare with (a :class:`MeasureError` otherwise)."""
    if not isinstance(measure, (str, Measure)):
        raise MeasureError(f"compare takes one measure, not {measure!r}: for several, "
                           "compare_table(judgments, runs, [...]).pairs has every pair of each")
    found = [measure] if isinstance(measure, Measure) else parse(measure)
    if len(found) != 1 or not isinstance(found[0], HT):
        raise MeasureError(
            f"compare needs one design-based measure such as ht(AP), not {measure!r}")
    return found[0]


def compare_collection(
    collection: Collection, judgments: Judgments, measure: str | Measure = "ht(AP)", *,
    ci: float = 0.95, correction: str = "holm", variance: str = "design", rel_level: int = 1,
) -> pd.DataFrame:
    """One row per pair of runs (module docstring); columns :data:`COLUMNS`, then ``assume``
    (the design assumed for judgments without inclusion probabilities) when one was."""
    if not 0.0 < ci < 1.0:
        raise ValueError(f"ci must be in (0, 1), got {ci}")
    m = comparison_measure(measure)
    judgments.require_probabilities(m.name)
    ctx = EvalContext(collection, judgments, rel_level=rel_level)
    pe = pair_estimates(ctx, m.inner, variance=variance)
    se = np.sqrt(pe.variance)
    # t on the variance's degrees of freedom (k - 1 for the topics' spread, Satterthwaite's
    # for ht(AP)'s jackknife), normal where it is taken as known (df infinite)
    t = quantile(ci, pe.df)
    stat = np.divide(pe.diff, se, out=np.zeros_like(se), where=se > 0)
    p = 2.0 * stats.t.sf(np.abs(stat), pe.df)
    # no sampling error left (e.g. every document both runs' measure reads is judged): the
    # difference is known, decided unless it is 0 up to rounding; summing per-topic differences
    # leaves ~1e-19 where two runs' means are equal, which is no difference
    known = se <= ROUNDING
    p = np.where(known, np.where(np.abs(pe.diff) <= ROUNDING, 1.0, 0.0), p)
    adjusted = adjust(p, correction)
    names = np.array(collection.run_names, dtype=object)
    found = pair_status(ctx, m, pe, se)
    status, reason = found.status.astype(object), list(found.reason)
    for k in np.flatnonzero(np.isnan(se)):  # "topics" on fewer than two topics estimated
        status[k] = "unreliable"
        reason[k] = "; ".join([*filter(None, [reason[k]]), "fewer than 2 topics estimated: no "
                               "spread over topics to measure (use --variance design)"])
    topics = np.array(collection.topics, dtype=object)
    pairs = pd.DataFrame({
        "run_a": names[pe.first], "run_b": names[pe.second], "measure": m.name,
        "diff": pe.diff, "se": se, "df": pe.df,
        "low": pe.diff - t * se, "high": pe.diff + t * se,
        "p": p, "p_adjusted": adjusted, "decided": adjusted < 1.0 - ci,
        "status": status, "reason": reason,
        "causes": [tuple(str(t) for t in topics[list(c)]) for c in found.topics],
    }, columns=COLUMNS)
    return pairs if judgments.assumed is None else pairs.assign(assume=judgments.assumed)


def pair_status(ctx, m: HT, pe, se):
    """:func:`~irsample.measures.pair_reliability.assess_pair` of every pair of ``pe``
    (:func:`~irsample.measures.ht.pairs.pair_estimates`), ``se`` their standard errors."""
    shape = (ctx.n_runs, ctx.n_topics)
    evaluated = ctx.answered
    variance = np.asarray(m.variance(ctx), dtype=np.float64).reshape(shape)
    values = np.asarray(m.compute(ctx), dtype=np.float64).reshape(shape)
    # the pair's variance is the sample's: the rule counts the draw's relevant documents
    runs = assess(ctx, m, evaluated, variance, values, anticipated=False)
    return assess_pair(ctx, m, runs, pe.first, pe.second, evaluated, se)


def interval_outcomes(ev: Evaluation, low, high) -> np.ndarray:
    """``outcome[i, j, t]``: :func:`compare_intervals` of run i against run j on topic t.

    ``low`` and ``high`` name (or are) two measures of ``ev``, e.g. ``"SDCG@10"`` and
    ``"SDCG(point=T)@10"``; topics not evaluated for both runs are 0.
    """
    lo, hi = (_column(ev, m) for m in (low, high))
    return compare_intervals(lo[:, None], hi[:, None], lo[None], hi[None])


def _column(ev: Evaluation, measure) -> np.ndarray:
    found = parse(measure) if isinstance(measure, str) else [measure]
    if len(found) != 1 or found[0] not in ev.measures:
        raise MeasureError(f"{measure} is not one measure of this evaluation")
    return ev.values[:, :, ev.measures.index(found[0])]
