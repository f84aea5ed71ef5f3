"""Outputs of a change against a fixture of the outputs before it, to the bit: the check of the
speed-ups that must not move a number (``tests/test_*_identical.py``, ``test_planner_shared``)."""

from __future__ import annotations

import numpy as np


def differing(before_path, now: dict) -> list[str]:
    """The keys of the ``.npz`` fixture at ``before_path`` whose arrays differ from ``now``'s
    (NaN equal to NaN); the two must hold the same keys."""
    before = np.load(before_path)
    assert sorted(now) == sorted(before.files)
    return [key for key in before.files
            if not np.array_equal(before[key], now[key], equal_nan=True)]
