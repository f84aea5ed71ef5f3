"""Numba kernels that turn parsed rows into the integer model (used by :mod:`irsample.model`)."""

from __future__ import annotations

import numpy as np
from numba import njit


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
def intern_topic_docs(row_topic, row_doc, n_topics, n_docs):
    """Number the distinct (topic, document) pairs of the rows: the ``tdi`` space.

    Pairs are numbered by topic, then by document index (documents are numbered in byte-wise
    docno order, so ``tdi`` order within a topic is docno order). Returns ``(row_tdi,
    topic_doc_offsets, tdi_doc)``. Runs in O(rows + pairs log pairs) with one stamp array over
    documents, whatever the number of topics.
    """
    order, starts = _counting_order(row_topic, n_topics)
    seen = np.full(n_docs, -1, dtype=np.int64)
    local = np.zeros(n_docs, dtype=np.int32)
    distinct = np.empty(row_topic.shape[0], dtype=np.int32)
    tdi_doc = np.empty(row_topic.shape[0], dtype=np.int32)
    row_tdi = np.empty(row_topic.shape[0], dtype=np.int32)
    offsets = np.zeros(n_topics + 1, dtype=np.int64)
    total = 0
    for t in range(n_topics):
        m = 0
        for j in range(starts[t], starts[t + 1]):
            d = row_doc[order[j]]
            if seen[d] != t:
                seen[d] = t
                distinct[m] = d
                m += 1
        docs = np.sort(distinct[:m])
        for k in range(m):
            local[docs[k]] = k
            tdi_doc[total + k] = docs[k]
        for j in range(starts[t], starts[t + 1]):
            row_tdi[order[j]] = total + local[row_doc[order[j]]]
        total += m
        offsets[t + 1] = total
    return row_tdi, offsets, tdi_doc[:total].copy()


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


@njit(cache=True, nogil=True)
def rank_segments(seg, score, tdi, n_seg, n_tdi):
    """Order rows into segments ``seg`` (run x topic), each in trec_eval order.

    Within a segment rows are sorted by score descending, ties broken by document descending
    (``tdi`` grows with the docno, compared byte-wise). Returns ``(perm, offsets, dup)`` where
    ``perm`` lists row indices in that order, ``offsets`` delimits segments and ``dup`` is the
    first row (in input order) that repeats a document already in its segment, or -1.
    """
    grouped, offsets = _counting_order(seg, n_seg)
    stamp = np.full(n_tdi, -1, dtype=np.int64)
    perm = np.empty(seg.shape[0], dtype=np.int64)
    dup = -1
    for s in range(n_seg):
        a = offsets[s]
        b = offsets[s + 1]
        rows = grouped[a:b]
        for row in rows:
            if stamp[tdi[row]] == s:
                if dup < 0 or row < dup:
                    dup = row
            stamp[tdi[row]] = s
        _sort_segment(rows, score, tdi, perm[a:b])
    return perm, offsets, dup
