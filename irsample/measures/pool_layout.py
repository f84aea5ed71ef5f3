"""Where a context's rankings hold pooled documents: one list of the pooled positions per
evaluation, kept for a pool evaluated again.

Every estimator of incomplete judgments (infAP, xinfAP, infNDCG and their variances: the walk of
``incomplete/strata_walk.py``) and bpref visit the pooled positions of each ranking alone:
documents outside the pool count in a rank only. :func:`pooled_positions` lists them once per
evaluation (0-based rank, grade, stratum). Which positions are pooled depends on the pool alone,
so for a pool evaluated again (simulation trials: many draws from one pool) that layout is kept
and only grades and strata are looked up.
"""

from __future__ import annotations

import threading
import weakref

import numpy as np
from numba import njit

UNJUDGED = np.iinfo(np.int32).min  #: grade of a pooled but unjudged position: below every level


@njit(cache=True, nogil=True)
def _pool_layout(offsets, pos_tdi, state, pool_row):
    """(pool offsets, 0-based rank, pool row) of the ranked positions whose document is pooled
    (``state`` != UNPOOLED; ``pool_row[tdi]``: its index among the pooled documents), segment
    by segment in rank order.

    One pass per output array, each gathering through one index: a loop that gathers through
    two indices for every position stalls on the loads (2-3x slower on TREC-8); the rows are
    gathered for the pooled positions only. Ranks by branch-free compaction (write always,
    advance on pooled; one spare slot at the end)."""
    n_seg = offsets.shape[0] - 1
    pooled = np.empty(offsets[-1], dtype=np.uint8)
    for p in range(offsets[-1]):
        pooled[p] = state[pos_tdi[p]] != 0
    pool_offsets = np.zeros(n_seg + 1, dtype=np.int64)
    for s in range(n_seg):
        n = 0
        for p in range(offsets[s], offsets[s + 1]):
            n += pooled[p]
        pool_offsets[s + 1] = pool_offsets[s] + n
    total = pool_offsets[-1]
    rank = np.empty(total + 1, dtype=np.int32)
    for s in range(n_seg):
        a = offsets[s]
        w = pool_offsets[s]
        for i in range(offsets[s + 1] - a):
            rank[w] = i
            w += pooled[a + i]
    row = np.empty(total, dtype=np.int32)
    for s in range(n_seg):
        a = offsets[s]
        for x in range(pool_offsets[s], pool_offsets[s + 1]):
            row[x] = pool_row[pos_tdi[a + rank[x]]]
    return pool_offsets, rank[:total], row


@njit(cache=True, nogil=True)
def _per_position(row, of_row):
    """``of_row[row]``: a per-pooled-document table read at every pooled position (the table
    is small and stays in cache while the positions stream)."""
    out = np.empty(row.shape[0], dtype=np.int32)
    for x in range(row.shape[0]):
        out[x] = of_row[row[x]]
    return out


class PoolLayout:
    """Which ranked positions of a context hold pooled documents: ``offsets``, ``rank``
    (0-based) and ``row`` (the document's index among the pooled ones) of each, segment by
    segment in rank order (:func:`_pool_layout`). The strata of the positions are kept for
    the last per-document strata asked (a design's strata are the same in every draw)."""

    def __init__(self, offsets, pos_tdi, state: np.ndarray, pooled_tdi: np.ndarray):
        pool_row = np.full(len(state), -1, dtype=np.int32)
        pool_row[pooled_tdi] = np.arange(len(pooled_tdi), dtype=np.int32)
        self.offsets, self.rank, self.row = _pool_layout(offsets, pos_tdi, state, pool_row)
        self._strata: tuple[np.ndarray, np.ndarray] | None = None

    def per_position(self, of_row: np.ndarray) -> np.ndarray:
        return _per_position(self.row, of_row)

    def strata(self, of_row: np.ndarray) -> np.ndarray:
        """The stratum of every pooled position from each pooled document's ``of_row``."""
        last = self._strata  # read once: another thread may replace it
        if last is None or not np.array_equal(last[0], of_row):
            at = self.per_position(of_row) if of_row.any() else np.zeros_like(self.row)
            last = self._strata = (of_row, at)
        return last[1]


class _LayoutCache:
    """Pool layouts of collections' rankings, kept for pools evaluated more than once
    (simulation trials draw many samples from one pool: the pooled positions are the same in
    every trial, only the judgments change). A pool seen once is only remembered by its
    documents, so a one-off evaluation holds no extra memory. At most ``size`` pools over all
    collections (least recently used dropped; a layout of TREC-8's depth-100 pool over 129
    runs is 33 MB), and none of a collection no longer in use (held by weak reference)."""

    def __init__(self, size: int = 4):
        self.size = size
        self._entries: list[list] = []  # [collection ref, pooled tdi, layout or None]
        self._lock = threading.Lock()  # simulations may evaluate in threads

    def get(self, collection, state: np.ndarray, build):
        """(pooled documents, layout) of the pool of ``collection`` whose documents have
        ``state`` != UNPOOLED; ``build(pooled documents)`` makes a layout. A pool is known
        again when as many documents are pooled and each of its documents is (no pass over
        every ``tdi`` but a count)."""
        n_pooled = np.count_nonzero(state)
        with self._lock:
            self._entries = [e for e in self._entries if e[0]() is not None]
            i = next((i for i, (ref, tdi, _) in enumerate(self._entries) if ref() is collection
                      and len(tdi) == n_pooled and state[tdi].all()), None)
            if i is None:  # first seen: remembered by its documents only
                entry = [weakref.ref(collection), np.flatnonzero(state), None]
            else:
                entry = self._entries.pop(i)
            self._entries.insert(0, entry)  # most recent first
            del self._entries[self.size :]
            _, tdi, layout = entry
        if layout is None:
            layout = build(tdi)
            if i is not None:  # seen again: keep it
                entry[2] = layout
        return tdi, layout


_LAYOUTS = _LayoutCache()


def pool_layout(ctx) -> tuple[np.ndarray, PoolLayout]:
    """The pooled documents (tdi, ascending) of a context and the :class:`PoolLayout` of its
    rankings, cached per context; the layout of a pool evaluated again is kept
    (:class:`_LayoutCache`)."""
    def build():
        j = ctx.judgments

        def layout(pooled_tdi):
            return PoolLayout(ctx.offsets, ctx.pos_tdi, j.state, pooled_tdi)

        collection = ctx.collection
        if ctx.pos_tdi is collection.rank_tdi and ctx.offsets is collection.rank_offsets:
            return _LAYOUTS.get(collection, j.state, layout)
        pooled_tdi = np.flatnonzero(j.state)  # positions filtered (-J, -M): its own layout
        return pooled_tdi, layout(pooled_tdi)

    return ctx.shared("pool_layout", build)


def pooled_positions(ctx) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The pooled positions of a context's rankings, cached per context: ``(offsets, rank,
    grade, stratum)`` with ``offsets[s]:offsets[s + 1]`` the entries of segment ``s`` in rank
    order, ``rank`` 0-based, ``grade`` the judged grade or :data:`UNJUDGED`, ``stratum`` the
    entry's stratum (0 for judgments without strata or with one).

    A pooled document is judged exactly when its qrels value (``grade``) is >= 0
    (:meth:`~irsample.model.Judgments.from_arrays`). Which positions are pooled depends on the
    pool alone (:func:`pool_layout`), and each evaluation only looks up its judgments' grades
    (and strata, unless they are the last ones) per pooled document."""

    def build():
        j = ctx.judgments
        pooled_tdi, pool = pool_layout(ctx)
        grade = j.grade[pooled_tdi]
        grade[grade < 0] = UNJUDGED
        one = j.stratum is None or len(j.stratum_labels) == 1
        stratum = np.zeros(len(pooled_tdi), np.int32) if one else j.stratum[pooled_tdi]
        return pool.offsets, pool.rank, pool.per_position(grade), pool.strata(stratum)

    return ctx.shared("pooled_positions", build)


def pooled_segments(ctx) -> np.ndarray:
    """The segment of every entry of :func:`pooled_positions` (cached per context)."""
    return ctx.shared("pooled_segments", lambda: np.repeat(
        np.arange(ctx.n_seg), np.diff(pooled_positions(ctx)[0])))
