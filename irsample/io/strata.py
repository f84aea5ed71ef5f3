"""Readers for sampled judgments: stratified qrels (sample_eval.pl) and prels (statAP).

Format (reference-semantics §1): ``qid iter docno stratum rel``, five whitespace-separated fields
per line. ``stratum`` is an arbitrary label; ``rel >= 0`` is a judged grade, ``rel = -1`` (any
negative value) a document of the stratum that was not sampled for judging; documents absent from
the file are outside every stratum. sample_eval.pl reads five tokens at a time with no line
structure, so one malformed line silently shifts every later record; here it is an error naming
the file and line.
"""

from __future__ import annotations

import warnings

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError, InputWarning
from ._scan import gather_spans, read_only
from .trec import (
    QrelsTable,
    Source,
    _check_field_count,
    _scan,
    binary_array,
    check_unique_pairs,
    check_utf8,
    parse_floats,
    parse_ints,
    read_bytes,
    source_name,
)


def read_strata_qrels(source: Source) -> QrelsTable:
    """Read stratified qrels ``qid iter docno stratum rel`` into a table with ``stratum``."""
    name = source_name(source)
    buf = read_bytes(source)
    starts, ends, nfields, lineno = _scan(buf, [0, 2, 3, 4], name)
    _check_field_count(nfields, lineno, name, exact=5, what="qid iter docno stratum rel")
    table = QrelsTable(
        source=name,
        qid=binary_array(buf, starts[:, 0], ends[:, 0]),
        docno=binary_array(buf, starts[:, 1], ends[:, 1]),
        rel=parse_ints(buf, starts[:, 3], ends[:, 3], lineno, name, "relevance"),
        lineno=lineno,
        stratum=binary_array(buf, starts[:, 2], ends[:, 2]),
    )
    check_utf8(table.qid, lineno, name, "topic id")
    check_utf8(table.stratum, lineno, name, "stratum label")
    check_unique_pairs(table.qid, table.docno, table.lineno, name, "judgment")
    return table


#: prels methods whose documents statAP_MQ_eval takes as judged with certainty (0: the
#: UMASS/MTC selection, 2: chosen by both methods, "collision"; its default mixed evaluation)
CERTAIN_METHODS = (0, 2)
#: methods of the sampling (NEU/statAP) side: a topic with none of them is left out
SAMPLED_METHODS = (1, 2, 4)


def read_prels(source: Source) -> QrelsTable:
    """Read statAP prels: ``qid docno rel method inclusion_probability``.

    As statAP_MQ_eval (v3, its default mixed evaluation) does:
    - a record with rel = -999 is skipped (the format's "not sampled" mark);
    - a record below 0 (but -999) lists a pooled document not judged (``merge --format
      prels`` writes the whole pool so): it is kept whatever its probability (a depth-k
      design gives the documents it never judges pi = 0);
    - a judged record whose probability is outside (0, 1] is skipped, counted in one
      :class:`~irsample.errors.InputWarning` naming the first such line (the script skips
      those below 0 or above 1; a probability of 0 would divide by zero);
    - a document of method 0 (the MTC selection) or 2 (selected by both methods) has
      inclusion probability 1, whatever the file gives (the script's "collision iprob=1"; a
      probability of 0 is accepted there, since it is replaced);
    - a topic none of whose records has method 1, 2 or 4 (judged by MTC alone) is left out,
      with one warning counting such topics and naming the first one's first line.
    """
    name = source_name(source)
    buf = read_bytes(source)
    starts, ends, nfields, lineno = _scan(buf, [0, 1, 2, 3, 4], name)
    _check_field_count(nfields, lineno, name, exact=5, what="qid docno rel method probability")
    rel = parse_ints(buf, starts[:, 2], ends[:, 2], lineno, name, "relevance")
    method = parse_ints(buf, starts[:, 3], ends[:, 3], lineno, name, "method")
    prob = parse_floats(buf, starts[:, 4], ends[:, 4], lineno, name, "inclusion probability")
    certain = np.isin(method, CERTAIN_METHODS)
    in_range = ((prob > 0) | (certain & (prob == 0))) & (prob <= 1)
    in_range |= (rel < 0) & (rel != -999)  # pooled, not judged: listed whatever its pi
    outside = np.flatnonzero(~in_range & (rel != -999))
    if len(outside):
        first = int(outside[0])
        token = bytes(buf[starts[first, 4] : ends[first, 4]]).decode("ascii", "replace")
        warnings.warn(
            InputWarning(
                f"skipped {len(outside)} record(s) whose inclusion probability is outside (0, 1] "
                f"(as statAP does), the first: {token}",
                name,
                int(lineno[first]),
            ),
            stacklevel=2,
        )
    keep = (rel != -999) & in_range
    qid = binary_array(buf, starts[:, 0], ends[:, 0])
    keep &= _sampled_topics(qid, method, keep, name, lineno)
    table = QrelsTable(
        source=name,
        qid=qid.filter(pa.array(keep)),
        docno=binary_array(buf, starts[keep, 1], ends[keep, 1]),
        rel=rel[keep],
        lineno=lineno[keep],
        prob=np.where(certain, 1.0, prob)[keep],
    )
    check_utf8(table.qid, table.lineno, name, "topic id")
    check_unique_pairs(table.qid, table.docno, table.lineno, name, "judgment")
    return table


def _sampled_topics(qid, method, keep, name, lineno) -> np.ndarray:
    """Per record: whether its topic has a kept record of a sampling method
    (:data:`SAMPLED_METHODS`); the topics without one are left out, as statAP_MQ_eval leaves
    out the topics judged by MTC alone, with one warning."""
    codes = pc.dictionary_encode(qid).indices.to_numpy(zero_copy_only=False)
    sampled = np.zeros(int(codes.max()) + 1 if len(codes) else 0, dtype=bool)
    sampled[codes[keep & np.isin(method, SAMPLED_METHODS)]] = True
    dropped = keep & ~sampled[codes]
    if dropped.any():
        first = int(np.flatnonzero(dropped)[0])
        topics = len(np.unique(codes[dropped]))
        warnings.warn(
            InputWarning(
                f"left out {topics} topic(s) judged by method 0 alone (no record of method "
                f"1, 2 or 4), as statAP does; the first: "
                f"{qid[first].as_py().decode('utf-8', 'replace')}",
                name,
                int(lineno[first]),
            ),
            stacklevel=3,
        )
    return sampled[codes] if len(codes) else np.zeros(0, dtype=bool)


_HEAD_BYTES = 1 << 16  #: the leading bytes in which detect_qrels_format looks for a record


def _first_lines(buf: np.ndarray) -> np.ndarray | None:
    """The whole lines within the first ~64 KiB of a longer ``buf``, or None."""
    newline = np.flatnonzero(buf[:_HEAD_BYTES] == 10)
    if len(buf) <= _HEAD_BYTES or not len(newline):
        return None
    return buf[: newline[-1] + 1]


def detect_qrels_format(source: Source) -> str:
    """``trec`` (4 fields), ``strata`` (5 fields, integer fifth) or ``prels`` (5 fields with a
    fractional fifth field somewhere). A 5-field file whose fifth fields are all integers is
    read as stratified qrels; pass the format explicitly for prels written with integer
    probabilities only."""
    name = source_name(source)
    buf = read_bytes(source)
    head = _first_lines(buf)
    if head is not None:
        try:
            if int(_scan(head, [4], name)[2][0]) == 4:
                return "trec"  # the first record decides; only 5 fields need every line
        except InputError:  # no record in the first lines: the whole file decides
            pass
    starts, ends, nfields, lineno = _scan(buf, [4], name)
    if int(nfields[0]) == 4:
        return "trec"
    if int(nfields[0]) != 5:
        raise InputError(
            f"expected 4 fields (qrels) or 5 (stratified qrels, prels), found {int(nfields[0])}",
            name,
            int(lineno[0]),
        )
    _, fifth = gather_spans(  # bytes, so any encoding is fine
        read_only(buf), np.ascontiguousarray(starts[:, 0]), np.ascontiguousarray(ends[:, 0])
    )
    fractional = bool(np.isin(fifth, np.frombuffer(b".eE", np.uint8)).any())
    return "prels" if fractional else "strata"
