"""Rule 3's reading of a run mean's bias (:mod:`.limits`, rule 3): the topics' estimated
biases summed with their signs, or added in quadrature where they bound an error of no fixed
sign; the bounds on an imputed topic's error and on a ratio fitted to few judged relevant
documents; and the topics that carry the bias (where to judge next).
"""

from __future__ import annotations

import numpy as np

from .limits import PER_RELEVANT


def summed_bias(per_cell: np.ndarray, in_quadrature) -> np.ndarray:
    """Per row (a run's mean, or a pair's difference, times its topics): the size of the
    topics' estimated biases ``per_cell`` together. Where they are the bias itself (the
    estimate leaves it in), they are summed, signed (the bias of a sum); where they bound an
    error of no fixed sign (``in_quadrature``, per cell or for all:
    ``Measure.bias_in_quadrature``; the correction's own error where the estimate removes the
    bias), random and independent from topic to topic, they add in quadrature (rule 3); the
    two parts add."""
    fixed = np.broadcast_to(np.asarray(in_quadrature, dtype=bool), per_cell.shape)
    signed = np.where(fixed, 0.0, per_cell).sum(axis=1)
    return np.abs(signed) + np.sqrt(np.where(fixed, per_cell * per_cell, 0.0).sum(axis=1))


def quadrature_cells(ctx, measure, shape) -> np.ndarray:
    """(runs, topics): where rule 3 adds ``measure``'s estimated bias in quadrature
    (``Measure.bias_in_quadrature``)."""
    fixed = (measure.bias_in_quadrature(ctx) if hasattr(measure, "bias_in_quadrature")
             else False)
    return np.broadcast_to(np.asarray(fixed, dtype=bool), (int(np.prod(shape)),)).reshape(shape)


def imputation_bound(values: np.ndarray, evaluated: np.ndarray, imputed: np.ndarray,
                     settled: np.ndarray | None = None) -> np.ndarray:
    """(runs, topics): rule 3's bound on an imputed topic's error, in the ``imputed`` cells (0
    elsewhere): the spread of the run's estimates ``values`` over its other ``evaluated``
    topics (the error of a value imputed from a topic missing at random over topics), and on
    the topics judged :data:`SETTLED` or more of their pool (``settled``, per topic) at least
    the imputed value itself: half a pool judged without a relevant document leaves open that
    the topic has none, whose truth is 0 (the measure of a topic without relevant documents),
    so the imputed value may be all error."""
    bound = imputed * _spread(values, evaluated & ~imputed)[:, None]
    if settled is None:
        return bound
    return np.where(imputed & settled[None, :], np.maximum(bound, np.abs(values)), bound)


def per_relevant(measure) -> bool:
    """Whether ``measure`` estimates a measure normalised by R (:data:`PER_RELEVANT`)."""
    return getattr(getattr(measure, "inner", None), "family", None) in PER_RELEVANT


def fitted_bound(values: np.ndarray, fitted: np.ndarray, found: np.ndarray) -> np.ndarray:
    """(runs, topics): rule 3's bound on the error of a ratio fitted to few judged relevant
    documents, in the ``fitted`` cells (weak topics, rule 2, that are not imputed and whose
    judged relevant documents were all judged with certainty, :func:`certain_relevant_only`; 0
    elsewhere): the estimate over the topic's judged relevant documents ``found``, |theta^| / k.
    A ratio's bias is of the order of the estimate over the number of relevant documents
    sampled, and its variance, fitted to those one or two, is near 0 (:mod:`.limits`,
    rule 2): on Robust 2005 with synthetic runs under the planned design at 30%, topic 345 (9
    relevant of 735 in the pool) held only its 2 documents judged with certainty in 7 of 12
    draws, and then one run's AP read 0.5 with variance 0 against a truth of 0.2, 0.006 on
    the run's mean, whose standard error was about 0.003 (REPRODUCTION.md, "Rule 3 bounds the
    ratios fitted to few documents")."""
    return np.where(fitted, np.abs(values) / np.maximum(found, 1)[None, :], 0.0)


def _spread(values: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """Per run: the standard deviation of its estimates over ``cells`` (0 with fewer than 2)."""
    n = cells.sum(axis=1)
    v = np.where(cells, values, 0.0)
    mean = v.sum(axis=1) / np.maximum(n, 1)
    ss = np.where(cells, (values - mean[:, None]) ** 2, 0.0).sum(axis=1)
    return np.where(n > 1, np.sqrt(ss / np.maximum(n - 1, 1)), 0.0)


def carrying(bias: np.ndarray, share: float = 0.5) -> list[int]:
    """The topics whose estimated bias, largest first, makes up ``share`` of the run's."""
    size = np.abs(bias)
    order = np.argsort(-size, kind="stable")
    total = size.sum()
    if total <= 0:
        return []
    upto = int(np.searchsorted(np.cumsum(size[order]), share * total)) + 1
    return [int(t) for t in order[:upto]]
