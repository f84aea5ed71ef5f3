"""The Neyman allocation under bounds: integer sample sizes n_c in [lower_c, size_c] summing to
a budget that minimise sum_c weight_c / n_c (the variance of a stratified estimate with cell
variances proportional to weight_c; ``plan.py``, module docstring, step 2).

The continuous optimum is n_c = clip(lambda sqrt(w_c), lower_c, size_c) with lambda set by the
budget (Neyman 1934; Cochran, *Sampling Techniques* §5.5, with the bounds of §5A.4); the integer
solution then adds one unit at a time where it cuts sum w/n most (exact for this separable
convex objective: Fox 1966).
"""

from __future__ import annotations

import heapq

import numpy as np

from ...errors import DesignError


def neyman(weight: np.ndarray, size: np.ndarray, lower: np.ndarray, budget: int) -> np.ndarray:
    """Integer n_c in [lower_c, size_c] summing to ``budget`` that minimise
    sum_c weight_c / n_c (module docstring). Arrays of any (same) shape."""
    w, n, lo = (np.asarray(a, dtype=np.float64).ravel() for a in (weight, size, lower))
    if budget < lo.sum() or budget > n.sum():
        raise DesignError(f"budget of {budget} judgments is outside [{int(lo.sum())}, "
                          f"{int(n.sum())}] (judged or one per cell .. the whole pool)")
    real = continuous_neyman(w, n, lo, budget)
    take = np.clip(np.floor(real + 1e-9), lo, n)
    heap = [(-w[c] / (take[c] * (take[c] + 1)), c) for c in np.flatnonzero(take < n)]
    heapq.heapify(heap)
    for _ in range(int(budget - take.sum())):
        _, c = heapq.heappop(heap)
        take[c] += 1
        if take[c] < n[c]:
            heapq.heappush(heap, (-w[c] / (take[c] * (take[c] + 1)), c))
    return take.astype(np.int64).reshape(np.shape(size))


def continuous_neyman(w, n, lo, budget):
    """clip(lambda sqrt(w), lo, n) summing to ``budget``."""
    root = np.sqrt(np.maximum(w, 0.0))
    positive = root > 0
    if not positive.any():
        scale = (budget - lo.sum()) / max(float((n - lo).sum()), 1.0)
        return lo + scale * (n - lo)
    # the sum is piecewise linear in lambda, with kinks where a cell reaches lo or n: bisect
    # over the kinks, then interpolate (exact, however many orders of magnitude w spans)
    kinks = np.unique(np.concatenate([[0.0], lo[positive] / root[positive],
                                      n[positive] / root[positive]]))
    def total(k):
        return float(np.clip(kinks[k] * root, lo, n).sum())

    a, b = 0, len(kinks) - 1
    if total(b) <= budget:
        lam = kinks[b]
    else:  # total(a) <= budget < total(b)
        while b - a > 1:
            mid = (a + b) // 2
            if total(mid) <= budget:
                a = mid
            else:
                b = mid
        low, high = total(a), total(b)
        lam = kinks[a] + (budget - low) / (high - low) * (kinks[b] - kinks[a])
    real = np.clip(lam * root, lo, n)
    if real.sum() < budget - 1e-6:  # only zero-weight cells can still grow
        room = np.where(positive, 0.0, n - real)
        real += room * min(1.0, (budget - real.sum()) / max(room.sum(), 1e-12))
    return real
