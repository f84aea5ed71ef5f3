"""Numba kernels that turn parsed rows into ranked segments (used by :mod:`irsample.model`)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def rank_segments(seg, score, tdi, n_seg):
    """Order rows into segments ``seg`` (run x topic), each in trec_eval order.

    Within a segment rows are sorted by score descending, ties broken by document descending
    (``tdi`` grows with the docno, compared byte-wise). Returns ``(perm, offsets, dup)`` where
    ``perm`` lists row indices in that order, ``offsets`` delimits segments and ``dup`` is a row
    that repeats a document already in its segment (the later row of the pair), or -1.
    """
    n = seg.shape[0]
    counts = np.zeros(n_seg + 1, dtype=np.int64)
    for i in range(n):
        counts[seg[i] + 1] += 1
    offsets = np.cumsum(counts)
    fill = offsets[:-1].copy()
    grouped = np.empty(n, dtype=np.int64)
    for i in range(n):  # stable counting sort by segment
        grouped[fill[seg[i]]] = i
        fill[seg[i]] += 1
    perm = np.empty(n, dtype=np.int64)
    dup = -1
    for s in range(n_seg):
        a = offsets[s]
        b = offsets[s + 1]
        if b == a:
            continue
        rows = grouped[a:b]
        by_doc = rows[np.argsort(-tdi[rows].astype(np.int64))]
        for j in range(1, b - a):
            if tdi[by_doc[j]] == tdi[by_doc[j - 1]]:
                later = max(by_doc[j], by_doc[j - 1])
                if dup < 0 or later < dup:
                    dup = later
        neg = -score[by_doc]
        order = np.argsort(neg, kind="mergesort")
        perm[a:b] = by_doc[order]
    return perm, offsets, dup
