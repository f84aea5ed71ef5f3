"""Pooled documents no judgment stands for: strata of a topic with nothing judged, and
documents prels list with inclusion probability 0.

A stratified sample estimates each (topic, stratum) cell from the documents judged in it: a
document of cell h stands for N_h / n_h of the cell's documents (pi = n_h / N_h). A cell with
documents but none judged (n_h = 0) has inclusion probability 0, and no estimator can say how
many of its documents are relevant: a Horvitz-Thompson sum (ht(M), ppi(M)) counts them as not
relevant, and infAP-style estimators extrapolate a rate the cell never showed. Every design
irsample draws judges at least one document of each non-empty cell, so such cells come from
judging stopped early (a campaign's round in progress, judged stratum by stratum), a
depth-k pool read as a sample (paper 001, section 5.2: the deeper stratum never judged), or
stratified qrels made by hand.

The estimate is then off by an unknown amount, whatever its interval says (Sarndal, Swensson &
Wretman, *Model Assisted Survey Sampling*, 1992, section 2.8: the Horvitz-Thompson estimator
is unbiased only when every pi_k > 0), so the reliability rule flags a run's mean that reads
such documents (rule 6, :mod:`.reliability`): within the measure's cut-off, the positions it
ranks whose document is pooled, not judged, and in a cell with nothing judged; or listed by
prels with pi = 0 (``merge --format prels`` of a depth-k design lists the pool so).
"""

from __future__ import annotations

import numpy as np

from .pool_layout import UNJUDGED, pool_layout, pooled_positions, pooled_segments


def empty_cells(ctx) -> np.ndarray:
    """(topics, strata): the cells holding pooled documents with none of them judged (all
    False for judgments without strata: a census)."""
    return empty_cells_of(ctx.judgments, ctx.n_topics)


def empty_cells_of(judgments, n_topics: int) -> np.ndarray:
    """:func:`empty_cells` of ``judgments`` over ``n_topics`` topics."""
    if judgments.stratum is None or judgments.stratum_size is None:
        return np.zeros((n_topics, 1), dtype=bool)
    return (judgments.stratum_size > 0) & (judgments.stratum_sampled == 0)


def never_sampled_topics(ctx) -> np.ndarray:
    """Per topic: whether prels list one of its pooled documents with inclusion probability 0
    (``Judgments.never_sampled_rows``)."""
    rows = ctx.judgments.never_sampled_rows
    return np.zeros(ctx.n_topics, dtype=bool) if rows is None else rows > 0


def _cell_name(topic_id, labels, empty_strata) -> str:
    """``topic (strata)`` naming the strata with nothing judged (the topic id alone without
    strata, or when none of its strata is empty)."""
    strata = ", ".join(labels[s] for s in np.flatnonzero(empty_strata))
    return f"{topic_id} ({strata})" if len(labels) > 1 and strata else str(topic_id)


def unsampled_positions(ctx, cutoff: int | None) -> np.ndarray:
    """Per segment (run x topic): the positions within ``cutoff`` (the whole ranking when
    None) whose document is pooled, not judged, and in a cell of :func:`empty_cells` or listed
    with inclusion probability 0 (cached per context and cut-off)."""
    def build():
        empty = empty_cells(ctx)
        never = ctx.judgments.never_sampled
        if not empty.any() and never is None:
            return np.zeros(ctx.n_seg)
        _, rank, grade, stratum = pooled_positions(ctx)
        segment = pooled_segments(ctx)
        topic = segment % ctx.n_topics
        hit = empty[topic, np.minimum(stratum, empty.shape[1] - 1)]
        if never is not None:
            pooled_tdi, layout = pool_layout(ctx)
            hit |= layout.per_position(never[pooled_tdi].astype(np.int32)) > 0
        hit &= grade == UNJUDGED
        if cutoff is not None:
            hit &= rank < cutoff
        return np.bincount(segment[hit], minlength=ctx.n_seg).astype(np.float64)

    return ctx.shared(("unsampled_positions", cutoff), build)


def unsampled_reason(ctx, count: float, topics: np.ndarray, cutoff: int | None,
                     named) -> str:
    """Rule 6's reason for a run ranking ``count`` such documents on ``topics`` (indices)
    with ``named`` formatting topic ids (:func:`~.reliability.named_topics`)."""
    empty = empty_cells(ctx)
    labels = ctx.judgments.stratum_labels
    ids = np.asarray(ctx.collection.topics)
    cells = [_cell_name(ids[t], labels, empty[t]) for t in topics]
    count = int(count)
    where = f"within its top {cutoff}" if cutoff is not None else "in its rankings"
    what = ("in strata with nothing judged (inclusion probability 0: " if empty[topics].any()
            else "listed with inclusion probability 0 (")
    if empty[topics].any() and never_sampled_topics(ctx)[topics].any():
        what = "in strata with nothing judged or listed with inclusion probability 0 ("
    return (f"{count} document{'s' * (count != 1)} {where} are {what}no judgment stands for "
            f"them, and their relevance is not estimated) on {len(cells)} "
            f"topic{'s' * (len(cells) != 1)}: "
            f"{named(cells)}; " + ("judge at least one document of each such stratum"
                                   if empty[topics].any() else "judge them under a design "
                                   "that gives each a probability above 0"))


def unsampled_summary(topics, judgments) -> tuple[int, list[str]]:
    """(pooled documents no judgment stands for, over all topics; the topics holding them, as
    ``topic (strata)`` for strata with nothing judged) of ``judgments``, whose topic ids are
    ``topics``, over every row of their file: what the command line warns of before any
    estimate (:func:`irsample.judgment_notes.unsampled_documents`)."""
    count, named = 0, {}
    ids = list(topics)
    empty = empty_cells_of(judgments, len(ids))
    if empty.any():
        count += int(judgments.stratum_size[empty].sum())
        for t in np.flatnonzero(empty.any(axis=1)):
            named[t] = _cell_name(ids[t], judgments.stratum_labels, empty[t])
    if judgments.never_sampled_rows is not None:
        count += int(judgments.never_sampled_rows.sum())
        for t in np.flatnonzero(judgments.never_sampled_rows):
            named.setdefault(int(t), str(ids[t]))
    return count, [named[t] for t in sorted(named)]
