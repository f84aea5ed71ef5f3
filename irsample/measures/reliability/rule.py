"""The reliability rule applied: :func:`assess` gives every run's mean a status (``ok``, or
``unreliable`` with the reasons and the topics that cause them), from the judged sample
alone, by the seven rules of :mod:`.limits` (support, weak topics, estimated bias, unchecked,
outside [0, 1], strata with nothing judged, blind topics left out).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..base import Measure
from ..unsampled import unsampled_positions, unsampled_reason
from .bias import (
    carrying,
    fitted_bound,
    imputation_bound,
    per_relevant,
    quadrature_cells,
    summed_bias,
)
from .limits import (
    FEW,
    FIT_Z,
    MAX_UNSEEN,
    MIN_SUPPORT,
    NAMED,
    NO_SPREAD,
    SETTLED,
    biased_beyond_limit,
    left_out_beyond_limit,
    skewness_limit,
    weak_beyond_limit,
)
from .topics import (
    certain_relevant_only,
    found_per_topic,
    imputed_topics,
    judged_share,
    open_share,
    support_per_segment,
    unsettled_topics,
    weak_topics,
)

#: the seven rules of :mod:`.limits` by the names their counts go by, in its order
RULES = ("too small or skewed a sample", "too many weak topics", "estimated bias",
         "no estimate of its bias", "outside [0, 1]", "strata with nothing judged",
         "blind topics left out")


@dataclass(frozen=True)
class Reliability:
    """Per run: whether the interval of its mean is ``unreliable``, the ``reason`` (empty when
    ok) and the ``topics`` (indices) that cause it; the diagnostics behind the rule: ``support``
    (judged relevant documents the mean rests on), ``weak`` (share of weak topics), ``bias_se``
    (estimated bias over the standard error; NaN where the estimator gives none), ``thin``
    (flagged by rule 1: too little support with most of the reach unjudged), ``unsettled``
    (the share of its topics weak only by rule 2's last part, judged :data:`SETTLED` or more)
    and ``inherited`` (the share weak by the rest of rule 2, what a difference of two runs
    reads); both None for measures rule 2 does not apply to; ``outside``: flagged by rule 5."""

    unreliable: np.ndarray
    reason: tuple[str, ...]
    topics: tuple[tuple[int, ...], ...]
    support: np.ndarray
    weak: np.ndarray
    bias_se: np.ndarray
    thin: np.ndarray
    unsettled: np.ndarray | None = None
    inherited: np.ndarray | None = None
    #: per run: flagged by rule 5 (a mean outside [0, 1]); None where not assessed
    outside: np.ndarray | None = None
    #: per run: flagged by rule 6 (it ranks documents of strata with nothing judged); None
    #: where not assessed
    unsampled: np.ndarray | None = None
    #: per topic: rule 2's weak topics (ratio estimators; None for the others), which the
    #: topics' own statuses read (:mod:`irsample.measures.topic_status`)
    weak_topic: np.ndarray | None = None
    #: rule 4: a ratio estimator with no estimate of its bias on a sample
    unchecked: bool = False
    #: per run: rule 7's ratio, the variance the interval leaves out on blind topics over the
    #: variance it takes (0 where not assessed)
    unseen: np.ndarray | None = None

    @property
    def many_weak(self) -> np.ndarray:
        """Per run: flagged by rule 2 (too many weak topics)."""
        return weak_beyond_limit(self.weak)

    @property
    def biased(self) -> np.ndarray:
        """Per run: flagged by rule 3 (estimated bias)."""
        return biased_beyond_limit(self.bias_se)

    @property
    def left_out(self) -> np.ndarray:
        """Per run: flagged by rule 7 (blind topics' variance left out of the interval)."""
        if self.unseen is None:
            return np.zeros(len(self.unreliable), dtype=bool)
        return left_out_beyond_limit(self.unseen)

    @property
    def thin_or_weak(self) -> np.ndarray:
        """Per run: flagged by support, weak topics or strata with nothing judged (rules 1, 2,
        6), as a difference of two runs inherits it: without rule 2's ``unsettled`` topics (a
        difference's variance takes the model's where it shows no variation, ``ht/pairs.py``,
        and on CACM's uniform 60-80% samples, one rate a topic, its unflagged type-I error was
        0.041-0.047)."""
        weak = weak_beyond_limit(self.weak if self.inherited is None else self.inherited)
        return self.thin | weak | (False if self.unsampled is None else self.unsampled)

    @property
    def by_rule(self) -> dict[str, np.ndarray]:
        """Per rule of :mod:`.limits`, in its order and named as :data:`RULES`: the runs it
        flags (``unreliable`` is their union; a run may be flagged by several)."""
        none = np.zeros(len(self.unreliable), dtype=bool)
        return dict(zip(RULES, (
            self.thin, self.many_weak, self.biased, none | self.unchecked,
            none if self.outside is None else self.outside,
            none if self.unsampled is None else self.unsampled, self.left_out)))

    @property
    def status(self) -> np.ndarray:
        """``"ok"`` or ``"unreliable"`` per run."""
        return np.where(self.unreliable, "unreliable", "ok")


def assess(ctx, measure, evaluated: np.ndarray, variance: np.ndarray,
           values: np.ndarray | None = None, *, anticipated: bool = True) -> Reliability:
    """The rule of :mod:`.limits` for ``measure`` on ``ctx``; ``evaluated``,
    ``variance`` and ``values`` are (runs, topics): the topics each run's mean covers, their
    variances and estimates (the estimates give the imputation's bound: without them it is
    left out). ``anticipated=False``: rules 1 and 2 count the draw's judged relevant
    documents and rule 3 reads the sample's bias even where the measure gives the design's
    expectation (for an interval that takes the sample's variance, as a pair's difference in
    ``compare`` does)."""
    shape = (ctx.n_runs, ctx.n_topics)
    topics = np.asarray(ctx.collection.topics)
    share = judged_share(ctx)
    inner = getattr(measure, "inner", measure)
    cutoff = getattr(inner, "k", None)  # the positions a run's estimate reads: the cut-off
    expected = (measure.expected_support(ctx, cutoff)
                if anticipated and hasattr(measure, "expected_support") else None)
    counted = support_per_segment(ctx, cutoff) if expected is None else expected
    support = np.where(evaluated, counted.reshape(shape), 0.0).sum(1)
    per_topic = found_per_topic(ctx)
    design_count = None
    unsettled = None
    if getattr(measure, "ratio", False):
        design_count = (measure.expected_found(ctx)
                        if anticipated and hasattr(measure, "expected_found") else None)
        weak_topic = weak_topics(per_topic, share, design_count)
        unsettled = unsettled_topics(per_topic, share)
    else:
        weak_topic = np.zeros(ctx.n_topics, dtype=bool)
    weak_cells = evaluated & weak_topic[None, :]
    q = np.maximum(evaluated.sum(axis=1), 1)
    weak = weak_cells.sum(axis=1) / q
    unsettled_share = inherited = None
    if unsettled is not None:
        unsettled_share = (evaluated & unsettled[None, :]).sum(axis=1) / q
        inherited = (weak_cells & ~unsettled[None, :]).sum(axis=1) / q
    bias = (measure.estimated_bias(ctx, from_sample=not anticipated)
            if hasattr(measure, "estimated_bias") else None)
    if bias is None:
        bias_se = np.full(ctx.n_runs, np.nan)
        per_cell = np.zeros(shape)
    else:
        per_cell = np.where(evaluated, np.asarray(bias).reshape(shape), 0.0)
        b = summed_bias(per_cell, quadrature_cells(ctx, measure, shape))
        imputed = evaluated & imputed_topics(per_topic, share)[None, :]
        if values is not None and getattr(measure, "ratio", False) and imputed.any():
            bound = imputation_bound(values, evaluated, imputed, share >= SETTLED)
            b = b + bound.sum(axis=1)  # an imputed topic's error has no sign to cancel with
            per_cell = np.abs(per_cell) + bound
        magnitude = np.abs(b)
        if values is not None and design_count is None and per_relevant(measure):
            # ratios fitted to 1 to FEW judged relevant documents, all judged with certainty
            fitted = weak_cells & ~imputed & certain_relevant_only(ctx)[None, :]
            if fitted.any():
                bound = fitted_bound(values, fitted, per_topic)
                magnitude = magnitude + bound.sum(axis=1)  # no sign to cancel with either
                per_cell = np.abs(per_cell) + bound
        se = np.sqrt(np.where(evaluated, variance, 0.0).sum(axis=1))
        bias_se = np.where(se > 0, magnitude / np.where(se > 0, se, 1.0), 0.0)
    unchecked = bool(getattr(measure, "ratio", False)) and bias is None and (
        share < 1.0)[evaluated.any(axis=0)].any()
    sample = (measure.expected_sample(ctx, cutoff)
              if anticipated and hasattr(measure, "expected_sample") else None)
    open_ = open_share(ctx, cutoff, evaluated) > 1.0 - SETTLED
    if sample is None:
        low, n, skew, limit = (support < MIN_SUPPORT) & open_, None, None, None
    else:
        n, skew, lowered = sample.skewness_per_run(evaluated, FIT_Z)
        limit = skewness_limit(n)
        low = (np.abs(skew) > limit) & open_
    many_weak, biased = weak_beyond_limit(weak), biased_beyond_limit(bias_se)
    mean, outside = outside_range(measure, evaluated, values)
    unsampled_cells = evaluated & (unsampled_positions(ctx, cutoff).reshape(shape) > 0)
    unsampled = unsampled_cells.any(axis=1)
    left_out, unseen = unseen_share(ctx, measure, evaluated)
    blind = left_out_beyond_limit(unseen)
    unreliable = low | many_weak | biased | unchecked | outside | unsampled | blind
    reasons, causes = [], []
    for r in range(ctx.n_runs):
        parts, cause = [], []
        if many_weak[r]:
            idx = np.flatnonzero(weak_cells[r])
            cause += idx.tolist()
            what = (f"have {FEW} or fewer judged relevant documents in this draw"
                    if design_count is None
                    else f"have none or fewer than {FEW + 1} judged relevant documents "
                         f"expected of the design")
            parts.append(f"{len(idx)} of {int(evaluated[r].sum())} topics {what} "
                         f"({named_topics(topics[idx])})")
            late = idx[unsettled[idx]] if unsettled is not None else idx[:0]
            if len(late):
                parts[-1] += (f"; {len(late)} of them ({named_topics(topics[late])}) with 1 to "
                              f"{FEW} judged, judged {SETTLED:.0%} or more but not whole: "
                              f"nothing settles how many are left unjudged")
        if low[r] and skew is None:
            counted_as = "in this draw" if expected is None else "expected of the design"
            parts.append(f"rests on {support[r]:.0f} judged relevant documents {counted_as} "
                         f"(fewer than {MIN_SUPPORT}) with more than {1 - SETTLED:.0%} of what "
                         f"it ranks unjudged")
        elif low[r]:
            shown_skew, shown_limit = apart(skew[r], limit[r])
            parts.append(f"too skewed for a normal interval: the design's estimate of its "
                         f"relevant documents has skewness {shown_skew} with "
                         f"their fitted number at the low end of the relevance model's 95% "
                         f"interval ({lowered[r]:.0%} of it; "
                         + (f"at most {shown_limit}" if limit[r] > 0 else "none allowed")
                         + f" with the {n[r]:.0f} positions it is expected to judge, "
                         f"{support[r]:.0f} relevant expected), more than "
                         f"{1 - SETTLED:.0%} of what it ranks unjudged")
            if not cause:  # the topics where the run has least to go on
                idx = np.flatnonzero(evaluated[r])
                cause += idx[np.argsort(per_topic[idx], kind="stable")][:NAMED].tolist()
        if biased[r]:
            name = getattr(measure, "bias_reason", Measure.bias_reason)
            if bias_se[r] < NO_SPREAD:
                parts.append(f"{name} {bias_se[r]:.2f} of its standard error")
            else:  # a standard error of rounding size: no ratio to speak of
                parts.append(f"a standard error of 0 where the pool is not judged whole (no "
                             f"error seen in the sample, e.g. labels that agree with every "
                             f"judged document), beside {name} {abs(b[r]) / q[r]:.4g}")
            cause += [t for t in carrying(per_cell[r]) if t not in cause]
        if unchecked:
            parts.append("no estimate of its own bias, so the interval (the sampling spread "
                         "only) cannot be checked; ht(M) estimates its bias")
        if outside[r]:
            off = np.flatnonzero(evaluated[r] & ((values[r] > 1.0) | (values[r] < 0.0)))
            parts.append(f"estimate {mean[r]:.4f} outside [0, 1], the measure's range (the "
                         "draw weights the relevant documents it found by 1/pi and overshoots"
                         + (f"; outside on {len(off)} topic{'s' * (len(off) != 1)}: "
                            f"{named_topics(topics[off])}" if len(off) else "") + ")")
            cause += [int(t) for t in off if t not in cause]
        if blind[r]:
            idx = [t for t in carrying(left_out[r], 0.9) if left_out[r, t] > 0]
            times = (f"{unseen[r]:.2f} times the interval's" if np.isfinite(unseen[r])
                     else "where the interval's is 0")
            parts.append(f"{int((left_out[r] > 0).sum())} of its topics show no variation in "
                         f"their sample (no relevant document drawn beside those judged with "
                         f"certainty) where the relevance model anticipates some: their "
                         f"anticipated variance, {times} (more than {MAX_UNSEEN:g}), is left "
                         f"out of it (most on {named_topics(topics[idx])})")
            cause += [t for t in idx if t not in cause]
        if unsampled[r]:
            idx = np.flatnonzero(unsampled_cells[r])
            count = unsampled_positions(ctx, cutoff).reshape(shape)[r, idx].sum()
            parts.insert(0, unsampled_reason(ctx, count, idx, cutoff, named_topics))
            cause = idx.tolist() + [t for t in cause if t not in idx]
        reasons.append("; ".join(parts))
        causes.append(tuple(int(c) for c in cause))
    return Reliability(unreliable, tuple(reasons), tuple(causes), support, weak, bias_se, low,
                       unsettled_share, inherited, outside, unsampled,
                       weak_topic if getattr(measure, "ratio", False) else None,
                       bool(unchecked), unseen)


def unseen_share(ctx, measure, evaluated: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """((runs, topics) the variance ``measure``'s interval leaves out on its ``evaluated``
    topics, per run its sum over the variance it is read against; inf where that is 0 and
    something is left out): rule 7 (``Measure.unseen_variance``); zeros where the measure
    gives none."""
    pair = measure.unseen_variance(ctx) if hasattr(measure, "unseen_variance") else None
    if pair is None:
        return np.zeros(evaluated.shape), np.zeros(evaluated.shape[0])
    left, base = (np.where(evaluated, np.nan_to_num(np.asarray(x, dtype=np.float64))
                           .reshape(evaluated.shape), 0.0) for x in pair)
    total, out = base.sum(axis=1), left.sum(axis=1)
    share = np.where(total > 0, out / np.where(total > 0, total, 1.0),
                     np.where(out > 0, np.inf, 0.0))
    return left, share


def outside_range(measure, evaluated: np.ndarray, values: np.ndarray | None):
    """(per run: the mean of ``values`` over its ``evaluated`` topics, whether it lies outside
    [0, 1]) for the design-based estimators (``Measure.needs_inclusion``: ht(M) and ppi(M)) of
    measures bounded by [0, 1] (all but num_rel, summed; rule 5); all False without ``values``
    or for other measures."""
    n_runs = evaluated.shape[0]
    bounded = (getattr(measure, "needs_inclusion", False)
               and getattr(measure, "summary", "mean") == "mean")
    if values is None or not bounded:
        return np.zeros(n_runs), np.zeros(n_runs, dtype=bool)
    values = np.asarray(values, dtype=np.float64).reshape(evaluated.shape)
    q = np.maximum(evaluated.sum(axis=1), 1)
    mean = np.where(evaluated, np.nan_to_num(values), 0.0).sum(axis=1) / q
    return mean, evaluated.any(axis=1) & ((mean > 1.0 + 1e-9) | (mean < -1e-9))



def apart(value: float, limit: float) -> tuple[str, str]:
    """``value`` and the ``limit`` it exceeds, to two decimals, or to as many more (up to six)
    as they need to read apart: a skewness of 0.1436 over a limit of 0.1424 is "0.144" over
    "0.142", not "0.14" over "0.14"."""
    for places in range(2, 7):
        shown = f"{value:.{places}f}", f"{limit:.{places}f}"
        if shown[0] != shown[1]:
            break
    return shown


def named_topics(names) -> str:
    """Topic ids as a list: the first :data:`NAMED`, then how many more."""
    shown = ", ".join(str(n) for n in names[:NAMED])
    return shown + (f" and {len(names) - NAMED} more" if len(names) > NAMED else "")
