"""Readers and writers: TREC runs and qrels (plain, gz, stdin), DataFrames and parquet.

:func:`load_runs` and :func:`load_qrels` accept a path (``-`` for standard input), a parquet
path (``.parquet``), a pandas DataFrame or an already parsed table, and return parsed tables.
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from ..errors import InputError
from .files import QRELS_FORMATS, check_sources, read_once

if TYPE_CHECKING:
    from .trec import QrelsTable, RunTable

__all__ = [
    "QRELS_FORMATS",
    "QrelsTable",
    "RunTable",
    "load_qrels",
    "load_runs",
    "read_prels",
    "read_qrels",
    "read_run",
    "read_strata_qrels",
    "run_to_frame",
    "write_qrels",
    "write_run",
]

#: names of the submodules, imported on first use: the readers load numba's kernels and the
#: DataFrame functions need pandas, neither of which ``import irsample.io`` should pay for
#: (the command line reads files ahead with :mod:`.files` while it imports the rest)
_LAZY = {
    "QrelsTable": "trec", "RunTable": "trec", "read_bytes": "trec", "read_qrels": "trec",
    "read_run": "trec", "detect_qrels_format": "strata", "read_prels": "strata",
    "read_strata_qrels": "strata", "write_qrels": "writers", "write_run": "writers",
    "qrels_from_frame": "frames", "read_parquet": "frames", "run_to_frame": "frames",
    "runs_from_frame": "frames",
}


def __getattr__(name: str):
    """The names of :data:`_LAZY`, from their module, imported on first use."""
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _is_frame(src) -> bool:
    """Whether ``src`` is a pandas DataFrame (without importing pandas: if it is not imported,
    nothing is a DataFrame)."""
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(src, pd.DataFrame)


def _is_parquet(src) -> bool:
    return isinstance(src, (str, os.PathLike)) and str(src).endswith(".parquet")


def load_runs(sources) -> list[RunTable]:
    """Parse runs from paths, DataFrames or tables; files are read in parallel threads."""
    from .trec import RunTable, read_run

    if isinstance(sources, (str, os.PathLike, RunTable)) or _is_frame(sources):
        sources = [sources]
    sources = list(sources)
    check_sources(sources)

    def one(src) -> list[RunTable]:
        if isinstance(src, RunTable):
            return [src]
        if _is_frame(src) or _is_parquet(src):
            from .frames import read_parquet, runs_from_frame

            return runs_from_frame(src) if _is_frame(src) else runs_from_frame(
                read_parquet(src), str(src))
        return [read_run(src)]

    paths = sum(1 for s in sources if isinstance(s, (str, os.PathLike)))
    if paths > 1:
        with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
            parts = list(pool.map(one, sources))
    else:
        parts = [one(s) for s in sources]
    return [run for part in parts for run in part]


def load_qrels(source, fmt: str | None = None) -> QrelsTable:
    """Parse judgments from a path, parquet file, DataFrame or table.

    ``source`` may also be an ir_datasets id, ``irds:<id>`` (:mod:`irsample.io.irds`). ``fmt``
    is ``trec`` (qid iter docno rel), ``strata`` (sample_eval's qid iter docno stratum
    rel) or ``prels`` (statAP's qid docno rel method probability); by default it is detected
    from the file (:func:`~irsample.io.strata.detect_qrels_format`). Standard input and pipes
    are read once and kept for both detection and parsing.
    """
    from .irds import is_irds
    from .strata import detect_qrels_format, read_prels, read_strata_qrels
    from .trec import QrelsTable, read_qrels

    if isinstance(source, QrelsTable):
        return source
    if is_irds(source):
        from .irds import read_irds_qrels

        return read_irds_qrels(source)
    if fmt is not None and fmt not in QRELS_FORMATS:
        raise InputError(f"unknown qrels format {fmt!r} (one of {', '.join(QRELS_FORMATS)})")
    if _is_frame(source) or _is_parquet(source):
        from .frames import qrels_from_frame, read_parquet

        if _is_frame(source):
            return qrels_from_frame(source, fmt=fmt)
        return qrels_from_frame(read_parquet(source), str(source), fmt)
    if fmt is None:  # detection reads it first: standard input or a pipe is read once
        source = read_once(source)
    detected = fmt is None
    if detected:
        fmt = detect_qrels_format(source)
        if hasattr(source, "seek"):
            source.seek(0)
    readers = {"trec": read_qrels, "strata": read_strata_qrels, "prels": read_prels}
    try:
        return readers[fmt](source)
    except InputError as error:
        if detected and fmt == "strata":  # prels whose probabilities are all whole numbers
            raise InputError(
                f"{error.message} (read as stratified qrels, every fifth field being a whole "
                "number; for prels, pass --qrels-format prels, in Python qrels_format=\"prels\")",
                error.source, error.line,
            ) from None
        if detected and fmt == "prels":  # stratified qrels with a fractional grade somewhere
            raise InputError(
                f"{error.message} (read as prels, some line's fifth field having a fraction; "
                "for stratified qrels, pass --qrels-format strata, in Python "
                "qrels_format=\"strata\", and the line whose grade has one is named)",
                error.source, error.line,
            ) from None
        raise
