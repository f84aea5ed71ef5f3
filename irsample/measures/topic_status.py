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
  A total (P@k, RBP, num_rel) is read stratum by stratum: its design variance is estimated
  from each stratum's own sample, so a stratum left to chance that shows no relevant document
  adds 0 whatever its documents left hold, and the bit is set where one does (within the
  reach). Without that part, the per-topic ht(P@10) and ht(num_rel) intervals marked ``ok``
  covered 0.918 and 0.877 of the topics' truths on CACM's 2strata 20% samples, 0.917 and
  0.845 on Vaswani's; with it 0.983-0.994 (100 draws each; ``benchmarks/topic_intervals.py``,
  REPRODUCTION.md, "Per-topic intervals and their status");
- :data:`SAMPLE_ONLY`: a variance estimated from the topic's own sample with no model to
  steady it (ht(M) and ppi(M) on importance samples, unequal probabilities within a stratum:
  ``Measure.topic_variance_from_sample``, ``ht/topic_own.py``): one topic's, from its few
  sampled relevant documents, is small where the sample missed the run's top relevant
  documents; the ok intervals covered 0.80-0.93 of the topics' truths on the importance 20%
  samples of CACM, Vaswani, TREC-8 and TREC-COVID before this flag, ht(P@10)'s 0.924-0.971
  (REPRODUCTION.md, "Per-topic intervals on importance samples"). On stratified samples and
  the planner's designs AP's and nDCG's take the model's variance instead.

Rules 1 and 3 (support, the bias of a sum over topics) are properties of the mean and are not
read per topic. Where nothing is flagged the status is ``ok``.
"""

from __future__ import annotations

import numpy as np

from ..model import JUDGED, POOLED
from .pool_layout import UNJUDGED, pooled_positions, pooled_segments
from .reliability import (
    FEW,
    Reliability,
    found_per_topic,
    imputed_topics,
    judged_share,
    open_positions,
)
from .unsampled import unsampled_positions

IMPUTED, WEAK, UNSAMPLED, OUTSIDE, UNCHECKED, NO_SPREAD, SAMPLE_ONLY = 1, 2, 4, 8, 16, 32, 64

#: the reason of each flag, in the order they are named
REASONS = (
    (IMPUTED, "no relevant document judged in its sample: its value is the run's mean over its "
              "other topics (imputed), with no interval of its own"),
    (WEAK, "a weak topic, {found} judged relevant document{s}: its ratio rests on too few "
           "(rule 2)"),
    (UNSAMPLED, "the run ranks pooled documents of a stratum with nothing judged"),
    (OUTSIDE, "estimate outside [0, 1], the measure's range"),
    (UNCHECKED, "no estimate of its own bias on a topic not judged whole"),
    (NO_SPREAD, "no variation in its sample (for a total: in a stratum left to chance, which "
                "shows no relevant document), while pooled documents there are not judged: the "
                "sample's own variance there is 0, so any width the interval has comes from the "
                "relevance model, which no judged document there checks"),
    (SAMPLE_ONLY, "its variance is the sample's own, from the topic's few sampled relevant "
                  "documents, with no model to steady it (unequal probabilities within a "
                  "stratum, as in an importance sample): one topic's falls short"),
)


def topic_flags(ctx, measure, evaluated: np.ndarray, values: np.ndarray,
                topic_variance: np.ndarray, rule: Reliability) -> np.ndarray:
    """(runs, topics) uint8: the bits of the module docstring for ``measure``'s per-topic
    intervals; ``evaluated``, ``values`` and ``topic_variance`` (``Measure.topic_variance``)
    are (runs, topics), ``rule`` the run means' outcome (:func:`.reliability.assess`), whose
    weak topics and unchecked bias are the topics'. 0 (ok) where a cell is not evaluated."""
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
    if rule.weak_topic is not None:
        mark(WEAK, (rule.weak_topic & ~imputed_topics(found_per_topic(ctx), share))[None])
    if rule.unchecked:
        mark(UNCHECKED, ~whole[None])
    mark(UNSAMPLED, unsampled_positions(ctx, cutoff).reshape(shape) > 0)
    if design_based and measure.summary == "mean":
        mark(OUTSIDE, (values > 1.0 + 1e-9) | (values < -1e-9))
    if ratio or measure.summary == "sum":  # the topic's pool: R is estimated over all of it
        unjudged = ~whole[None]
    else:
        unjudged = open_positions(ctx, cutoff)[1].reshape(shape) > 0
    mark(NO_SPREAD, (var == 0.0) & unjudged)
    if design_based and measure.topic_variance_from_sample(ctx):
        mark(SAMPLE_ONLY, np.isfinite(var) & ~whole[None])
    if not ratio and design_based:  # a total: each stratum left to chance, one by one
        if measure.summary == "sum":  # num_rel: the topic's pool
            mark(NO_SPREAD, _blind_cells(ctx, None, whole_topic=True)[None])
        else:
            mark(NO_SPREAD, _blind_cells(ctx, cutoff, whole_topic=False).reshape(shape))
    return flags


def _blind_cells(ctx, cutoff, whole_topic):
    """Per segment (per topic with ``whole_topic``): whether a cell (topic x stratum) left to
    chance holds, within ``cutoff`` of the ranking, documents not judged and no relevant one
    judged: the sample's variance is 0 there whatever the documents left hold (the design
    variance of a stratum is estimated from its own sample)."""
    j = ctx.judgments
    partly = j.stratum_sampled < j.stratum_size  # (topics, strata)
    n_strata = partly.shape[1]
    if whole_topic:
        topic = ctx.collection.tdi_topic
        stratum = (np.zeros(len(topic), np.int64) if j.stratum is None
                   else np.clip(j.stratum, 0, n_strata - 1))
        unit, size = topic, ctx.n_topics
        relevant = (j.state == JUDGED) & (j.grade >= ctx.rel_level)
        open_ = partly[topic, stratum] & (j.state == POOLED)
    else:  # the positions within the cut-off only (P@10 reads a hundredth of a ranking)
        _, rank, grade, stratum = pooled_positions(ctx)
        unit, size = pooled_segments(ctx), ctx.n_seg
        if cutoff is not None:
            inside = np.flatnonzero(rank < cutoff)
            unit, grade, stratum = unit[inside], grade[inside], stratum[inside]
        stratum = np.clip(stratum, 0, n_strata - 1)
        open_ = partly[unit % ctx.n_topics, stratum] & (grade == UNJUDGED)
        relevant = (grade != UNJUDGED) & (grade >= ctx.rel_level)
    key = unit.astype(np.int64) * n_strata + stratum
    left = np.bincount(key[open_], minlength=size * n_strata) > 0
    found = np.bincount(key[relevant], minlength=size * n_strata) > 0
    return (left & ~found).reshape(size, n_strata).any(axis=1)


#: rule 2's reason where the draw found more than FEW relevant documents: the design's
#: expected count flagged the topic (``reliability.weak_topics``), not the draw's
WEAK_BY_DESIGN = ("a weak topic: {found} judged relevant documents in this draw, but the design "
                  "is expected to judge fewer than {enough} in its pool, so its ratio rests on "
                  "too few in most draws (rule 2)")


def topic_reason(flags: int, found: int) -> str:
    """The reason of one topic's interval from its bits (:func:`topic_flags`) and its judged
    relevant documents ``found``; empty when ok."""
    return "; ".join((WEAK_BY_DESIGN if bit == WEAK and found > FEW else text).format(
        found=found, s="s" * (found != 1), enough=FEW + 1) for bit, text in REASONS
        if flags & bit)
