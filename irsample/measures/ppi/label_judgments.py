"""Automatic labels as judgments, for the prediction-powered estimators of ``ppi/estimate.py``.

ppi(M) runs the design-based estimator ht(M) twice on one sample: on the human judgments and on
the labels in their place. This module builds the second set of judgments and the census the
labels define:

- :func:`label_grades`: a grade per document of the pool. Grade labels are used as they are
  (no label: 0). Probability labels become grades by a fixed monotone rule: per topic, the
  round(sum_F p_d) documents of highest p_d are labelled relevant (grade ``rel_level``), the
  rest 0, so that the labelled-relevant count is the labels' expected count. Any fixed function
  of the labels keeps the estimators unbiased (``ppi/estimate.py``); this one keeps the labels'
  order and their calibration in the count (ht(M)'s walks take grades, not fractions).
- :func:`labelled_sample`: the judgments of the sample with every judged grade replaced by its
  label; pooled-unjudged entries, strata, inclusion probabilities and the documents no run
  retrieved (which have no label and keep their human grade in both) unchanged, so both ht(M)
  runs see the same design.
- :func:`labelled_census`: every pooled document judged with its label (the labels alone).

``labelled_sample(..., census=mask)`` judges, in the cells (topic x stratum) of ``mask``, every
pooled document of the collection with its label at pi = 1: ht(M) on those judgments is the
estimate that samples the other cells only (the strata's steps of AP's correction,
``ppi/estimate.py``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...model import JUDGED, UNPOOLED, Judgments


def label_grades(labels, judgments, topic, rel_level: int = 1) -> np.ndarray:
    """Integer grade per ``tdi`` (module docstring); ``topic`` the topic of every tdi."""
    pooled = judgments.state != UNPOOLED
    if labels.kind == "grade":
        return np.where(pooled, np.nan_to_num(labels.value, nan=0.0), 0).astype(np.int64)
    p = np.where(pooled, np.nan_to_num(labels.value, nan=0.0), 0.0)
    n_topics = int(topic.max(initial=-1)) + 1
    want = np.floor(np.bincount(topic, weights=p, minlength=n_topics) + 0.5).astype(np.int64)
    order = np.lexsort((np.arange(len(p)), -p, topic))  # by topic, highest p first, then tdi
    start = np.searchsorted(topic[order], np.arange(n_topics))
    place = np.empty(len(p), dtype=np.int64)
    place[order] = np.arange(len(p)) - start[topic[order]]
    relevant = pooled & (place < want[topic]) & (p > 0)
    return np.where(relevant, max(int(rel_level), 1), 0).astype(np.int64)


class PoolCells(NamedTuple):
    """The pooled entries of a sample and their cells (topic x stratum), with each cell's frame
    size, its sampled count, and the pooled entries inside it (all, and sampled)."""

    topic_of: np.ndarray  #: topic of every tdi
    pooled: np.ndarray  #: entries (tdi) in the pool
    sampled: np.ndarray  #: per pooled entry: judged by the sample
    stratum: np.ndarray  #: per pooled entry
    cell: np.ndarray  #: per pooled entry: topic * n_strata + stratum
    size: np.ndarray  #: (T, S) frame documents per cell
    taken: np.ndarray  #: (T, S) sampled documents per cell
    inside: np.ndarray  #: (T, S) pooled entries of the collection per cell
    inside_taken: np.ndarray  #: (T, S) of them sampled

    @property
    def out_taken(self) -> np.ndarray:
        """Per cell: sampled documents outside the collection (no run retrieved them)."""
        return np.maximum(self.taken - self.inside_taken, 0)

    @property
    def out_unjudged(self) -> np.ndarray:
        """Per cell: unsampled documents outside the collection (no label, no grade)."""
        return np.maximum(self.size - self.inside - self.out_taken, 0)


def pool_cells(collection, judgments) -> PoolCells:
    topic_of = collection.tdi_topic.astype(np.int64)
    pooled = np.flatnonzero(judgments.state != UNPOOLED)
    sampled = judgments.state[pooled] == JUDGED
    stratum = np.maximum(judgments.stratum[pooled], 0).astype(np.int64)
    size = judgments.stratum_size.astype(np.int64)
    cell = topic_of[pooled] * size.shape[1] + stratum
    inside = np.bincount(cell, minlength=size.size).reshape(size.shape)
    inside_taken = np.bincount(cell[sampled], minlength=size.size).reshape(size.shape)
    return PoolCells(topic_of, pooled, sampled, stratum, cell, size,
                  judgments.stratum_sampled.astype(np.int64), inside, inside_taken)


def labelled_sample(collection, judgments, grades, census=None) -> Judgments:
    """The sample's judgments with the labels as the judged grades (module docstring);
    ``census`` (topics x strata, bool): cells whose pooled documents are all judged with their
    labels at pi = 1 (they must hold no unsampled document outside the collection:
    :func:`census_possible`)."""
    c = pool_cells(collection, judgments)
    topic_of, pooled, sampled, stratum, cell = c.topic_of, c.pooled, c.sampled, c.stratum, c.cell
    size, taken = c.size, c.taken
    n_topics, n_strata = size.shape
    full = np.zeros(len(pooled), bool) if census is None else census[topic_of[pooled], stratum]
    judged = sampled | full
    rel = np.where(judged, grades[pooled], -1)
    cells = n_topics * n_strata
    by_grade = judgments.stratum_grades  # (T, S, G) over every entry, g >= 1
    n_grades = by_grade.shape[2]
    g_in = np.clip(judgments.grade[pooled][sampled], 0, n_grades - 1)
    have = np.bincount(cell[sampled] * n_grades + g_in,
                       minlength=cells * n_grades).reshape(by_grade.shape)
    out_graded = np.maximum(by_grade - have, 0)
    out_graded[:, :, 0] = 0
    out_graded[:, :, 0] = np.maximum(c.out_taken - out_graded.sum(axis=2), 0)  # grade 0
    t_idx, h_idx = np.divmod(np.arange(cells), n_strata)
    g_rows = np.repeat(np.tile(np.arange(n_grades), cells), out_graded.ravel())
    c_rows = np.repeat(np.repeat(np.arange(cells), n_grades), out_graded.ravel())
    u_rows = np.repeat(np.arange(cells), c.out_unjudged.ravel())
    rows_topic = np.concatenate([topic_of[pooled], t_idx[c_rows], t_idx[u_rows]])
    rows_stratum = np.concatenate([stratum, h_idx[c_rows], h_idx[u_rows]])
    rows_rel = np.concatenate([rel, g_rows, np.full(len(u_rows), -1)])
    rows_tdi = np.concatenate([pooled, np.full(len(c_rows) + len(u_rows), -1)])
    prob = None
    if judgments.inclusion is not None:
        rate = np.where(size > 0, taken / np.maximum(size, 1), 1.0).ravel()
        given = judgments.inclusion[pooled]
        prob = np.concatenate([np.where(full, 1.0, np.where(np.isfinite(given), given,
                                                            rate[cell])),
                               rate[c_rows], rate[u_rows]])
    return Judgments.from_arrays(collection, rows_topic, rows_tdi, rows_rel,
                                 stratum=rows_stratum, labels=judgments.stratum_labels,
                                 prob=prob, source=f"{judgments.source} (labels)",
                                 probabilities=judgments.probabilities,
                                 ).assuming(judgments.assumed)  # the human sample's design


def census_possible(collection, judgments) -> np.ndarray:
    """Per cell (topics x strata): whether the cell holds no unsampled pooled document outside
    the collection (one no run retrieved: it has no label and no human grade), so that its
    whole frame is known and :func:`labelled_sample` can judge it completely."""
    return pool_cells(collection, judgments).out_unjudged <= 0


def labelled_census(collection, judgments, grades) -> Judgments:
    """Every pooled document judged with its label grade: the labels alone."""
    pooled = np.flatnonzero(judgments.state != UNPOOLED)
    return Judgments.from_arrays(collection, collection.tdi_topic[pooled], pooled,
                                 grades[pooled], source="automatic labels")


def informative_topics(grades, judgments, topic, n_topics) -> np.ndarray:
    """Per topic: whether the labels vary over its pool (constant labels carry no
    information about which documents are relevant)."""
    pooled = judgments.state != UNPOOLED
    g = grades[pooled].astype(np.float64)
    t = topic[pooled]
    hi = np.full(n_topics, -np.inf)
    lo = np.full(n_topics, np.inf)
    np.maximum.at(hi, t, g)
    np.minimum.at(lo, t, g)
    return hi > lo


def agreeing_topics(grades, judgments, topic, n_topics) -> np.ndarray:
    """Per topic: whether every judged document's label equals its human grade."""
    judged = (judgments.state == JUDGED) & (grades != judgments.grade)
    return np.bincount(topic[judged], minlength=n_topics) == 0
