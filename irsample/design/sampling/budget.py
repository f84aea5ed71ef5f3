"""Judgment budgets: how a design with a budget sets its sample sizes.

A design's rates (or fractions) give the *shape* of its sample; a :class:`Budget` of B judgments,
in total or per topic, gives its *size*. Given per cell (topic x stratum) its size N_c and the
design's target k*_c = rate_s * N_c (a depth-k + random design: N_c for the depth-k stratum and
min(N_depth-k, N_c) for the rest), the budget's sample sizes k_c are found in two phases:

1. Exhaustive cells (k*_c = N_c: rate 1, e.g. the depth-10 stratum of ``1-10:1,11-:0.1``) stay
   exhaustive while possible: if B >= sum of exhaustive N_c + one per other non-empty cell, the
   other cells get k_c = clip(lambda * k*_c, 1, N_c), with the one lambda >= 0 (all cells of the
   budget's scope: every topic for a total budget, one topic for a per-topic budget) that makes
   the exhaustive cells plus these sum to B. Rates are thus scaled proportionally, up or down,
   and capped at 1 (a capped cell becomes exhaustive).
2. Otherwise every cell is scaled, exhaustive ones included: k_c = clip(mu * k*_c, 1, N_c) with
   the mu < 1 making them sum to B.

Every non-empty cell keeps at least one document (an empty stratum sample cannot be estimated;
see :mod:`irsample.design.sampling.stratified`). The real-valued k_c are rounded to integers
summing exactly
to B by largest remainders (Hamilton's method; ties to the earlier cell), within [1, N_c]; each
document of a cell then has pi = k_c / N_c. Errors: B larger than the pool of the scope (there is
nothing more to judge), or smaller than its number of non-empty cells.
"""

from __future__ import annotations

import numbers
import re
from dataclasses import dataclass

import numpy as np

from ...errors import DesignError


@dataclass(frozen=True)
class Budget:
    """``total`` judgments over all topics, or per topic with ``per_topic``."""

    total: int
    per_topic: bool = False

    def __post_init__(self):
        t = self.total
        if isinstance(t, bool) or not isinstance(t, numbers.Integral) or t < 1:
            raise DesignError(f"budget must be an integer >= 1, got {t!r}")
        object.__setattr__(self, "total", int(t))

    @property
    def label(self) -> str:
        """``500`` or ``20/topic``: the suffix of a design name after ``@``."""
        return f"{self.total}/topic" if self.per_topic else f"{self.total}"

    @classmethod
    def parse(cls, text: str) -> Budget:
        m = re.fullmatch(r"\s*(\d+)\s*(/\s*topic)?\s*", text)
        if m is None:
            raise DesignError(f"budget: expected 'N' or 'N/topic', got {text!r}")
        return cls(int(m.group(1)), m.group(2) is not None)


def as_budget(value) -> Budget | None:
    """``value`` as a :class:`Budget`: None, a Budget, or an integer (a total budget)."""
    if value is None or isinstance(value, Budget):
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return Budget(int(value))
    raise DesignError(f"budget must be a Budget or an integer, got {value!r}")


def budget_suffix(budget: Budget | None) -> str:
    """``@500`` or ``@20/topic``: what a budget adds to a design's name (empty without)."""
    return "" if budget is None else f"@{budget.label}"


def round_half_up(target: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Sample sizes without a budget: max(1, floor(k* + 0.5)) within [0, N] (0 for N = 0)."""
    size = np.asarray(size, dtype=np.int64)
    k = np.floor(np.asarray(target, dtype=np.float64) + 0.5).astype(np.int64)
    return np.where(size > 0, np.clip(k, 1, size), 0)


def sizes_under_budget(
    size: np.ndarray, target: np.ndarray, budget: Budget, topics=None
) -> np.ndarray:
    """Integer sample sizes ``(T, S)`` for cell sizes ``size`` and targets ``target`` (both
    ``(T, S)``) under ``budget`` (see the module docstring); ``topics`` names the topics in
    messages."""
    size = np.asarray(size, dtype=np.int64)
    target = np.minimum(np.asarray(target, dtype=np.float64), size)
    if not budget.per_topic:
        return _fill(size.ravel(), target.ravel(), budget.total, "").reshape(size.shape)
    take = np.zeros_like(size)
    for t in range(size.shape[0]):
        if size[t].sum() == 0:
            continue
        name = topics[t] if topics is not None else str(t)
        take[t] = _fill(size[t], target[t], budget.total, f" of topic {name}")
    return take


def _fill(size: np.ndarray, target: np.ndarray, budget: int, where: str) -> np.ndarray:
    nonempty = size > 0
    pool = int(size.sum())
    if budget > pool:
        raise DesignError(
            f"budget of {budget} judgments is larger than the pool{where} ({pool} documents)"
        )
    if budget < int(nonempty.sum()):
        raise DesignError(
            f"budget of {budget} judgments is smaller than the {int(nonempty.sum())} non-empty "
            f"(topic, stratum) cells{where}; every cell needs at least one judgment"
        )
    exhaustive = nonempty & (target >= size)
    free = nonempty & ~exhaustive
    real = np.zeros(len(size))
    fixed = int(size[exhaustive].sum())
    if budget - fixed >= int(free.sum()):
        real[exhaustive] = size[exhaustive]
        real[free] = _scaled(size[free], target[free], budget - fixed)
    else:
        real[nonempty] = _scaled(size[nonempty], target[nonempty], budget)
    return _round_to_total(real, size, budget)


def _scaled(size: np.ndarray, target: np.ndarray, total: int) -> np.ndarray:
    """clip(lam * target, 1, N) summing to ``total`` (sum of ones <= total <= sum of N)."""
    if len(size) == 0:
        return np.zeros(0)
    n = size.astype(np.float64)
    positive = target > 0
    reachable = float(np.where(positive, n, 1.0).sum())
    if total > reachable + 1e-9:
        raise DesignError("budget cannot be reached: some strata have a zero target size")
    lo, hi = 0.0, float(np.max(n[positive] / target[positive])) if positive.any() else 0.0
    for _ in range(200):  # bisection on a nondecreasing piecewise-linear function
        mid = 0.5 * (lo + hi)
        if np.clip(mid * target, 1.0, n).sum() < total:
            lo = mid
        else:
            hi = mid
    return np.clip(hi * target, 1.0, n)


def _round_to_total(real: np.ndarray, size: np.ndarray, total: int) -> np.ndarray:
    """Integers within [1, N] (0 for empty cells) summing to ``total``, by largest remainders."""
    nonempty = size > 0
    k = np.where(nonempty, np.clip(np.floor(real + 1e-9), 1, size), 0).astype(np.int64)
    left = total - int(k.sum())
    if left > 0:
        room = np.flatnonzero(nonempty & (k < size))
        frac = (real - k)[room]
        pick = room[np.argsort(-frac, kind="stable")[:left]]
        k[pick] += 1
    elif left < 0:
        room = np.flatnonzero(k > 1)
        frac = (real - k)[room]
        pick = room[np.argsort(frac, kind="stable")[:-left]]
        k[pick] -= 1
    if int(k.sum()) != total:  # pragma: no cover - guarded by _fill's checks
        raise DesignError(f"cannot allocate a budget of {total} judgments")
    return k
