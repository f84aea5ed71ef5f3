"""What a judged sample holds, per topic and per run's ranked positions: the counts the
reliability rule reads (:mod:`.limits`, rules 1 and 2).

A topic's judged relevant documents k (judged at the context's relevance level or above) and
the share of its pool judged s decide what rule 2 calls it: imputed (k = 0, s < 1: a ratio
estimator imputes its value), weak (imputed, or 1 <= k <= FEW with s < SETTLED, or unsettled)
and unsettled (1 <= k <= FEW with SETTLED <= s < 1: one or two judged relevant documents do not
settle how many are left). Per run x topic segment: the judged relevant documents it ranks
within a cut-off (rule 1's support where the design's expectation does not apply) and the
positions pooled but not judged (what the estimate must infer).
"""

from __future__ import annotations

import numpy as np

from ...model import JUDGED
from ..pool_layout import UNJUDGED, pooled_positions, pooled_segments
from .limits import FEW, SETTLED


def judged_relevant(ctx) -> np.ndarray:
    """Per tdi: judged at the context's relevance level or above (the documents a mean rests
    on)."""
    j = ctx.judgments
    return (j.state == JUDGED) & (j.grade >= ctx.rel_level)


def found_per_topic(ctx) -> np.ndarray:
    """Per topic: its judged relevant documents (:func:`judged_relevant`), the draw's count
    rule 2 reads where the design's expectation does not apply."""
    return np.bincount(ctx.collection.tdi_topic[judged_relevant(ctx)], minlength=ctx.n_topics)


def judged_share(ctx) -> np.ndarray:
    """Per topic: the share of its pooled documents judged (1: nothing is estimated;
    :meth:`~irsample.model.Judgments.judged_share`)."""
    return ctx.judgments.judged_share()


def imputed_topics(found: np.ndarray, share: np.ndarray) -> np.ndarray:
    """Per topic, from its judged relevant documents ``found`` and the share of its pool judged
    ``share``: no relevant document judged and not judged whole, so a ratio estimator imputes
    its value (rules 2 and 3)."""
    return (found == 0) & (share < 1.0)


def weak_topics(found: np.ndarray, share: np.ndarray,
                expected: np.ndarray | None = None) -> np.ndarray:
    """Per topic, from its judged relevant documents ``found`` and the share of its pool judged
    ``share``: weak (rule 2): none found, unless judged whole (the topic is imputed), or 1 to
    :data:`FEW` while less than :data:`SETTLED` of it is judged, or 1 to :data:`FEW` judged
    :data:`SETTLED` or more but not whole (:func:`unsettled_topics`). With ``expected`` (per
    topic, the relevant documents the design is expected to judge: ``Measure.expected_found``)
    the second part reads it instead of the draw's count: fewer than :data:`FEW` + 1 expected."""
    imputed = imputed_topics(found, share)
    few = found <= FEW if expected is None else expected < FEW + 1
    return imputed | (few & (share < SETTLED)) | unsettled_topics(found, share)


def unsettled_topics(found: np.ndarray, share: np.ndarray) -> np.ndarray:
    """Per topic: 1 to :data:`FEW` judged relevant documents with :data:`SETTLED` or more of
    its pool judged, short of whole (rule 2's last part: weak until judged whole)."""
    return (found >= 1) & (found <= FEW) & (share >= SETTLED) & (share < 1.0)


def support_per_segment(ctx, cutoff: int | None) -> np.ndarray:
    """Per segment (run x topic): judged relevant documents the run ranks within ``cutoff``
    (all its ranking when None), counted over the pooled positions (cached per context)."""
    def build():
        _, rank, grade, _ = pooled_positions(ctx)
        hit = grade >= ctx.rel_level  # a pooled document not judged is below every level
        if cutoff is not None:
            hit &= rank < cutoff
        return np.bincount(pooled_segments(ctx)[hit], minlength=ctx.n_seg).astype(np.float64)

    return ctx.shared(("reliability_support", ctx.rel_level, cutoff), build)


def open_positions(ctx, cutoff: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Per segment: the positions the run ranks within ``cutoff`` (all its ranking when None)
    and those of them whose document is pooled but not judged (cached per context)."""
    def build():
        _, rank, grade, _ = pooled_positions(ctx)
        open_ = grade == UNJUDGED
        if cutoff is not None:
            open_ &= rank < cutoff
        total = ctx.seg_len if cutoff is None else np.minimum(ctx.seg_len, cutoff)
        unknown = np.bincount(pooled_segments(ctx)[open_], minlength=ctx.n_seg)
        return total.astype(np.float64), unknown.astype(np.float64)

    return ctx.shared(("reliability_open", cutoff), build)


def open_share(ctx, cutoff: int | None, evaluated: np.ndarray) -> np.ndarray:
    """Per run: the share of the positions it ranks within ``cutoff`` (over its evaluated
    topics) whose document is pooled but not judged: what the estimate must infer."""
    total, unknown = open_positions(ctx, cutoff)
    shape = (ctx.n_runs, ctx.n_topics)
    total = np.where(evaluated, total.reshape(shape), 0.0).sum(axis=1)
    unknown = np.where(evaluated, unknown.reshape(shape), 0.0).sum(axis=1)
    return np.where(total > 0, unknown / np.maximum(total, 1.0), 0.0)


def certain_relevant_only(ctx) -> np.ndarray:
    """Per topic: every judged relevant document judged with certainty (pi = 1), none drawn at
    random. A ratio fitted to such documents has a jackknife variance of 0 (certain documents
    are never deleted), while one drawn at random gets the large variance of its deletion
    (``ht/jackknife.py``): :func:`fitted_bound` is for the first kind only."""
    tdi_topic = ctx.collection.tdi_topic
    drawn = judged_relevant(ctx) & (ctx.judgments.judged_inclusion(tdi_topic) < 1.0)
    return np.bincount(tdi_topic[drawn], minlength=ctx.n_topics) == 0
