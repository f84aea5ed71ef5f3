"""Adjusted p-values for many comparisons: Holm (1979) and Benjamini & Hochberg (1995).

The corrections themselves live in :mod:`irsample.stats.tests` (NaN p-values stay NaN and do
not count in m); this module picks one by name.

Holm's step-down: with p sorted ascending p_(1) <= ... <= p_(m), the adjusted
p~_(i) = max over j <= i of min(1, (m - j + 1) p_(j)); rejecting p~ < alpha controls the
family-wise error rate. Benjamini-Hochberg's step-up: p~_(i) = min over j >= i of
min(1, m p_(j) / j); rejecting p~ < alpha controls the false discovery rate (independent or
positively dependent tests).
"""

from __future__ import annotations

import numpy as np

from .tests import benjamini_hochberg, holm

__all__ = ["CORRECTIONS", "adjust", "benjamini_hochberg", "holm"]

CORRECTIONS = ("holm", "bh", "none")


def adjust(p, correction: str) -> np.ndarray:
    """Adjusted p-values by ``correction`` (one of :data:`CORRECTIONS`)."""
    if correction == "holm":
        return holm(p)
    if correction == "bh":
        return benjamini_hochberg(p)
    if correction == "none":
        return np.asarray(p, dtype=np.float64).copy()
    raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, not {correction!r}")
