"""Paper 002 (Voorhees, SIGIR 2014) on TREC-8: accuracy of significant pairs and R^ vs R.

Runs :func:`irsample.experiments.voorhees14.run_voorhees14` (protocol and strata in its
docstring): ``--trials`` random halves of the pooled runs x 6 strategies (pool10, pool25, pool100,
1stratum, 2strata, 3strata) x 3 measures (MAP, nDCG, P@10 by xinfAP, infNDCG, iP@10), paired
t-tests at 0.05 on all 8,256 run pairs; prints judgments per topic, accuracy (mean, min, max
over trials) against the frame truth (the half's depth-100 pool judged completely) and against
the complete qrels (paper 002's gold standard, which adds the half pool's bias), mean pair
classes, the Pearson correlation of R^ with the pool's R per topic, and the pool bias; writes
the tables and the R^ figure (paper 002 Fig. 1) under ``--out``.

Usage: NUMBA_NUM_THREADS=1 python benchmarks/voorhees14.py [--shared ../shared] [--trials 50]
       [--workers 2] [--out out/voorhees14]
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
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2014)
    parser.add_argument("--out", default="out/voorhees14")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import pandas as pd

    from irsample.experiments import CollectionFiles
    from irsample.experiments.voorhees14 import run_voorhees14

    d = Path(args.shared) / "data/trec8-adhoc"
    files = CollectionFiles.of(d / "runs", d / "qrels.trec8.adhoc",
                               pooled=d / "run-pooled-flag.txt", groups=d / "runs-pids")
    res = run_voorhees14(files, trials=args.trials, seed=args.seed, workers=args.workers,
                         out=args.out, progress=True)
    pd.set_option("display.width", 160)
    print(f"\nvoorhees14: {args.trials} halves x {len(res['judged'])} strategies x 3 measures, "
          f"all-pairs t-tests, {args.workers} processes: {res['seconds']:.1f} s wall")
    print("\njudgments per topic (mean over trials):")
    print(res["judged"].round(1).to_string())
    print("\naccuracy of the significant pairs vs the frame truth (mean, min, max over trials):")
    print(res["accuracy"].round(3).to_string())
    print("\naccuracy of the significant pairs vs the complete qrels (mean, min, max):")
    print(res["accuracy_qrels"].round(3).to_string())
    print("\nmean pair classes per trial:")
    print(res["classes"].round(1).to_string())
    print("\nPearson r of R^ with true R over topics (mean, min, max over trials):")
    print(res["r_correlation"].round(3).to_string())
    from irsample.experiments import pool_bias

    print("\npool bias, frame truth - qrels truth (means over halves):")
    print(pool_bias.summary(res["runs"]).round(4).to_string())
    print("\nwritten:", *res["figures"])


if __name__ == "__main__":
    main()
