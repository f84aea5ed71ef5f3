"""Numba kernels that split whitespace-separated text records without creating Python strings.

A file is read once into a ``uint8`` buffer; :func:`scan_fields` finds, for every line that is
neither blank nor a ``#`` comment, the byte spans of the requested fields, the line's field count
and its 1-based line number. Strings are then gathered into Arrow binary arrays
(:func:`gather_spans`), so millions of lines never become Python objects.
"""

from __future__ import annotations

import numpy as np
from numba import njit

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
    """Copy the byte spans ``buf[starts[i]:ends[i]]`` into one buffer with Arrow offsets."""
    n = starts.shape[0]
    offsets = np.empty(n + 1, dtype=np.int64)
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


@njit(cache=True, nogil=True)
def parse_int_fields(buf, starts, ends):
    """Parse integers like C ``atol`` (sign, digits, an ignored fractional part: "1.7" is 1).

    Returns ``(values, bad)`` where ``bad`` is the index of the first field that is not a
    number of that form, or -1.
    """
    n = starts.shape[0]
    values = np.empty(n, dtype=np.int64)
    for i in range(n):
        p = starts[i]
        e = ends[i]
        neg = False
        if p < e and (buf[p] == 45 or buf[p] == 43):
            neg = buf[p] == 45
            p += 1
        if p >= e or not (48 <= buf[p] <= 57):
            return values, i
        v = 0
        while p < e and 48 <= buf[p] <= 57:
            if v > 100_000_000_000_000_000:  # would overflow int64: the caller reports it
                v = 100_000_000_000_000_000
            else:
                v = v * 10 + (buf[p] - 48)
            p += 1
        if p < e:
            if buf[p] != 46:
                return values, i
            p += 1
            while p < e and 48 <= buf[p] <= 57:
                p += 1
            if p < e:
                return values, i
        values[i] = -v if neg else v
    return values, -1


def count_lines(buf: np.ndarray) -> int:
    """Upper bound on the number of records in ``buf`` (newlines + a final unterminated line)."""
    return int(np.count_nonzero(buf == _NEWLINE)) + 1
