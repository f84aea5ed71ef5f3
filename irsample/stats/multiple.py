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
    """Adjusted p-values by ``correction``.

    Parameters
    ----------
    p : array_like
        p-values in [0, 1] (NaN: not tested; stays NaN and does not count in m).
    correction : {"holm", "bh", "none"}
        Holm's step-down (family-wise error rate), Benjamini-Hochberg's step-up (false
        discovery rate), or none.

    Returns
    -------
    numpy.ndarray
        The adjusted p-values, in the order of ``p``.

    Raises
    ------
    ValueError
        An unknown correction, or p-values outside [0, 1].

    Examples
    --------
    >>> adjust([0.01, 0.04, 0.03, 0.005], "holm")
    array([0.03, 0.06, 0.06, 0.02])
    >>> adjust([0.01, 0.04, 0.03, 0.005], "bh")
    array([0.02, 0.04, 0.04, 0.02])
    """
    if correction == "holm":
        return holm(p)
    if correction == "bh":
        return benjamini_hochberg(p)
    if correction == "none":
        return np.asarray(p, dtype=np.float64).copy()
    raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, not {correction!r}")
