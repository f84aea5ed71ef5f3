"""Runs read ahead: batches of run files, and the first batch read in background threads.

``irsample eval`` evaluates runs a batch at a time (:mod:`irsample.streaming`); the files of the
first batch are decompressed in a background thread from the moment the command line knows
them, before it imports numba and the measures, so the second core reads while the first one
imports; once the parser is imported two threads parse them (and the qrels, first). This
module imports only :mod:`.files` (no NumPy, Arrow or numba).

The reading threads run at a lower priority than the rest of the process (``nice`` +10, their
own): the main thread, which imports, loads kernels and evaluates, is the longer chain, so it
keeps a core whenever the threads compete for it (TREC-8, 129 runs: whole process 5% faster).

- :func:`run_batches`: run files grouped into batches of about ``batch_bytes`` of text.
- :class:`ReadAhead`: the leading run files of the first batch, read (decompressed by
  :func:`~irsample.io.files.read_raw`, then parsed by :func:`irsample.io.trec.read_run`).
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from .files import GZIP_MAGIC, check_sources, read_raw
from .irds import is_irds

BATCH_BYTES = 256 * 2**20  #: run text per batch (all of TREC-8's runs; one MS MARCO run)
PREFETCH_BYTES = BATCH_BYTES  #: run text read ahead while the program starts and the qrels load
_GZIP_RATIO = 4  #: a gzip run file holds about this many times its size in text
BYTES_PER_RECORD = 42  #: a run record's text (TREC-8: 266 MB in 6.3M records)
READER_NICE = 10  #: how much lower the reading threads' priority is (``nice`` steps)


def lower_priority(steps: int = READER_NICE) -> None:
    """Lower the calling thread's scheduling priority by ``steps`` (Linux: nice is per
    thread); nothing happens where that is not possible."""
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + steps))
    except (AttributeError, OSError):  # pragma: no cover - not Linux, or not allowed
        pass


def text_size(source) -> int | None:
    """Estimated bytes of run text in a file, or None for anything that is not a regular file
    named by a path (standard input, a pipe, a device, a parquet file, a DataFrame)."""
    if not isinstance(source, (str, os.PathLike)) or str(source) == "-" or is_irds(source):
        return None
    if str(source).endswith(".parquet"):
        return None
    try:
        info = os.stat(source)
        if not stat.S_ISREG(info.st_mode):  # a pipe or device: read once, by the reader alone
            return None  # (a peek here consumed what the reader then missed)
        with open(source, "rb") as fh:
            gz = fh.read(2) == GZIP_MAGIC
    except OSError:
        return 0  # the reader reports the problem with the file's name
    return info.st_size * _GZIP_RATIO if gz else info.st_size


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


#: a three-line run and TREC qrels for :func:`load_reader_kernels`
TINY_RUN = b"q 0 d2 1 2 k\nq 0 d1 2 1 k\nq 0 d3 3 1 k\n"
TINY_QRELS = b"q 0 d1 1\nq 0 d2 0\nq 0 d4 2\n"


def load_reader_kernels() -> None:
    """Read a three-line run and qrels: numba sets itself up (its first kernel, about 0.1 s
    of interpreter work) and loads the kernels of :func:`~irsample.io.trec.read_run` and
    :func:`~irsample.io.trec.read_qrels` in the calling thread, before the reading threads
    need them. Left to the first reading thread, that work ran at its lower priority and
    competed for the interpreter lock with the main thread's imports, which then waited for
    the qrels (TREC-8, 129 runs: whole process 2% faster, median of 31 pairs)."""
    from io import BytesIO

    from .trec import read_qrels, read_run

    read_qrels(BytesIO(TINY_QRELS))
    read_run(BytesIO(TINY_RUN))


class ReadAhead:
    """Start reading runs now: the leading plain run files of the first batch of
    :func:`run_batches` that fit in ``budget`` estimated bytes of text are decompressed in a
    background thread at once, and parsed in two more once :meth:`parse` is called (from the
    thread that imported the parser: the background threads never import a module, so they
    cannot race the main thread's imports of numba). :meth:`parts` hands the runs over in
    groups (parsed tables in place of the files read ahead); :meth:`cancel` stops the work not
    started. Raises :class:`InputError` at once for no run, or standard input named twice."""

    def __init__(self, sources: Sequence, batch_bytes: int = BATCH_BYTES,
                 budget: int = PREFETCH_BYTES):
        check_sources(sources)
        self.batches = run_batches(sources, batch_bytes)
        # one thread decompresses (the main thread imports meanwhile: it keeps a core of its
        # own), two parse once :meth:`parse` is called
        self.reader = ThreadPoolExecutor(max_workers=1, initializer=lower_priority)
        self.pool = ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1),
                                       initializer=lower_priority)
        self.raw: dict[int, Future] = {}  #: decompressed bytes, until parsed
        self.early: dict[int, Future] = {}  #: parsed tables
        self.qrels: Future | None = None  #: the qrels table read by :meth:`parse`, or None
        filled = 0
        for i, src in enumerate(self.batches[0]):
            size = text_size(src)
            if size is None or filled + size > budget:
                break
            self.raw[i] = self.reader.submit(read_raw, src)
            filled += size

    def parse(self, qrels=None, qrels_format: str | None = None) -> None:
        """Parse the files read ahead as their bytes come in; the bytes are dropped once
        parsed. ``qrels``: a judgments file to read first in the same threads (only a path,
        and only plain TREC qrels, whose reader never warns: :attr:`qrels` then gives the
        table, or None for another source or format, which the caller reads itself). The
        readers' kernels load first, in the calling thread (:func:`load_reader_kernels`)."""
        read_qrels_too = self.qrels is None and qrels is not None and text_size(qrels) is not None
        parse_runs = not self.early and bool(self.raw)
        if read_qrels_too or parse_runs:
            load_reader_kernels()
        if read_qrels_too:
            from .strata import detect_qrels_format
            from .trec import read_qrels

            def read_trec_qrels():
                if (qrels_format or detect_qrels_format(qrels)) != "trec":
                    return None
                return read_qrels(qrels)

            self.qrels = self.pool.submit(read_trec_qrels)
        if not parse_runs:
            return
        from .trec import read_run

        def parse(i):
            return read_run(self.batches[0][i], self.raw.pop(i).result())

        for i in list(self.raw):
            self.early[i] = self.pool.submit(parse, i)

    def parts(self, split: int = 3):
        """The groups of runs to evaluate in turn (sources, or parsed tables for the runs read
        ahead): the first batch in ``split`` consecutive parts, each handed over once its runs
        are read (so it is evaluated while the threads read the next part), then the other
        batches. A reader's error is raised when its part is due."""
        self.parse()
        first = self.batches[0]
        bounds = self._bounds(split)
        try:
            for a, b in zip(bounds, bounds[1:]):
                yield [self.early.pop(i).result() if i in self.early else first[i]
                       for i in range(a, b)]  # handed over: no longer held here
        except BaseException:
            self.cancel()
            raise
        self.pool.shutdown(wait=False)
        self.reader.shutdown(wait=False)
        yield from self.batches[1:]

    def _bounds(self, split: int) -> list[int]:
        n = len(self.batches[0])
        k = max(1, min(split, n))
        return [n * i // k for i in range(k + 1)]

    def first_part_lines(self, split: int = 3) -> int:
        """About how many records the first part :meth:`parts` hands over holds (its estimated
        text at :data:`BYTES_PER_RECORD`; a source of unknown size counts one batch)."""
        sizes = [text_size(src) for src in self.batches[0][: self._bounds(split)[1]]]
        return sum(BATCH_BYTES if s is None else s for s in sizes) // BYTES_PER_RECORD

    def first_part_pending(self, split: int = 3) -> bool:
        """Whether the runs of the first part :meth:`parts` hands over are still being read."""
        return any(not self.early[i].done() for i in range(self._bounds(split)[1])
                   if i in self.early)

    def cancel(self) -> None:
        """Drop the reads not started (those under way finish in the background)."""
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.reader.shutdown(wait=False, cancel_futures=True)
