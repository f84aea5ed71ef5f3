"""Interpolated precision at recall levels, 11-point average, precision at multiples of R.

Interpolated precision at recall fraction p (Salton & McGill 1983; trec_eval): the maximum
precision rel(i)/i over all ranks i at or below the rank of the c-th relevant retrieved document,
where c is p*R rounded to an integer — half away from zero in trec_eval 10, truncating p*R + 0.9
in 9.0.8 (``compat``). c = 0 takes the maximum precision over the whole ranking; c larger than
the relevant documents retrieved gives 0. An empty ranking gives 0 (trec_eval divides 0 by 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from ..._threads import parallel_when_large
from ...errors import MeasureError
from ..base import Measure, split_values
from ..context import safe_divide

_SM = "Salton & McGill, Introduction to Modern Information Retrieval (1983); trec_eval"
ELEVEN_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
R_MULTIPLES = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)


@parallel_when_large
def _best_precision_below(offsets, rel):
    """Per position: the maximum precision rel(i)/i over this and every lower rank."""
    out = np.empty(rel.shape[0])
    for s in prange(offsets.shape[0] - 1):
        a = offsets[s]
        b = offsets[s + 1]
        running = 0
        for i in range(a, b):
            running += rel[i]
        best = 0.0
        for i in range(b - 1, a - 1, -1):
            p = running / (i - a + 1.0)
            if p > best:
                best = p
            out[i] = best
            running -= rel[i]
    return out


@njit(cache=True, nogil=True)
def _iprec_at(offsets, best_below, rel_pos, rel_offsets, num_rel, point, round_half):
    n_seg = offsets.shape[0] - 1
    out = np.zeros(n_seg)
    for s in range(n_seg):
        if offsets[s + 1] == offsets[s]:
            continue
        x = point * num_rel[s]
        c = int(math.floor(x + 0.5)) if round_half else int(x + 0.9)
        found = rel_offsets[s + 1] - rel_offsets[s]
        if c <= 0:
            out[s] = best_below[offsets[s]]
        elif c <= found:
            out[s] = best_below[rel_pos[rel_offsets[s] + c - 1]]
    return out


def interpolated_precision(ctx, point: float) -> np.ndarray:
    """Interpolated precision at recall fraction ``point`` for every segment."""

    def shared():
        rel = ctx.rel()
        rel_pos = np.flatnonzero(rel != 0)  # a boolean mask: twice as fast as int64
        rel_offsets = np.concatenate([[0], np.cumsum(ctx.total(ctx.cum_rel()))]).astype(np.int64)
        return _best_precision_below(ctx.offsets, rel), rel_pos, rel_offsets

    best_below, rel_pos, rel_offsets = ctx.shared(("iprec", ctx.rel_level), shared)
    return _iprec_at(
        ctx.offsets, best_below, rel_pos, rel_offsets, ctx.num_rel(), float(point),
        ctx.compat == "10",
    )


def _fraction_text(p: float) -> str:
    """How trec_eval's users write fractions in parameter strings: .25, .5, 1."""
    text = f"{p:g}"
    return text[1:] if text.startswith("0.") else text


@dataclass(frozen=True)
class _AtPoint(Measure):
    """A measure at one value of its parameter ``at_param``, which trec_eval prints as
    ``<trec>_<value, 2 decimals>`` and, given no parameters, computes at every value of
    ``trec_defaults`` (no ``family``: the registry skips this base)."""

    @classmethod
    def from_trec(cls, params, name=None):
        points = cls.trec_defaults if params is None else sorted(
            split_values(params, float, cls.trec))
        return [cls(**{cls.at_param: p}) for p in points]

    @property
    def canonical_trec_name(self):
        return f"{self.trec}_{getattr(self, self.at_param):3.2f}"


@dataclass(frozen=True)
class IPrec(_AtPoint):
    """Interpolated precision at recall fraction ``recall`` (see the module docstring)."""

    recall: float = 0.0
    family = "IPrec"
    trec = "iprec_at_recall"
    at_param = "recall"
    trec_defaults = ELEVEN_POINTS
    citation = _SM

    def __post_init__(self):
        if not 0.0 <= self.recall <= 1.0:
            raise MeasureError(f"IPrec: recall must be in [0, 1], got {self.recall}")

    def compute(self, ctx):
        return interpolated_precision(ctx, self.recall)


@dataclass(frozen=True)
class ElevenPointAP(Measure):
    """Mean interpolated precision over recall fractions (default the 11 points 0, 0.1, ..., 1)."""

    points: tuple = ELEVEN_POINTS
    family = "11pt_avg"
    trec = "11pt_avg"
    trec_typed = ("11pt_avg",)
    aliases = ("ElevenPtAP",)
    citation = _SM

    @classmethod
    def from_trec(cls, params, name=None):
        if params is None:
            return [cls()]
        return [cls(points=tuple(split_values(params, float, cls.trec)))]

    @property
    def canonical_trec_name(self):
        if self.points == ELEVEN_POINTS:
            return "11pt_avg"
        return "11pt_avg_" + ",".join(_fraction_text(p) for p in self.points)

    def compute(self, ctx):
        total = sum(interpolated_precision(ctx, p) for p in self.points)
        return total / len(self.points)


@dataclass(frozen=True)
class RprecMult(_AtPoint):
    """Precision at rank c = trunc(m * R + 0.9) for a multiple m of R: rel(c) / c; 0 if c = 0.

    trec_eval ``Rprec_mult`` (the +0.9 rounding is the same in trec_eval 9 and 10).
    """

    multiple: float = 1.0
    family = "Rprec_mult"
    trec = "Rprec_mult"
    at_param = "multiple"
    trec_defaults = R_MULTIPLES
    citation = "trec_eval Rprec_mult"

    def compute(self, ctx):
        cut = np.trunc(self.multiple * ctx.num_rel() + 0.9).astype(np.int64)
        return safe_divide(ctx.at_cutoff(ctx.cum_rel(), cut), cut)
