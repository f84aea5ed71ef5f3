#!/usr/bin/env python3
"""Issue 25's scoreboard: the unflagged intervals' coverage, cell by cell, against [0.93, 0.98].

Usage::

    python scripts/coverage_scoreboard.py [--ci NAME=OUTDIR]... [--ppi NAME=OUTDIR]...
                                          [--cmp NAME=OUTDIR]... [--blanket NAME]

reads ``results.parquet`` (or ``results.csv``) of ``irsample simulate ci-coverage`` (``--ci``:
the ht rows, one per estimator) and of ``irsample simulate model-assisted`` (``--ppi``: ppi per
label source, and ht on the same draws; the same NAME may be given several folders, as when
cells ran apart) and prints, per collection NAME and recipe (their 2strata designs differ: the
model-assisted recipe judges ranks 1-10 whole), a table with a row per design and judged
percentage and a column per estimator: the coverage of the unflagged 95% intervals, and in
brackets the share of run means the reliability rule flags; ``-`` where it flags every mean.
ppi's cells give the range over the label sources. A coverage outside [0.93, 0.98] is starred.
Then the cells outside the range with their Monte Carlo standard errors, and the rule's blanket
test: on the collections named by ``--blanket`` (TREC-8 by default), the cells of the 2strata
and planned designs at 10% judged or more that flag more than 10% of the run means, with the
flagged share's Monte Carlo standard error where the results carry it. Last, the
flagged intervals' coverage against the unflagged ones' (over every row, and where both
exist row by row and pooled, and pooled per estimator), which should be visibly worse where
the rule flags the right means.

``--cmp``: results of ``irsample simulate comparisons``; per collection a table of the type-I
errors of its tests on tie-preserving twins, a row per design and a column per test, each the
type-I error of the unflagged pairs with its Monte Carlo standard error and the share of pairs
flagged (tests that give no status: over all pairs), starred above :data:`TYPE_ONE` (issue
25's limit for ``compare``), ``-`` where every pair is flagged (with the type-I error over all
pairs beside it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

LOW, HIGH = 0.93, 0.98  #: the coverage asked of unflagged intervals (issue 25)
BLANKET = 0.10  #: most run means the rule may flag on informative samples (issue 25)
TYPE_ONE = 0.06  #: the largest type-I error asked of unflagged pairs in compare (issue 25)


def read(folder: Path) -> pd.DataFrame:
    parquet = folder / "results.parquet"
    return pd.read_parquet(parquet) if parquet.exists() else pd.read_csv(folder / "results.csv")


def scoreboard_rows(table: pd.DataFrame, estimator, source, prefix: str = "") -> pd.DataFrame:
    """``table``'s cells in the scoreboard's columns, named ``estimator`` and ``source``, from
    its ``{prefix}coverage_unflagged``, ``_se``, ``{prefix}flagged``, ``{prefix}flagged_se``
    and ``{prefix}coverage_flagged`` (NaN where the results predate that column)."""
    missing = pd.Series(float("nan"), index=table.index)
    return pd.DataFrame({
        "design": table.strategy, "percent": table.percent, "estimator": estimator,
        "source": source, "coverage": table[f"{prefix}coverage_unflagged"],
        "se": table[f"{prefix}coverage_unflagged_se"], "flagged": table[f"{prefix}flagged"],
        "flagged_se": table.get(f"{prefix}flagged_se", missing),
        "coverage_flagged": table.get(f"{prefix}coverage_flagged", missing)})


def ci_rows(results: pd.DataFrame) -> pd.DataFrame:
    """ci-coverage rows in the scoreboard's columns (ht estimators only)."""
    rows = results[results.estimator.str.startswith("ht(")]
    return scoreboard_rows(rows, rows.estimator, "")


def ppi_rows(results: pd.DataFrame) -> pd.DataFrame:
    """model-assisted rows in the scoreboard's columns: ppi per label source, then ht on the
    same draws (once per cell and measure: the label sources share them)."""
    ht = results.drop_duplicates(["strategy", "percent", "measure"])
    return pd.concat([scoreboard_rows(results, "ppi(" + results.measure + ")", results.labels),
                      scoreboard_rows(ht, "ht(" + ht.measure + ")", "", "ht_")],
                     ignore_index=True)


def outside(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows whose unflagged coverage (where any mean is unflagged) is outside [LOW, HIGH]."""
    known = rows.coverage.notna()
    return rows[known & ((rows.coverage < LOW) | (rows.coverage > HIGH))]


def cell_text(g: pd.DataFrame) -> str:
    """One table cell: the unflagged coverage (a range over label sources) and the flagged
    share (likewise), a star where a value is outside [LOW, HIGH]."""
    if g.empty:
        return ""
    flagged = f"{g.flagged.min():.0%}" + ("" if len(g) == 1 else f"-{g.flagged.max():.0%}")
    cov = g.coverage.dropna()
    if cov.empty:
        return f"- ({flagged})"
    star = "*" if ((cov < LOW) | (cov > HIGH)).any() else ""
    text = shown(cov.min()) + ("" if len(cov) == 1 else f"-{shown(cov.max())}")
    return f"{star}{text} ({flagged})"


def shown(coverage: float) -> str:
    """A coverage to 3 decimals, or 4 where 3 would round a value outside [LOW, HIGH] onto
    its edge (0.9297 is starred, and printed 0.930 the star would look wrong)."""
    text = f"{coverage:.3f}"
    if (coverage < LOW or coverage > HIGH) and LOW <= float(text) <= HIGH:
        return f"{coverage:.4f}"
    return text


def table(rows: pd.DataFrame) -> str:
    estimators = list(dict.fromkeys(rows.estimator))
    lines = ["| design | % | " + " | ".join(estimators) + " |",
             "|---|---|" + "---|" * len(estimators)]
    order = {d: i for i, d in enumerate(dict.fromkeys(rows.design))}  # cells run apart
    cells = sorted(rows.groupby(["design", "percent"], sort=False),
                   key=lambda item: (order[item[0][0]], item[0][1]))
    for (design, percent), g in cells:
        texts = [cell_text(g[g.estimator == e]) for e in estimators]
        lines.append(f"| {design} | {percent:g} | " + " | ".join(texts) + " |")
    return "\n".join(lines)


def row_name(r) -> str:
    """A row as the lists below name it: design, percentage, estimator and label source."""
    source = f" {r.source}" if r.source else ""
    return f"{r.design} {r.percent:g}% {r.estimator}{source}"


def share(value, spec: str = ".3f") -> str:
    """A share as the lists print it: ``-`` where there is none (every mean flagged, or a
    Monte Carlo error with fewer than two trials counting), as the table does."""
    return "-" if pd.isna(value) else f"{value:{spec}}"


def describe(r) -> str:
    return f"{row_name(r)}: {share(r.coverage)} +- {share(r.se)} ({r.flagged:.0%} flagged)"


def describe_flags(r) -> str:
    """A blanket row: :func:`describe` with the flagged share's Monte Carlo standard error
    (trials as the units), where the results carry it."""
    if pd.isna(r.flagged_se):
        return describe(r)
    return (f"{row_name(r)}: {r.flagged:.1%} +- {r.flagged_se:.1%} flagged (unflagged coverage "
            f"{share(r.coverage)})")


def collect(items: list[str], convert) -> dict[str, pd.DataFrame]:
    out: dict[str, list[pd.DataFrame]] = {}
    for item in items:
        name, _, folder = item.partition("=")
        out.setdefault(name, []).append(convert(read(Path(folder))))
    return {name: pd.concat(parts, ignore_index=True) for name, parts in out.items()}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ci", action="append", default=[], metavar="NAME=OUTDIR")
    parser.add_argument("--ppi", action="append", default=[], metavar="NAME=OUTDIR")
    parser.add_argument("--cmp", action="append", default=[], metavar="NAME=OUTDIR")
    parser.add_argument("--blanket", action="append", default=None, metavar="NAME")
    args = parser.parse_args(argv)
    if not (args.ci or args.ppi or args.cmp):
        parser.error("give --ci, --ppi or --cmp result folders")
    blanket = set(args.blanket or ["TREC-8"])
    for recipe, found in (("ci-coverage", collect(args.ci, ci_rows)),
                          ("model-assisted", collect(args.ppi, ppi_rows))):
        for name, rows in found.items():
            report(f"{name}, {recipe}", rows, name in blanket)
    for name, rows in collect(args.cmp, type_one_rows).items():
        print(f"### {name}, comparisons\n\n{type_one_table(rows)}\n")
    return 0


def type_one_rows(results: pd.DataFrame) -> pd.DataFrame:
    """The type-I part of comparisons' results."""
    return results[results.part == "type-I"] if "part" in results else results


def type_one_text(r) -> str:
    """One cell of :func:`type_one_table`."""
    if pd.isna(r.flagged):  # a test without a status: all pairs
        return f"{r.type_one_error:.3f} +- {r.se:.3f} (all pairs)"
    if pd.isna(r.type_one_error_unflagged):  # every pair flagged
        return f"- ({r.flagged:.0%}; all pairs {r.type_one_error:.3f})"
    star = "*" if r.type_one_error_unflagged > TYPE_ONE else ""
    return f"{star}{r.type_one_error_unflagged:.3f} +- {r.unflagged_se:.3f} ({r.flagged:.0%})"


def type_one_table(rows: pd.DataFrame) -> str:
    """Per design a row, per test a column (:func:`type_one_text`)."""
    tests = list(dict.fromkeys(rows.test))
    lines = [f"type-I error of the unflagged pairs +- Monte Carlo error (share of pairs "
             f"flagged); * above {TYPE_ONE}", "", "| design | " + " | ".join(tests) + " |",
             "|---|" + "---|" * len(tests)]
    for design, g in rows.groupby("design", sort=False):
        by_test = {r.test: type_one_text(r) for r in g.itertuples()}
        lines.append(f"| {design} | " + " | ".join(by_test.get(t, "") for t in tests) + " |")
    return "\n".join(lines)


def report(title: str, rows: pd.DataFrame, blanket: bool) -> None:
    """The table, the cells outside the range, the blanket test and the flagged coverage."""
    print(f"### {title}\n\nunflagged coverage (share of run means flagged); * outside "
          f"[{LOW}, {HIGH}]\n\n{table(rows)}\n")
    bad = outside(rows)
    print(f"cells outside [{LOW}, {HIGH}]: {len(bad)} of {rows.coverage.notna().sum()} with "
          f"unflagged means ({(rows.coverage.isna()).sum()} all flagged)")
    for r in bad.itertuples():
        print(f"  {describe(r)}")
    if blanket:
        informative = rows[rows.design.isin(["2strata", "planned"]) & (rows.percent >= 10)]
        over = informative[informative.flagged > BLANKET]
        print(f"blanket test (2strata and planned, 10% judged or more, at most "
              f"{BLANKET:.0%} flagged): {len(over)} of {len(informative)} rows over")
        for r in over.itertuples():
            print(f"  {describe_flags(r)}")
    every = rows.assign(flagged_hits=rows.coverage_flagged.fillna(0) * rows.flagged,
                        unflagged_hits=rows.coverage.fillna(0) * (1 - rows.flagged))
    if (rows.coverage_flagged.isna() & (rows.flagged > 0)).any():
        print("the flagged intervals' coverage is not in these results (recorded before it was "
              "counted)")
    elif every.flagged.sum() > 0 and (1 - every.flagged).sum() > 0:
        print(f"every row pooled: flagged intervals cover "
              f"{every.flagged_hits.sum() / every.flagged.sum():.3f}, unflagged "
              f"{every.unflagged_hits.sum() / (1 - every.flagged).sum():.3f}")
    both = rows.dropna(subset=["coverage", "coverage_flagged"])
    both = both[(both.flagged > 0) & (both.flagged < 1)]
    if len(both):
        worse = (both.coverage_flagged < both.coverage).mean()
        flagged, unflagged = pooled(both)
        print(f"flagged intervals cover less than the unflagged in {worse:.0%} of the "
              f"{len(both)} rows with both (flagged {both.coverage_flagged.min():.3f}-"
              f"{both.coverage_flagged.max():.3f}, unflagged {both.coverage.min():.3f}-"
              f"{both.coverage.max():.3f}); pooled over them, flagged {flagged:.3f}, "
              f"unflagged {unflagged:.3f}")
        parts = []
        for estimator, g in both.groupby("estimator", sort=False):
            flagged, unflagged = pooled(g)
            parts.append(f"{estimator} {flagged:.3f} / {unflagged:.3f} ({len(g)})")
        print("  by estimator, flagged / unflagged (rows): " + "; ".join(parts))
    print()


def pooled(both: pd.DataFrame) -> tuple[float, float]:
    """The flagged and the unflagged intervals' coverage pooled over rows that have both, each
    row weighted by its share of intervals on that side (a recipe's rows share their runs x
    trials)."""
    flagged = (both.coverage_flagged * both.flagged).sum() / both.flagged.sum()
    unflagged = (both.coverage * (1 - both.flagged)).sum() / (1 - both.flagged).sum()
    return float(flagged), float(unflagged)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
