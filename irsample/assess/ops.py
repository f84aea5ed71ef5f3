"""The operations that write judgments, each run inside one transaction on a connection
(:meth:`~.store.Store.transaction`, or a group commit's batch, :mod:`.writer`).

Judgments are append-only (:mod:`.schema`): a new grade or note for a document the assessor
judged before is a new row replacing the earlier one, which is kept; an undo withdraws the
assessor's latest current judgment and brings back the one it replaced, if any. Nothing is
overwritten or deleted, so ``irsample assess export --details`` can show every grade ever given.
"""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Withdrawn:
    """What an undo took back: the item, the grade and note withdrawn, and whether an earlier
    judgment of the item by the same assessor is current again (the undo withdrew a revision)."""

    item: int
    grade: int
    note: str
    restored: int | None  #: the grade current again, or None: the item is unjudged by them


def _log(con, assessor: int, item: int, action: str, grade, note, now: float) -> None:
    con.execute(
        "INSERT INTO log(assessor, item, action, grade, note, at) VALUES (?, ?, ?, ?, ?, ?)",
        (assessor, item, action, grade, note, now),
    )


def judge_op(con, assessor: int, item_id: int, grade: int, note: str) -> str:
    """Save a judgment: ``saved`` (the assessor's first of the item), ``revised`` (a new grade
    or note: a new row, the earlier one kept) or ``unchanged`` (a repeat: nothing written, so a
    client retrying after a lost answer never doubles a judgment)."""
    now = time.time()
    old = con.execute("SELECT id, grade, note FROM judgments WHERE item=? AND assessor=? AND "
                      "current=1", (item_id, assessor)).fetchone()
    if old is not None and (old[1], old[2]) == (grade, note):
        return "unchanged"
    if old is None:
        con.execute("UPDATE items SET judged = judged + 1 WHERE id=?", (item_id,))
        status = "saved"
    else:
        con.execute("UPDATE judgments SET current=0 WHERE id=?", (old[0],))
        status = "revised"
    con.execute("INSERT INTO judgments(item, assessor, grade, note, at, replaces) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (item_id, assessor, grade, note, now, None if old is None else old[0]))
    con.execute("DELETE FROM skips WHERE assessor=? AND item=?", (assessor, item_id))
    _log(con, assessor, item_id, status, grade, note, now)
    return status


def skip_op(con, assessor: int, item_id: int) -> None:
    now = time.time()
    con.execute("INSERT OR REPLACE INTO skips VALUES (?, ?, ?)", (assessor, item_id, now))
    _log(con, assessor, item_id, "skip", None, None, now)


def undo_op(con, assessor: int) -> Withdrawn | None:
    """Withdraw the assessor's latest current judgment (None: nothing to undo)."""
    row = con.execute("SELECT id, item, grade, note, replaces FROM judgments WHERE assessor=? "
                      "AND current=1 ORDER BY id DESC LIMIT 1", (assessor,)).fetchone()
    if row is None:
        return None
    now = time.time()
    jid, item, grade, note, replaces = row
    con.execute("UPDATE judgments SET current=0, withdrawn=? WHERE id=?", (now, jid))
    restored = None
    if replaces is None:
        con.execute("UPDATE items SET judged = judged - 1 WHERE id=?", (item,))
    else:
        con.execute("UPDATE judgments SET current=1 WHERE id=?", (replaces,))
        restored = con.execute("SELECT grade FROM judgments WHERE id=?",
                               (replaces,)).fetchone()[0]
    _log(con, assessor, item, "undo", grade, note, now)
    return Withdrawn(item, grade, note, restored)
