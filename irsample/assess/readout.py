"""Reading judgments back out of the store (each function takes a connection, so a reader in
another thread can use its own read-only one, :func:`~.store.connect`).

Topics are listed in natural order (:func:`topic_key`: 1, 2, 10, not 1, 10, 2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PARTS = re.compile(r"(\d+)")


def topic_key(qid: str):
    """Sort key of a topic id: its runs of digits compared as numbers (``2`` before ``10``)."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p)
                 for p in _PARTS.split(qid) if p)


@dataclass(frozen=True)
class Row:
    """One judgment row: ``state`` is ``current``, ``revised`` (replaced by a later one) or
    ``withdrawn`` (undone)."""

    topic: str
    docno: str
    stratum: str
    assessor: str
    grade: int
    note: str
    at: float
    id: int
    state: str
    item: int = 0


def judgments(con, *, history: bool = False) -> list[Row]:
    """The current judgments (every row with ``history``), oldest first."""
    where = "" if history else "WHERE j.current = 1 "
    return [Row(*r[:8], "current" if r[8] else ("withdrawn" if r[9] is not None else "revised"),
                r[10]) for r in con.execute(
        "SELECT i.topic, i.docno, i.stratum, a.name, j.grade, j.note, j.at, j.id, j.current, "
        "j.withdrawn, j.item FROM judgments j JOIN items i ON i.id = j.item JOIN assessors a "
        f"ON a.id = j.assessor {where}ORDER BY j.id")]


def first_grades(con) -> list[tuple[int, int]]:
    """(item, grade of its first current judgment) in the order items were first judged."""
    return con.execute(
        "SELECT j.item, j.grade FROM judgments j WHERE j.current = 1 AND j.id = (SELECT "
        "min(k.id) FROM judgments k WHERE k.item = j.item AND k.current = 1) ORDER BY j.id"
    ).fetchall()


def counts(con) -> list[tuple]:
    """Per topic and stratum of the active items, topics and strata in natural order (``1-10``
    before ``11-100``, whatever order the documents are handed out in): (topic, stratum,
    items, items judged, judgments, judgments required)."""
    rows = con.execute(
        "SELECT topic, stratum, count(*), sum(judged > 0), sum(judged), sum(required) "
        "FROM items WHERE active = 1 GROUP BY topic, stratum").fetchall()
    return sorted(rows, key=lambda r: (topic_key(r[0]), topic_key(r[1])))


def judged_by(con, assessor: int) -> int:
    return con.execute("SELECT count(*) FROM judgments WHERE assessor=? AND current=1",
                       (assessor,)).fetchone()[0]


def totals(con) -> tuple[int, int]:
    """(judgments made, judgments needed) over the active items, a planned overlap document
    counting two: what an assessor's page shows. Counted by documents, the count would stand
    still on a planned overlap document's second judgment and tell the assessor which of theirs
    are overlap documents, which the page keeps blind."""
    row = con.execute("SELECT sum(min(judged, required)), sum(required) FROM items "
                      "WHERE active = 1").fetchone()
    return int(row[0] or 0), int(row[1] or 0)


def ratings(con) -> dict[int, dict[str, int]]:
    """item -> {assessor name: current grade} for items judged by two or more assessors."""
    out: dict[int, dict[str, int]] = {}
    for item, name, grade in con.execute(
        "SELECT j.item, a.name, j.grade FROM judgments j JOIN assessors a ON a.id = "
        "j.assessor WHERE j.current = 1 AND j.item IN (SELECT item FROM judgments WHERE "
        "current = 1 GROUP BY item HAVING count(*) > 1) ORDER BY j.item, a.name"):
        out.setdefault(item, {})[name] = grade
    return out


@dataclass(frozen=True)
class Mine:
    """One of an assessor's own judgments, for the "my judgments" page."""

    item: int
    topic: str
    docno: str
    grade: int
    note: str
    at: float
    revisions: int  #: earlier grades of the item by the same assessor (kept, not current)


def mine(con, assessor: int) -> list[Mine]:
    """The assessor's current judgments, newest first (blind: no stratum, no other
    assessor's grade)."""
    return [Mine(*r) for r in con.execute(
        "SELECT j.item, i.topic, i.docno, j.grade, j.note, j.at, (SELECT count(*) FROM "
        "judgments k WHERE k.item = j.item AND k.assessor = j.assessor AND k.current = 0 AND "
        "k.withdrawn IS NULL) FROM judgments j JOIN items i ON i.id = j.item WHERE "
        "j.assessor = ? AND j.current = 1 ORDER BY j.id DESC", (assessor,))]


def own_judgment(con, assessor: int, item_id: int) -> tuple[int, str] | None:
    """(grade, note) of the assessor's current judgment of the item, or None."""
    return con.execute("SELECT grade, note FROM judgments WHERE item=? AND assessor=? AND "
                       "current=1", (item_id, assessor)).fetchone()


def activity(con) -> dict[int, list[float]]:
    """assessor id -> the times of their saves and revisions, in order (for their speed)."""
    out: dict[int, list[float]] = {}
    for assessor, at in con.execute("SELECT assessor, at FROM judgments ORDER BY assessor, id"):
        out.setdefault(assessor, []).append(at)
    return out
