"""How rule 7's threshold was chosen (issue 25): run means flagged for their blind topics'
variance left out, against the threshold.

Rule 7 of ``irsample/measures/reliability/`` flags a run mean whose blind topics (no relevant
document drawn beside the documents judged with certainty, so a sample variance of 0) carry a
scaled model variance above ``MAX_UNSEEN`` times the variance its interval takes. Its designs are
those that judge a stratum whole beside sampled ones; here the model-assisted recipe's 2strata
(``1-10:1,11-100:0.2`` scaled to the budget: ranks 1-10 judged whole at 20% and 30% of the
depth-100 pool). For each collection, percentage and trial (seeded) every run's ht(AP) and
ht(nDCG) mean gets the 95% interval ``irsample eval --ci 0.95`` prints, whether it covers the
frame truth, whether the other rules flag it, and rule 7's ratio
(``reliability.unseen_share``). Printed per cell and threshold: the share rule 7 adds to the
flags, the coverage of the unflagged means and of those rule 7 flags.

Usage: python benchmarks/unseen_threshold.py [--collections trec8,covid,QRELS:RUNS]
       [--percents 20,30] [--trials 100] [--seed 7] [--shared ../shared]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
THRESHOLDS = (0.25, 0.5, 1.0, 2.0, 4.0)
MEASURES = (("ht(AP)", "AP"), ("ht(nDCG)", "nDCG"))


def files(name: str, shared: Path):
    """``reliability_grid.files`` (vaswani, cacm, covid, trec8), or ``QRELS:RUNS``: a qrels file
    and a folder of runs (synthetic runs of ``scripts/synthetic_runs.py``)."""
    from reliability_grid import files as named

    from irsample.experiments.data import CollectionFiles

    if ":" in name:
        qrels, runs = name.split(":", 1)
        return CollectionFiles.of(runs, qrels)
    return named(name, shared)


def records(name: str, percents, trials: int, seed: int, shared: Path) -> pd.DataFrame:
    """One row per percentage x trial x measure x run: covered, flagged by the other rules,
    rule 7's ratio."""
    from irsample.design import stratified
    from irsample.design.sampling.budget import Budget
    from irsample.evaluation import evaluate_collection
    from irsample.experiments.data import load
    from irsample.experiments.model_assisted import build_frame
    from irsample.measures import parse

    data = load(files(name, shared))
    frame, c = build_frame(data, 100.0), data.collection
    estimators = [parse(e)[0] for e, _ in MEASURES]
    truth = evaluate_collection(c, frame.judgments(), [parse(t)[0] for _, t in MEASURES]).summary
    rows = []
    for pct in percents:
        design = stratified("1-10:1,11-100:0.2", budget=Budget(round(pct / 100 * len(frame))))
        for trial in range(trials):
            judged = design.sample(frame, rng=np.random.default_rng([seed, pct, trial]))
            ev = evaluate_collection(c, judged, estimators, ci=0.95, per_topic=False)
            low, high = ev.interval()
            for j in range(len(estimators)):
                rule = ev.statuses.outcomes[j]
                other = np.any([flags for name, flags in rule.by_rule.items()
                                if name != "blind topics left out"], axis=0)
                covered = (low[:, j] <= truth[:, j]) & (truth[:, j] <= high[:, j])
                rows.append(pd.DataFrame({
                    "collection": name.split(":")[0].split("/")[-1], "pct": pct, "trial": trial,
                    "measure": MEASURES[j][0], "run": np.arange(c.n_runs), "covered": covered,
                    "other": other, "unseen": rule.unseen}))
        print(f"{name} {pct}% done", file=sys.stderr, flush=True)
    return pd.concat(rows, ignore_index=True)


def table(t: pd.DataFrame) -> pd.DataFrame:
    out = []
    for key, g in t.groupby(["collection", "measure", "pct"], sort=False):
        row = dict(zip(("collection", "measure", "pct"), key))
        row["before"] = g.covered[~g.other].mean()
        for k in THRESHOLDS:
            seven = (g.unseen > k) & ~g.other
            kept = ~g.other & ~seven
            row[f"adds@{k:g}"] = seven.mean()
            row[f"unflag@{k:g}"] = g.covered[kept].mean()
            row[f"its@{k:g}"] = g.covered[seven].mean() if seven.any() else np.nan
        out.append(row)
    return pd.DataFrame(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", default="trec8,covid")
    parser.add_argument("--percents", default="20,30")
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    percents = [int(p) for p in args.percents.split(",")]
    t = pd.concat([records(n, percents, args.trials, args.seed, args.shared)
                   for n in args.collections.split(",")], ignore_index=True)
    with pd.option_context("display.width", 250, "display.max_columns", 50):
        print(table(t).round(3).to_string(index=False))


if __name__ == "__main__":
    main()
