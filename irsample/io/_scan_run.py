"""A run file parsed in one pass (:func:`scan_run`): ``qid iter docno rank score tag`` records
into string buffers and scores, without Python strings, for the fields the generic scanner of
``_scan.py`` would locate and then gather in separate passes.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._scan import EXACT_POW10, NEWLINE, parse_float

#: byte classes for :func:`scan_run`: 0 text, 1 white space other than newline, 2 newline
_CLASS = np.zeros(256, dtype=np.uint8)
_CLASS[[9, 11, 12, 13, 32]] = 1
_CLASS[NEWLINE] = 2
#: :func:`scan_run` indexes with unsigned integers: numba then emits no negative-index wrap
_U1 = np.uint64(1)


@njit(cache=True, nogil=True, inline="always")
def _parse_score(buf, s, e):
    """:func:`parse_float` of ``buf[s:e]`` (unsigned positions), first trying the common short
    form ``[-]digits[.digits]`` of at most 15 characters after the sign: its mantissa is below
    10^15 < 2^53 and its exponent at most 15, so ``m / 10^k`` is correctly rounded too."""
    p = s + _U1 if buf[s] == 45 else s
    if e - p > np.uint64(15) or e - p == np.uint64(0):
        return parse_float(buf, np.int64(s), np.int64(e))
    m = 0
    point = e
    q = p
    while q < e:
        d = np.int64(buf[q]) - 48
        if 0 <= d <= 9:
            m = m * 10 + d
        elif d == -2 and point == e:  # the first '.'
            point = q
        else:
            return parse_float(buf, np.int64(s), np.int64(e))
        q += _U1
    if point == e:
        v = float(m)
    elif e - p == _U1:  # '.' alone
        return parse_float(buf, np.int64(s), np.int64(e))
    else:
        v = m / EXACT_POW10[np.int64(e - point) - 1]
    return (-v if p != s else v), True


@njit(cache=True, nogil=True, inline="always")
def _copy_field(buf, p, out, n):
    """Copy the field at ``buf[p]`` to ``out[n]`` on, byte by byte as it is scanned (unsigned
    positions); return the positions after it in ``buf`` and in ``out``."""
    c = buf[p]
    while _CLASS[c] == 0:
        out[n] = c
        n += _U1
        p += _U1
        c = buf[p]
    return p, n


@njit(cache=True, nogil=True)
def scan_run(buf, cap):
    """Parse a run file in one pass: ``qid iter docno rank score tag`` records.

    ``buf`` must end with a newline (the caller appends one if needed), so no field scan can
    run past it. Records are the lines that are neither blank nor ``#`` comments. At most
    ``cap`` records are read: with ``cap = len(buf) // 12 + 1`` (:func:`record_cap`) a file
    with more records has a short one among the first ``cap`` (a six-field record takes at
    least 12 bytes with its newline), so the caller's error is the same without counting
    lines first. Returns ``(count, qid offsets, qid bytes, docno offsets, docno bytes, scores,
    line numbers, slow, first short record, its field count, tag span)``: offsets are int32
    Arrow offsets (``buf`` must be under 2 GiB); ``slow`` lists ``(record, start, end)`` of
    scores that :func:`parse_float` leaves to the caller; the first record with fewer than
    six fields is -1 if none; the tag is the sixth field of the last record. The byte arrays
    are views of buffers of ``len(buf)`` bytes whose untouched tails take no memory. Unsigned
    byte positions: a third less time than signed ones (no check for negative indices). Qid
    and docno bytes are copied as they are scanned, and a record's line is skipped from its
    sixth field on (the tag's end is found for the last record only): 12% less time.
    """
    n = np.uint64(buf.shape[0])
    q_off = np.empty(cap + 1, dtype=np.int32)
    d_off = np.empty(cap + 1, dtype=np.int32)
    q_data = np.empty(buf.shape[0], dtype=np.uint8)
    d_data = np.empty(buf.shape[0], dtype=np.uint8)
    score = np.empty(cap)
    lineno = np.empty(cap, dtype=np.int32)  # lines < bytes < 2 GiB
    slow = np.empty((cap, 3), dtype=np.int64)
    n_slow, short, short_fields, tag_s, line, rec = 0, -1, 0, 0, 0, 0
    q_off[0], d_off[0] = 0, 0
    qn, dn, pos = np.uint64(0), np.uint64(0), np.uint64(0)
    while pos < n:
        line += 1
        p = pos
        while _CLASS[buf[p]] == 1:
            p += _U1
        if _CLASS[buf[p]] == 2 or buf[p] == 35:  # blank or '#' comment
            while buf[p] != NEWLINE:
                p += _U1
            pos = p + _U1
            continue
        if rec == cap:  # only a file with short records gets here (see above)
            break
        field = 0
        score[rec] = 0.0
        while True:
            s = p
            if field == 0:
                p, qn = _copy_field(buf, p, q_data, qn)
            elif field == 2:
                p, dn = _copy_field(buf, p, d_data, dn)
            elif field == 5:  # the sixth field: the record is complete; skip to its end
                tag_s = np.int64(s)
                while buf[p] != NEWLINE:
                    p += _U1
                field = 6
                break
            else:
                while _CLASS[buf[p]] == 0:
                    p += _U1
                if field == 4:
                    v, ok = _parse_score(buf, s, p)
                    score[rec] = v
                    if not ok:
                        slow[n_slow, 0], slow[n_slow, 1], slow[n_slow, 2] = rec, s, p
                        n_slow += 1
            field += 1
            while _CLASS[buf[p]] == 1:
                p += _U1
            if buf[p] == NEWLINE:
                break
        if field < 6 and short < 0:
            short, short_fields = rec, field
        q_off[rec + 1] = qn
        d_off[rec + 1] = dn
        lineno[rec] = line
        rec += 1
        pos = p + _U1
    tag_e = tag_s  # the last record's tag ends where its text does
    while rec > 0 and _CLASS[buf[tag_e]] == 0:
        tag_e += 1
    return (rec, q_off[: rec + 1], q_data[: np.int64(qn)], d_off[: rec + 1],
            d_data[: np.int64(dn)], score[:rec], lineno[:rec], slow[:n_slow], short,
            short_fields, tag_s, tag_e)


def record_cap(buf: np.ndarray) -> int:
    """More records than a file of six-field records can hold (see :func:`scan_run`)."""
    return len(buf) // 12 + 1
