"""Handing documents out under leases, and refusing judgments of documents not handed out.

Each assessor holds at most one lease (the temporary table ``assignments``): the document they
were handed and when the lease was taken or last renewed. A lease is *live* for
``lease_seconds``; the judging page renews it while it is open (``POST /api/renew``). A
document is open to an assessor when it is active, they have not judged it, and its judgments
plus the other assessors' live leases leave room for one more of its ``required`` judgments
(2 for a planned overlap document, else 1).

Binding (:func:`claim`, :func:`bind`): a judgment (or a skip) is accepted only from the
assessor who holds the document's lease (an expired lease counts while nobody else took the
document), from an assessor revising their own judgment, or from one who shows the document
was handed to them before (a signed ticket on the judging page and in ``/api/next``: a server
restart loses the leases) while nobody else holds it; a planned overlap document's second
judgment too comes only from an assessor it was handed to. Anything else raises
:class:`Conflict` (the app answers 409), with one message for every document not handed to
the assessor: so no document gets more judgments than planned, whatever the clients send or
however long a coffee break lasts, and an answer never tells which documents are overlap
documents.
"""

from __future__ import annotations

import time


class Conflict(Exception):
    """The assessor may not judge this document now (answered 409)."""


#: other assessors holding a place on item i: a live lease or a judgment being committed,
#: less those whose judgment is committed already (``judged`` counts them; their lease and
#: in-flight rows go only when the event loop hears of the commit)
_HOLDERS = """(SELECT count(*) FROM (
      SELECT assessor FROM assignments s WHERE s.item = i.id AND s.assessor != :a
        AND s.at > :since
      UNION SELECT assessor FROM inflight f WHERE f.item = i.id AND f.assessor != :a) h
    WHERE NOT EXISTS (SELECT 1 FROM judgments j WHERE j.item = i.id
                      AND j.assessor = h.assessor AND j.current = 1))"""

_OPEN = f"""
  SELECT p.item FROM pos p JOIN items i ON i.id = p.item
  WHERE i.active = 1 AND i.judged < i.required
    AND NOT EXISTS (SELECT 1 FROM judgments j WHERE j.item = i.id AND j.assessor = :a
                    AND j.current = 1)
    AND i.judged + {_HOLDERS} < i.required
"""


def _room(con, assessor: int, item_id: int, since: float) -> bool:
    """Whether the item leaves room for one more judgment besides the current ones and the
    places other assessors hold (and the assessor has not judged it)."""
    row = con.execute(
        f"SELECT i.active = 1 AND i.judged + {_HOLDERS} < i.required AND NOT EXISTS (SELECT 1 "
        "FROM judgments j WHERE j.item = i.id AND j.assessor = :a AND j.current = 1) "
        "FROM items i WHERE i.id = :item",
        {"a": assessor, "since": since, "item": item_id}).fetchone()
    return bool(row and row[0])


def _lease(con, assessor: int):
    return con.execute("SELECT item, at FROM assignments WHERE assessor=?",
                       (assessor,)).fetchone()


def _active(con, item_id: int) -> bool:
    """Whether the item is still to be judged (a later round may have replaced its own)."""
    row = con.execute("SELECT active FROM items WHERE id=?", (item_id,)).fetchone()
    return bool(row and row[0])


def _take(con, assessor: int, item_id: int, now: float) -> None:
    con.execute("INSERT OR REPLACE INTO assignments VALUES (?, ?, ?)", (assessor, item_id, now))


def judged(con, assessor: int, item_id: int) -> bool:
    return con.execute("SELECT 1 FROM judgments WHERE item=? AND assessor=? AND current=1",
                       (item_id, assessor)).fetchone() is not None


def current(con, assessor: int, lease_seconds: float) -> int | None:
    """The assessor's current document: their leased one while it is theirs (renewed; an
    expired lease is kept only if nobody else took the document; none that a later round took
    out of the judging set), else the first open one in order (documents the assessor skipped
    come last, oldest skip first). None: nothing open."""
    now = time.time()
    since = now - lease_seconds
    lease = _lease(con, assessor)
    if lease is not None and not judged(con, assessor, lease[0]):
        if (lease[1] > since and _active(con, lease[0])) or _room(con, assessor, lease[0],
                                                                   since):
            _take(con, assessor, lease[0], now)
            return lease[0]
    args = {"a": assessor, "since": since}
    row = con.execute(_OPEN + " AND NOT EXISTS (SELECT 1 FROM skips k WHERE k.assessor = :a "
                      "AND k.item = i.id) ORDER BY p.pos LIMIT 1", args).fetchone()
    if row is None:
        row = con.execute(_OPEN.replace("FROM pos p", "FROM pos p JOIN skips k ON k.item = "
                                        "p.item AND k.assessor = :a") + " ORDER BY k.at LIMIT 1",
                          args).fetchone()
    if row is None:
        con.execute("DELETE FROM assignments WHERE assessor=?", (assessor,))
        return None
    _take(con, assessor, row[0], now)
    return row[0]


#: the one answer to a judgment or skip of a document never handed to the assessor (the same
#: for every such document, so an answer tells nothing about which ones are overlap documents)
NOT_YOURS = ("this document was not handed to you, so nothing was saved: judge the "
             "document your judging page shows")
GONE = ("the server restarted or your reservation of this document ran out, and it went to "
        "another assessor meanwhile: nothing was saved; go on with the next document")


def bind(con, assessor: int, item_id: int, lease_seconds: float, *, handed: bool = False) -> None:
    """Check that the assessor holds ``item_id`` now, renewing its lease; else raise
    :class:`Conflict`. ``handed``: the request proves the document was handed to them before
    (a signed ticket, :meth:`~.store.Store.ticket`): after a server restart (leases are lost)
    or a lease given up in another tab, it is leased to them again if nobody else holds it."""
    now = time.time()
    since = now - lease_seconds
    lease = _lease(con, assessor)
    mine = lease is not None and lease[0] == item_id
    if not mine and not handed:
        raise Conflict(NOT_YOURS)
    if not _room(con, assessor, item_id, since):
        if not _active(con, item_id):
            raise Conflict("this document is no longer to be judged (a later round replaced "
                           "the one it belonged to)")
        if mine:
            raise Conflict("this document went to another assessor after your reservation of "
                           "it ran out; nothing was saved")
        raise Conflict(GONE)
    _take(con, assessor, item_id, now)


def claim(con, assessor: int, item_id: int, lease_seconds: float, *,
          handed: bool = False) -> None:
    """Accept a judgment of ``item_id`` by ``assessor`` now (module docstring: binding;
    ``handed``: :func:`bind`): it holds the document's place (``inflight``) until
    :func:`settle` after its commit; else raise :class:`Conflict` with the reason."""
    if judged(con, assessor, item_id):
        return  # a revision of their own judgment
    bind(con, assessor, item_id, lease_seconds, handed=handed)
    con.execute("INSERT OR IGNORE INTO inflight VALUES (?, ?)", (assessor, item_id))


def settle(con, assessor: int, item_id: int, *, judged: bool) -> None:
    """A claimed judgment is committed (``judged``: its lease ends too) or failed (the lease,
    if any, stays for a retry)."""
    con.execute("DELETE FROM inflight WHERE assessor=? AND item=?", (assessor, item_id))
    if judged:
        con.execute("DELETE FROM assignments WHERE assessor=? AND item=?", (assessor, item_id))


def renew(con, assessor: int, item_id: int, lease_seconds: float, *,
          handed: bool = False) -> str:
    """Renew the assessor's lease on ``item_id`` (the judging page does, while open). Only
    their lease is renewed, or with ``handed`` (:func:`bind`) one lost to a restart taken
    again while nobody else holds the document: renewing never hands a new document out.
    Returns ``"renewed"``, or ``"judged"`` for a document the assessor judged already (a
    revision needs no lease: nothing is leased, another assessor's lease stands). Raises
    :class:`Conflict` otherwise."""
    if judged(con, assessor, item_id):
        return "judged"
    lease = _lease(con, assessor)
    if not handed and (lease is None or lease[0] != item_id):
        raise Conflict("this document is no longer reserved for you (the server restarted, "
                       "or you moved on in another tab)")
    try:
        bind(con, assessor, item_id, lease_seconds, handed=handed)
    except Conflict:
        if lease is not None and lease[0] == item_id:
            con.execute("DELETE FROM assignments WHERE assessor=?", (assessor,))
        raise
    return "renewed"
