"""Paper 004 (Ravana & Moffat, AIRS 2010) on TREC-8: separability against judgments.

Runs :func:`irsample.experiments.residuals.run_residuals` (protocol in its docstring): nested
subsets of the TREC-8 qrels (1k, 2k, 5k, 10k, 20k, 50k, all 86,830; ``--order depth``:
incremental depth pooling, or ``uniform``), the 58 runs that did not contribute to the pool
(``--runs``), P@10, SDCG@100 and RBP(0.95) as [B, T] intervals and their point estimates XS,
XB, XI, XM; prints the fraction of run pairs separated by a paired t-test at p < 0.01 (and by
the pessimistic interval comparison) and writes the figure (paper 004 Fig. 2) under ``--out``.

Usage: NUMBA_NUM_THREADS=1 python benchmarks/residuals.py [--shared ../shared] [--trials 5]
       [--order depth] [--runs unpooled] [--workers 2] [--out out/residuals]
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
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2010)
    parser.add_argument("--order", default="depth", choices=("depth", "uniform"))
    parser.add_argument("--runs", default="unpooled", choices=("unpooled", "pooled", "all"))
    parser.add_argument("--out", default="out/residuals")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import pandas as pd

    from irsample.experiments import CollectionFiles
    from irsample.experiments.residuals import run_residuals

    d = Path(args.shared) / "data/trec8-adhoc"
    files = CollectionFiles.of(d / "runs", d / "qrels.trec8.adhoc",
                               pooled=d / "run-pooled-flag.txt", groups=d / "runs-pids")
    res = run_residuals(files, trials=args.trials, seed=args.seed, workers=args.workers,
                        order=args.order, runs=args.runs, out=args.out)
    pd.set_option("display.width", 200)
    print(f"residuals: {args.trials} trials, order {args.order}, {res['runs']} {args.runs} runs, "
          f"{res['seconds']:.1f} s")
    sep = res["separability"]
    for family in dict.fromkeys(sep.columns.get_level_values(0)):
        print(f"\n{family}: fraction of run pairs separated (t-test p < 0.01; interval: "
              "pairs x topics decided; interval_mean: mean intervals disjoint)")
        print(sep[family].round(3).to_string())
    t = res["trials"]
    wrong = t.groupby(["judgments", "measure", "point"]).discordant.mean().unstack(
        ["measure", "point"])
    print("\nmean discordant pairs (significant, opposite direction to XS on all judgments):")
    print(wrong.loc[:, ~wrong.columns.get_level_values(1).str.startswith("interval")]
          .round(1).to_string())
    rec = res["recant"].reset_index()
    keep = (rec.judgments.isin([1000, 10000]) & rec.later.isin([10000, rec.later.max()])
            & (rec.later > rec.judgments))
    print("\nrecanting (paper 004 Table 3): pairs significant at `judgments` no longer so at "
          "`later` (mean over trials):")
    print(rec[keep].round(3).to_string(index=False))
    print("\nwritten:", *res["figures"])


if __name__ == "__main__":
    main()
