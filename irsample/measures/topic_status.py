"""Can the interval of one topic's estimate be trusted? The topic's side of the reliability rule.

The rule of :mod:`.reliability` judges the interval of a run's mean. A per-topic interval
(``irsample eval -q --ci``) needs its own status: the mean's interval can be sound while some of
its topics' are not (a topic's share of the mean is small), and a topic's interval can be empty
of meaning where the mean's is not. A topic's interval is ``unreliable`` when (bits of
:func:`topic_flags`, reasons by :func:`topic_reason`)

- :data:`IMPUTED`: the estimator has no estimate of the topic of its own: ht(M) and ppi(M) of
  a ratio (AP, nDCG, R-prec, recall) impute a topic whose sample holds no relevant document
  with the run's mean over its identified topics (``ht/imputation.py``). It has no interval
  (NaN limits, ``Measure.topic_variance``): the imputed value says what the run does elsewhere,
  and the part of the mean's variance the imputation adds is about the mean, not the topic;
- :data:`WEAK`: a ratio estimator on one of rule 2's weak topics (none, or 1 to ``FEW``
  relevant documents judged while less than ``SETTLED`` of its pool is, or short of whole
  above it; for ht(M) and ppi(M) on stratified simple random samples, fewer than ``FEW`` + 1
  expected of the design): its ratio is fitted to one or two documents, its bias is of the
  order of the estimate over their number and its variance near 0;
- :data:`UNSAMPLED`: rule 6 on the topic: within the measure's cut-off the run ranks pooled
  documents of a stratum none of whose documents is judged;
- :data:`OUTSIDE`: a design-based estimate of a measure bounded by [0, 1] outside it (rule 5 on
  the topic: a Horvitz-Thompson total that weights a found relevant document by 1/pi);
- :data:`UNCHECKED`: rule 4 on the topic: a ratio estimator that gives no estimate of its own
  bias (infAP, xinfAP, infNDCG, statAP) on a topic not judged whole;
- :data:`NO_SPREAD`: a variance of 0 while what the estimate reads holds pooled documents not
  judged (num_rel and the ratios: the topic's pool; the other totals: the run's positions
  within the cut-off): the sample shows no variation (typically no relevant document found
  where some are left unjudged), which is not certainty. ht(num_rel) on a CACM uniform 20%
  sample gave 13 of 52 topics an interval of width 0 (REPRODUCTION.md, "A fifth review").

Rules 1 and 3 (support, the bias of a sum over topics) are properties of the mean and are not
read per topic. Where nothing is flagged the status is ``ok``.
"""

from __future__ import annotations

import numpy as np

from .reliability import (
    found_per_topic,
    imputed_topics,
    judged_share,
    open_positions,
    weak_topics,
)
from .unsampled import unsampled_positions

IMPUTED, WEAK, UNSAMPLED, OUTSIDE, UNCHECKED, NO_SPREAD = 1, 2, 4, 8, 16, 32

#: the reason of each flag, in the order they are named
REASONS = (
    (IMPUTED, "no relevant document judged in its sample: its value is the run's mean over its "
              "other topics (imputed), with no interval of its own"),
    (WEAK, "a weak topic, {found} judged relevant document{s}: its ratio rests on too few "
           "(rule 2)"),
    (UNSAMPLED, "the run ranks pooled documents of a stratum with nothing judged"),
    (OUTSIDE, "estimate outside [0, 1], the measure's range"),
    (UNCHECKED, "no estimate of its own bias on a topic not judged whole"),
    (NO_SPREAD, "a variance of 0 from a sample that shows no variation, while what it "
                "estimates holds pooled documents not judged"),
)


def topic_flags(ctx, measure, evaluated: np.ndarray, values: np.ndarray,
                topic_variance: np.ndarray) -> np.ndarray:
    """(runs, topics) uint8: the bits of the module docstring for ``measure``'s per-topic
    intervals; ``evaluated``, ``values`` and ``topic_variance`` (``Measure.topic_variance``)
    are (runs, topics). 0 (ok) where a cell is not evaluated."""
    shape = evaluated.shape
    share = judged_share(ctx)
    whole = share >= 1.0
    inner = getattr(measure, "inner", measure)
    cutoff = getattr(inner, "k", None)
    values = np.asarray(values, dtype=np.float64).reshape(shape)
    var = np.asarray(topic_variance, dtype=np.float64).reshape(shape)
    flags = np.zeros(shape, dtype=np.uint8)

    def mark(bit, where):
        flags[evaluated & np.broadcast_to(where, shape)] |= bit

    ratio = bool(getattr(measure, "ratio", False))
    design_based = bool(getattr(measure, "needs_inclusion", False))
    if design_based:
        mark(IMPUTED, np.isnan(var) & ~np.isnan(values))
    if ratio:
        found = found_per_topic(ctx)
        expected = measure.expected_found(ctx) if hasattr(measure, "expected_found") else None
        mark(WEAK, (weak_topics(found, share, expected) & ~imputed_topics(found, share))[None])
        if measure.estimated_bias(ctx) is None:
            mark(UNCHECKED, ~whole[None])
    mark(UNSAMPLED, unsampled_positions(ctx, cutoff).reshape(shape) > 0)
    if design_based and measure.summary == "mean":
        mark(OUTSIDE, (values > 1.0 + 1e-9) | (values < -1e-9))
    if ratio or measure.summary == "sum":  # the topic's pool: R is estimated over all of it
        unjudged = ~whole[None]
    else:
        unjudged = open_positions(ctx, cutoff)[1].reshape(shape) > 0
    mark(NO_SPREAD, (var == 0.0) & unjudged)
    return flags


def topic_reason(flags: int, found: int) -> str:
    """The reason of one topic's interval from its bits (:func:`topic_flags`) and its judged
    relevant documents ``found``; empty when ok."""
    return "; ".join(text.format(found=found, s="s" * (found != 1))
                     for bit, text in REASONS if flags & bit)
