"""Numba kernels that turn parsed rows into the integer model (used by :mod:`irsample.model`).

Strings arrive as Arrow binary columns, passed as ``(offsets, data)`` arrays. Rows of all tables
(runs, then qrels) are numbered globally: table ``k`` owns rows ``base[k]:base[k+1]``, and its
offsets sit in the concatenated offsets array at ``base[k] + k`` (each table keeps its ``n + 1``
entries), relative to ``data_base[k]`` in the concatenated data.

Strings are compared byte-wise like ``strcmp``: a string's first 16 bytes, zero-padded, form two
big-endian words ``(k1, k2)``; equal words leave the bytes past 16 and then the lengths to decide.
Hash hits are always confirmed that way, so interning is exact.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._numba_start import skip_blas_probe
from ._threads import THREADED_ROWS, parts, run_parts

skip_blas_probe()

_U8 = np.uint64(8)


@njit(cache=True, nogil=True, inline="always")
def _word(data, a, b):
    """Bytes ``data[a:min(a+8, b)]`` as a big-endian integer, zero-padded on the right."""
    w = np.uint64(0)
    ua = np.uint64(a)  # unsigned indices: numba checks no negative index
    if b - a >= 8:  # a whole word: no test per byte
        for i in range(8):
            w = (w << _U8) | np.uint64(data[ua + np.uint64(i)])
        return w
    for i in range(8):
        w = w << _U8
        if a + i < b:
            w |= np.uint64(data[ua + np.uint64(i)])
    return w


@njit(cache=True, nogil=True, inline="always")
def _mix(h):
    """The splitmix64 finalizer: spreads every input bit over the whole word."""
    h ^= h >> np.uint64(30)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(27)
    h *= np.uint64(0x94D049BB133111EB)
    return h ^ (h >> np.uint64(31))


@njit(cache=True, nogil=True, inline="always")
def _keys(data, a, b):
    """``(k1, k2, hash)`` of the string ``data[a:b]``."""
    k1 = _word(data, a, b)
    k2 = _word(data, a + 8, b)
    h = _mix(k1 ^ np.uint64(b - a)) ^ k2
    for p in range(a + 16, b, 8):
        h = _mix(h) ^ _word(data, p, b)
    return k1, k2, _mix(h)


@njit(cache=True, nogil=True)
def _compare(data, a1, b1, k11, k21, a2, b2, k12, k22):
    """-1, 0 or 1 as ``data[a1:b1]`` sorts before, equal to or after ``data[a2:b2]``."""
    if k11 != k12:
        return -1 if k11 < k12 else 1
    if k21 != k22:
        return -1 if k21 < k22 else 1
    i = 16
    while a1 + i < b1 and a2 + i < b2:
        if data[a1 + i] != data[a2 + i]:
            return -1 if data[a1 + i] < data[a2 + i] else 1
        i += 1
    n1 = b1 - a1
    n2 = b2 - a2
    return -1 if n1 < n2 else (1 if n1 > n2 else 0)


@njit(cache=True, nogil=True, inline="always")
def _find(slots, ent_hash, ent_a, ent_b, ent_k1, ent_k2, data, a, b, k1, k2, h):
    """Look ``data[a:b]`` up in an open-addressing table: ``(slot, entry)``, entry -1 if absent
    (then ``slot`` is where to insert it). Entry ``j`` is the string ``data[ent_a[j]:ent_b[j]]``
    with words ``(ent_k1[j], ent_k2[j])`` and hash ``ent_hash[j]``; hits are confirmed byte-wise.
    """
    mask = np.uint64(slots.shape[0] - 1)
    s = h & mask
    while slots[s] >= 0:
        j = slots[s]
        if ent_hash[j] == h and _compare(
            data, a, b, k1, k2, ent_a[j], ent_b[j], ent_k1[j], ent_k2[j]
        ) == 0:
            return s, j
        s = (s + np.uint64(1)) & mask
    return s, -1


@njit(cache=True, nogil=True)
def _grow(slots, ent_hash, m):
    """A hash table twice the size of ``slots`` holding entries ``0..m-1``."""
    new = np.full(slots.shape[0] * 2, -1, dtype=np.int32)
    mask = np.uint64(new.shape[0] - 1)
    for j in range(m):
        s = ent_hash[j] & mask
        while new[s] >= 0:
            s = (s + np.uint64(1)) & mask
        new[s] = j
    return new


@njit(cache=True, nogil=True)
def intern_strings(offsets, data):
    """Number the distinct strings of one binary column in order of first appearance.

    Returns ``(ids, first)``: ``ids[i]`` (int32) numbers row ``i``'s string and ``first[j]`` is
    the first row holding string ``j``. A row equal to the previous row (the common case for
    qids) skips the hash table.
    """
    n = offsets.shape[0] - 1
    ids = np.empty(n, dtype=np.int32)
    first = np.empty(n, dtype=np.int64)
    ent_hash = np.empty(n, dtype=np.uint64)
    ent_a = np.empty(n, dtype=np.int64)
    ent_b = np.empty(n, dtype=np.int64)
    ent_k1 = np.empty(n, dtype=np.uint64)
    ent_k2 = np.empty(n, dtype=np.uint64)
    slots = np.full(16, -1, dtype=np.int32)
    m = 0
    for i in range(n):
        a = offsets[i]
        b = offsets[i + 1]
        if i > 0:
            pa = offsets[i - 1]
            if b - a == a - pa:
                same = True
                for q in range(b - a):
                    if data[a + q] != data[pa + q]:
                        same = False
                        break
                if same:
                    ids[i] = ids[i - 1]
                    continue
        k1, k2, h = _keys(data, a, b)
        s, found = _find(slots, ent_hash, ent_a, ent_b, ent_k1, ent_k2, data, a, b, k1, k2, h)
        if found < 0:
            found = m
            first[m] = i
            ent_hash[m], ent_a[m], ent_b[m], ent_k1[m], ent_k2[m] = h, a, b, k1, k2
            slots[s] = m
            m += 1
            if 2 * m > slots.shape[0]:
                slots = _grow(slots, ent_hash, m)
        ids[i] = found
    return ids, first[:m].copy()


@njit(cache=True, nogil=True, inline="always")
def copy_run(src, i, end, dst, o):
    """Copy ``src[i:end]`` to ``dst`` from ``o`` on (an element loop: see :func:`_merge_sort`);
    the position in ``dst`` after it."""
    while i < end:
        dst[o] = src[i]
        i += 1
        o += 1
    return o


@njit(cache=True, nogil=True)
def _merge_sort(idx, tmp, ka, kb, k1, k2, data):
    """Sort entry indices ``idx`` by their strings ``data[ka[j]:kb[j]]`` (stable, bottom-up).

    Element loops rather than slice assignments: numba compiles a slice assignment with the
    code that formats its shape-mismatch error, which took more time to compile than the
    whole sort (issue 27)."""
    n = idx.shape[0]
    width = 1
    passes = 0
    src, dst = idx, tmp
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j, o = lo, mid, lo
            while i < mid and j < hi:
                x, y = src[i], src[j]
                if _compare(data, ka[y], kb[y], k1[y], k2[y], ka[x], kb[x], k1[x], k2[x]) < 0:
                    dst[o] = y
                    j += 1
                else:
                    dst[o] = x
                    i += 1
                o += 1
            o = copy_run(src, i, mid, dst, o)
            copy_run(src, j, hi, dst, o)
        src, dst = dst, src
        width *= 2
        passes += 1
    if passes % 2 == 1:
        copy_run(tmp, 0, n, idx, 0)


@njit(cache=True, nogil=True)
def _intern_topic_part(grp, seg_offsets, base, offsets, data_base, data, n_topics, rows,
                       row_local, start, end, counts, t_lo, t_hi):
    """Topics ``t_lo:t_hi`` of :func:`intern_topic_docs`: each topic interns its rows (of
    every table) in a hash table of its own distinct docnos, then sorts them; writes
    ``row_local`` at the topic's grouped positions, its sorted docnos' spans at
    ``start``/``end[rows[t]:]`` and their number at ``counts[t]``."""
    n_tables = base.shape[0] - 1
    size = 1
    for t in range(t_lo, t_hi):
        size = max(size, rows[t + 1] - rows[t])
    ka = np.empty(size, dtype=np.int64)
    kb = np.empty(size, dtype=np.int64)
    k1 = np.empty(size, dtype=np.uint64)
    k2 = np.empty(size, dtype=np.uint64)
    kh = np.empty(size, dtype=np.uint64)
    idx = np.empty(size, dtype=np.int64)
    tmp = np.empty(size, dtype=np.int64)
    for t in range(t_lo, t_hi):
        slots = np.full(1024, -1, dtype=np.int32)
        m = 0
        for k in range(n_tables):
            o = base[k] + k
            db = data_base[k]
            for p in range(seg_offsets[k * n_topics + t], seg_offsets[k * n_topics + t + 1]):
                a = db + offsets[o + grp[p]]
                b = db + offsets[o + grp[p] + 1]
                h1, h2, h = _keys(data, a, b)
                s, found = _find(slots, kh, ka, kb, k1, k2, data, a, b, h1, h2, h)
                if found < 0:
                    found = m
                    ka[m], kb[m], k1[m], k2[m], kh[m] = a, b, h1, h2, h
                    slots[s] = m
                    m += 1
                    if 2 * m > slots.shape[0]:
                        slots = _grow(slots, kh, m)
                row_local[p] = found
        for j in range(m):
            idx[j] = j
        _merge_sort(idx[:m], tmp[:m], ka, kb, k1, k2, data)
        r0 = rows[t]
        for r in range(m):
            start[r0 + r] = ka[idx[r]]
            end[r0 + r] = kb[idx[r]]
            tmp[idx[r]] = r
        for k in range(n_tables):
            for p in range(seg_offsets[k * n_topics + t], seg_offsets[k * n_topics + t + 1]):
                row_local[p] = tmp[row_local[p]]
        counts[t] = m
    return 0


def intern_topic_docs(grp, seg_offsets, base, offsets, data_base, data, n_topics, n_threads):
    """Number the distinct (topic, document) pairs: the ``tdi`` space.

    Pairs are numbered by topic, then by docno byte-wise. Topics are shared among
    ``n_threads`` threads in contiguous parts of about equal rows
    (:mod:`irsample._threads`: one serial kernel, :func:`_intern_topic_part`, on each part).
    Returns ``(row_local, topic_doc_offsets, doc_start, doc_end)``: row at grouped position
    ``p`` of topic ``t`` has ``tdi = topic_doc_offsets[t] + row_local[p]``, and ``tdi`` ``i``
    is the docno ``data[doc_start[i]:doc_end[i]]``.
    """
    n_tables = len(base) - 1
    n = len(grp)
    per_topic = np.diff(seg_offsets[: n_tables * n_topics + 1]).reshape(n_tables, n_topics)
    rows = np.zeros(n_topics + 1, dtype=np.int64)
    np.cumsum(per_topic.sum(axis=0), out=rows[1:])
    row_local = np.empty(n, dtype=np.int32)
    start = np.empty(n, dtype=np.int64)  # per topic at rows[t]: its sorted docnos
    end = np.empty(n, dtype=np.int64)
    counts = np.zeros(n_topics, dtype=np.int64)
    bounds = parts(np.diff(rows), n_threads if n >= THREADED_ROWS else 1)
    run_parts(_intern_topic_part, bounds, grp, seg_offsets, base, offsets, data_base, data,
              n_topics, rows, row_local, start, end, counts)
    topic_doc_offsets = np.zeros(n_topics + 1, dtype=np.int64)
    np.cumsum(counts, out=topic_doc_offsets[1:])
    # tdi i of topic t sits at start[rows[t] + i - topic_doc_offsets[t]]
    at = np.arange(topic_doc_offsets[-1], dtype=np.int64)
    at += np.repeat(rows[:-1] - topic_doc_offsets[:-1], counts)
    return row_local, topic_doc_offsets, start[at], end[at]


@njit(cache=True, nogil=True)
def gather_strings(data, starts, ends):
    """Copy the spans ``data[starts[i]:ends[i]]`` into one buffer with int64 offsets."""
    n = starts.shape[0]
    offsets = np.empty(n + 1, dtype=np.int64)
    offsets[0] = 0
    for i in range(n):
        offsets[i + 1] = offsets[i] + ends[i] - starts[i]
    out = np.empty(offsets[n], dtype=np.uint8)
    o = np.uint64(0)
    for i in range(n):  # a byte loop: short strings copy faster than with slices
        for k in range(np.uint64(starts[i]), np.uint64(ends[i])):
            out[o] = data[k]
            o += np.uint64(1)
    return offsets, out


@njit(cache=True, nogil=True)
def find_docs(q_offsets, q_data, q_topic, topic_doc_offsets, d_offsets, d_data):
    """The ``tdi`` of each query docno within its topic's sorted docnos, or -1.

    Query ``i`` is ``q_data[q_offsets[i]:q_offsets[i+1]]`` in topic ``q_topic[i]`` (-1: none);
    ``tdi`` ``j`` is ``d_data[d_offsets[j]:d_offsets[j+1]]``. Binary search, byte-wise order.
    """
    n = q_topic.shape[0]
    out = np.full(n, -1, dtype=np.int64)
    for i in range(n):
        t = q_topic[i]
        if t < 0:
            continue
        qa = q_offsets[i]
        qb = q_offsets[i + 1]
        lo = topic_doc_offsets[t]
        hi = topic_doc_offsets[t + 1]
        while lo < hi:
            mid = (lo + hi) // 2
            da = d_offsets[mid]
            db = d_offsets[mid + 1]
            c = 0
            for j in range(min(qb - qa, db - da)):
                if q_data[qa + j] != d_data[da + j]:
                    c = -1 if d_data[da + j] < q_data[qa + j] else 1
                    break
            if c == 0:
                c = -1 if db - da < qb - qa else (1 if db - da > qb - qa else 0)
            if c == 0:
                out[i] = mid
                break
            if c < 0:
                lo = mid + 1
            else:
                hi = mid
    return out
