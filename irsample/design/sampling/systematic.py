"""Systematic sampling within rank strata: a random start and a fixed step through each cell.

Strata and sample sizes are those of :class:`~irsample.design.sampling.stratified.Stratified`
(spec ``1-10:1,11-100:0.2``; per (topic, stratum) cell of N documents k = max(1, round(rate N)),
or sizes set by a budget; :mod:`irsample.design.sampling.cells`). Only the draw within a cell
differs: instead of a simple random sample, a **systematic sample** through the cell's
documents ordered by best rank (ties in a random order, drawn anew with each sample), numbered
i = 0 .. N-1. With a random start r, uniform on {0, ..., N-1},

    document i is selected  iff  (r - i k) mod N < k,

i.e. the documents laid end to end as intervals of length k on [0, kN), and the ones holding
one of the k points r, r + N, ..., r + (k-1) N selected: a random start and a fixed step of
N/k documents (systematic sampling with a fractional interval; Madow & Madow, Ann. Math.
Statist. 1944; Cochran, *Sampling Techniques*, ch. 8; Särndal, Swensson & Wretman, *Model
Assisted Survey Sampling*, ch. 3). The arithmetic is on integers, so it is exact.

**First order.** Document i is selected for exactly the k starts r = (ik + j) mod N,
j = 0..k-1, so pi_i = k / N exactly (the same pi as the SRS of the stratified design), and
every sample has exactly k documents.

**Second order.** For a given order of the cell, documents d and e are selected together for
the starts in A_d ∩ A_e, A_i = {(ik + j) mod N : 0 <= j < k}: pi_de = |A_d ∩ A_e| / N. When
N / k is an integer L this is k/N for two documents on the same systematic path (i = i' mod L)
and 0 otherwise; in general every pair whose arcs do not overlap (e.g. neighbours in the order
whenever 2k <= N) has pi_de = 0. (Ties in best rank are ordered at random anew for each draw,
so averaged over that order more pairs have pi_de > 0, but pi_de stays far from the SRS's
k(k-1) / (N(N-1)).) The Sen-Yates-Grundy (and Horvitz-Thompson) variance estimators need
pi_de > 0 for every pair (Särndal et al., ch. 2-3), so **the design's variance cannot be
estimated without bias from one sample**. irsample's variances treat every cell as a simple
random sample of k of N (ht(M)'s per-cell Hájek form in :mod:`irsample.measures.ht.inclusion`;
sample_eval's xinfAP variance): the usual approximation for a systematic sample, which ignores
the implicit stratification by rank that the ordering gives (Cochran ch. 8: for a population
with a linear trend the systematic sample beats the SRS, so the approximation is conservative;
for a periodic one it can be too narrow). ht(M) of a measure with pair terms (AP: y_d y_e /
pi_de) also uses the SRS form of pi_de in its point estimate, so under this design it is only
approximately unbiased; for linear measures (P@k) only pi matters.

Measured, not assumed (``irsample simulate designs --trials 100 --seed 2008 --param
"designs=1-100:0.2;systematic(1-100:0.2)"``, the pooled runs' depth-100 pool, ht(AP) run
means): the SD observed across trials was 0.0323 (systematic) vs 0.0304 (SRS) on Vaswani and
0.0536 vs 0.0528 on CACM (each known to about 7% from 100 trials), i.e. no precision gain from
the ordering on these collections; the predicted / observed SD ratio 0.93 vs 1.08 (Vaswani) and
0.97 vs 1.05 (CACM); coverage of the 95% intervals 0.90 vs 0.97 and 0.79 vs 0.85; bias -0.005
vs +0.011 and -0.046 vs -0.039.

Merge formats: pi is equal within a cell (k/N), so stratified qrels (sample_eval's estimators
and ht(M) read pi = n_h/N_h) and prels (pi written) both carry the exact pi; their variances are
the SRS approximations above.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..frame import Design, Sample, SamplingFrame, generator
from .budget import Budget, as_budget, budget_suffix
from .stratified import RankStratum, Stratified, parse_strata, stratified


@njit(cache=True, nogil=True)
def select_systematic(cell_offsets, take, order, start, judged):
    """In every cell c (rows ``order[cell_offsets[c]:cell_offsets[c + 1]]``, in sampling
    order, N of them) select the i-th row iff (start[c] - i k) mod N < k, k = ``take[c]``."""
    for c in range(cell_offsets.shape[0] - 1):
        a = cell_offsets[c]
        n = cell_offsets[c + 1] - a
        k = take[c]
        if k <= 0 or n <= 0:
            continue
        for i in range(n):
            if (start[c] - i * k) % n < k:
                judged[order[a + i]] = True


@dataclass(frozen=True)
class Systematic(Design):
    """Strata by best rank as :class:`Stratified` (``strata``, ``budget``), each cell drawn by
    systematic sampling through its documents in best-rank order (see the module docstring):
    pi = k / N exactly, pi_de = 0 for many pairs. Named ``systematic(SPEC)[@B]``."""

    kind = "systematic"
    syntax = "systematic(SPEC)"

    strata: tuple[RankStratum, ...]
    budget: Budget | None = None

    def __post_init__(self):
        object.__setattr__(self, "budget", as_budget(self.budget))
        object.__setattr__(self, "strata", stratified(self.strata).strata)  # checked as there

    @classmethod
    def from_spec(cls, spec: str, budget) -> Systematic:
        return cls(parse_strata(spec), budget)

    @property
    def spec(self) -> str:
        return ",".join(f"{s.label}:{s.rate:g}" for s in self.strata)

    @property
    def name(self) -> str:
        return f"systematic({self.spec}){budget_suffix(self.budget)}"

    @property
    def depth(self) -> float:
        return self.strata[-1].last

    def select(self, frame: SamplingFrame, *, rng) -> Sample:
        def build():
            strata = Stratified(self.strata, self.budget, alias=f"systematic({self.spec})")
            allocation = strata.allocate(frame)
            cell = allocation.cell_of_order
            best = np.asarray(frame.best_rank, dtype=np.float64)[allocation.order]
            return allocation, cell, best

        allocation, cell, best = frame.memo(self, build)
        rng = generator(rng)
        ties = rng.random(len(allocation.order))  # a random order among equal best ranks
        order = allocation.order[np.lexsort((ties, best, cell))]
        sizes = np.diff(allocation.cell_offsets)
        start = rng.integers(0, np.maximum(sizes, 1))
        judged = np.zeros(len(allocation.stratum), dtype=bool)
        select_systematic(allocation.cell_offsets, allocation.take, order, start, judged)
        return Sample(judged, allocation.stratum, allocation.labels, allocation.inclusion)


def systematic(spec, *, budget=None) -> Systematic:
    """Systematic sampling within the strata of ``spec`` (as :func:`stratified` takes it,
    e.g. ``"1-10:1,11-100:0.2"``); see :class:`Systematic`."""
    return Systematic(stratified(spec).strata, budget)
