"""Runs read ahead: batches of run files, and the first batch read in background threads.

``irsample eval`` evaluates runs a batch at a time (:mod:`irsample.streaming`); the files of the
first batch are decompressed and parsed in two background threads from the moment the command
line knows them, before it imports numba and the measures, so the second core reads while the
first one imports and loads the qrels. This module imports only :mod:`.files` at first; the
parser's modules are imported by the threads, after the first bytes are in.

- :func:`run_batches`: run files grouped into batches of about ``batch_bytes`` of text.
- :class:`ReadAhead`: the leading run files of the first batch, read (decompressed by
  :func:`~irsample.io.files.read_raw`, then parsed by :func:`irsample.io.trec.read_run`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from .files import GZIP_MAGIC, check_sources, read_raw

BATCH_BYTES = 256 * 2**20  #: run text per batch (all of TREC-8's runs; one MS MARCO run)
PREFETCH_BYTES = BATCH_BYTES  #: run text read ahead while the program starts and the qrels load
_GZIP_RATIO = 4  #: a gzip run file holds about this many times its size in text


def text_size(source) -> int | None:
    """Estimated bytes of run text in a file, or None for anything that is not a plain path."""
    if not isinstance(source, (str, os.PathLike)) or str(source) == "-":
        return None
    if str(source).endswith(".parquet"):
        return None
    try:
        size = os.path.getsize(source)
        with open(source, "rb") as fh:
            gz = fh.read(2) == GZIP_MAGIC
    except OSError:
        return 0  # the reader reports the problem with the file's name
    return size * _GZIP_RATIO if gz else size


def run_batches(sources: Sequence, batch_bytes: int = BATCH_BYTES) -> list[list]:
    """Consecutive groups of run sources of at most ``batch_bytes`` estimated text each (a
    larger run, or one of unknown size, is a group of its own)."""
    batches: list[list] = []
    current: list = []
    filled = 0
    for src in sources:
        size = text_size(src)
        size = batch_bytes if size is None else size
        if current and filled + size > batch_bytes:
            batches.append(current)
            current, filled = [], 0
        current.append(src)
        filled += size
    if current:
        batches.append(current)
    return batches


def _read_run(source):
    """Decompress (no lock held), then parse the run (the parser's modules are imported here,
    after the bytes are in, so decompression overlaps the program's start-up)."""
    raw = read_raw(source)
    from .trec import read_run

    return read_run(source, raw)


class ReadAhead:
    """Start reading runs now: the leading plain run files of the first batch of
    :func:`run_batches` that fit in ``budget`` estimated bytes of text are read and parsed in
    two background threads. :meth:`take` hands the first batch over (parsed tables in place of
    the files read ahead) and the remaining batches; :meth:`cancel` stops reads not started.
    Raises :class:`InputError` at once for no run, or standard input named twice."""

    def __init__(self, sources: Sequence, batch_bytes: int = BATCH_BYTES,
                 budget: int = PREFETCH_BYTES):
        check_sources(sources)
        self.batches = run_batches(sources, batch_bytes)
        self.pool = ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1))
        self.early: dict[int, Future] = {}
        filled = 0
        for i, src in enumerate(self.batches[0]):
            size = text_size(src)
            if size is None or filled + size > budget:
                break
            self.early[i] = self.pool.submit(_read_run, src)
            filled += size

    def take(self) -> list[list]:
        """The batches, the first with the tables read ahead (waits for them; a reader's
        error is raised here)."""
        try:
            first = [self.early[i].result() if i in self.early else src
                     for i, src in enumerate(self.batches[0])]
        except BaseException:
            self.cancel()
            raise
        self.pool.shutdown(wait=False)
        return [first, *self.batches[1:]]

    def cancel(self) -> None:
        """Drop the reads not started (those under way finish in the background)."""
        self.pool.shutdown(wait=False, cancel_futures=True)
