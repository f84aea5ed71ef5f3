"""The design planner on TREC-8: planned designs vs 2strata at equal budgets, and predicted vs
observed half-widths (protocols in :mod:`irsample.experiments.planner_study`).

1. ``--trials`` (50) random halves of the 71 pooled runs (paper 002's protocol), at each of
   ``--budgets`` judgments: 2strata@B vs the planner (pilot of 5% of B, then Neyman-planned
   for xinfAP or for infNDCG; with ``--batches K`` also the sequential planner in K batches);
   accuracy of the significant pairs (paired t-test, 0.05), RMS error and Kendall tau against
   the frame truth (MAP and nDCG of all 129 runs with the half's depth-100 pool judged), and
   the same against the complete qrels (``*_qrels``).
2. The official pool, ``--halfwidth-trials`` (30) plans and draws per budget: predicted 95%
   half-width of a pooled run's mean estimate, the jackknife intervals' half-width, and 1.96 x
   the standard deviation across trials.

Usage: NUMBA_NUM_THREADS=1 python benchmarks/planner_trec8.py [--shared ../shared]
       [--trials 50] [--halfwidth-trials 30] [--budgets 5000,10000,15000] [--batches 3]
       [--workers 2] [--skip-compare] [--skip-halfwidths]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared = Path(__file__).resolve().parents[1].parent / "shared"
    parser.add_argument("--shared", default=str(shared))
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--halfwidth-trials", type=int, default=30)
    parser.add_argument("--budgets", default="5000,10000,15000")
    parser.add_argument("--batches", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--skip-compare", action="store_true")
    parser.add_argument("--skip-halfwidths", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import pandas as pd

    from irsample.experiments import CollectionFiles
    from irsample.experiments.planner_study import run_halfwidths, run_planner_vs_fixed

    d = Path(args.shared) / "data/trec8-adhoc"
    files = CollectionFiles.of(d / "runs", d / "qrels.trec8.adhoc",
                               pooled=d / "run-pooled-flag.txt", groups=d / "runs-pids")
    budgets = tuple(int(b) for b in args.budgets.split(","))
    pd.set_option("display.width", 160)
    if not args.skip_compare:
        res = run_planner_vs_fixed(files, budgets=budgets, trials=args.trials,
                                   batches=args.batches, workers=args.workers, progress=True)
        print(f"\nplanned vs 2strata: {args.trials} random halves per budget, "
              f"{res['seconds']:.0f} s wall; means over trials")
        print(res["summary"].round(4).to_string())
    if not args.skip_halfwidths:
        res = run_halfwidths(files, budgets=budgets, trials=args.halfwidth_trials,
                             workers=args.workers, progress=True)
        print(f"\npredicted vs observed 95% half-width of a pooled run's mean estimate "
              f"(official pool, {args.halfwidth_trials} plans per budget, "
              f"{res['seconds']:.0f} s wall)")
        print(res["halfwidths"].round(4).to_string())


if __name__ == "__main__":
    main()
