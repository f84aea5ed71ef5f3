"""The judging store: SQLite in WAL mode, one transaction (and commit) per judgment.

Tables (durable): ``meta`` (the session's configuration and secret), ``assessors`` (name, the
SHA-256 of the personal token, a CSRF token), ``items`` (the design's documents to judge: topic,
docno, stratum, the design order ``seq``, ``required`` judgments: 2 for overlap documents, else
1, and ``judged`` so far), ``judgments`` (one row per item and assessor: grade, note, time),
``skips`` and ``log`` (every save, update, skip and undo). Temporary (per connection, lost on a
restart, rebuilt from the durable tables): ``assignments`` (each assessor's current document,
a lease) and ``pos`` (the order documents are handed out in).

A judgment is acknowledged only after its transaction committed with ``synchronous=FULL``, so
an acknowledged judgment survives a killed server; saving is idempotent (one row per item and
assessor), so a client retrying after a lost answer never doubles a judgment.

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

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS assessors(
  id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL, token_hash TEXT UNIQUE NOT NULL,
  csrf TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS items(
  id INTEGER PRIMARY KEY, topic TEXT NOT NULL, docno TEXT NOT NULL, stratum TEXT NOT NULL,
  seq INTEGER NOT NULL, required INTEGER NOT NULL, judged INTEGER NOT NULL DEFAULT 0,
  UNIQUE(topic, docno));
CREATE TABLE IF NOT EXISTS judgments(
  id INTEGER PRIMARY KEY, item INTEGER NOT NULL REFERENCES items(id),
  assessor INTEGER NOT NULL REFERENCES assessors(id), grade INTEGER NOT NULL,
  note TEXT NOT NULL DEFAULT '', at REAL NOT NULL, UNIQUE(item, assessor));
CREATE INDEX IF NOT EXISTS judgments_by_assessor ON judgments(assessor, id);
CREATE TABLE IF NOT EXISTS skips(
  assessor INTEGER NOT NULL, item INTEGER NOT NULL, at REAL NOT NULL,
  PRIMARY KEY(assessor, item));
CREATE TABLE IF NOT EXISTS log(
  id INTEGER PRIMARY KEY, assessor INTEGER NOT NULL, item INTEGER, action TEXT NOT NULL,
  grade INTEGER, note TEXT, at REAL NOT NULL);
CREATE TEMP TABLE IF NOT EXISTS assignments(
  assessor INTEGER PRIMARY KEY, item INTEGER NOT NULL, at REAL NOT NULL);
CREATE TEMP TABLE IF NOT EXISTS pos(item INTEGER PRIMARY KEY, pos INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS temp.pos_order ON pos(pos);
"""

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
MAX_NOTE = 2000


@dataclass(frozen=True)
class Item:
    id: int
    topic: str
    docno: str
    stratum: str
    seq: int
    required: int
    judged: int


@dataclass(frozen=True)
class Assessor:
    id: int
    name: str
    csrf: str


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


def _connect(path: Path) -> sqlite3.Connection:
    con = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=FULL")
    con.execute("PRAGMA foreign_keys=ON")
    con.execute("PRAGMA busy_timeout=10000")
    return con


def judge_op(con, assessor: int, item_id: int, grade: int, note: str) -> str:
    """Save a judgment: ``saved`` (new), ``updated`` (a new grade or note for the assessor's
    earlier judgment of the item) or ``unchanged`` (a repeat: nothing written)."""
    now = time.time()
    old = con.execute("SELECT grade, note FROM judgments WHERE item=? AND assessor=?",
                      (item_id, assessor)).fetchone()
    if old is None:
        con.execute("INSERT INTO judgments(item, assessor, grade, note, at) VALUES (?, ?, ?, ?, ?)",
                    (item_id, assessor, grade, note, now))
        con.execute("UPDATE items SET judged = judged + 1 WHERE id=?", (item_id,))
        status = "saved"
    elif tuple(old) != (grade, note):
        con.execute("UPDATE judgments SET grade=?, note=?, at=? WHERE item=? AND assessor=?",
                    (grade, note, now, item_id, assessor))
        status = "updated"
    else:
        return "unchanged"
    con.execute("DELETE FROM skips WHERE assessor=? AND item=?", (assessor, item_id))
    con.execute(
        "INSERT INTO log(assessor, item, action, grade, note, at) VALUES (?, ?, ?, ?, ?, ?)",
        (assessor, item_id, status, grade, note, now),
    )
    return status


def skip_op(con, assessor: int, item_id: int) -> None:
    now = time.time()
    con.execute("INSERT OR REPLACE INTO skips VALUES (?, ?, ?)", (assessor, item_id, now))
    con.execute("INSERT INTO log(assessor, item, action, at) VALUES (?, ?, 'skip', ?)",
                (assessor, item_id, now))


def undo_op(con, assessor: int) -> int | None:
    """Delete the assessor's latest judgment; returns its item (None: nothing to undo)."""
    row = con.execute("SELECT id, item, grade FROM judgments WHERE assessor=? "
                      "ORDER BY at DESC, id DESC LIMIT 1", (assessor,)).fetchone()
    if row is None:
        return None
    con.execute("DELETE FROM judgments WHERE id=?", (row[0],))
    con.execute("UPDATE items SET judged = judged - 1 WHERE id=?", (row[1],))
    con.execute("INSERT INTO log(assessor, item, action, grade, at) VALUES (?, ?, 'undo', ?, ?)",
                (assessor, row[1], row[2], time.time()))
    return row[1]


class Store:
    """The judging database at ``path`` (created if missing); see the module docstring."""

    def __init__(self, path, *, lease_seconds: float = 600.0):
        self.path = Path(path)
        self.lease_seconds = lease_seconds
        if self.path.exists() and not self.path.is_file():
            raise InputError("not a database file", str(self.path))
        self._writer = None
        try:
            self.db = _connect(self.path)
            self.db.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise InputError(f"not a judging database ({exc})", str(self.path)) from None
        if self.meta("secret") is None:
            self._set_meta("secret", secrets.token_hex(32))

    def close(self) -> None:
        self.db.close()
        if self._writer is not None:
            self._writer.close()

    # ------------------------------------------------------------------------ meta, assessors

    def meta(self, key: str):
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def _set_meta(self, key: str, value) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value)))

    def add_assessor(self, name: str) -> str:
        """Register ``name``; returns its personal token (only its hash is stored)."""
        if not NAME.fullmatch(name):
            raise InputError(f"assessor names are 1-64 letters, digits, '_', '.' or '-' "
                             f"starting with a letter or digit, not {name!r}")
        token = secrets.token_urlsafe(24)
        try:
            self.db.execute("INSERT INTO assessors(name, token_hash, csrf, created) "
                            "VALUES (?, ?, ?, ?)",
                            (name, _hash(token), secrets.token_urlsafe(24), time.time()))
        except sqlite3.IntegrityError:
            raise InputError(
                f"an assessor called {name!r} exists already", str(self.path)
            ) from None
        return token

    def assessor_by_token(self, token: str) -> Assessor | None:
        row = self.db.execute("SELECT id, name, csrf FROM assessors WHERE token_hash=?",
                              (_hash(token),)).fetchone()
        return None if row is None else Assessor(*row)

    def assessors(self) -> dict[int, str]:
        return dict(self.db.execute("SELECT id, name FROM assessors ORDER BY id"))

    @staticmethod
    def csrf_ok(assessor: Assessor, value) -> bool:
        return isinstance(value, str) and hmac.compare_digest(assessor.csrf.encode(),
                                                              value.encode("utf-8", "replace"))

    # ---------------------------------------------------------------------------- the items

    def setup(self, items: list[tuple[str, str, str, int, int]], config: dict) -> None:
        """Load the design's items ``(topic, docno, stratum, seq, required)`` on first use;
        later, check that ``config`` (design, overlap, order, grades) is the one stored."""
        old = self.meta("config")
        if old is not None:
            if old != config:
                keys = sorted(k for k in set(old) | set(config) if old.get(k) != config.get(k))
                raise InputError(f"the database holds a judging session with other settings "
                                 f"({', '.join(keys)} differ); use the same settings or "
                                 f"another --db", str(self.path))
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

    def item(self, item_id: int) -> Item | None:
        row = self.db.execute("SELECT id, topic, docno, stratum, seq, required, judged "
                              "FROM items WHERE id=?", (item_id,)).fetchone()
        return None if row is None else Item(*row)

    def items(self) -> list[Item]:
        return [Item(*r) for r in self.db.execute(
            "SELECT id, topic, docno, stratum, seq, required, judged FROM items ORDER BY seq")]

    def set_positions(self, item_ids) -> None:
        """The order documents are handed out in (items not listed are not handed out)."""
        self.db.execute("BEGIN")
        self.db.execute("DELETE FROM pos")
        self.db.executemany("INSERT INTO pos VALUES (?, ?)",
                            ((int(i), k) for k, i in enumerate(item_ids)))
        self.db.execute("COMMIT")

    # -------------------------------------------------------------------------- handing out

    _OPEN = """
      SELECT p.item FROM pos p JOIN items i ON i.id = p.item
      WHERE i.judged < i.required
        AND NOT EXISTS (SELECT 1 FROM judgments j WHERE j.item = i.id AND j.assessor = :a)
        AND i.judged + (SELECT count(*) FROM assignments s WHERE s.item = i.id
                        AND s.assessor != :a AND s.at > :since) < i.required
    """

    def current(self, assessor: int) -> Item | None:
        """The assessor's current document: kept until judged or skipped, else the first open
        one in order (documents the assessor skipped come last, oldest skip first)."""
        now = time.time()
        row = self.db.execute(
            "SELECT a.item FROM assignments a WHERE a.assessor=? AND NOT EXISTS (SELECT 1 "
            "FROM judgments j WHERE j.item=a.item AND j.assessor=a.assessor)", (assessor,),
        ).fetchone()
        if row is None:
            args = {"a": assessor, "since": now - self.lease_seconds}
            row = self.db.execute(
                self._OPEN + " AND NOT EXISTS (SELECT 1 FROM skips k WHERE k.assessor = :a "
                "AND k.item = i.id) ORDER BY p.pos LIMIT 1", args).fetchone()
            if row is None:
                row = self.db.execute(
                    self._OPEN.replace("FROM pos p", "FROM pos p JOIN skips k ON k.item = p.item "
                                       "AND k.assessor = :a") + " ORDER BY k.at LIMIT 1",
                    args).fetchone()
        if row is None:
            self.db.execute("DELETE FROM assignments WHERE assessor=?", (assessor,))
            return None
        self.db.execute("INSERT OR REPLACE INTO assignments VALUES (?, ?, ?)",
                        (assessor, row[0], now))
        return self.item(row[0])

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
            self._writer = _connect(self.path)

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
        """Save a judgment (committed before returning); see :func:`judge_op`."""
        status = self.transaction(lambda con: judge_op(con, assessor, item_id, grade, note))
        self.release(assessor, item_id)
        return status

    def skip(self, assessor: int, item_id: int) -> None:
        """Put the document back: the assessor sees it again after every other open one."""
        self.transaction(lambda con: skip_op(con, assessor, item_id))
        self.release(assessor, item_id)

    def undo(self, assessor: int) -> Item | None:
        """Withdraw the assessor's latest judgment; its document becomes the current one."""
        return self.after_undo(assessor, self.transaction(lambda con: undo_op(con, assessor)))

    def release(self, assessor: int, item_id: int) -> None:
        """The document is no longer the assessor's current one (judged or skipped)."""
        self.db.execute("DELETE FROM assignments WHERE assessor=? AND item=?", (assessor, item_id))

    def after_undo(self, assessor: int, item_id: int | None) -> Item | None:
        if item_id is None:
            return None
        self.db.execute("INSERT OR REPLACE INTO assignments VALUES (?, ?, ?)",
                        (assessor, item_id, time.time()))
        return self.item(item_id)

    # --------------------------------------------------------------------------- reading out

    def judgments(self) -> list[tuple]:
        """Every judgment: (topic, docno, stratum, assessor name, grade, note, time, id),
        oldest first."""
        return self.db.execute(
            "SELECT i.topic, i.docno, i.stratum, a.name, j.grade, j.note, j.at, j.id "
            "FROM judgments j JOIN items i ON i.id = j.item JOIN assessors a ON a.id = j.assessor "
            "ORDER BY j.at, j.id").fetchall()

    def first_grades(self) -> list[tuple[int, int]]:
        """(item, grade of its first judgment) in the order items were first judged."""
        return self.db.execute(
            "SELECT j.item, j.grade FROM judgments j WHERE j.id = (SELECT min(k.id) FROM "
            "judgments k WHERE k.item = j.item) ORDER BY j.at, j.id").fetchall()

    def counts(self) -> list[tuple]:
        """Per topic and stratum: (topic, stratum, items, items judged, judgments, judgments
        required)."""
        return self.db.execute(
            "SELECT topic, stratum, count(*), sum(judged > 0), sum(judged), sum(required) "
            "FROM items GROUP BY topic, stratum ORDER BY topic, min(seq)").fetchall()

    def judged_by(self, assessor: int) -> int:
        return self.db.execute("SELECT count(*) FROM judgments WHERE assessor=?",
                               (assessor,)).fetchone()[0]

    def topic_progress(self, topic: str) -> tuple[int, int]:
        """(items of the topic judged at least once, items of the topic)."""
        row = self.db.execute("SELECT sum(judged > 0), count(*) FROM items WHERE topic=?",
                              (topic,)).fetchone()
        return int(row[0] or 0), int(row[1])

    def ratings(self) -> dict[int, dict[str, int]]:
        """item -> {assessor name: grade} for items judged by two or more assessors."""
        out: dict[int, dict[str, int]] = {}
        for item, name, grade in self.db.execute(
            "SELECT j.item, a.name, j.grade FROM judgments j JOIN assessors a ON a.id = "
            "j.assessor WHERE j.item IN (SELECT item FROM judgments GROUP BY item HAVING "
            "count(*) > 1) ORDER BY j.item, a.name"):
            out.setdefault(item, {})[name] = grade
        return out
