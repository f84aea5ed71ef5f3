"""Numba kernels that split whitespace-separated text records without creating Python strings.

A file is read once into a ``uint8`` buffer; :func:`scan_fields` finds, for every line that is
neither blank nor a ``#`` comment, the byte spans of the requested fields, the line's field count
and its 1-based line number. Strings are then gathered into Arrow binary arrays
(:func:`gather_spans`), so millions of lines never become Python objects.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._numba_start import skip_blas_probe

skip_blas_probe()

_NEWLINE = 10


@njit(cache=True, nogil=True, inline="always")
def _is_space(c):
    # C isspace(): space, \t, \n, \v, \f, \r
    return c == 32 or (9 <= c <= 13)


@njit(cache=True, nogil=True)
def scan_fields(buf, keep, n_lines_max):
    """Locate fields of every non-blank, non-comment line of ``buf``.

    ``keep`` lists the field indices whose spans are wanted; index -1 stands for "the last
    field of the line". Returns ``(starts, ends, nfields, lineno, count)``: ``starts[i, j]`` and
    ``ends[i, j]`` delimit field ``keep[j]`` of the i-th record (-1 when the line has fewer
    fields), ``nfields[i]`` its field count and ``lineno[i]`` its 1-based line number.
    """
    nkeep = keep.shape[0]
    starts = np.full((n_lines_max, nkeep), -1, dtype=np.int64)
    ends = np.full((n_lines_max, nkeep), -1, dtype=np.int64)
    nfields = np.zeros(n_lines_max, dtype=np.int32)
    lineno = np.zeros(n_lines_max, dtype=np.int64)
    n = buf.shape[0]
    pos = 0
    line = 0
    rec = 0
    while pos < n:
        line += 1
        # find the end of this line
        eol = pos
        while eol < n and buf[eol] != _NEWLINE:
            eol += 1
        # skip leading white space
        p = pos
        while p < eol and _is_space(buf[p]):
            p += 1
        if p < eol and buf[p] != 35:  # not blank, not a '#' comment
            field = 0
            last_s = -1
            last_e = -1
            while p < eol:
                s = p
                while p < eol and not _is_space(buf[p]):
                    p += 1
                for j in range(nkeep):
                    if keep[j] == field:
                        starts[rec, j] = s
                        ends[rec, j] = p
                last_s = s
                last_e = p
                field += 1
                while p < eol and _is_space(buf[p]):
                    p += 1
            for j in range(nkeep):
                if keep[j] == -1:
                    starts[rec, j] = last_s
                    ends[rec, j] = last_e
            nfields[rec] = field
            lineno[rec] = line
            rec += 1
        pos = eol + 1
    return starts, ends, nfields, lineno, rec


@njit(cache=True, nogil=True)
def gather_spans(buf, starts, ends):
    """Copy the byte spans ``buf[starts[i]:ends[i]]`` into one buffer with Arrow offsets.

    Offsets are int32 (Arrow ``binary``); a caller whose total exceeds 2 GiB must split.
    """
    n = starts.shape[0]
    offsets = np.empty(n + 1, dtype=np.int32)
    total = 0
    offsets[0] = 0
    for i in range(n):
        total += ends[i] - starts[i]
        offsets[i + 1] = total
    data = np.empty(total, dtype=np.uint8)
    for i in range(n):
        o = offsets[i]
        for k in range(starts[i], ends[i]):
            data[o] = buf[k]
            o += 1
    return offsets, data


@njit(cache=True, nogil=True, inline="always")
def _sign(buf, p, e):
    """Skip an optional sign at ``p``: ``(negative, next position)``."""
    if p < e and (buf[p] == 45 or buf[p] == 43):
        return buf[p] == 45, p + 1
    return False, p


@njit(cache=True, nogil=True)
def parse_int_fields(buf, starts, ends):
    """Parse whole numbers: sign, digits, optionally a fractional part of zeros ("2.0" is 2).

    Returns ``(values, bad, fractional)``: ``bad`` is the index of the first field that is not
    a number of that form, or -1; ``fractional`` tells whether that field is a number with a
    nonzero fractional part ("1.5", which C ``atol`` would read as 1). Magnitudes past 10^17
    are clamped there (the caller refuses them as outside 32 bits).
    """
    n = starts.shape[0]
    values = np.empty(n, dtype=np.int64)
    for i in range(n):
        e = ends[i]
        neg, p = _sign(buf, starts[i], e)
        if p >= e or not (48 <= buf[p] <= 57):
            return values, i, False
        v = 0
        while p < e and 48 <= buf[p] <= 57:
            if v > 100_000_000_000_000_000:  # would overflow int64: the caller reports it
                v = 100_000_000_000_000_000
            else:
                v = v * 10 + (buf[p] - 48)
            p += 1
        if p < e:
            if buf[p] != 46:
                return values, i, False
            p += 1
            nonzero = False
            while p < e and 48 <= buf[p] <= 57:
                nonzero = nonzero or buf[p] != 48
                p += 1
            if p < e:
                return values, i, False
            if nonzero:
                return values, i, True
        values[i] = -v if neg else v
    return values, -1, False


@njit(cache=True, nogil=True)
def first_invalid_utf8(offsets, data):
    """Index of the first string ``data[offsets[i]:offsets[i+1]]`` that is not valid UTF-8
    (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF), or -1."""
    n = offsets.shape[0] - 1
    for i in range(n):
        p = offsets[i]
        e = offsets[i + 1]
        while p < e:
            c = data[p]
            if c < 0x80:
                p += 1
                continue
            if 0xC2 <= c <= 0xDF:
                k, lo, hi = 1, 0x80, 0xBF
            elif c == 0xE0:
                k, lo, hi = 2, 0xA0, 0xBF
            elif 0xE1 <= c <= 0xEC or 0xEE <= c <= 0xEF:
                k, lo, hi = 2, 0x80, 0xBF
            elif c == 0xED:
                k, lo, hi = 2, 0x80, 0x9F
            elif c == 0xF0:
                k, lo, hi = 3, 0x90, 0xBF
            elif 0xF1 <= c <= 0xF3:
                k, lo, hi = 3, 0x80, 0xBF
            elif c == 0xF4:
                k, lo, hi = 3, 0x80, 0x8F
            else:
                return i
            if p + k >= e:  # truncated sequence
                return i
            if not (lo <= data[p + 1] <= hi):
                return i
            for q in range(p + 2, p + k + 1):
                if not (0x80 <= data[q] <= 0xBF):
                    return i
            p += k + 1
    return -1


_EXACT_POW10 = np.array([10.0**i for i in range(23)])


@njit(cache=True, nogil=True, inline="always")
def _parse_float(buf, p, e):
    """``(value, ok)`` for the token ``buf[p:e]``; ``ok`` is False where :func:`parse_float_fields`
    leaves the token to the caller."""
    neg, p = _sign(buf, p, e)
    mantissa = 0
    digits = 0  # significant digits in mantissa
    zeros = 0  # zeros read after the last nonzero digit, not yet in mantissa
    exp10 = 0
    seen_digit = False
    fraction = False
    while p < e:
        c = buf[p]
        if 48 <= c <= 57:
            seen_digit = True
            if fraction:
                exp10 -= 1
            if c == 48:
                zeros += 1 if mantissa > 0 else 0
            else:
                digits += zeros + 1
                if digits > 18:
                    break
                for _ in range(zeros):
                    mantissa *= 10
                mantissa = mantissa * 10 + (c - 48)
                zeros = 0
        elif c == 46 and not fraction:
            fraction = True
        else:
            break
        p += 1
    exp10 += zeros
    if p < e and (buf[p] == 101 or buf[p] == 69) and seen_digit:
        p += 1
        eneg, p = _sign(buf, p, e)
        if p >= e:
            return 0.0, False
        ev = 0
        while p < e and 48 <= buf[p] <= 57 and ev < 100000:
            ev = ev * 10 + (buf[p] - 48)
            p += 1
        exp10 += -ev if eneg else ev
    if p != e or not seen_digit or digits > 18 or mantissa >= 2**53:
        return 0.0, False
    if exp10 == 0 or mantissa == 0:
        v = float(mantissa)
    elif 0 < exp10 <= 22:
        v = mantissa * _EXACT_POW10[exp10]
    elif -22 <= exp10 < 0:
        v = mantissa / _EXACT_POW10[-exp10]
    else:
        return 0.0, False
    return (-v if neg else v), True


@njit(cache=True, nogil=True)
def parse_float_fields(buf, starts, ends):
    """Parse decimal numbers exactly where that is cheap, and flag the rest.

    A token ``[+-]digits[.digits][(e|E)[+-]digits]`` whose significant digits fit in 2^53 and
    whose decimal exponent is within +-22 is converted as ``m * 10^e`` or ``m / 10^-e``: both
    operands are exact doubles, so the single rounding gives the correctly rounded value
    (Clinger, "How to read floating point numbers accurately", PLDI 1990). Zeros are held back
    until a nonzero digit follows, so trailing zeros ("1.50000000000000000000") never count as
    significant digits. Other tokens get ``needs_slow[i] = True`` and are parsed by the caller.
    """
    n = starts.shape[0]
    values = np.zeros(n)
    needs_slow = np.zeros(n, dtype=np.bool_)
    for i in range(n):
        v, ok = _parse_float(buf, starts[i], ends[i])
        values[i] = v
        needs_slow[i] = not ok
    return values, needs_slow


#: byte classes for :func:`scan_run`: 0 text, 1 white space other than newline, 2 newline
_CLASS = np.zeros(256, dtype=np.uint8)
_CLASS[[9, 11, 12, 13, 32]] = 1
_CLASS[_NEWLINE] = 2
#: :func:`scan_run` indexes with unsigned integers: numba then emits no negative-index wrap
_U1 = np.uint64(1)


@njit(cache=True, nogil=True, inline="always")
def _parse_score(buf, s, e):
    """:func:`_parse_float` of ``buf[s:e]`` (unsigned positions), first trying the common short
    form ``[-]digits[.digits]`` of at most 15 characters after the sign: its mantissa is below
    10^15 < 2^53 and its exponent at most 15, so ``m / 10^k`` is correctly rounded too."""
    p = s + _U1 if buf[s] == 45 else s
    if e - p > np.uint64(15) or e - p == np.uint64(0):
        return _parse_float(buf, np.int64(s), np.int64(e))
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
            return _parse_float(buf, np.int64(s), np.int64(e))
        q += _U1
    if point == e:
        v = float(m)
    elif e - p == _U1:  # '.' alone
        return _parse_float(buf, np.int64(s), np.int64(e))
    else:
        v = m / _EXACT_POW10[np.int64(e - point) - 1]
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
    scores that :func:`_parse_float` leaves to the caller; the first record with fewer than
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
            while buf[p] != _NEWLINE:
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
                while buf[p] != _NEWLINE:
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
            if buf[p] == _NEWLINE:
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


def count_lines(buf: np.ndarray) -> int:
    """Upper bound on the number of records in ``buf`` (newlines + a final unterminated line)."""
    return int(np.count_nonzero(buf == _NEWLINE)) + 1
