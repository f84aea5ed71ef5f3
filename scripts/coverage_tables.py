#!/usr/bin/env python3
"""Markdown tables of ``irsample simulate ci-coverage`` results, as in REPRODUCTION.md.

Usage::

    python scripts/coverage_tables.py NAME=OUTDIR [NAME=OUTDIR ...]

reads ``OUTDIR/results.parquet`` (or ``results.csv``) of each run of the recipe and prints, per
collection NAME, one table: a row per design and judged percentage, a column per estimator with
``coverage / half-width / bias / RMS / tau`` (means over runs x trials, tau per trial), and a
summary line per estimator: the range of its coverage over the cells from 10% judged up.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd


def read(folder: Path) -> pd.DataFrame:
    parquet = folder / "results.parquet"
    return pd.read_parquet(parquet) if parquet.exists() else pd.read_csv(folder / "results.csv")


def table(results: pd.DataFrame) -> str:
    estimators = list(dict.fromkeys(results.estimator))
    head = ("| design | % judged | " + " | ".join(estimators) + " |\n|---|---|"
            + "---|" * len(estimators))
    rows = []
    for (design, percent), g in results.groupby(["strategy", "percent"], sort=False):
        cells = []
        for e in estimators:
            r = g[g.estimator == e]
            cells.append("-" if r.empty else "{:.2f} / {:.3f} / {:+.3f} / {:.3f} / {:.2f}".format(
                *r[["coverage", "halfwidth", "bias", "rms", "tau"]].iloc[0]))
        rows.append(f"| {design} | {percent:g} | " + " | ".join(cells) + " |")
    from_10 = results[results.percent >= 10]
    ranges = from_10.groupby("estimator", sort=False).coverage.agg(["min", "max"])
    summary = "; ".join(f"{e} {ranges.loc[e, 'min']:.2f}-{ranges.loc[e, 'max']:.2f}"
                        for e in estimators if e in ranges.index)
    return "\n".join([head, *rows, "", f"Coverage from 10% judged up (min-max): {summary}."])


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 1
    for item in argv:
        name, _, folder = item.partition("=")
        print(f"### {name}\n\ncells: coverage / half-width / bias / RMS / Kendall tau\n")
        print(table(read(Path(folder))) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
