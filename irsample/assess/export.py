"""The judgments as TREC qrels for ``irsample merge``, and every judgment row as TSV.

One qrels line per document, ``topic assessor docno grade`` (the assessor in the iteration
column, which every qrels reader ignores), from the assessors' *current* judgments (a revision
replaces its assessor's earlier grade; an undone judgment is gone). A document judged by
several assessors gets the grade chosen by ``resolve``: ``first`` (the assessor who judged it
first, with their current grade), ``max`` or ``min``. The details list every row ever written,
with its state (``current``, ``revised``: replaced by a later grade, ``withdrawn``: undone),
so nothing judged is lost. ``irsample assess export`` and the dashboard's live estimates both
use :func:`export`, so the estimates are those of the exported file.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from .readout import judgments, topic_key

RESOLVE = ("first", "max", "min")
DETAILS_HEADER = "topic\tdocno\tstratum\tassessor\tgrade\ttime\tstate\tnote\n"
NOTE_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


@dataclass(frozen=True)
class Export:
    qrels: str
    rows: list  #: every row (:class:`~.readout.Row`), oldest first
    documents: int
    judgments: int  #: current judgments
    several: int  #: documents judged by several assessors
    disagree: int  #: of those, documents with different grades

    def summary(self, resolve: str) -> str:
        return (f"{self.judgments} judgments of {self.documents} documents; {self.several} "
                f"judged by several assessors ({self.disagree} with different grades, "
                f"resolved by {resolve})")

    def details(self) -> str:
        """Every row as TSV (:data:`DETAILS_HEADER`), times in UTC, a note's backslashes,
        tabs, newlines and carriage returns written ``\\``, ``\t``, ``\n``, ``\r`` (one line a
        row, and the note as typed: they were flattened to spaces)."""
        out = [DETAILS_HEADER]
        for r in self.rows:
            when = datetime.datetime.fromtimestamp(r.at, datetime.UTC).isoformat()
            note = r.note.translate(NOTE_ESCAPES)
            out.append(f"{r.topic}\t{r.docno}\t{r.stratum}\t{r.assessor}\t{r.grade}\t{when}\t"
                       f"{r.state}\t{note}\n")
        return "".join(out)


def export(con, resolve: str = "first") -> Export:
    """The export of the judgments read through ``con`` (module docstring)."""
    if resolve not in RESOLVE:
        raise ValueError(f"resolve is one of {', '.join(RESOLVE)}, not {resolve!r}")
    rows = judgments(con, history=True)
    started: dict[tuple[int, str], int] = {}  # when each assessor's standing judgment began
    for r in rows:
        if r.state != "withdrawn":
            started.setdefault((r.item, r.assessor), r.id)
    by_doc: dict[tuple[str, str], list] = {}
    for r in rows:
        if r.state == "current":
            by_doc.setdefault((r.topic, r.docno), []).append(r)
    pick = {"first": lambda rs: min(rs, key=lambda r: started[(r.item, r.assessor)]),
            "max": lambda rs: max(rs, key=lambda r: (r.grade, -started[(r.item, r.assessor)])),
            "min": lambda rs: min(rs, key=lambda r: (r.grade, started[(r.item, r.assessor)]))}
    lines, disagree = [], 0
    for (topic, docno), rs in sorted(by_doc.items(), key=lambda kv: (topic_key(kv[0][0]),
                                                                      kv[0][1])):
        chosen = pick[resolve](rs)
        disagree += len({r.grade for r in rs}) > 1
        lines.append(f"{topic} {chosen.assessor} {docno} {chosen.grade}\n")
    return Export("".join(lines), rows, len(by_doc), sum(map(len, by_doc.values())),
                  sum(len(rs) > 1 for rs in by_doc.values()), disagree)
