"""Random sampling designs over a pool: uniform, stratified by best rank, depth-k + random.

All draw, independently per topic and stratum ("cell"), a simple random sample without
replacement (SRS) of k of the cell's N pool documents, with

    k = max(1, floor(rate * N + 0.5))   for N > 0   (rate * N rounded half up, at least one),

so every document of the cell has inclusion probability pi = k / N (Cochran, *Sampling
Techniques*, ch. 2 and 5). With a :class:`~irsample.design.sampling.budget.Budget` the k are set
by the budget instead, the rates giving their proportions (see
:mod:`irsample.design.sampling.budget`). The cells, their sizes and the draw are
:mod:`irsample.design.sampling.cells`. These are the designs of the inferred estimators:

- :func:`uniform` (one stratum per topic): infAP's design, a uniform random subset of the
  complete judgments (Yilmaz & Aslam, CIKM 2006; paper 001 §4.1, TREC-8 samples of 10-100%).
- :func:`stratified` (strata by best rank): xinfAP's and infNDCG's design, disjoint strata each
  sampled at its own rate (Yilmaz, Kanoulas & Aslam, SIGIR 2008; paper 000 §4, e.g. the
  depth-10 pool fully judged plus a sample of the rest of the depth-100 pool).
- :func:`terabyte` (depth k + random): the depth-k pool judged exhaustively plus, per topic, an
  SRS of the rest of the pool of the same size (TREC 2006 Terabyte track; paper 000 §3.1 and
  the simulation on TREC-8 of Yilmaz, Kanoulas & Aslam 2008). Two strata, ``1-k`` and ``k+1-``.

At least one document per non-empty cell: an empty cell would leave its stratum without an
estimate (sample_eval drops strata with n_s = 0, so R^ and xinfAP would silently lose them); with
the minimum, pi = k / N stays exact. Rates and fractions are in (0, 1]: a rate of 0 would leave
a stratum unestimable, not "unjudged". A stratified design's strata define its pool: documents
whose best rank lies beyond the last stratum (e.g. > 15 for ``1-15:1``, paper 002's ``pool15``)
are outside the design, unpooled, and count as non-relevant, as in depth-k pooling; an open last
stratum ``101-`` covers the rest, including documents the frame's runs never retrieved. Gaps
between strata, or a first stratum after rank 1, are errors (documents there would be silently
unpooled in the middle of the design's pool).

SRS within a cell is Knuth's selection sampling (Algorithm S; :func:`.cells.draw`).
"""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass

import numpy as np

from ...errors import DesignError
from ..frame import NOT_RETRIEVED, Design, Sample, SamplingFrame
from .budget import Budget, as_budget, budget_suffix
from .cells import CellAllocation, FractionDesign, allocate, check_rate, draw, spec_number

__all__ = [
    "RankStratum", "Stratified", "Terabyte", "Uniform", "parse_strata", "stratified", "terabyte",
    "uniform",
]


@dataclass(frozen=True)
class Uniform(FractionDesign):
    """Per topic, an SRS of k = max(1, round(fraction * N_t)) of the N_t pool documents; one
    stratum ``all``, pi = k / N_t. infAP's design (Yilmaz & Aslam, CIKM 2006). With a total
    budget B, k_t is proportional to N_t (k_t = B N_t / sum N, rounded to sum to B)."""

    kind = "uniform"
    syntax = "uniform(F)"

    def select(self, frame: SamplingFrame, *, rng) -> Sample:
        def build():
            return allocate(
                frame, np.zeros(len(frame), np.int64), ("all",),
                lambda size: self.fraction * size, self.budget,
            )

        return draw(frame.memo(self, build), rng)


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
        object.__setattr__(self, "rate", check_rate(self.rate, f"stratum {self.label}: rate"))

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
    documents (pi = k / N_s), or sizes set by a ``budget``. Strata are disjoint, in increasing
    rank order, start at rank 1 and leave no gap; documents beyond the last stratum are outside
    the design (:meth:`select` raises :class:`DesignError` for a pool document in a gap).
    xinfAP's / infNDCG's design (Yilmaz, Kanoulas & Aslam, SIGIR 2008). ``alias`` names a
    preset (``2strata``) in :attr:`name`."""

    kind = "stratified"
    syntax = "stratified(SPEC)"

    strata: tuple[RankStratum, ...]
    budget: Budget | None = None
    alias: str = ""

    @classmethod
    def from_spec(cls, spec: str, budget) -> Stratified:
        return cls(parse_strata(spec), budget)

    def __post_init__(self):
        object.__setattr__(self, "budget", as_budget(self.budget))
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
    def spec(self) -> str:
        """``1-10:1,11-:0.1``: the strata and rates."""
        return ",".join(f"{s.label}:{s.rate:g}" for s in self.strata)

    @property
    def name(self) -> str:
        return (self.alias or f"stratified({self.spec})") + budget_suffix(self.budget)

    @property
    def depth(self) -> float:
        return self.strata[-1].last

    def select(self, frame: SamplingFrame, *, rng) -> Sample:
        return draw(frame.memo(self, lambda: self.allocate(frame)), rng)

    def allocate(self, frame: SamplingFrame) -> CellAllocation:
        """The cells of the strata over ``frame`` (a frame or pool) and their sample sizes."""
        first = np.array([s.first for s in self.strata], dtype=np.float64)
        last = np.array([s.last for s in self.strata])
        stratum = np.searchsorted(first, frame.best_rank, side="right") - 1
        beyond = frame.best_rank > last[-1]
        gap = ~beyond & ((stratum < 0) | (frame.best_rank > last[np.maximum(stratum, 0)]))
        if gap.any():
            ranks = np.unique(frame.best_rank[gap])
            shown = ", ".join(str(int(r)) for r in ranks[:5])
            raise DesignError(
                f"{self.name}: {int(gap.sum())} pool documents of {frame.source} fall between "
                f"strata (best ranks {shown}{', ...' if len(ranks) > 5 else ''}); strata must "
                "start at rank 1 and leave no gap"
            )
        rates = np.array([s.rate for s in self.strata])
        return allocate(
            frame, np.where(beyond, -1, stratum), [s.label for s in self.strata],
            lambda size: rates * size, self.budget,
        )


@dataclass(frozen=True)
class Terabyte(Design):
    """The depth-``k`` pool judged exhaustively plus, per topic, an SRS of the rest of the pool
    of the same size (min(N_1-k, N_rest), at least one): TREC 2006 Terabyte's design (paper 000
    §3.1). Strata ``1-k`` (pi = 1) and ``k+1-`` (pi = k_t / N_rest). With a budget, the depth-k
    stratum stays exhaustive while possible and the random part takes the rest of the budget,
    proportionally to the topics' depth-k pool sizes."""

    kind = "terabyte"
    syntax = "terabyte(K)"

    k: int
    budget: Budget | None = None

    @classmethod
    def from_spec(cls, spec: str, budget) -> Terabyte:
        number = spec_number(spec, cls.kind)
        if not number.is_integer():
            raise DesignError(f"terabyte: depth k must be an integer >= 1, got {spec!r}")
        return cls(int(number), budget)

    def __post_init__(self):
        if isinstance(self.k, bool) or not isinstance(self.k, numbers.Integral) or self.k < 1:
            raise DesignError(f"terabyte: depth k must be an integer >= 1, got {self.k!r}")
        object.__setattr__(self, "k", int(self.k))
        object.__setattr__(self, "budget", as_budget(self.budget))

    @property
    def name(self) -> str:
        return f"terabyte({self.k}){budget_suffix(self.budget)}"

    def select(self, frame: SamplingFrame, *, rng) -> Sample:
        def build():
            stratum = (frame.best_rank > self.k).astype(np.int64)
            labels = (f"1-{self.k}", f"{self.k + 1}-")

            def target(size):
                return np.stack([size[:, 0], np.minimum(size[:, 0], size[:, 1])], axis=1)

            return allocate(frame, stratum, labels, target, self.budget)

        return draw(frame.memo(self, build), rng)


def uniform(fraction: float, *, budget=None) -> Uniform:
    """A uniform design judging ``fraction`` of every topic's pool (formula: :class:`Uniform`).

    Parameters
    ----------
    fraction : float
        The judged fraction, in (0, 1].
    budget : Budget or int, optional
        Judgments in all, or per topic (``Budget(50, per_topic=True)``): sets the sizes.

    Returns
    -------
    Uniform

    Raises
    ------
    DesignError
        A fraction outside (0, 1] or an invalid budget.

    Examples
    --------
    >>> uniform(0.1).name, uniform(0.1, budget=2000).name
    ('uniform(0.1)', 'uniform(0.1)@2000')
    """
    return Uniform(fraction, budget)


def stratified(spec, *, budget=None) -> Stratified:
    """A design stratified by best rank (formula: :class:`Stratified`).

    Parameters
    ----------
    spec : str or sequence of RankStratum or (first, last, rate)
        ``"1-10:1,11-30:0.5,31-:0.1"``: ranks and rate per stratum, from rank 1, no gaps
        (``last`` empty, None or inf: open-ended).
    budget : Budget or int, optional
        A budget of judgments setting the sample sizes instead of the rates.

    Returns
    -------
    Stratified

    Raises
    ------
    DesignError
        Overlapping or gapped strata, a rate outside (0, 1], or an invalid budget.

    Examples
    --------
    >>> stratified("1-10:1,11-:0.2") == stratified([(1, 10, 1.0), (11, None, 0.2)])
    True
    """
    if isinstance(spec, str):
        return Stratified(parse_strata(spec), budget)
    strata = []
    for s in spec:
        if not isinstance(s, RankStratum):
            first, last, rate = s
            s = RankStratum(first, NOT_RETRIEVED if last is None else last, rate)
        strata.append(s)
    return Stratified(tuple(strata), budget)


def terabyte(k: int, *, budget=None) -> Terabyte:
    """Depth-``k`` pool plus an equal-size random sample of the rest (see :class:`Terabyte`).

    Parameters
    ----------
    k : int
        The depth judged exhaustively, >= 1.
    budget : Budget or int, optional
        A budget of judgments; the depth-k stratum stays exhaustive while possible.

    Returns
    -------
    Terabyte

    Raises
    ------
    DesignError
        ``k`` is not an integer >= 1, or an invalid budget.

    Examples
    --------
    >>> terabyte(10).name, terabyte(10, budget=500).name
    ('terabyte(10)', 'terabyte(10)@500')
    """
    return Terabyte(k, budget)
