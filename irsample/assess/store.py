"""The judging store: SQLite in WAL mode, ``synchronous=FULL``, one transaction per judgment
(or per group of judgments that arrive together, :mod:`.writer`).

Tables: :mod:`.schema`. This module holds the connection, the people (assessors and organisers:
tokens, revoking, reissuing), the items and rounds, and the transactions; handing documents out
under leases is :mod:`.assign`, reading judgments back is :mod:`.readout`, the write operations
are :mod:`.ops`.

A judgment is acknowledged only after its transaction committed, so an acknowledged judgment
survives a killed server; saving is idempotent (a repeat of the current grade and note writes
nothing), so a client retrying after a lost answer never doubles a judgment.

Two connections: the store's own (reads, the temporary tables, and the synchronous
:meth:`Store.judge`, :meth:`Store.skip`, :meth:`Store.undo`), used from one thread (the server's
event loop); and a writer connection that :meth:`Store.run_batch` uses from the writer thread of
:mod:`.writer`, committing the judgments that arrived together in one transaction.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from . import assign
from .ops import judge_op, skip_op, undo_op
from .schema import SCHEMA, VERSION, upgrade

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
MAX_NOTE = 2000
ROLES = ("assessor", "organiser")
ITEM_COLUMNS = "id, topic, docno, stratum, seq, required, judged, round, active"


@dataclass(frozen=True)
class Item:
    id: int
    topic: str
    docno: str
    stratum: str
    seq: int
    required: int
    judged: int
    round: int = 1
    active: int = 1


@dataclass(frozen=True)
class Assessor:
    """A person with a link: an assessor (judges) or an organiser (the dashboard)."""

    id: int
    name: str
    csrf: str
    role: str = "assessor"
    revoked: float | None = None

    @property
    def organiser(self) -> bool:
        return self.role == "organiser"


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


def connect(path: Path, *, readonly: bool = False) -> sqlite3.Connection:
    """A connection as the store uses them (WAL, synchronous=FULL, 10 s busy timeout);
    ``readonly`` for a reader in another thread (the dashboard's estimates)."""
    if readonly:
        con = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True,
                              check_same_thread=False)
    else:
        con = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=FULL")
        con.execute("PRAGMA foreign_keys=ON")
    con.execute("PRAGMA busy_timeout=10000")
    return con


def _setting(value) -> str:
    """A stored setting as the error shows it (a digest shortened: it says the design's
    documents differ, not how)."""
    text = json.dumps(value)
    return text[:13] + '..."' if isinstance(value, str) and len(value) > 40 else text


def check_person(name: str, role: str = "assessor") -> None:
    """Raise :class:`InputError` for a role or a name a person cannot have (checked before a
    database is created for them)."""
    if role not in ROLES:
        raise InputError(f"role is one of {', '.join(ROLES)}, not {role!r}")
    if not NAME.fullmatch(name):
        raise InputError(f"names are 1-64 letters, digits, '_', '.' or '-' starting with a "
                         f"letter or digit (assessor names too), not {name!r}")


class Store:
    """The judging database at ``path`` (created if missing); see the module docstring."""

    def __init__(self, path, *, lease_seconds: float = 600.0):
        self.path = Path(path)
        self.lease_seconds = lease_seconds
        if self.path.exists() and not self.path.is_file():
            raise InputError("not a database file", str(self.path))
        self._writer = None
        try:
            self.db = connect(self.path)
            upgrade(self.db)
            self.db.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise InputError(f"not a judging database ({exc})", str(self.path)) from None
        if self.meta("secret") is None:
            self._set_meta("secret", secrets.token_hex(32))
        if self.meta("schema") != VERSION:
            self._set_meta("schema", VERSION)
        self._secret = bytes.fromhex(self.meta("secret"))

    def close(self) -> None:
        self.db.close()
        if self._writer is not None:
            self._writer.close()

    # ------------------------------------------------------------------------------- meta

    def meta(self, key: str):
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def _set_meta(self, key: str, value) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value)))

    # ----------------------------------------------------------------------------- people

    def add_person(self, name: str, role: str = "assessor") -> str:
        """Register ``name`` with ``role``; returns the personal token (only its hash is
        stored)."""
        check_person(name, role)
        same = self.db.execute("SELECT name FROM assessors WHERE lower(name) = lower(?) AND "
                               "name != ?", (name, name)).fetchone()
        if same is not None:  # two people whose names differ in case only read as one
            raise InputError(f"{same[0]!r} exists already, and {name!r} differs from it only "
                             "in case: choose another name", str(self.path))
        token = secrets.token_urlsafe(24)
        try:
            self.db.execute("INSERT INTO assessors(name, token_hash, csrf, created, role) "
                            "VALUES (?, ?, ?, ?, ?)", (name, _hash(token),
                                                       secrets.token_urlsafe(24), time.time(),
                                                       role))
        except sqlite3.IntegrityError:
            raise InputError(
                f"an assessor or organiser called {name!r} exists already (a new link for "
                f"them: irsample assess reissue --db {self.path} {name})", str(self.path)
            ) from None
        return token

    def add_assessor(self, name: str) -> str:
        return self.add_person(name, "assessor")

    def _named(self, name: str) -> tuple[int, str]:
        row = self.db.execute("SELECT id, role FROM assessors WHERE name=?", (name,)).fetchone()
        if row is None:
            known = ", ".join(self.people()) or "nobody yet"
            raise InputError(f"no assessor or organiser called {name!r} (known: {known})",
                             str(self.path))
        return row

    def reissue(self, name: str) -> str:
        """A new personal token for ``name`` (the old link stops working; a revoked link is
        restored with the new token); returns the token."""
        person, _ = self._named(name)
        token = secrets.token_urlsafe(24)
        self.db.execute("UPDATE assessors SET token_hash=?, csrf=?, revoked=NULL WHERE id=?",
                        (_hash(token), secrets.token_urlsafe(24), person))
        return token

    def revoke(self, name: str) -> int:
        """Revoke ``name``'s link (their judgments stay); returns their id."""
        person, _ = self._named(name)
        self.db.execute("UPDATE assessors SET revoked=? WHERE id=? AND revoked IS NULL",
                        (time.time(), person))
        self.db.execute("DELETE FROM assignments WHERE assessor=?", (person,))
        return person

    def assessor_by_token(self, token: str) -> Assessor | None:
        """The person of ``token`` (revoked ones too: the caller refuses them with a reason),
        or None."""
        row = self.db.execute("SELECT id, name, csrf, role, revoked FROM assessors WHERE "
                              "token_hash=?", (_hash(token),)).fetchone()
        return None if row is None else Assessor(*row)

    def people(self) -> dict[str, tuple[str, float | None]]:
        """name -> (role, revoked time or None), in the order they were added."""
        return {n: (r, v) for n, r, v in self.db.execute(
            "SELECT name, role, revoked FROM assessors ORDER BY id")}

    def assessors(self) -> dict[int, str]:
        """id -> name of the assessors (organisers left out), revoked ones too."""
        return dict(self.db.execute(
            "SELECT id, name FROM assessors WHERE role='assessor' ORDER BY id"))

    @staticmethod
    def csrf_ok(assessor: Assessor, value) -> bool:
        return isinstance(value, str) and hmac.compare_digest(assessor.csrf.encode(),
                                                              value.encode("utf-8", "replace"))

    # ---------------------------------------------------------------------- items, rounds

    def setup(self, items: list[tuple[str, str, str, int, int]], config: dict) -> None:
        """Load the design's items ``(topic, docno, stratum, seq, required)`` on first use;
        later, check that ``config`` (design, overlap, order, grades) is the one stored."""
        old = self.meta("config")
        if old is not None:
            if old != config:
                keys = sorted(k for k in set(old) | set(config) if old.get(k) != config.get(k))
                shown = "; ".join(f"{k}: {_setting(old.get(k))} in the database, "
                                  f"{_setting(config.get(k))} given" for k in keys)
                raise InputError(f"the database holds a judging session with other settings "
                                 f"({shown}); use the same settings or another --db",
                                 str(self.path))
            return
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.executemany("INSERT INTO items(topic, docno, stratum, seq, required) "
                                "VALUES (?, ?, ?, ?, ?)", items)
            self._set_meta("config", config)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def rounds(self) -> list[dict]:
        """The rounds loaded, oldest first: ``{"round", "design", "items", "at"}`` each."""
        return self.meta("rounds") or []

    def item(self, item_id: int) -> Item | None:
        if not 0 < item_id < 2**63:  # beyond SQLite's integers: no such item
            return None
        row = self.db.execute(f"SELECT {ITEM_COLUMNS} FROM items WHERE id=?",
                              (item_id,)).fetchone()
        return None if row is None else Item(*row)

    def items(self, *, active_only: bool = True) -> list[Item]:
        where = "WHERE active=1 " if active_only else ""
        return [Item(*r) for r in self.db.execute(
            f"SELECT {ITEM_COLUMNS} FROM items {where}ORDER BY seq")]

    def set_positions(self, item_ids) -> None:
        """The order documents are handed out in (items not listed are not handed out)."""
        self.db.execute("BEGIN")
        self.db.execute("DELETE FROM pos")
        self.db.executemany("INSERT INTO pos VALUES (?, ?)",
                            ((int(i), k) for k, i in enumerate(item_ids)))
        self.db.execute("COMMIT")

    # ------------------------------------------------------------------- handing out (leases)

    def current(self, assessor: int) -> Item | None:
        """The assessor's current document (:func:`.assign.current`)."""
        item_id = assign.current(self.db, assessor, self.lease_seconds)
        return None if item_id is None else self.item(item_id)

    def ticket(self, assessor: int, item_id: int) -> str:
        """A signature that ``item_id`` was handed to ``assessor`` (the judging page and
        ``/api/next`` carry it): it outlives the leases, which a restart loses."""
        return hmac.new(self._secret, f"lease:{assessor}:{item_id}".encode(),
                        hashlib.sha256).hexdigest()[:32]

    def handed(self, assessor: int, item_id: int, ticket) -> bool:
        """Whether ``ticket`` is :meth:`ticket` of the assessor and item."""
        return isinstance(ticket, str) and hmac.compare_digest(
            self.ticket(assessor, item_id).encode(), ticket.encode("utf-8", "replace"))

    def claim(self, assessor: int, item_id: int, ticket=None) -> None:
        """Check that the assessor may judge the item now (:func:`.assign.claim`; raises
        :class:`~.assign.Conflict`)."""
        assign.claim(self.db, assessor, item_id, self.lease_seconds,
                     handed=self.handed(assessor, item_id, ticket))

    def bind(self, assessor: int, item_id: int, ticket=None) -> None:
        """Check that the assessor holds the item, to skip it (:func:`.assign.bind`); a
        document they judged already is theirs to revise or undo, not to skip."""
        if assign.judged(self.db, assessor, item_id):
            raise assign.Conflict("you judged this document already: there is nothing to skip "
                                  "(revise your grade, or undo it)")
        assign.bind(self.db, assessor, item_id, self.lease_seconds,
                    handed=self.handed(assessor, item_id, ticket))

    def renew(self, assessor: int, item_id: int, ticket=None) -> str:
        """Renew the assessor's lease on the item (:func:`.assign.renew`): ``"renewed"``, or
        ``"judged"`` where they judged it already and nothing is leased."""
        return assign.renew(self.db, assessor, item_id, self.lease_seconds,
                            handed=self.handed(assessor, item_id, ticket))

    def release(self, assessor: int, item_id: int, *, judged: bool = True) -> None:
        """After a judgment or skip: the document is no longer the assessor's current one, and
        no longer held by a judgment in flight (``judged`` False: a failed judgment, the lease
        stays for a retry)."""
        assign.settle(self.db, assessor, item_id, judged=judged)

    # ----------------------------------------------------------------------------- judging

    def transaction(self, op, con=None):
        """Run ``op(connection)`` in one committed transaction (on the store's connection, or
        ``con``) and return its result."""
        con = con or self.db
        con.execute("BEGIN IMMEDIATE")
        try:
            result = op(con)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        return result

    def run_batch(self, ops) -> list:
        """Run the operations ``ops`` (each ``op(connection)``) in ONE transaction on the
        writer connection: one commit (one fsync) for all. Each runs in a savepoint: a failing
        one is rolled back alone and its exception returned in its place. Called from one
        writer thread at a time (see :mod:`.writer`)."""
        if self._writer is None:
            self._writer = connect(self.path)

        def batch(con):
            results = []
            for op in ops:
                con.execute("SAVEPOINT op")
                try:
                    results.append(op(con))
                except sqlite3.Error as exc:
                    con.execute("ROLLBACK TO op")
                    results.append(exc)
                con.execute("RELEASE op")
            return results

        return self.transaction(batch, self._writer)

    def judge(self, assessor: int, item_id: int, grade: int, note: str = "") -> str:
        """Save a judgment (committed before returning); see :func:`.ops.judge_op`."""
        status = self.transaction(lambda con: judge_op(con, assessor, item_id, grade, note))
        self.release(assessor, item_id)
        return status

    def skip(self, assessor: int, item_id: int) -> None:
        """Put the document back: the assessor sees it again after every other open one."""
        self.transaction(lambda con: skip_op(con, assessor, item_id))
        self.release(assessor, item_id)

    def undo(self, assessor: int):
        """Withdraw the assessor's latest judgment (:func:`.ops.undo_op`); an item left
        unjudged by them becomes their current one. Returns the :class:`~.ops.Withdrawn`."""
        return self.after_undo(assessor, self.transaction(lambda con: undo_op(con, assessor)))

    def after_undo(self, assessor: int, withdrawn):
        if withdrawn is not None and withdrawn.restored is None:
            self.db.execute("INSERT OR REPLACE INTO assignments VALUES (?, ?, ?)",
                            (assessor, withdrawn.item, time.time()))
        return withdrawn
