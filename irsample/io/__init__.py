"""Readers and writers: TREC runs and qrels (plain, gz, stdin), DataFrames and parquet.

:func:`load_runs` and :func:`load_qrels` accept a path (``-`` for standard input), a parquet
path (``.parquet``), a pandas DataFrame or an already parsed table, and return parsed tables.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
import pandas as pd

from ..errors import InputError
from .frames import qrels_from_frame, read_parquet, run_to_frame, runs_from_frame
from .trec import QrelsTable, RunTable, read_qrels, read_run
from .writers import write_qrels, write_run

__all__ = [
    "QrelsTable",
    "RunTable",
    "load_qrels",
    "load_runs",
    "read_qrels",
    "read_run",
    "run_to_frame",
    "write_qrels",
    "write_run",
]


def _is_parquet(src) -> bool:
    return isinstance(src, (str, os.PathLike)) and str(src).endswith(".parquet")


def load_runs(sources) -> list[RunTable]:
    """Parse runs from paths, DataFrames or tables; files are read in parallel threads."""
    if isinstance(sources, (str, os.PathLike, pd.DataFrame, RunTable)):
        sources = [sources]
    sources = list(sources)
    if not sources:
        raise InputError("no run given")
    if sum(1 for s in sources if isinstance(s, (str, os.PathLike)) and str(s) == "-") > 1:
        raise InputError("standard input ('-') can be read only once")

    def one(src) -> list[RunTable]:
        if isinstance(src, RunTable):
            return [src]
        if isinstance(src, pd.DataFrame):
            return runs_from_frame(src)
        if _is_parquet(src):
            return runs_from_frame(read_parquet(src), str(src))
        return [read_run(src)]

    paths = sum(1 for s in sources if isinstance(s, (str, os.PathLike)))
    if paths > 1:
        with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
            parts = list(pool.map(one, sources))
    else:
        parts = [one(s) for s in sources]
    return [run for part in parts for run in part]


def load_qrels(source) -> QrelsTable:
    """Parse qrels from a path, parquet file, DataFrame or table."""
    if isinstance(source, QrelsTable):
        return source
    if isinstance(source, pd.DataFrame):
        return qrels_from_frame(source)
    if _is_parquet(source):
        return qrels_from_frame(read_parquet(source), str(source))
    return read_qrels(source)
