"""Reader for stratified qrels, the input of NIST's sample_eval.pl (xinfAP, infNDCG).

Format (reference-semantics §1): ``qid iter docno stratum rel``, five whitespace-separated fields
per line. ``stratum`` is an arbitrary label; ``rel >= 0`` is a judged grade, ``rel = -1`` (any
negative value) a document of the stratum that was not sampled for judging; documents absent from
the file are outside every stratum. sample_eval.pl reads five tokens at a time with no line
structure, so one malformed line silently shifts every later record; here it is an error naming
the file and line.
"""

from __future__ import annotations

from .trec import (
    QrelsTable,
    Source,
    _check_field_count,
    _scan,
    binary_array,
    check_unique_pairs,
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
    check_unique_pairs(table.qid, table.docno, table.lineno, name, "judgment")
    return table
