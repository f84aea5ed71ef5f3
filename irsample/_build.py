"""Numba kernels that turn parsed rows into the integer model (used by :mod:`irsample.model`)."""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True, nogil=True)
def _counting_order(keys, n_keys):
    """Row indices grouped by ``keys`` (stable), and the group offsets."""
    counts = np.zeros(n_keys + 1, dtype=np.int64)
    for i in range(keys.shape[0]):
        counts[keys[i] + 1] += 1
    offsets = np.cumsum(counts)
    fill = offsets[:-1].copy()
    order = np.empty(keys.shape[0], dtype=np.int64)
    for i in range(keys.shape[0]):
        order[fill[keys[i]]] = i
        fill[keys[i]] += 1
    return order, offsets


@njit(cache=True, nogil=True)
def _balanced_chunks(offsets, n_chunks):
    """Split groups ``0..len(offsets)-2`` into contiguous chunks of about equal row counts."""
    n_groups = offsets.shape[0] - 1
    bounds = np.empty(n_chunks + 1, dtype=np.int64)
    total = offsets[-1]
    for c in range(n_chunks + 1):
        bounds[c] = np.searchsorted(offsets[:-1], total * c // n_chunks) if c < n_chunks else n_groups
    bounds[0] = 0
    return bounds


@njit(cache=True, nogil=True, parallel=True)
def intern_topic_docs(row_topic, row_doc, n_topics, n_docs, n_threads):
    """Number the distinct (topic, document) pairs of the rows: the ``tdi`` space.

    Pairs are numbered by topic, then by document index (documents are numbered in byte-wise
    docno order, so ``tdi`` order within a topic is docno order). Returns ``(row_tdi,
    topic_doc_offsets, tdi_doc)``. O(rows + pairs log pairs); topics are shared among threads
    in contiguous chunks, each with its own scratch arrays over documents.
    """
    n = row_topic.shape[0]
    order, starts = _counting_order(row_topic, n_topics)
    n_chunks = min(max(n_topics, 1), n_threads)
    bounds = _balanced_chunks(starts, n_chunks)
    distinct = np.empty(n, dtype=np.int32)  # per topic, its sorted documents at starts[t]
    row_local = np.empty(n, dtype=np.int32)
    counts = np.zeros(n_topics, dtype=np.int64)
    for c in prange(n_chunks):
        seen = np.full(n_docs, -1, dtype=np.int64)
        local = np.zeros(n_docs, dtype=np.int32)
        for t in range(bounds[c], bounds[c + 1]):
            a = starts[t]
            m = 0
            for j in range(a, starts[t + 1]):
                d = row_doc[order[j]]
                if seen[d] != t:
                    seen[d] = t
                    distinct[a + m] = d
                    m += 1
            distinct[a : a + m] = np.sort(distinct[a : a + m])
            for k in range(m):
                local[distinct[a + k]] = k
            for j in range(a, starts[t + 1]):
                row_local[order[j]] = local[row_doc[order[j]]]
            counts[t] = m
    offsets = np.zeros(n_topics + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(counts)
    tdi_doc = np.empty(offsets[-1], dtype=np.int32)
    row_tdi = np.empty(n, dtype=np.int32)
    for t in prange(n_topics):
        tdi_doc[offsets[t] : offsets[t + 1]] = distinct[starts[t] : starts[t] + counts[t]]
    for i in prange(n):
        row_tdi[i] = offsets[row_topic[i]] + row_local[i]
    return row_tdi, offsets, tdi_doc


@njit(cache=True, nogil=True, inline="always")
def _before(a, b, score, tdi):
    """Row ``a`` precedes row ``b`` in trec_eval order (score desc, then docno desc)."""
    return score[a] > score[b] or (score[a] == score[b] and tdi[a] > tdi[b])


@njit(cache=True, nogil=True)
def _sort_segment(rows, score, tdi, out):
    """Write ``rows`` in trec_eval order into ``out``.

    Runs are usually written nearly in that order, so an insertion sort is tried first; past
    8 moves per row it gives up for a stable two-pass sort (document desc, then score desc).
    """
    n = rows.shape[0]
    budget = 8 * n
    for j in range(n):
        out[j] = rows[j]
    for j in range(1, n):
        row = out[j]
        k = j
        while k > 0 and _before(row, out[k - 1], score, tdi):
            out[k] = out[k - 1]
            k -= 1
            budget -= 1
        out[k] = row
        if budget < 0:
            by_doc = rows[np.argsort(-tdi[rows].astype(np.int64))]
            order = np.argsort(-score[by_doc], kind="mergesort")
            for i in range(n):
                out[i] = by_doc[order[i]]
            return


@njit(cache=True, nogil=True, parallel=True)
def rank_segments(seg, score, tdi, n_seg, n_tdi, n_threads):
    """Order rows into segments ``seg`` (run x topic), each in trec_eval order.

    Within a segment rows are sorted by score descending, ties broken by document descending
    (``tdi`` grows with the docno, compared byte-wise). Returns ``(perm, offsets, dup)`` where
    ``perm`` lists row indices in that order, ``offsets`` delimits segments and ``dup`` is the
    first row (in input order) that repeats a document already in its segment, or -1.
    Segments are shared among threads in contiguous chunks.
    """
    grouped, offsets = _counting_order(seg, n_seg)
    n_chunks = min(max(n_seg, 1), n_threads)
    bounds = _balanced_chunks(offsets, n_chunks)
    perm = np.empty(seg.shape[0], dtype=np.int64)
    dups = np.full(n_chunks, -1, dtype=np.int64)
    for c in prange(n_chunks):
        stamp = np.full(n_tdi, -1, dtype=np.int64)
        dup = -1
        for s in range(bounds[c], bounds[c + 1]):
            a = offsets[s]
            b = offsets[s + 1]
            rows = grouped[a:b]
            for row in rows:
                if stamp[tdi[row]] == s and (dup < 0 or row < dup):
                    dup = row
                stamp[tdi[row]] = s
            _sort_segment(rows, score, tdi, perm[a:b])
        dups[c] = dup
    dup = -1
    for d in dups:
        if d >= 0 and (dup < 0 or d < dup):
            dup = d
    return perm, offsets, dup
