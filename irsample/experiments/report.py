"""Markdown reports of simulation recipes (:mod:`irsample.experiments.recipes`).

A recipe returns a :class:`Report`: a title, its sources, the parameters it ran with, sections of
text, tables (pandas, rendered as Markdown pipe tables) and figures (callables writing PNGs), and
one tidy results table, and where the recipe estimates run means against a truth, the per-run
records its tables are computed from (one row per trial x cell x estimator x run: the estimate,
its interval, the rule's flag and the truth), so that every number of the report can be
recomputed from the records. :func:`write_report` writes ``report.md``, the figures, the results
and the records (``results.parquet`` and ``records.parquet``, or ``.csv`` without pyarrow or
when asked) into a directory.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..io.output import write_atomic


@dataclass
class Section:
    """A heading with optional text, table and figure (``figure``: a PNG file name written by
    ``draw(path)``)."""

    title: str
    text: str = ""
    table: pd.DataFrame | None = None
    figure: str | None = None
    draw: Callable[[Path], object] | None = None


@dataclass
class Report:
    recipe: str
    title: str
    sources: str
    params: dict
    sections: list[Section] = field(default_factory=list)
    results: pd.DataFrame = field(default_factory=pd.DataFrame)
    execution: dict = field(default_factory=dict)
    #: per trial x cell x estimator x run (None: the recipe keeps none)
    records: pd.DataFrame | None = None


def markdown_table(table: pd.DataFrame, digits: int = 4) -> str:
    """``table`` as a Markdown pipe table (floats to ``digits`` decimals, NaN as a dash). A
    float column of whole numbers, some beyond 1 in size (counts and percents a mean or a merge
    left as floats: ``n_runs``, ``judged``, ``percent``), prints without decimals; a column of
    shares (coverage 1.0, flagged 0.0) keeps them."""
    whole = [_whole_numbers(table[c]) for c in table.columns]

    def cell(value, as_int: bool) -> str:
        if isinstance(value, (float, np.floating)):
            if math.isnan(value):
                return "-"
            return f"{value:.0f}" if as_int else f"{value:.{digits}f}"
        return str(value)

    head = "| " + " | ".join(str(c) for c in table.columns) + " |"
    rule = "|" + "|".join("---" for _ in table.columns) + "|"
    rows = ["| " + " | ".join(cell(v, w) for v, w in zip(row, whole)) + " |"
            for row in table.itertuples(index=False)]
    return "\n".join([head, rule, *rows])


def _whole_numbers(column: pd.Series) -> bool:
    if column.dtype.kind != "f":
        return False
    values = column.to_numpy()
    values = values[np.isfinite(values)]
    return bool(len(values) and (values == np.round(values)).all() and (np.abs(values) > 1).any())


def render(report: Report) -> str:
    """The report's Markdown (figures referenced by file name)."""
    out = [f"# {report.title}", "", f"Recipe `{report.recipe}`. Sources: {report.sources}", "",
           "## Parameters", "", "```json",
           json.dumps(report.params, indent=2, sort_keys=True, default=str), "```", ""]
    for s in report.sections:
        out += [f"## {s.title}", ""]
        if s.text:
            out += [s.text.strip(), ""]
        if s.table is not None:
            out += [markdown_table(s.table), ""]
        if s.figure:
            out += [f"![{s.title}]({s.figure})", ""]
    if report.execution:
        seconds = report.execution.get("seconds")
        out += ["## Execution", "",
                ", ".join(f"{k}: {v:.1f}" if k == "seconds" else f"{k}: {v}"
                          for k, v in report.execution.items()
                          if k in ("executor", "workers", "tasks", "seconds")) +
                ("" if seconds is None else " (wall seconds)"), ""]
    return "\n".join(out)


def write_report(report: Report, outdir, *, format: str = "parquet") -> list[Path]:
    """Write ``report.md``, its figures, ``results.<format>`` and, where the recipe keeps them,
    ``records.<format>`` under ``outdir``; returns the paths written. A results or records
    table of either format that an earlier report left in ``outdir`` is removed, so that the
    folder's tables are this report's."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    for s in report.sections:
        if s.figure and s.draw is not None:
            s.draw(outdir / s.figure)
            written.append(outdir / s.figure)
    path = outdir / "report.md"
    write_atomic(path, (render(report) + "\n").encode())
    written.append(path)
    for name, table in (("results", report.results), ("records", report.records)):
        if table is not None:
            written.append(_write_table(table, outdir / name, format))
        for stale in (outdir / f"{name}.parquet", outdir / f"{name}.csv"):
            if stale not in written and stale.is_file():
                stale.unlink()  # an earlier run's table (other format or recipe): not this report's
    return written


def _write_table(table: pd.DataFrame, stem: Path, format: str) -> Path:
    """``stem.parquet`` (``format`` parquet, with pyarrow) or ``stem.csv``; the path written."""
    if format == "parquet":
        try:
            buffer = io.BytesIO()
            table.to_parquet(buffer, index=False)
            write_atomic(stem.with_suffix(".parquet"), buffer.getvalue())
            return stem.with_suffix(".parquet")
        except ImportError:
            pass
    write_atomic(stem.with_suffix(".csv"), table.to_csv(index=False).encode())
    return stem.with_suffix(".csv")
