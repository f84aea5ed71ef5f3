"""Paper 000 §6 (Yilmaz, Kanoulas & Aslam, SIGIR 2008) on TREC-8: four strata.

Runs :func:`irsample.experiments.four_strata.run_four_strata` (protocol and our choices of
depths, strata boundaries and rates in its docstring): per depth k a depth-k pool judged
completely plus three lower strata sharing as many judgments 3 : 1.5 : 1, against uniform
samples of the same size; prints per k the judged fraction and Kendall tau, RMS error and
Pearson rho of xinfAP / infNDCG (four strata) and infAP / nDCG (uniform) against the truth.

Usage: NUMBA_NUM_THREADS=1 python benchmarks/four_strata.py [--shared ../shared] [--trials 10]
       [--workers 2] [--depths 1,2,3,5,10] [--out out/four-strata]
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
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2008)
    parser.add_argument("--depths", default="1,2,3,5,10")
    parser.add_argument("--out", default="out/four-strata")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import pandas as pd

    from irsample.experiments import CollectionFiles
    from irsample.experiments.four_strata import run_four_strata

    d = Path(args.shared) / "data/trec8-adhoc"
    files = CollectionFiles.of(d / "runs", d / "qrels.trec8.adhoc",
                               pooled=d / "run-pooled-flag.txt", groups=d / "runs-pids")
    depths = tuple(int(x) for x in args.depths.split(","))
    res = run_four_strata(files, trials=args.trials, seed=args.seed, workers=args.workers,
                          depths=depths, progress=True)
    pd.set_option("display.width", 200)
    print(f"\nfour strata: {args.trials} trials, depths {depths}: {res['seconds']:.1f} s")
    print("\ndesigns:")
    print(res["designs"].to_string())
    print("\nagainst the truth (mean over trials):")
    print(res["summary"].round(4).to_string())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    res["summary"].to_csv(out / "summary.csv")
    res["designs"].to_csv(out / "designs.csv")
    print("written:", out / "summary.csv", out / "designs.csv")


if __name__ == "__main__":
    main()
