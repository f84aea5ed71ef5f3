"""The depth-k pool as a sample of a deeper pool: judged to depth k, the rest never judged.

Yilmaz & Aslam, "Estimating average precision when judgments are incomplete", KAIS 2008
(paper 001), §5.2, read shallow pools as incomplete judgments of the depth-100 pool: every
document some run ranks within the top k is judged (pi = 1), the rest of the pool is pooled but
unjudged (pi = 0). No document beyond depth k is judged, not even one per topic (unlike the
sampling designs' at-least-one rule): the draw is not random at all. Two strata, ``1-k``
(k = N, exhaustive) and ``k+1-`` (none judged); the design is not a probability sample of the
second stratum, so estimators that extrapolate to it (infAP) carry the bias paper 001
measures.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from ...errors import DesignError
from ..frame import Design, Sample, SamplingFrame, generator
from .cells import spec_number


@dataclass(frozen=True)
class DepthPool(Design):
    """The depth-``k`` pool as a sample of the frame: rows with best rank <= k judged
    (pi = 1), the rest of the frame pooled but never judged (pi = 0). ``depth(k)``."""

    kind = "depth"
    syntax = "depth(K)"
    takes_budget = False

    k: int

    def __post_init__(self):
        if isinstance(self.k, bool) or not isinstance(self.k, numbers.Integral) or self.k < 1:
            raise DesignError(f"depth: k must be an integer >= 1, got {self.k!r}")
        object.__setattr__(self, "k", int(self.k))

    @classmethod
    def from_spec(cls, spec: str, budget) -> DepthPool:
        number = spec_number(spec, cls.kind)
        if not number.is_integer():
            raise DesignError(f"depth: k must be an integer >= 1, got {spec!r}")
        if budget is not None:
            raise DesignError(f"depth({spec}) judges the whole depth-k pool: it takes no budget")
        return cls(int(number))

    @property
    def name(self) -> str:
        return f"depth({self.k})"

    def select(self, frame: SamplingFrame, *, rng) -> Sample:
        """Every row with best rank <= k (no randomness: ``rng`` is checked, not used)."""
        generator(rng)
        fixed = frame.memo(self, lambda: self._sample(frame))
        return Sample(fixed.judged.copy(), fixed.stratum, fixed.labels, fixed.inclusion)

    def _sample(self, units) -> Sample:
        top = np.asarray(units.best_rank) <= self.k
        stratum = (~top).astype(np.int64)
        inclusion = top.astype(np.float64)
        for shared in (top, stratum, inclusion):  # the same Sample for every draw: read-only
            shared.flags.writeable = False
        return Sample(top, stratum, (f"1-{self.k}", f"{self.k + 1}-"), inclusion)
