"""Readers for TREC run and qrels files (plain, gzip, or ``-`` for standard input).

Formats (reference-semantics §1):

- run: ``qid iter docno rank score tag``; six or more whitespace-separated fields; ``iter`` and
  ``rank`` are ignored; the run's tag is the tag of its last line; blank lines and lines starting
  with ``#`` are skipped. A docno repeated inside a topic is an error (detected when the run is
  placed into a :class:`~irsample.model.Collection`).
- qrels: ``qid iter docno rel``; exactly four fields; ``rel`` parses like C ``atol`` (``1.7`` is
  1); a negative ``rel`` marks a document that was pooled but not judged. A duplicate
  ``(qid, docno)`` is an error.

Parsed tables keep strings as Arrow binary arrays (byte-wise comparison, as ``strcmp``) and
numbers as NumPy arrays, plus each record's line number for later error messages.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from ._scan import (
    count_lines,
    first_invalid_utf8,
    gather_spans,
    parse_float_fields,
    parse_int_fields,
    read_only,
    scan_fields,
)
from ._scan_run import record_cap, scan_run
from .arrow import binary_from, numbers
from .files import Source, read_raw, source_name

_UTF8_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, eq=False)
class RunTable:
    """One run as parsed columns: ``qid``, ``docno`` (Arrow binary), ``score`` (float64)."""

    name: str
    source: str
    qid: pa.Array
    docno: pa.Array
    score: np.ndarray
    lineno: np.ndarray = field(repr=False)

    def __len__(self) -> int:
        return len(self.score)


def single_precision(runs: list[RunTable]) -> list[RunTable]:
    """``runs`` with their scores rounded to single precision, as trec_eval 9.0.8 stores them
    (``float sim`` in its ``trec_format.h``; version 10 keeps doubles): scores that differ only
    past float's 24 bits tie there, and ties go by docno descending (``--compat 9.0.8``: 11 of
    TREC-COVID round 5's 126 runs rank differently so, one topic's ndcg_cut_5 1.0 against
    0.934)."""
    return [dataclasses.replace(r, score=r.score.astype(np.float32).astype(np.float64))
            for r in runs]


@dataclass(frozen=True, eq=False)
class QrelsTable:
    """Judgments as parsed columns: ``qid``, ``docno`` (Arrow binary), ``rel`` (int64).

    ``rel >= 0`` is a judged grade, ``rel < 0`` a pooled-but-unjudged document; documents absent
    from the table are unpooled. ``stratum`` (stratified qrels) and ``prob`` (prels inclusion
    probabilities) are ``None`` for plain TREC qrels.
    """

    source: str
    qid: pa.Array
    docno: pa.Array
    rel: np.ndarray
    lineno: np.ndarray = field(repr=False)
    stratum: pa.Array | None = None
    prob: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.rel)


def read_bytes(source: Source, raw: bytes | None = None) -> np.ndarray:
    """Read a whole file (gzip detected by its magic bytes) into a ``uint8`` array, without its
    leading byte-order marks; ``raw``: the file's bytes, already read by
    :func:`~irsample.io.files.read_raw`. A NUL byte anywhere is an error naming its line."""
    if raw is None:
        raw = read_raw(source)
    nul = raw.find(b"\x00")  # one memchr pass: binary data, or a corrupt id that would pass
    if nul >= 0 and raw[:2] not in (b"\xff\xfe", b"\xfe\xff"):  # (UTF-16: said as such below)
        raise InputError("a NUL byte: binary data, not text", source_name(source),
                         raw.count(b"\n", 0, nul) + 1)  # as a new topic ("301\0"), printed raw
    skip = 0
    while raw[skip : skip + 3] == _UTF8_BOM:  # byte-order marks are not part of the first qid
        skip += 3
    if skip:
        raw = memoryview(raw)[skip:]
    return read_only(np.frombuffer(raw, dtype=np.uint8))


def binary_array(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> pa.Array:
    """An Arrow binary array of the byte spans of ``buf`` (one copy, no Python strings)."""
    if len(starts) and int((ends - starts).sum()) >= 2**31:
        half = len(starts) // 2  # int32 offsets: split very large columns
        return pa.concat_arrays(
            [
                binary_array(buf, starts[:half], ends[:half]),
                binary_array(buf, starts[half:], ends[half:]),
            ]
        )
    # a read-only buffer, contiguous spans (a column of a 2-D array is strided): one signature
    offsets, data = gather_spans(
        read_only(buf), np.ascontiguousarray(starts), np.ascontiguousarray(ends)
    )
    return pa.Array.from_buffers(
        pa.binary(), len(starts), [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )


def check_text_layout(buf: np.ndarray, name: str) -> None:
    """Refuse text the line scanners would misread. A UTF-16 file (a byte-order mark FF FE or
    FE FF: Windows' "Unicode"), whose every other byte is 0, reads as one field a line. A file
    whose lines end with a carriage return alone (classic Mac OS) reads by newlines as one long
    line, and a run's reader (which, as trec_eval's, skips what follows a record's sixth field)
    would read its first record alone. Reads the first 64 KiB."""
    head = bytes(buf[:65536])
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise InputError("it is UTF-16 text (it starts with a UTF-16 byte-order mark): save it "
                         "as UTF-8 or ASCII", name, 1)
    if b"\n" not in head and b"\r" in head.rstrip(b" \t\r\n"):
        raise InputError("its lines end with a carriage return alone (CR, classic Mac OS line "
                         "endings): convert them to LF or CRLF", name, 1)


def _scan(buf: np.ndarray, keep: list[int], name: str):
    check_text_layout(buf, name)
    starts, ends, nfields, lineno, count = scan_fields(
        read_only(buf), np.asarray(keep, dtype=np.int64), count_lines(buf)
    )
    if count == 0:
        raise InputError("empty file: no records", name)
    return starts[:count], ends[:count], nfields[:count], lineno[:count]


def _check_field_count(nfields, lineno, name, *, exact=None, minimum=None, what=""):
    bad = nfields != exact if exact is not None else nfields < minimum
    if bad.any():
        i = int(np.argmax(bad))
        want = f"exactly {exact}" if exact is not None else f"at least {minimum}"
        raise InputError(
            f"expected {want} fields ({what}), found {int(nfields[i])}", name, int(lineno[i])
        )


def parse_floats(buf, starts, ends, lineno, name, what) -> np.ndarray:
    """Parse decimal numbers as C ``atof`` does on well-formed input; anything that is not a
    finite number (``nan``, ``inf``, ``-inf``, ``1e999``, junk) is an error.

    Most tokens take the exact fast path of :func:`parse_float_fields`; the rest (long
    mantissas such as ``1.0203721250066107000000``, large exponents) are parsed by Arrow's
    string-to-double cast, correctly rounded like Python's ``float`` (both give the double
    nearest the decimal value), in C++ without the interpreter lock. Where Arrow refuses a
    token or reads a non-finite value, Python's ``float`` decides and reports it.
    """
    values, slow = parse_float_fields(  # one signature: see binary_array
        read_only(buf), np.ascontiguousarray(starts), np.ascontiguousarray(ends)
    )
    slow = np.flatnonzero(slow)
    if not len(slow):
        return values
    try:
        tokens = binary_array(buf, starts[slow], ends[slow]).cast(pa.string())
        parsed = numbers(pc.cast(tokens, pa.float64()))
        if np.isfinite(parsed).all():
            values[slow] = parsed
            return values
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass  # junk or non-UTF-8 text: the loop below names it
    for i in slow:
        token = bytes(buf[starts[i] : ends[i]])
        try:
            v = float(token.decode("ascii")) if b"_" not in token else float("nan")
        except (UnicodeDecodeError, ValueError):
            v = float("nan")
        if not np.isfinite(v):
            text = token.decode("utf-8", "backslashreplace")
            problem = "is not a finite number" if v == v or text.lower().lstrip("+-") in (
                "nan", "snan") else "is not a number"
            raise InputError(f"{what} {problem}: {text!r}", name, int(lineno[i]))
        values[i] = v
    return values


INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def parse_ints(buf, starts, ends, lineno, name, what) -> np.ndarray:
    """Parse whole numbers (``2`` or ``2.0``) within the 32-bit range; anything else is an error.

    C ``atol`` (trec_eval) reads ``1.5`` as 1; irsample refuses it instead of guessing.
    """
    values, bad, fractional = parse_int_fields(  # one signature: see binary_array
        read_only(buf), np.ascontiguousarray(starts), np.ascontiguousarray(ends)
    )
    if bad < 0:
        out_of_range = (values < INT32_MIN) | (values > INT32_MAX)
        if out_of_range.any():
            bad = int(np.argmax(out_of_range))
            token = bytes(buf[starts[bad] : ends[bad]]).decode("utf-8", "backslashreplace")
            raise InputError(
                f"{what} {token} does not fit in 32 bits (allowed: {INT32_MIN} to {INT32_MAX})",
                name,
                int(lineno[bad]),
            )
        return values
    token = bytes(buf[starts[bad] : ends[bad]]).decode("utf-8", "backslashreplace")
    if fractional:
        raise InputError(
            f"{what} must be a whole number, not {token!r} (trec_eval would truncate it)",
            name,
            int(lineno[bad]),
        )
    raise InputError(f"{what} is not an integer: {token!r}", name, int(lineno[bad]))


def check_utf8(values: pa.Array, lineno: np.ndarray, name: str, what: str) -> None:
    """Raise naming the line of the first value of a binary column that is not UTF-8 text."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if len(values) == 0:
        return
    _, offsets, data = values.buffers()
    dtype = np.int64 if values.type == pa.large_binary() else np.int32
    offsets = np.frombuffer(offsets, dtype)[values.offset : values.offset + len(values) + 1]
    data = (
        np.frombuffer(data, np.uint8) if data is not None and data.size else np.zeros(1, np.uint8)
    )
    if not data.size or int(data.max()) < 0x80:  # ASCII: UTF-8, and no byte-order mark
        return
    bad = first_invalid_utf8(offsets, data)
    if bad >= 0:
        raise InputError(
            f"{what} is not UTF-8 text: {text_of(values[bad].as_py())!r}", name, int(lineno[bad])
        )
    starts = offsets[:-1][np.diff(offsets) >= 3]  # U+FEFF first: lost when written back first
    bom = (data[starts] == 0xEF) & (data[starts + 1] == 0xBB) & (data[starts + 2] == 0xBF)
    if bom.any():
        row = int(np.flatnonzero(np.diff(offsets) >= 3)[np.argmax(bom)])
        raise InputError(f"{what} starts with a byte-order mark (U+FEFF)", name, int(lineno[row]))


def decode_utf8(raw: bytes, name: str, line: int, what: str) -> str:
    """``raw`` as text, or an error naming the line when it is not UTF-8."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        shown = text_of(raw[:60]) + ("..." if len(raw) > 60 else "")  # binary data: a glimpse
        raise InputError(f"{what} is not UTF-8 text: {shown!r}", name, line) from None
    if text.lstrip().startswith("\ufeff"):
        raise InputError(f"{what} starts with a byte-order mark (U+FEFF)", name, line)
    return text


def text_of(value: bytes) -> str:
    """A qid or docno for messages (bytes that are not UTF-8 are shown escaped)."""
    return value.decode("utf-8", "backslashreplace")


_RUN_FIELDS = "qid iter docno rank score tag"


def read_run(source: Source, raw: bytes | None = None) -> RunTable:
    """Read a TREC run file: ``qid iter docno rank score tag`` (six or more fields); ``raw``:
    its bytes, already read by :func:`~irsample.io.files.read_raw`."""
    name = source_name(source)
    buf = read_bytes(source, raw)
    if len(buf) >= 2**31:  # int32 Arrow offsets: the general scanner splits large columns
        return _read_run_large(buf, name)
    check_text_layout(buf, name)
    if len(buf) and buf[-1] != 10:  # the scanner stops at newlines: end the last line
        buf = np.concatenate([buf, np.array([10], dtype=np.uint8)])
    scanned = scan_run(read_only(buf), record_cap(buf))
    count, q_off, q_data, d_off, d_data, score, lineno, slow, short, fields, tag_s, tag_e = scanned
    if count == 0:
        raise InputError("empty file: no records", name)
    if short >= 0:
        raise InputError(
            f"expected at least 6 fields ({_RUN_FIELDS}), found {fields}", name, int(lineno[short])
        )
    if len(slow):
        rec, starts, ends = slow[:, 0], slow[:, 1], slow[:, 2]
        score[rec] = parse_floats(buf, starts, ends, lineno[rec], name, "score")
    qid = binary_from(q_off, q_data)
    check_utf8(qid, lineno, name, "topic id")
    tag = decode_utf8(bytes(buf[tag_s:tag_e]), name, int(lineno[-1]), "run tag")
    return RunTable(tag, name, qid, binary_from(d_off, d_data), score, lineno)


def _read_run_large(buf: np.ndarray, name: str) -> RunTable:
    starts, ends, nfields, lineno = _scan(buf, [0, 2, 4, 5], name)
    _check_field_count(nfields, lineno, name, minimum=6, what=_RUN_FIELDS)
    qid = binary_array(buf, starts[:, 0], ends[:, 0])
    docno = binary_array(buf, starts[:, 1], ends[:, 1])
    score = parse_floats(buf, starts[:, 2], ends[:, 2], lineno, name, "score")
    check_utf8(qid, lineno, name, "topic id")
    tag = decode_utf8(bytes(buf[starts[-1, 3] : ends[-1, 3]]), name, int(lineno[-1]), "run tag")
    return RunTable(tag, name, qid, docno, score, lineno)


def read_qrels(source: Source) -> QrelsTable:
    """Read TREC qrels: ``qid iter docno rel`` (exactly four fields, integer ``rel``)."""
    name = source_name(source)
    buf = read_bytes(source)
    starts, ends, nfields, lineno = _scan(buf, [0, 2, 3], name)
    _check_field_count(nfields, lineno, name, exact=4, what="qid iter docno rel")
    qid = binary_array(buf, starts[:, 0], ends[:, 0])
    docno = binary_array(buf, starts[:, 1], ends[:, 1])
    rel = parse_ints(buf, starts[:, 2], ends[:, 2], lineno, name, "relevance")
    check_utf8(qid, lineno, name, "topic id")
    table = QrelsTable(name, qid, docno, rel, lineno)
    check_unique_pairs(table.qid, table.docno, table.lineno, name, "judgment")
    return table


def check_unique_pairs(qid: pa.Array, docno: pa.Array, lineno: np.ndarray, name: str, what: str):
    """Raise naming the line of the first repeated ``(qid, docno)`` pair."""
    if len(qid) == 0:
        return
    q = numbers(pc.dictionary_encode(qid).indices).astype(np.int64)
    d = numbers(pc.dictionary_encode(docno).indices).astype(np.int64)
    key = q * (int(d.max()) + 1) + d
    order = np.argsort(key, kind="stable")
    dup = np.flatnonzero(key[order][1:] == key[order][:-1])
    if len(dup):
        second = order[dup + 1]
        i = int(second[np.argmin(lineno[second])])
        first = int(order[dup[np.argmin(lineno[second])]])
        raise InputError(
            f"duplicate {what} for topic {text_of(qid[i].as_py())!r} document "
            f"{text_of(docno[i].as_py())!r} (first at line {int(lineno[first])})",
            name,
            int(lineno[i]),
        )
