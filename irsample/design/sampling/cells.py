"""Cells and their sample sizes: the fixed part of every design that samples k of N per cell.

A **cell** is one (topic, stratum) of a design: the pool rows of topic t whose stratum (set by
the design, e.g. by best rank) is s; rows with stratum -1 are outside the design. Every
equal-probability design of :mod:`irsample.design.sampling` works in two steps:

1. :func:`allocate` (once per frame or pool, memoised by the design): group the rows by cell
   and fix k_c, the sample size of each cell c of N_c rows, from a real-valued target k*_c:

   - without a budget, rounded half up with at least one document per non-empty cell,
     k_c = max(1, floor(k*_c + 0.5)) within [0, N_c] (:func:`sample_size` for k* = rate N);
   - with a :class:`~irsample.design.sampling.budget.Budget`, the sizes of
     :func:`~irsample.design.sampling.budget.sizes_under_budget` (the targets give the
     proportions, the budget the total).

   Every row of cell c then has the first-order inclusion probability pi = k_c / N_c, however
   the k_c rows are drawn, as long as the draw gives every row of the cell the same chance
   (Cochran, *Sampling Techniques*, ch. 2 and 5).
2. a draw: :func:`draw` takes a simple random sample without replacement (SRS) of k_c of the
   N_c rows of every cell, by Knuth's selection sampling (TAOCP vol. 2, §3.4.2, Algorithm S:
   walking the cell's rows in frame order, row j is selected with probability
   (k - selected) / (N - j), one uniform per row; every k-subset is equally likely, so
   pi_de = k(k-1) / (N(N-1)) for two rows of a cell). Other draws over the same allocation
   (e.g. systematic sampling) keep pi and change only the joint probabilities.

At least one document per non-empty cell: an empty cell would leave its stratum without an
estimate (sample_eval drops strata with n_s = 0, so R^ and xinfAP would silently lose them).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import njit

from ...errors import DesignError
from ..frame import Design, Sample, generator
from .budget import Budget, as_budget, budget_suffix, round_half_up, sizes_under_budget


def check_rate(value, what: str) -> float:
    """``value`` as a float in (0, 1] (a sampling rate or fraction); :class:`DesignError`
    naming ``what`` otherwise. A rate of 0 would leave a stratum unestimable, not unjudged."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value <= 1:
        raise DesignError(f"{what} must be a number in (0, 1], got {value!r}")
    return float(value)


def spec_number(text: str, kind: str) -> float:
    """The number in a design name's parentheses (``0.3`` of ``uniform(0.3)``)."""
    try:
        return float(text)
    except ValueError:
        raise DesignError(f"{kind}: {text!r} is not a number") from None


@dataclass(frozen=True)
class FractionDesign(Design):
    """A design set by one sampling fraction F in (0, 1] of every topic's pool, or by a budget
    whose sizes F only shapes: named ``kind(F)[@B]`` (uniform, importance). No ``kind`` here:
    the subclasses register."""

    fraction: float
    budget: Budget | None = None

    def __post_init__(self):
        object.__setattr__(self, "fraction", check_rate(self.fraction, f"{self.kind}: fraction"))
        object.__setattr__(self, "budget", as_budget(self.budget))

    @classmethod
    def from_spec(cls, spec: str, budget) -> FractionDesign:
        return cls(spec_number(spec, cls.kind), budget)

    @property
    def name(self) -> str:
        return f"{self.kind}({self.fraction:g}){budget_suffix(self.budget)}"


def sample_size(rate: float, n: np.ndarray) -> np.ndarray:
    """k = max(1, floor(rate * N + 0.5)) for N > 0, else 0: ``rate`` of every cell of size N,
    rounded half up, at least one."""
    n = np.asarray(n, dtype=np.int64)
    return round_half_up(rate * n, n)


@dataclass(frozen=True, eq=False)
class CellAllocation:
    """A design's fixed part over one frame or pool: its rows grouped by cell, k per cell.

    ``stratum[i]``: the stratum of row i (an index into ``labels``; -1 outside the design);
    ``order``: the design's rows sorted by cell (stable: frame order within a cell), cell c
    being ``order[cell_offsets[c]:cell_offsets[c + 1]]``, cells numbered topic x n_strata +
    stratum; ``take[c]``: k_c; ``inclusion[i]``: k_c / N_c of row i's cell (0 outside).
    ``stratum`` and ``inclusion`` are read-only: every :class:`Sample` drawn shares them.
    """

    stratum: np.ndarray
    labels: tuple[str, ...]
    order: np.ndarray
    cell_offsets: np.ndarray
    take: np.ndarray
    inclusion: np.ndarray

    @property
    def cell_of_order(self) -> np.ndarray:
        """The cell of every entry of ``order``."""
        sizes = np.diff(self.cell_offsets)
        return np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)


def allocate(
    units, stratum: np.ndarray, labels, target: Callable[[np.ndarray], np.ndarray],
    budget: Budget | None,
) -> CellAllocation:
    """The cells of the rows of ``units`` (a frame or pool: ``topic``, ``collection``) with
    ``stratum`` >= 0, and their sample sizes: ``target(size)`` maps the cell sizes N ``(T, S)``
    to the real-valued k* per cell; k is k* rounded half up (at least one) or set by
    ``budget`` (see the module docstring)."""
    n_strata = len(labels)
    inside = stratum >= 0
    cell = units.topic * n_strata + stratum
    rows = np.flatnonzero(inside)
    order = rows[np.argsort(cell[rows], kind="stable")]
    n_topics = units.collection.n_topics
    size = np.bincount(cell[rows], minlength=n_topics * n_strata).reshape(-1, n_strata)
    goal = target(size)
    if budget is None:
        take = round_half_up(goal, size)
    else:
        take = sizes_under_budget(size, goal, budget, units.collection.topics)
    offsets = np.concatenate([[0], np.cumsum(size.ravel())]).astype(np.int64)
    inclusion = np.zeros(len(stratum))
    inclusion[rows] = (take.ravel() / np.maximum(size.ravel(), 1))[cell[rows]]
    stratum = stratum.astype(np.int64)
    for shared in (stratum, inclusion):  # handed to every Sample: read-only
        shared.flags.writeable = False
    return CellAllocation(stratum, tuple(labels), order, offsets, take.ravel(), inclusion)


@njit(cache=True, nogil=True)
def _select_within_cells(cell_offsets, take, order, u, judged):
    """Algorithm S in every cell: rows ``order[a:b]`` of a cell, ``take`` of them selected."""
    for c in range(cell_offsets.shape[0] - 1):
        need = take[c]
        left = cell_offsets[c + 1] - cell_offsets[c]
        for i in range(cell_offsets[c], cell_offsets[c + 1]):
            if need > 0 and u[i] * left < need:
                judged[order[i]] = True
                need -= 1
            left -= 1


def draw(allocation: CellAllocation, rng) -> Sample:
    """A simple random sample without replacement of k_c of the N_c rows of every cell
    (Algorithm S), one ``rng`` uniform per row of the design."""
    rng = generator(rng)
    judged = np.zeros(len(allocation.stratum), dtype=bool)
    _select_within_cells(
        allocation.cell_offsets, allocation.take, allocation.order,
        rng.random(len(allocation.order)), judged,
    )
    return Sample(judged, allocation.stratum, allocation.labels, allocation.inclusion)
