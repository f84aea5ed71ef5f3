"""Numba kernels that group parsed rows by run and topic and rank them (used by
:mod:`irsample.model`).

Rows of all tables (runs, then qrels) are numbered globally: table ``k`` owns rows
``base[k]:base[k+1]``. A run's ranking for a topic is its segment ``k * n_topics + topic``,
put in trec_eval order: score descending, ties broken by docno descending (``tdi`` order).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._threads import THREADED_ROWS, parts, run_parts


@njit(cache=True, nogil=True)
def group_rows(row_topic, base, n_topics):
    """Group rows by segment ``k * n_topics + topic`` (table ``k``), keeping input order.

    Returns ``(grp, seg_offsets)``: ``grp[p]`` is the row (local to its table) at grouped
    position ``p``; segment ``s`` spans ``seg_offsets[s]:seg_offsets[s+1]``.
    """
    n_tables = base.shape[0] - 1
    counts = np.zeros(n_tables * n_topics + 1, dtype=np.int64)
    for k in range(n_tables):
        for i in range(base[k], base[k + 1]):
            counts[k * n_topics + row_topic[i] + 1] += 1
    seg_offsets = np.cumsum(counts)
    grp = np.empty(base[-1], dtype=np.int32)
    for k in range(n_tables):
        fill = seg_offsets[k * n_topics : (k + 1) * n_topics].copy()
        for i in range(base[k], base[k + 1]):
            t = row_topic[i]
            grp[fill[t]] = i - base[k]
            fill[t] += 1
    return grp, seg_offsets


@njit(cache=True, nogil=True, inline="always")
def _before(a, b, score, tdi):
    """Entry ``a`` precedes entry ``b`` in trec_eval order (score desc, then docno desc)."""
    return score[a] > score[b] or (score[a] == score[b] and tdi[a] > tdi[b])


@njit(cache=True, nogil=True)
def _sorts_before(a, b, score, tdi):
    """Entry ``a`` precedes entry ``b`` when sorted by ``-score`` in NumPy's order (a NaN
    after every number), ties broken by docno descending: the order of a stable sort by
    ``-score`` of the entries in descending docno order."""
    x = -score[a]
    y = -score[b]
    if x < y or (y != y and x == x):
        return True
    if y < x or (x != x and y == y):
        return False
    return tdi[a] > tdi[b]


@njit(cache=True, nogil=True)
def _heap_order(score, tdi, out):
    """Sort the permutation ``out`` by :func:`_sorts_before`: a heap sort (no scratch array;
    one loop builds the heap, then takes its top, the entry sorting last, to the end). Not
    stable, and need not be: the order is total, a segment's documents being distinct (a
    repeated one is an error, :func:`rank_runs`)."""
    end = out.shape[0]
    start = end // 2
    while end > 1:
        if start > 0:  # building the heap
            start -= 1
            root = start
        else:
            end -= 1
            out[0], out[end] = out[end], out[0]
            root = 0
        while True:  # sift the root down
            child = 2 * root + 1
            if child >= end:
                break
            if child + 1 < end and _sorts_before(out[child], out[child + 1], score, tdi):
                child += 1
            if not _sorts_before(out[root], out[child], score, tdi):
                break
            out[root], out[child] = out[child], out[root]
            root = child


@njit(cache=True, nogil=True)
def _sort_segment(score, tdi, out):
    """Write the permutation putting entries ``0..n-1`` in trec_eval order into ``out``.

    Runs are usually written nearly in that order, so an insertion sort is tried first; past
    8 moves per entry it gives up for a heap sort by score descending, then docno
    descending, in NumPy's order of scores (what ``argsort(-score, kind="mergesort")`` of the
    entries in descending docno order gave: a NaN score last). Its own sort rather than
    ``np.argsort``: numba's two sorts took longer to compile than the rest of the ranking.
    """
    n = score.shape[0]
    budget = 8 * n
    for j in range(n):
        out[j] = j
    for j in range(1, n):
        row = out[j]
        k = j
        while k > 0 and _before(row, out[k - 1], score, tdi):
            out[k] = out[k - 1]
            k -= 1
            budget -= 1
        out[k] = row
        if budget < 0:
            for i in range(n):
                out[i] = i
            _heap_order(score, tdi, out)
            return


@njit(cache=True, nogil=True)
def _rank_part(score, base, grp, seg_offsets, row_local, topic_doc_offsets, n_runs, widest,
               rank_tdi, rank_score, t_lo, t_hi):
    """Topics ``t_lo:t_hi`` of :func:`rank_runs`: a scratch array stamped with segment numbers
    finds a document repeated in a segment; returns ``(run, row)`` of the first repeat."""
    n_topics = topic_doc_offsets.shape[0] - 1
    mark = np.full(widest, -1, dtype=np.int64)
    first_run, first_row = -1, -1
    for t in range(t_lo, t_hi):
        for k in range(n_runs):
            s = k * n_topics + t
            a = seg_offsets[s]
            m = seg_offsets[s + 1] - a
            sc = np.empty(m, dtype=np.float64)
            td = np.empty(m, dtype=np.int32)
            for i in range(m):
                local = row_local[a + i]
                row = grp[a + i]
                if mark[local] == s and (
                    first_run < 0 or k < first_run or (k == first_run and row < first_row)
                ):
                    first_run, first_row = k, row
                mark[local] = s
                sc[i] = score[base[k] + row]
                td[i] = topic_doc_offsets[t] + local
            order = np.empty(m, dtype=np.int64)
            _sort_segment(sc, td, order)
            for i in range(m):
                rank_tdi[a + i] = td[order[i]]
                rank_score[a + i] = sc[order[i]]
    return first_run, first_row


def rank_runs(score, base, grp, seg_offsets, row_local, topic_doc_offsets, n_runs, n_threads,
              rank_tdi, rank_score):
    """Put every run's segments (one per run and topic) in trec_eval order, in place.

    Within a segment rows are sorted by score descending, ties broken by docno descending
    (``tdi`` grows with the docno). ``score`` holds all runs' scores (run ``k``'s rows at
    ``base[k]:base[k+1]``). Topics are shared among ``n_threads`` threads in parts of about
    equal rows (:mod:`irsample._threads`: one serial kernel, :func:`_rank_part`, on each).
    Writes ``rank_tdi`` and ``rank_score`` at the segments' grouped positions and returns
    ``(run, row)`` of the first run (and in it the first row, in input order) repeating a
    document within a topic, or ``(-1, -1)``.
    """
    n_topics = len(topic_doc_offsets) - 1
    widest = max(1, int(np.diff(topic_doc_offsets).max(initial=0)))
    n_rows = int(seg_offsets[n_runs * n_topics])
    rows = np.diff(seg_offsets[: n_runs * n_topics + 1]).reshape(n_runs, n_topics).sum(axis=0)
    bounds = parts(rows, n_threads if n_rows >= THREADED_ROWS else 1)
    best_run, best_row = -1, -1
    for k, row in run_parts(_rank_part, bounds, score, base, grp, seg_offsets, row_local,
                            topic_doc_offsets, n_runs, widest, rank_tdi, rank_score):
        if k >= 0 and (best_run < 0 or k < best_run or (k == best_run and row < best_row)):
            best_run, best_row = k, row
    return best_run, best_row
