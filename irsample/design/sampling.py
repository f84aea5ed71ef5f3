"""Random sampling designs over a pool: uniform and stratified by best rank.

Both draw, independently per topic and stratum ("cell"), a simple random sample without
replacement (SRS) of k of the cell's N pool documents, with

    k = max(1, floor(rate * N + 0.5))   for N > 0   (rate * N rounded half up, at least one),

so every document of the cell has inclusion probability pi = k / N (Cochran, *Sampling
Techniques*, ch. 2 and 5). These are the designs of the inferred estimators:

- :func:`uniform` (one stratum per topic): infAP's design, a uniform random subset of the
  complete judgments (Yilmaz & Aslam, CIKM 2006; paper 001 §4.1, TREC-8 samples of 10-100%).
- :func:`stratified` (strata by best rank): xinfAP's and infNDCG's design, disjoint strata each
  sampled at its own rate (Yilmaz, Kanoulas & Aslam, SIGIR 2008; paper 000 §4, e.g. the
  depth-10 pool fully judged plus a sample of the rest of the depth-100 pool).

At least one document per non-empty cell: an empty cell would leave its stratum without an
estimate (sample_eval drops strata with n_s = 0, so R^ and xinfAP would silently lose them); with
the minimum, pi = k / N stays exact. Rates and fractions are in (0, 1]: a rate of 0 would leave
a stratum unestimable, not "unjudged", and documents of no stratum would be counted as
non-relevant by the estimators, so stratified designs must cover every pool document's best
rank (an open last stratum ``101-`` covers the rest, including documents the frame's runs never
retrieved).

SRS within a cell is Knuth's selection sampling (TAOCP vol. 2, §3.4.2, Algorithm S): walking the
cell's rows in frame order, row j is selected with probability (k - selected) / (N - j), one
uniform per row; every k-subset is equally likely.
"""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..errors import DesignError
from .frame import NOT_RETRIEVED, Design, Sample, SamplingFrame, generator


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


def sample_size(rate: float, n: np.ndarray) -> np.ndarray:
    """k = max(1, floor(rate * N + 0.5)) for N > 0, else 0 (see the module docstring)."""
    n = np.asarray(n, dtype=np.int64)
    k = np.floor(rate * n + 0.5).astype(np.int64)
    return np.where(n > 0, np.clip(k, 1, n), 0)


@dataclass(frozen=True, eq=False)
class _Allocation:
    """A design's fixed part over one frame: rows grouped by cell, and k per cell."""

    stratum: np.ndarray  #: (n,) int64 per row
    labels: tuple[str, ...]
    order: np.ndarray  #: rows sorted by cell (stable: frame order within a cell)
    cell_offsets: np.ndarray  #: (T*S+1,) int64
    take: np.ndarray  #: (T*S,) k per cell
    inclusion: np.ndarray  #: (n,) k/N of the row's cell


def _allocate(frame: SamplingFrame, stratum: np.ndarray, labels, rates) -> _Allocation:
    n_strata = len(labels)
    cell = frame.topic * n_strata + stratum
    order = np.argsort(cell, kind="stable")
    size = np.bincount(cell, minlength=frame.n_topics * n_strata).reshape(-1, n_strata)
    take = np.stack([sample_size(rate, size[:, s]) for s, rate in enumerate(rates)], axis=1)
    offsets = np.concatenate([[0], np.cumsum(size.ravel())]).astype(np.int64)
    inclusion = (take.ravel() / np.maximum(size.ravel(), 1))[cell]
    stratum = stratum.copy()
    for shared in (stratum, inclusion):  # handed to every Sample: read-only
        shared.flags.writeable = False
    return _Allocation(stratum, tuple(labels), order, offsets, take.ravel(), inclusion)


def _draw(allocation: _Allocation, rng) -> Sample:
    rng = generator(rng)
    n = len(allocation.stratum)
    judged = np.zeros(n, dtype=bool)
    _select_within_cells(
        allocation.cell_offsets, allocation.take, allocation.order, rng.random(n), judged
    )
    return Sample(judged, allocation.stratum, allocation.labels, allocation.inclusion)


def _check_rate(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value <= 1:
        raise DesignError(f"{what} must be a number in (0, 1], got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Uniform(Design):
    """Per topic, an SRS of k = max(1, round(fraction * N_t)) of the N_t pool documents; one
    stratum ``all``, pi = k / N_t. infAP's design (Yilmaz & Aslam, CIKM 2006)."""

    fraction: float

    def __post_init__(self):
        object.__setattr__(self, "fraction", _check_rate(self.fraction, "uniform: fraction"))

    @property
    def name(self) -> str:
        return f"uniform({self.fraction:g})"

    def select(self, frame: SamplingFrame, *, rng) -> Sample:
        def allocate():
            return _allocate(frame, np.zeros(len(frame), np.int64), ("all",), (self.fraction,))

        return _draw(frame.memo(self, allocate), rng)


@dataclass(frozen=True)
class RankStratum:
    """Pool documents with best rank in [first, last] (``last`` = inf: open-ended), sampled at
    ``rate``. Its label is ``first-last`` (``first-`` when open-ended)."""

    first: int
    last: float
    rate: float

    def __post_init__(self):
        first, last = self.first, self.last
        if isinstance(first, bool) or not isinstance(first, (int, np.integer)) or first < 1:
            raise DesignError(f"stratum: first rank must be an integer >= 1, got {first!r}")
        try:
            last = float(last)
        except (TypeError, ValueError):
            last = math.nan
        if not (math.isinf(last) or last.is_integer()) or not last >= first:
            raise DesignError(
                f"stratum: last rank must be an integer >= first ({first}) or inf, "
                f"got {self.last!r}"
            )
        object.__setattr__(self, "first", int(first))
        object.__setattr__(self, "last", last)
        object.__setattr__(self, "rate", _check_rate(self.rate, f"stratum {self.label}: rate"))

    @property
    def label(self) -> str:
        return f"{self.first}-" if math.isinf(self.last) else f"{self.first}-{int(self.last)}"


_STRATUM = re.compile(r"^\s*(\d+)\s*-\s*(\d*)\s*:\s*([^,\s]+)\s*$")


def parse_strata(spec: str) -> tuple[RankStratum, ...]:
    """``"1-10:1.0,11-30:0.5,31-:0.1"`` -> strata (ranks inclusive; ``31-`` is open-ended)."""
    strata = []
    for part in spec.split(","):
        m = _STRATUM.match(part)
        if m is None:
            raise DesignError(
                f"stratified: cannot parse {part.strip()!r}; expected 'first-last:rate' or "
                f"'first-:rate', e.g. '1-10:1.0,11-30:0.5,31-:0.1'"
            )
        try:
            rate = float(m.group(3))
        except ValueError:
            raise DesignError(f"stratified: rate {m.group(3)!r} is not a number") from None
        last = float(m.group(2)) if m.group(2) else NOT_RETRIEVED
        strata.append(RankStratum(int(m.group(1)), last, rate))
    return tuple(strata)


@dataclass(frozen=True)
class Stratified(Design):
    """Strata by best rank, each an SRS per topic of k = max(1, round(rate * N_s)) of its N_s
    documents (pi = k / N_s). Strata are disjoint, in increasing rank order, and must together
    cover the best rank of every pool document of the frame (:meth:`select` raises
    :class:`DesignError` otherwise). xinfAP's / infNDCG's design (Yilmaz, Kanoulas & Aslam,
    SIGIR 2008)."""

    strata: tuple[RankStratum, ...]

    def __post_init__(self):
        strata = tuple(self.strata)
        if not strata:
            raise DesignError("stratified: at least one stratum is needed")
        for a, b in zip(strata, strata[1:]):
            if b.first <= a.last:
                raise DesignError(
                    f"stratified: strata must be disjoint and in increasing rank order "
                    f"({a.label} then {b.label})"
                )
        object.__setattr__(self, "strata", strata)

    @property
    def name(self) -> str:
        return "stratified(" + ",".join(f"{s.label}:{s.rate:g}" for s in self.strata) + ")"

    def select(self, frame: SamplingFrame, *, rng) -> Sample:
        return _draw(frame.memo(self, lambda: self._allocate(frame)), rng)

    def _allocate(self, frame: SamplingFrame) -> _Allocation:
        first = np.array([s.first for s in self.strata], dtype=np.float64)
        last = np.array([s.last for s in self.strata])
        stratum = np.searchsorted(first, frame.best_rank, side="right") - 1
        outside = (stratum < 0) | (frame.best_rank > last[np.maximum(stratum, 0)])
        if outside.any():
            ranks = np.unique(frame.best_rank[outside])
            shown = ", ".join("not retrieved" if math.isinf(r) else str(int(r)) for r in ranks[:5])
            raise DesignError(
                f"{self.name}: {int(outside.sum())} pool documents of {frame.source} fall in no "
                f"stratum (best ranks {shown}{', ...' if len(ranks) > 5 else ''}); strata must "
                "cover every pool document: close the gaps or end with an open stratum ('101-:0.1')"
            )
        return _allocate(
            frame, stratum.astype(np.int64), [s.label for s in self.strata],
            [s.rate for s in self.strata],
        )


def uniform(fraction: float) -> Uniform:
    """A uniform design judging ``fraction`` of every topic's pool (see :class:`Uniform`)."""
    return Uniform(fraction)


def stratified(spec) -> Stratified:
    """A stratified design from ``"1-10:1.0,11-30:0.5,31-:0.1"`` or a sequence of
    :class:`RankStratum` / ``(first, last, rate)`` tuples (``last`` = None or inf: open)."""
    if isinstance(spec, str):
        return Stratified(parse_strata(spec))
    strata = []
    for s in spec:
        if not isinstance(s, RankStratum):
            first, last, rate = s
            s = RankStratum(first, NOT_RETRIEVED if last is None else last, rate)
        strata.append(s)
    return Stratified(tuple(strata))
