"""Confidence intervals: the z of a confidence level and the normal-theory interval, with the
result class every interval of the package returns.

``z(level)`` is the standard normal quantile z_{(1 + level)/2} (1.959964 for 0.95), computed by
the standard library's :class:`statistics.NormalDist` (Wichura's AS241 algorithm), so neither
scipy nor anything else is imported for it. :func:`normal_interval` is the Wald interval
estimate -/+ z sqrt(variance) (e.g. Cochran, Sampling Techniques, 3rd ed., §2.8). Results are
:class:`Interval` objects, like ``scipy.stats``' confidence intervals: ``low, high = interval``
unpacks them.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np


def check_level(level) -> float:
    """``level`` as a float, or ValueError when it is not a confidence level in (0, 1)."""
    if isinstance(level, bool) or not isinstance(level, (int, float, np.floating)) or not (
        0.0 < level < 1.0
    ):
        raise ValueError(f"a confidence level must be a number in (0, 1), not {level!r}")
    return float(level)


def covers(estimate, low, high, truth) -> np.ndarray:
    """Whether [low, high] holds ``truth``, elementwise; an estimate with no variance left (all
    it rests on judged, a zero-width interval) covers when it equals the truth up to rounding
    (1e-12)."""
    exact = np.isclose(estimate, truth, rtol=0.0, atol=1e-12)
    return ((low <= truth) & (truth <= high)) | exact


def z(level: float) -> float:
    """The two-sided normal quantile of confidence ``level``: z with P(|Z| <= z) = level, i.e.
    the (1 + level)/2 quantile of N(0, 1). ``z(0.95)`` = 1.959963984540054."""
    return NormalDist().inv_cdf(0.5 + check_level(level) / 2.0)


@dataclass(frozen=True, eq=False)
class Interval:
    """A confidence interval ``[low, high]`` at confidence ``level`` around ``estimate``, found
    by ``method``; ``standard_error`` where the method has one. Fields may be arrays (one
    interval per element). ``low, high = interval`` unpacks the limits, as with scipy.stats'
    ``ConfidenceInterval``."""

    estimate: float | np.ndarray
    low: float | np.ndarray
    high: float | np.ndarray
    level: float
    method: str
    standard_error: float | np.ndarray | None = None

    def __iter__(self):
        return iter((self.low, self.high))


def normal_interval(estimate, variance, level: float, *, method: str = "normal") -> Interval:
    """The normal-theory (Wald) interval estimate -/+ z(level) sqrt(variance), elementwise;
    not clipped to any range. NaN variances give NaN limits."""
    estimate = np.asarray(estimate, dtype=np.float64)
    se = np.sqrt(np.asarray(variance, dtype=np.float64))
    half = z(level) * se
    return Interval(_out(estimate), _out(estimate - half), _out(estimate + half), float(level),
                    method, _out(se))


def _out(a):
    """0-d arrays as Python floats (scalar in, scalar out, as scipy.stats does)."""
    return a.item() if a.ndim == 0 else a
