"""The judging database's tables, and the upgrade of a database written by an earlier version.

Durable tables:

- ``meta``: the session's configuration, its secret, the rounds loaded (``rounds``) and the
  schema version (``schema``);
- ``assessors``: every person with a link: ``name``, ``role`` (``assessor`` judges,
  ``organiser`` runs the dashboard), the SHA-256 of the personal token, a CSRF token, and
  ``revoked`` (the time the link was revoked, else NULL);
- ``items``: the documents to judge: topic, docno, stratum, the design order ``seq``,
  ``required`` judgments (2 for planned overlap documents, else 1), ``judged`` (assessors with a
  current judgment), the ``round`` that loaded it and ``active`` (0: a document of an earlier
  round left unjudged when the next round was loaded; it is not handed out);
- ``judgments``: append-only. A revision is a new row that ``replaces`` the earlier one, which
  stays (``current`` 0); an undo sets ``withdrawn`` and ``current`` 0 (bringing back the row the
  withdrawn one replaced, if any). At most one current row per item and assessor (a partial
  unique index), so nothing judged is ever overwritten or deleted;
- ``skips`` and ``log`` (every save, revision, skip and undo, with grade and note).

Temporary (per connection, lost on a restart): ``assignments`` (each assessor's lease: the
document handed out and when the lease was last taken or renewed), ``inflight`` (judgments
accepted and not yet committed: they hold their document's place meanwhile) and ``pos`` (the
order documents are handed out in).

Version 1 (one judgments row per item and assessor, overwritten by a new grade, deleted by an
undo; no roles, no rounds) is upgraded in place by :func:`upgrade`, in one transaction.
"""

from __future__ import annotations

VERSION = 2

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS assessors(
  id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL, token_hash TEXT UNIQUE NOT NULL,
  csrf TEXT NOT NULL, created REAL NOT NULL, role TEXT NOT NULL DEFAULT 'assessor',
  revoked REAL);
CREATE TABLE IF NOT EXISTS items(
  id INTEGER PRIMARY KEY, topic TEXT NOT NULL, docno TEXT NOT NULL, stratum TEXT NOT NULL,
  seq INTEGER NOT NULL, required INTEGER NOT NULL, judged INTEGER NOT NULL DEFAULT 0,
  round INTEGER NOT NULL DEFAULT 1, active INTEGER NOT NULL DEFAULT 1,
  UNIQUE(topic, docno));
CREATE TABLE IF NOT EXISTS judgments(
  id INTEGER PRIMARY KEY, item INTEGER NOT NULL REFERENCES items(id),
  assessor INTEGER NOT NULL REFERENCES assessors(id), grade INTEGER NOT NULL,
  note TEXT NOT NULL DEFAULT '', at REAL NOT NULL,
  replaces INTEGER REFERENCES judgments(id), current INTEGER NOT NULL DEFAULT 1,
  withdrawn REAL);
CREATE UNIQUE INDEX IF NOT EXISTS judgments_current ON judgments(item, assessor)
  WHERE current = 1;
CREATE INDEX IF NOT EXISTS judgments_by_assessor ON judgments(assessor, id);
CREATE TABLE IF NOT EXISTS skips(
  assessor INTEGER NOT NULL, item INTEGER NOT NULL, at REAL NOT NULL,
  PRIMARY KEY(assessor, item));
CREATE TABLE IF NOT EXISTS log(
  id INTEGER PRIMARY KEY, assessor INTEGER NOT NULL, item INTEGER, action TEXT NOT NULL,
  grade INTEGER, note TEXT, at REAL NOT NULL);
CREATE TEMP TABLE IF NOT EXISTS assignments(
  assessor INTEGER PRIMARY KEY, item INTEGER NOT NULL, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS temp.assignments_item ON assignments(item);
CREATE TEMP TABLE IF NOT EXISTS inflight(
  assessor INTEGER NOT NULL, item INTEGER NOT NULL, PRIMARY KEY(assessor, item));
CREATE TEMP TABLE IF NOT EXISTS pos(item INTEGER PRIMARY KEY, pos INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS temp.pos_order ON pos(pos);
"""


def _columns(con, table: str) -> set[str]:
    return {row[1] for row in con.execute(f"PRAGMA table_info({table})")}


def upgrade(con) -> bool:
    """Bring a version-1 database to this version (module docstring); True if it did. The
    judgments table is rebuilt (version 1 allowed one row per item and assessor); every row
    becomes a current judgment."""
    judgments = _columns(con, "judgments")
    if not judgments or "current" in judgments:
        return False
    con.execute("BEGIN IMMEDIATE")
    try:
        con.execute("DROP INDEX IF EXISTS judgments_by_assessor")
        con.execute("ALTER TABLE judgments RENAME TO judgments_v1")
        # the new table alone (executescript would commit the transaction)
        con.execute(next(s for s in SCHEMA.split(";") if "EXISTS judgments(" in s))
        con.execute("INSERT INTO judgments(id, item, assessor, grade, note, at, current) "
                    "SELECT id, item, assessor, grade, note, at, 1 FROM judgments_v1")
        con.execute("DROP TABLE judgments_v1")
        if "role" not in _columns(con, "assessors"):
            con.execute("ALTER TABLE assessors ADD COLUMN role TEXT NOT NULL "
                        "DEFAULT 'assessor'")
            con.execute("ALTER TABLE assessors ADD COLUMN revoked REAL")
        if "round" not in _columns(con, "items"):
            con.execute("ALTER TABLE items ADD COLUMN round INTEGER NOT NULL DEFAULT 1")
            con.execute("ALTER TABLE items ADD COLUMN active INTEGER NOT NULL DEFAULT 1")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return True
