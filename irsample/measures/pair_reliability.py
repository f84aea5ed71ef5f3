"""Can the interval of a difference of two runs' means be trusted? The rule for pairs
(``irsample compare``), built on the run means' rule (:mod:`.reliability`).

The difference of two runs' means (:func:`assess_pair`) is unreliable when either run's mean
is, by support, weak topics or strata with nothing judged (rules 1, 2 and 6 of
:mod:`.reliability`, rules 1 and 2 counted in the draw: the
difference's variance is the sample's, and with the design's counts the unflagged pairs of
TREC-8 2strata 10% rejected 0.088 of tie-preserving twins, 30 trials; not rule 2's
``unsettled`` topics, where the difference's variance takes the model's if the sample's shows
no variation, ``ht/pairs.py``), or when the estimated bias of the difference (the sample's, as
the variance is: ``HT.difference_bias``, run a's minus run b's on each topic both answer,
summed over them; for an estimator that removes its bias, the topics' bounds on the
correction's error of the difference added in quadrature, as for a run's mean) exceeds
``reliability.MAX_BIAS_SE`` of the difference's standard error (rule 3, for the pair).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .reliability import (
    Reliability,
    biased_beyond_limit,
    carrying,
    quadrature_cells,
    summed_bias,
)


@dataclass(frozen=True)
class PairReliability:
    """Per pair of runs (``first[k]``, ``second[k]``): whether the interval of their difference
    is ``unreliable``, the ``reason`` and the ``topics`` (indices) that cause it, and the
    estimated bias of the difference over its standard error (NaN where the estimator gives
    none)."""

    unreliable: np.ndarray
    reason: tuple[str, ...]
    topics: tuple[tuple[int, ...], ...]
    bias_se: np.ndarray

    @property
    def status(self) -> np.ndarray:
        """``"ok"`` or ``"unreliable"`` per pair."""
        return np.where(self.unreliable, "unreliable", "ok")


def assess_pair(ctx, measure, runs: Reliability, first, second, evaluated: np.ndarray,
                se: np.ndarray, names=None) -> PairReliability:
    """The rule for differences (module docstring): the pairs ``first[k] - second[k]`` of the
    context's runs, ``runs`` their means' :func:`assess`, ``evaluated`` (runs, topics) the
    topics each run answers (a pair's difference is over the topics both answer), ``se`` the
    standard error of each pair's mean difference; ``names`` the runs' names in the reasons."""
    first, second = np.asarray(first), np.asarray(second)
    names = ctx.collection.run_names if names is None else names
    shape = (ctx.n_runs, ctx.n_topics)
    weak_or_thin = runs.thin_or_weak
    both = evaluated[first] & evaluated[second]
    q = np.maximum(both.sum(axis=1), 1)
    if hasattr(measure, "difference_bias"):
        bias = measure.difference_bias(ctx, first, second)
    else:
        bias = (measure.estimated_bias(ctx, from_sample=True)
                if hasattr(measure, "estimated_bias") else None)
        if bias is not None:
            bias = np.asarray(bias, dtype=np.float64).reshape(shape)
            bias = bias[first] - bias[second]
    if bias is None:
        bias_se = np.full(len(first), np.nan)
        per_cell = np.zeros(both.shape)
    else:
        per_cell = np.where(both, bias, 0.0)
        fixed = quadrature_cells(ctx, measure, shape)
        mean_bias = summed_bias(per_cell, fixed[first] & fixed[second]) / q
        se = np.asarray(se, dtype=np.float64)
        bias_se = np.where(se > 0, np.abs(mean_bias) / np.where(se > 0, se, 1.0), 0.0)
    biased = biased_beyond_limit(bias_se)
    unreliable = weak_or_thin[first] | weak_or_thin[second] | biased
    reasons, causes = [], []
    for k, (a, b_) in enumerate(zip(first, second)):
        parts, cause = [], []
        for r in (a, b_):
            if weak_or_thin[r]:  # its mean's reasons but its own bias (the pair's is below)
                own = [p for p in runs.reason[r].split("; ") if not p.startswith("estimated")]
                parts.append(f"{names[r]}: {'; '.join(own)}")
                cause += [t for t in runs.topics[r] if t not in cause]
        if biased[k]:
            parts.append(f"estimated bias of the difference {bias_se[k]:.2f} of its standard "
                         "error")
            cause += [t for t in carrying(per_cell[k]) if t not in cause]
        reasons.append("; ".join(parts))
        causes.append(tuple(int(c) for c in cause))
    return PairReliability(unreliable, tuple(reasons), tuple(causes), bias_se)
