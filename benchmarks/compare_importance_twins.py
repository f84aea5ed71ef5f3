"""Type-I error of ``compare``'s ht(M) test on tie-preserving twins under importance samples.

The ``simulate comparisons`` recipe's type-I part (``experiments.comparisons.type_one_error``:
twinned runs whose frame truths equal their runs', every pair of a run and its twin compared
by ``irsample compare``'s design-based test, rejections at 0.05 counted over trials) with
statAP's design, ``importance(f)`` (unequal probabilities within a topic's stratum), which the
recipe does not draw. On importance samples ht(AP)'s and ht(nDCG)'s differences take the
jackknife of the corrected ratios (``ht/jackknife.py``, ``ht/ndcg_replicates.py``).

Usage: python benchmarks/compare_importance_twins.py --collection covid|trec8|vaswani|cacm
       [--measures 'ht(nDCG),ht(AP)'] [--fractions 0.1,0.2] [--trials 100] [--twins 20]
       [--seed 2525] [--shared ../shared]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="covid")
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--measures", default="ht(nDCG),ht(AP)")
    parser.add_argument("--fractions", default="0.1,0.2")
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--twins", type=int, default=20, help="runs twinned, drawn with seed 7")
    parser.add_argument("--seed", type=int, default=2525)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from ht_coverage import paths

    from irsample.design.sampling.importance import importance
    from irsample.experiments.comparisons import ht_test, type_one_error
    from irsample.experiments.data import CollectionFiles

    qrels, runs = paths(args.collection, Path(args.shared))
    pooled = qrels.parent / "run-pooled-flag.txt"
    files = CollectionFiles.of(runs, qrels, pooled=pooled if pooled.exists() else None)
    chosen = sorted(np.random.default_rng(7).choice(len(runs), min(args.twins, len(runs)),
                                                    replace=False).tolist())
    designs = {f"importance {f}": importance(float(f)) for f in args.fractions.split(",")}
    tests = {f"{m} design": ht_test(m, "design") for m in args.measures.split(",")}
    out = type_one_error(files, designs, tests, trials=args.trials, seed=args.seed, runs=chosen)
    print(out["summary"].to_string())
    print(f"{out['seconds']:.0f} s")


if __name__ == "__main__":
    main()
