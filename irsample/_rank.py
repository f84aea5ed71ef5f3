"""Numba kernels that group parsed rows by run and topic and rank them (used by
:mod:`irsample.model`).

Rows of all tables (runs, then qrels) are numbered globally: table ``k`` owns rows
``base[k]:base[k+1]``. A run's ranking for a topic is its segment ``k * n_topics + topic``,
put in trec_eval order: score descending, ties broken by docno descending (``tdi`` order).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


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
def _sort_segment(score, tdi, out):
    """Write the permutation putting entries ``0..n-1`` in trec_eval order into ``out``.

    Runs are usually written nearly in that order, so an insertion sort is tried first; past
    8 moves per entry it gives up for a stable two-pass sort (document desc, then score desc).
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
            by_doc = np.argsort(-tdi.astype(np.int64))
            order = np.argsort(-score[by_doc], kind="mergesort")
            for i in range(n):
                out[i] = by_doc[order[i]]
            return


@njit(cache=True, nogil=True, parallel=True)
def rank_runs(score, base, grp, seg_offsets, row_local, topic_doc_offsets, n_runs, n_chunks,
              rank_tdi, rank_score):
    """Put every run's segments (one per run and topic) in trec_eval order, in place.

    Within a segment rows are sorted by score descending, ties broken by docno descending
    (``tdi`` grows with the docno). ``score`` holds all runs' scores (run ``k``'s rows at
    ``base[k]:base[k+1]``). Topics are shared among ``n_chunks`` parallel chunks, each with
    a scratch array stamped with segment numbers to find a document repeated in a segment.
    Writes ``rank_tdi`` and ``rank_score`` at the segments' grouped positions and returns
    ``(run, row)`` of the first run (and in it the first row, in input order) repeating a
    document within a topic, or ``(-1, -1)``.
    """
    n_topics = topic_doc_offsets.shape[0] - 1
    widest = 1
    for t in range(n_topics):
        widest = max(widest, topic_doc_offsets[t + 1] - topic_doc_offsets[t])
    dup_run = np.full(n_chunks, -1, dtype=np.int64)
    dup_row = np.full(n_chunks, -1, dtype=np.int64)
    for c in prange(n_chunks):
        mark = np.full(widest, -1, dtype=np.int64)
        first_run, first_row = -1, -1
        for t in range(c * n_topics // n_chunks, (c + 1) * n_topics // n_chunks):
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
        dup_run[c], dup_row[c] = first_run, first_row
    best_run, best_row = -1, -1
    for c in range(n_chunks):
        k, row = dup_run[c], dup_row[c]
        if k >= 0 and (best_run < 0 or k < best_run or (k == best_run and row < best_row)):
            best_run, best_row = k, row
    return best_run, best_row
