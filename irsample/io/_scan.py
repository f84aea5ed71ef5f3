"""Numba kernels that split whitespace-separated text records without creating Python strings.

A file is read once into a ``uint8`` buffer; :func:`scan_fields` finds, for every line that is
neither blank nor a ``#`` comment, the byte spans of the requested fields, the line's field count
and its 1-based line number. Strings are then gathered into Arrow binary arrays
(:func:`gather_spans`), so millions of lines never become Python objects. Numbers are parsed
from their spans (:func:`parse_int_fields`, :func:`parse_float_fields`); a run file, the largest
input by far, has a one-pass parser of its own (``_scan_run.py``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._numba_start import skip_blas_probe

skip_blas_probe()

NEWLINE = 10


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
        while eol < n and buf[eol] != NEWLINE:
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


EXACT_POW10 = np.array([10.0**i for i in range(23)])


@njit(cache=True, nogil=True)
def parse_float(buf, p, e):
    """``(value, ok)`` for the token ``buf[p:e]``; ``ok`` is False where :func:`parse_float_fields`
    leaves the token to the caller. A called function, not inlined by numba: the run scanner
    calls it from three places, and three inlined copies made it compile 3 s longer; LLVM
    still inlines it where that pays."""
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
        v = mantissa * EXACT_POW10[exp10]
    elif -22 <= exp10 < 0:
        v = mantissa / EXACT_POW10[-exp10]
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
        v, ok = parse_float(buf, starts[i], ends[i])
        values[i] = v
        needs_slow[i] = not ok
    return values, needs_slow


def read_only(array: np.ndarray) -> np.ndarray:
    """``array``, or a read-only view of it. numba compiles a kernel once per argument type,
    and a writable buffer is another type than a read-only one: a file's bytes are read-only
    (``np.frombuffer`` of ``bytes``), a run given a final newline or a buffer built in memory
    writable, so each scanner compiled twice on first use. The scanners' callers pass every
    buffer read-only: one signature each."""
    if not array.flags.writeable:
        return array
    view = array.view()
    view.flags.writeable = False
    return view


def count_lines(buf: np.ndarray) -> int:
    """Upper bound on the number of records in ``buf`` (newlines + a final unterminated line)."""
    return int(np.count_nonzero(buf == NEWLINE)) + 1
