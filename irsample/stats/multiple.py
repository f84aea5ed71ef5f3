"""Adjusted p-values for many comparisons: Holm (1979) and Benjamini & Hochberg (1995).

Holm's step-down: with p sorted ascending p_(1) <= ... <= p_(m), the adjusted
p~_(i) = max over j <= i of min(1, (m - j + 1) p_(j)); rejecting p~ < alpha controls the
family-wise error rate. Benjamini-Hochberg's step-up: p~_(i) = min over j >= i of
min(1, m p_(j) / j); rejecting p~ < alpha controls the false discovery rate (independent or
positively dependent tests).
"""

from __future__ import annotations

import numpy as np

CORRECTIONS = ("holm", "bh", "none")


def holm(p) -> np.ndarray:
    p = np.asarray(p, dtype=np.float64)
    m = len(p)
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.maximum.accumulate(scaled)
    return out


def benjamini_hochberg(p) -> np.ndarray:
    p = np.asarray(p, dtype=np.float64)
    m = len(p)
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, m * p[order] / np.arange(1, m + 1))
    out = np.empty(m)
    out[order] = np.minimum.accumulate(scaled[::-1])[::-1]
    return out


def adjust(p, correction: str) -> np.ndarray:
    """Adjusted p-values by ``correction`` (one of :data:`CORRECTIONS`)."""
    if correction == "holm":
        return holm(p)
    if correction == "bh":
        return benjamini_hochberg(p)
    if correction == "none":
        return np.asarray(p, dtype=np.float64).copy()
    raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, not {correction!r}")
