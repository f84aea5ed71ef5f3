#!/usr/bin/env python3
"""Markdown tables of ``irsample simulate comparisons`` results, as in REPRODUCTION.md.

Usage: ``python scripts/comparison_tables.py NAME=OUTDIR [NAME=OUTDIR ...]`` reads each
``OUTDIR/results.parquet`` and prints per collection the type-I error per design and test
(binomial SE in brackets) and the accuracy of significant pairs per strategy and test (against
the frame truth / against the complete qrels).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd


def grid(t: pd.DataFrame, by: str, cell) -> list[str]:
    """Markdown rows: one per value of ``by`` (in order of appearance), one column per test,
    each cell ``cell(row of that test)``."""
    tests = list(dict.fromkeys(t.test))
    lines = [f"| {by} | " + " | ".join(tests) + " |", "|---|" + "---|" * len(tests)]
    for key, g in t.groupby(by, sort=False):
        g = g.set_index("test")
        lines.append(f"| {key} | " + " | ".join(cell(g.loc[x]) for x in tests) + " |")
    return lines


def type_one(results: pd.DataFrame) -> str:
    t = results[results.part == "type-I"]
    lines = grid(t, "design", lambda r: f"{r['type_one_error']:.3f} ({r['se']:.3f})")
    pairs = int(t.pairs.iloc[0]) if len(t) else 0
    return "\n".join(lines) + f"\n\n({pairs} (run, twin) pairs x trials per cell)"


def accuracy(results: pd.DataFrame) -> str:
    t = results[results.part == "accuracy"]
    return "\n".join(grid(t, "strategy",
                          lambda r: f"{r['accuracy']:.3f} / {r['accuracy_qrels']:.3f}"))


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 1
    for item in argv:
        name, _, folder = item.partition("=")
        results = pd.read_parquet(Path(folder) / "results.parquet")
        print(f"### {name}\n\nType-I error at 0.05:\n\n{type_one(results)}\n\n"
              f"Accuracy of significant pairs (frame truth / complete qrels):\n\n"
              f"{accuracy(results)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
