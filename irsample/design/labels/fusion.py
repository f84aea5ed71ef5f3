"""The built-in automatic labeller (``--auto-labels fusion``): a relevance model of where the
runs put each pooled document, fitted on the human sample only and cross-fitted by topic.

The model is the planner's (:mod:`irsample.design.planner.relevance_model`): a logistic regression
of
relevance on the document's rank-fusion prior over the runs (the AP prior, a reciprocal-rank
style consensus score) and its best rank, with a shrunken topic offset. It needs no document
text and no external model.

Cross-fitting. A predictor fitted on the judged sample makes f depend on the sample, and a
correction sum_S (y_d - f_d)/pi_d whose f_d was fitted on y_d itself is no longer an unbiased
estimate of sum_F (y_d - f_d): the residuals of the fitted documents are too small, and the
interval too narrow (Angelopoulos et al. 2023 require f independent of the labelled data;
Zrnic & Candes, "Cross-prediction-powered inference", PNAS 2024, restore validity by
cross-fitting). Here the folds are *topics*: the topics are split into K folds, and the labels of
a fold's topics come from the model fitted on the judged documents of the other folds only.
Topics are sampled independently, so given the other folds' samples the labels of topic t are
fixed numbers and the estimator of topic t is exactly design-unbiased (conditionally, hence
unconditionally): E[T^_t | S_-t] = T_t. Two topics of one fold share a model fitted elsewhere
and their estimates stay conditionally independent; topics of different folds are coupled only
through one topic's weight in another fold's fit, which the per-topic variances ignore (a
second-order effect). Folding by topic gives up the topic's own offset (0 for an unseen topic);
the power-tuning weight lambda absorbs a miscalibrated scale.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...io.labels import AutoLabels
from ...model import JUDGED, UNPOOLED
from ..frame import _best_rank, generator
from ..planner.relevance_model import fit_relevance


@dataclass(frozen=True, eq=False)
class PoolRows:
    """The pooled documents of judgments as rows (what the relevance model reads)."""

    collection: object
    topic: np.ndarray
    tdi: np.ndarray
    best_rank: np.ndarray
    runs: tuple
    depth: float = np.inf

    @classmethod
    def of(cls, collection, judgments) -> PoolRows:
        tdi = np.flatnonzero(judgments.state != UNPOOLED)
        runs = np.arange(collection.n_runs, dtype=np.int64)
        best = _best_rank(collection.rank_offsets, collection.rank_tdi, collection.n_topics,
                          runs, collection.n_tdi)
        return cls(collection, collection.tdi_topic[tdi].astype(np.int64), tdi, best[tdi],
                   tuple(int(r) for r in runs))


def topic_folds(n_topics: int, folds: int, rng) -> np.ndarray:
    """Fold index of every topic: a random split into ``folds`` near-equal groups."""
    k = max(2, min(int(folds), n_topics))
    order = generator(rng).permutation(n_topics)
    fold = np.empty(n_topics, dtype=np.int64)
    fold[order] = np.arange(n_topics) % k
    return fold


def fusion_labels(collection, judgments, *, rel_level: int = 1, folds: int = 5, rng=0,
                  rows: PoolRows | None = None) -> AutoLabels:
    """Cross-fitted probabilities of relevance for every pooled document (module docstring)."""
    rows = rows or PoolRows.of(collection, judgments)
    judged = judgments.state[rows.tdi] == JUDGED
    grade = judgments.grade[rows.tdi]
    fold = topic_folds(collection.n_topics, folds, rng)[rows.topic]
    prob = np.zeros(len(rows.tdi))
    for j in np.unique(fold):
        held = fold == j
        model = fit_relevance(rows, judged & ~held, grade, rel_level=rel_level)
        prob[held] = model.prob[held]
    value = np.full(collection.n_tdi, np.nan)
    value[rows.tdi] = prob
    return AutoLabels(value, "probability", "fusion")


def resolve_labels(spec, collection, judgments, *, rel_level: int = 1, seed: int = 0):
    """Automatic labels from ``spec``: an :class:`AutoLabels`, ``"fusion"`` (the cross-fitted
    built-in labeller, folds drawn with ``seed``) or the path of a label file."""
    if spec is None or isinstance(spec, AutoLabels):
        return spec
    if str(spec) == "fusion":
        return fusion_labels(collection, judgments, rel_level=rel_level, rng=seed)
    from ...io.labels import read_labels

    return read_labels(spec, collection)
