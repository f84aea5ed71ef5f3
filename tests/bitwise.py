"""Outputs of a change against a fixture of the outputs before it, to the bit: the check of the
speed-ups that must not move a number (``tests/test_*_identical.py``, ``test_planner_shared``)."""

from __future__ import annotations

import numpy as np

#: the last bits a library's own update may move (a fresh install, numpy 2.4.6 and numba 0.68.1,
#: moved RBP's and two nDCG arrays by 1-2 ulps against the fixtures, at an unchanged commit)
ULPS = 4


def differing(before_path, now: dict) -> list[str]:
    """The keys of the ``.npz`` fixture at ``before_path`` whose arrays differ from ``now``'s
    by more than :data:`ULPS` units in the last place of the array's largest value (a variance
    summed with cancellation carries its last bits on that scale; NaN equal to NaN; integers
    and booleans exactly); the two must hold the same keys."""
    before = np.load(before_path)
    assert sorted(now) == sorted(before.files)
    return [key for key in before.files if not _same(before[key], np.asarray(now[key]))]


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape:
        return False
    if not (np.issubdtype(a.dtype, np.floating) and np.issubdtype(b.dtype, np.floating)):
        return bool(np.array_equal(a, b))
    nan = np.isnan(a)
    if not np.array_equal(nan, np.isnan(b)):
        return False
    x, y = a[~nan], b[~nan]
    if not np.array_equal(np.isinf(x), np.isinf(y)) or not np.array_equal(x[np.isinf(x)],
                                                                         y[np.isinf(y)]):
        return False
    finite = np.isfinite(x)
    x, y = x[finite], y[finite]
    if not len(x):
        return True
    scale = max(float(np.abs(x).max()), float(np.abs(y).max()))
    return bool(np.all(np.abs(x - y) <= ULPS * np.spacing(scale)))
