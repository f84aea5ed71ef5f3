"""Depth-k pools of a set of runs, built from the rankings alone (no judgments needed).

The depth-k pool of runs S for a topic is the union of the top k documents of every run in S
(Spärck Jones & van Rijsbergen 1975; TREC's standard, Voorhees & Harman 2005, ch. 2). Each
pooled document keeps its **best rank**, the smallest 1-based rank (trec_eval order) at which any
run of S retrieved it: depth-k sub-pools, rank strata (Yilmaz, Kanoulas & Aslam, SIGIR 2008) and
the AP prior (Aslam, Pavlu & Yilmaz, SIGIR 2006) are all defined from the rankings, so a real
judging effort can plan its sample before any judgment exists.

Pools and sampling frames share one shape, the **pool rows**: per row (one pooled document of a
topic) ``topic``, ``tdi`` and ``best_rank``, with the ``runs`` and ``depth`` they come from.
Designs (:mod:`irsample.design.sampling.stratified`, :mod:`irsample.design.sampling.importance`)
select over pool
rows, so the same design draws the documents to judge from a :class:`Pool` (real judging) or
from a :class:`~irsample.design.frame.SamplingFrame` (simulation: pool rows plus their complete
grades); :meth:`SamplingFrame.from_pool` makes a frame whose rows are exactly a pool's, in the
same (topic, docno) order, so a seed draws the same documents from both.

Pool statistics per topic: the size by depth (documents with best rank <= k, k = 1..K), the
documents contributed by exactly one run (``unique_run``) and by the runs of exactly one group
(``unique_group``; a group is the participant that submitted the runs), which measure how much
the pool depends on single runs and groups (Zobel, SIGIR 1998).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numba import njit

from ..errors import DesignError, InputError, InputWarning
from ..model import Collection
from .frame import PoolRowsBase

WHOLE = math.inf  #: depth of a pool of whole rankings


@njit(cache=True, nogil=True)
def _pool_kernel(rank_offsets, rank_tdi, n_topics, runs, run_group, depth, n_tdi):
    """Best rank, contributing runs and contributing groups of every ``tdi`` over the top
    ``depth`` of the given runs' rankings (``runs`` ordered by group: a group's runs are
    consecutive, so distinct groups are counted with one stamp per document)."""
    best = np.full(n_tdi, np.inf)
    n_runs = np.zeros(n_tdi, dtype=np.int32)
    n_groups = np.zeros(n_tdi, dtype=np.int32)
    stamp = np.full(n_tdi, -1, dtype=np.int64)
    for r in runs:
        g = run_group[r]
        for s in range(r * n_topics, (r + 1) * n_topics):
            a = rank_offsets[s]
            for i in range(min(rank_offsets[s + 1] - a, depth)):
                d = rank_tdi[a + i]
                if i + 1.0 < best[d]:
                    best[d] = i + 1.0
                n_runs[d] += 1
                if stamp[d] != g:
                    stamp[d] = g
                    n_groups[d] += 1
    return best, n_runs, n_groups


def runs_without_group(collection: Collection, runs, groups) -> list[str]:
    """The names of the runs ``runs`` (see :func:`select_runs`) that ``groups`` (run name ->
    group name) gives no group."""
    names = collection.run_names
    return [names[r] for r in select_runs(collection, runs) if names[r] not in groups]


def select_runs(collection: Collection, runs=None) -> tuple[int, ...]:
    """Run indices of ``runs``: None (every run), or a sequence of indices and/or names."""
    if runs is None:
        return tuple(range(collection.n_runs))
    if isinstance(runs, (str, int, np.integer)):
        runs = [runs]
    index = {name: i for i, name in enumerate(collection.run_names)}
    out = []
    for r in runs:
        if isinstance(r, str):
            if r not in index:
                raise DesignError(f"unknown run {r!r} (runs: {_names(collection.run_names)})")
            r = index[r]
        elif (
            isinstance(r, bool)
            or not isinstance(r, (int, np.integer))
            or not 0 <= r < collection.n_runs
        ):
            raise DesignError(f"run index must be in [0, {collection.n_runs}), got {r!r}")
        out.append(int(r))
    if len(set(out)) != len(out) or not out:
        raise DesignError(f"runs must be distinct and at least one, got {list(runs)}")
    return tuple(out)


def runs_from_list(collection: Collection, names: Sequence[tuple[str, int]], source: str):
    """Run indices of the runs given among ``(name, line)`` records read from ``source``.

    A roster may name more runs than are given (TREC's ``run-pooled-flag.txt`` with a subset of
    the runs, as ``simulate --pooled`` takes it): those are left out with an
    :class:`~irsample.errors.InputWarning` at the first one's ``file:line`` (a misspelt name
    shows there). A roster naming none of the runs given is an :class:`InputError`."""
    if not names:
        raise InputError("no run selected (every run is flagged notjudged)", source)
    index = {name: i for i, name in enumerate(collection.run_names)}
    strangers = [(name, line) for name, line in names if name not in index]
    if len(strangers) == len(names):
        name, line = strangers[0]
        raise InputError(f"unknown run {name!r}: the list names none of the runs given "
                         f"({_names(collection.run_names)})", source, line)
    if strangers:
        import warnings

        first = ", ".join(name for name, _ in strangers[:5])
        more = ", ..." if len(strangers) > 5 else ""
        warnings.warn(InputWarning(
            f"{len(strangers)} of the {len(names)} runs listed are not among the runs given, "
            f"so not pooled: {first}{more}", source, strangers[0][1]), stacklevel=2)
    return tuple(index[name] for name, _ in names if name in index)


def _names(names: Sequence[str]) -> str:
    return ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")


def _check_depth(depth) -> float:
    if depth is None or (isinstance(depth, float) and math.isinf(depth)):
        return WHOLE
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
        raise DesignError(
            f"pool depth must be an integer >= 1 (or None: whole rankings), got {depth!r}"
        )
    return float(depth)


@dataclass(frozen=True, eq=False)
class PoolStats:
    """Per-topic statistics of a pool (see the module docstring).

    ``size_by_depth[t, k - 1]``: documents of topic t with best rank <= k, for k = 1..K (K the
    pool depth, or the longest ranking for a pool of whole rankings); ``unique_group`` is None
    without a group map.
    """

    topics: tuple[str, ...]
    size_by_depth: np.ndarray
    unique_run: np.ndarray
    unique_group: np.ndarray | None

    @property
    def size(self) -> np.ndarray:
        return (
            self.size_by_depth[:, -1]
            if self.size_by_depth.shape[1]
            else np.zeros(len(self.topics), np.int64)
        )

    def summary(self) -> pd.DataFrame:
        """One row per topic: ``topic, size, unique_run, unique_group``."""
        return pd.DataFrame({
            "topic": list(self.topics), "size": self.size, "unique_run": self.unique_run,
            "unique_group": self.unique_group if self.unique_group is not None else pd.NA,
        })

    def by_depth(self) -> pd.DataFrame:
        """Tidy: ``topic, depth, size`` for every topic and depth k = 1..K."""
        n_topics, depth = self.size_by_depth.shape
        return pd.DataFrame({
            "topic": np.repeat(np.array(self.topics, dtype=object), depth),
            "depth": np.tile(np.arange(1, depth + 1), n_topics),
            "size": self.size_by_depth.ravel(),
        })


@dataclass(frozen=True, eq=False)
class Pool(PoolRowsBase):
    r"""The depth-``depth`` pool of runs ``runs`` of a collection, as pool rows.

    Rows are ordered by topic, then by docno (byte-wise: the ``tdi`` order). ``n_runs`` and
    ``n_groups`` count, per row, the runs and the groups whose top ``depth`` retrieved it.
    Build one with :meth:`from_runs`; a design selects from it with ``design.select(pool,
    rng=...)``, before any judgment exists.

    Attributes
    ----------
    collection : Collection
        The runs.
    runs : tuple of int
        The pooled runs (indices).
    depth : float
        The pool depth (``inf``: whole rankings).
    topic, tdi, best_rank, n_runs : numpy.ndarray, shape (rows,)
        Per row: topic index, document index, best rank over the pooled runs, and how many of
        them retrieved the document within ``depth``.

    Examples
    --------
    The depth-2 pool of two runs: ``c`` is at rank 3 of r1 but rank 1 of r2.

    >>> from io import BytesIO
    >>> import irsample
    >>> from irsample.design import Pool
    >>> collection, _ = irsample.load(
    ...     BytesIO(b"1 0 a 1\n"),
    ...     [BytesIO(b"1 Q0 a 1 3 r1\n1 Q0 b 2 2 r1\n1 Q0 c 3 1 r1\n"),
    ...      BytesIO(b"1 Q0 c 1 2 r2\n1 Q0 d 2 1 r2\n")])
    >>> pool = Pool.from_runs(collection, depth=2)
    >>> pool.docnos(), pool.best_rank
    (['a', 'b', 'c', 'd'], array([1., 2., 1., 2.]))
    >>> Pool.from_runs(collection, ["r2"], depth=1).docnos()
    ['c']
    """

    collection: Collection
    runs: tuple[int, ...]
    depth: float  #: integer depth, or inf (whole rankings)
    topic: np.ndarray = field(repr=False)  #: (n,) int64
    tdi: np.ndarray = field(repr=False)  #: (n,) int64
    best_rank: np.ndarray = field(repr=False)  #: (n,) float64, 1-based
    n_runs: np.ndarray = field(repr=False)  #: (n,) int32
    n_groups: np.ndarray | None = field(repr=False)  #: (n,) int32; None without groups
    source: str = "<pool>"
    _memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @classmethod
    def from_runs(
        cls, collection: Collection, runs=None, *, depth, groups: Mapping[str, str] | None = None,
    ) -> Pool:
        """The depth-``depth`` pool of ``runs``.

        Parameters
        ----------
        collection : Collection
            The runs (see :func:`irsample.load`).
        runs : sequence of int or str, optional
            Run indices or names (default: every run).
        depth : int or None
            An integer >= 1, or None for whole rankings.
        groups : mapping of str to str, optional
            Run name -> group name (see :func:`irsample.io.lists.read_group_map`); every pooled
            run needs one. Gives ``n_groups``.

        Returns
        -------
        Pool

        Raises
        ------
        DesignError
            An unknown run, a depth that is not an integer >= 1, or a pooled run without a
            group.
        """
        runs = select_runs(collection, runs)
        depth = _check_depth(depth)
        names = collection.run_names
        if groups is not None:
            missing = runs_without_group(collection, runs, groups)
            if missing:
                raise DesignError(f"no group for run(s) {_names(missing)} in the group map")
            ids = {g: i for i, g in enumerate(dict.fromkeys(groups[names[r]] for r in runs))}
            run_group = np.full(collection.n_runs, -1, dtype=np.int64)
            for r in runs:
                run_group[r] = ids[groups[names[r]]]
        else:
            run_group = np.arange(collection.n_runs, dtype=np.int64)
        order = np.array(sorted(runs, key=lambda r: (run_group[r], r)), dtype=np.int64)
        limit = np.iinfo(np.int64).max if math.isinf(depth) else int(depth)
        best, n_runs, n_groups = _pool_kernel(
            collection.rank_offsets, collection.rank_tdi, collection.n_topics, order, run_group,
            limit, collection.n_tdi,
        )
        tdi = np.flatnonzero(n_runs > 0).astype(np.int64)
        topic = collection.tdi_topic[tdi].astype(np.int64)
        label = f"depth-{int(depth)}" if not math.isinf(depth) else "whole-ranking"
        return cls(
            collection, runs, depth, topic, tdi, best[tdi], n_runs[tdi],
            n_groups[tdi] if groups is not None else None,
            f"<{label} pool of {len(runs)} runs>",
        )

    def docnos(self) -> list[str]:
        """The docno of every row."""
        import pyarrow as pa

        values = self.collection.tdi_docno.take(pa.array(self.tdi))
        return [v.decode("utf-8", "surrogateescape") for v in values.to_pylist()]

    def qids(self) -> list[str]:
        """The topic id of every row."""
        return [self.collection.topics[t] for t in self.topic]

    def stats(self) -> PoolStats:
        """Size by depth and documents unique to one run / one group, per topic."""
        if math.isinf(self.depth):
            seg = self.collection.segment_lengths()[list(self.runs)]
            depth = int(seg.max()) if seg.size else 0
        else:
            depth = int(self.depth)
        t = self.n_topics
        counts = np.zeros((t, depth + 1), dtype=np.int64)
        np.add.at(counts, (self.topic, self.best_rank.astype(np.int64)), 1)
        unique_run = np.bincount(self.topic[self.n_runs == 1], minlength=t).astype(np.int64)
        unique_group = None
        if self.n_groups is not None:
            unique_group = np.bincount(self.topic[self.n_groups == 1], minlength=t).astype(np.int64)
        return PoolStats(
            self.collection.topics, np.cumsum(counts[:, 1:], axis=1), unique_run, unique_group
        )

    def memo(self, key, build):
        """``build()`` computed once per pool under ``key`` (a design's fixed allocation)."""
        if key not in self._memo:
            self._memo[key] = build()
        return self._memo[key]
