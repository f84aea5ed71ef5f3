"""Bounds on a plan's sample sizes per cell (topic x stratum): the least (what is judged plus
forced top-ups) and, for the rate band, the least and largest sizes around the judged fraction
(:mod:`irsample.design.planner.plan`, module docstring, "Bounds" and "Band")."""

from __future__ import annotations

import numpy as np

MIN_TOP_UP = 2  #: least new judgments per cell with unjudged documents
SPREAD = 1.5  #: the band: every cell's rate within [f / SPREAD, f SPREAD], f the judged fraction


def lower_sizes(size: np.ndarray, judged: np.ndarray, min_take: int = 1,
                top_up: int = 0) -> np.ndarray:
    """Per cell the least sample size: what is judged plus ``top_up`` more (as far as the cell
    has unjudged documents), and ``min_take`` (at most N)."""
    more = judged + np.minimum(top_up, np.maximum(size - judged, 0))
    return np.maximum(more, np.minimum(size, min_take))


def wide_enough(size, budget, band, top_up) -> bool:
    """Whether every stratum expects ``top_up`` judgments per topic at the least rate the
    band allows (mean over topics whose cell is not empty): narrower strata could only be
    sampled above the band."""
    if band is None or size.shape[1] == 1:
        return True
    least = size * (budget / max(int(size.sum()), 1)) / band
    used = size > 0
    mean = (least * used).sum(axis=0) / np.maximum(used.sum(axis=0), 1)
    return bool(np.all(mean >= top_up))


def upper_sizes(size, lo, budget, band):
    """Per cell the largest sample size: ``band`` times the pool's judged fraction (at least
    what is judged already), at most N."""
    if band is None:
        return size
    rate = budget / max(int(size.sum()), 1)
    return np.minimum(size, np.maximum(lo, np.ceil(band * rate * size - 1e-9))).astype(np.int64)


def floor_sizes(size, budget, band):
    """Per cell the least sample size the band allows: the judged fraction / ``band``."""
    if band is None:
        return np.zeros_like(size)
    rate = budget / max(int(size.sum()), 1)
    return np.floor(rate / band * size + 1e-9).astype(np.int64)
