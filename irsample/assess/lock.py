"""One server per judging database: ``irsample assess serve`` holds an exclusive lock on
``DB.lock`` while it runs.

Leases live in the serving process (:mod:`.assign`), so two servers on one database would hand
the same document to two people; the second ``serve`` therefore refuses to start, naming the
process that holds the lock (its pid, address and start time, which the holder writes into the
lock file). The lock is an ``flock`` on the open file: the kernel releases it when the process
ends, however it ends (``kill -9`` included), so a stale lock file never blocks a restart.
The command-line tools that only write (``add-assessor``, ``revoke``, ``export``) need no lock:
SQLite serialises them with the server.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from ..errors import InputError


class ServerLock:
    """The exclusive lock of ``db``'s server (module docstring); :meth:`acquire` or raise."""

    def __init__(self, db):
        self.db = str(db)
        self.path = Path(self.db + ".lock")
        self.file = None

    def acquire(self) -> ServerLock:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: no lock, said once
            return self
        self.file = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held until exit
        try:
            fcntl.flock(self.file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self.file.seek(0)
            holder = self.file.read().strip()
            self.file.close()
            self.file = None
            raise InputError(f"another irsample assess serve is using this database "
                             f"({_describe(holder)}; lock file {self.path}): stop it first, or "
                             "use another --db", self.db) from None
        self.describe()
        return self

    def describe(self, url: str | None = None) -> None:
        """Write who holds the lock (pid, start time, address once known) into the file."""
        if self.file is None:
            return
        info = {"pid": os.getpid(), "started": time.strftime("%Y-%m-%d %H:%M:%S"), "url": url}
        self.file.seek(0)
        self.file.truncate()
        self.file.write(json.dumps(info) + "\n")
        self.file.flush()

    def release(self) -> None:
        if self.file is not None:
            self.file.close()  # closing the descriptor releases the flock
            self.file = None


def serving_url(db) -> str | None:
    """The address of the ``serve`` running on ``db`` now (from its lock file), or None where
    none runs. The lock is only tested, never taken: the file is left as it is."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return None
    path = Path(str(db) + ".lock")
    try:
        file = open(path, encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError:
        return None
    with file:
        try:
            fcntl.flock(file.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:  # held: a server runs
            try:
                return json.loads(file.read()).get("url") or None
            except (ValueError, AttributeError):
                return None
        fcntl.flock(file.fileno(), fcntl.LOCK_UN)
        return None


def _describe(text: str) -> str:
    try:
        info = json.loads(text)
        where = f" at {info['url']}" if info.get("url") else ""
        return f"process {info['pid']}{where}, started {info['started']}"
    except (ValueError, KeyError, TypeError):
        return "a process that has not said which"
