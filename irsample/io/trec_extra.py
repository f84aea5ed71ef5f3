"""trec_eval's other inputs: judgments by judgment group (``-R qrels_jg``) and z-score files
(``-Z``).

- qrels_jg (trec_eval's ``get_qrels_jg.c``): ``qid jg docno rel``, the TREC qrels layout with
  the second field naming a judgment group (a user, an assessor) instead of being ignored. A
  document may be judged once per group; :func:`read_qrels_jg` returns one
  :class:`~irsample.io.trec.QrelsTable` per group, in the byte order of the group labels
  (trec_eval sorts them with ``strcmp``).
- z-scores (``get_zscores.c``): ``qid measure mean stddev`` lines, the mean and standard
  deviation of a measure on a topic over a reference set of runs; :func:`read_zscores` returns
  ``{(qid, measure): (mean, stddev)}``. trec_eval's ``atof`` reads junk as 0 and binary-searches
  a repeated pair to either line; here a field that is not a number, a line without four fields
  or a repeated (qid, measure) is an error naming the file and line.
"""

from __future__ import annotations

import numpy as np
import pyarrow.compute as pc

from ..errors import InputError
from .files import Source, source_name
from .trec import (
    QrelsTable,
    _check_field_count,
    _scan,
    binary_array,
    check_unique_pairs,
    check_utf8,
    parse_floats,
    parse_ints,
    read_bytes,
    text_of,
)


def _four_fields(source: Source, what: str):
    """(name, bytes, field starts, field ends, line numbers) of a file of four-field lines."""
    name = source_name(source)
    buf = read_bytes(source)
    starts, ends, nfields, lineno = _scan(buf, [0, 1, 2, 3], name)
    _check_field_count(nfields, lineno, name, exact=4, what=what)
    return name, buf, starts, ends, lineno


def read_qrels_jg(source: Source) -> dict[str, QrelsTable]:
    """``{group: qrels}`` of a qrels_jg file (``qid jg docno rel``; module docstring)."""
    name, buf, starts, ends, lineno = _four_fields(source, "qid jg docno rel")
    qid = binary_array(buf, starts[:, 0], ends[:, 0])
    group = binary_array(buf, starts[:, 1], ends[:, 1])
    docno = binary_array(buf, starts[:, 2], ends[:, 2])
    rel = parse_ints(buf, starts[:, 3], ends[:, 3], lineno, name, "relevance")
    check_utf8(qid, lineno, name, "topic id")
    check_utf8(group, lineno, name, "judgment group")
    codes = pc.dictionary_encode(group)
    labels = [text_of(v) for v in codes.dictionary.to_pylist()]
    index = np.asarray(codes.indices)
    tables = {}
    for code in sorted(range(len(labels)), key=lambda c: labels[c].encode()):
        rows = np.flatnonzero(index == code)
        table = QrelsTable(name, qid.take(rows), docno.take(rows), rel[rows], lineno[rows])
        check_unique_pairs(table.qid, table.docno, table.lineno, name,
                           f"judgment in group {labels[code]!r}")
        tables[labels[code]] = table
    return tables


def read_zscores(source: Source) -> dict[tuple[str, str], tuple[float, float]]:
    """``{(qid, measure): (mean, stddev)}`` of a z-score file (module docstring)."""
    name, buf, starts, ends, lineno = _four_fields(source, "qid measure mean stddev")
    qid = binary_array(buf, starts[:, 0], ends[:, 0])
    measure = binary_array(buf, starts[:, 1], ends[:, 1])
    check_utf8(qid, lineno, name, "topic id")
    check_utf8(measure, lineno, name, "measure name")
    mean = parse_floats(buf, starts[:, 2], ends[:, 2], lineno, name, "mean")
    stddev = parse_floats(buf, starts[:, 3], ends[:, 3], lineno, name, "standard deviation")
    out: dict[tuple[str, str], tuple[float, float]] = {}
    first: dict[tuple[str, str], int] = {}
    for i, (q, m) in enumerate(zip(qid.to_pylist(), measure.to_pylist())):
        key = (q.decode(), m.decode())
        if key in first:
            raise InputError(f"repeated z-score of measure {key[1]!r} for topic {key[0]!r} "
                             f"(first at line {first[key]})", name, int(lineno[i]))
        first[key] = int(lineno[i])
        out[key] = (float(mean[i]), float(stddev[i]))
    return out
