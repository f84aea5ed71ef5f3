"""Coverage of the demo's intervals over seeds: the evidence for irsample/commands/calibration.py.

``irsample demo`` judges ``--fraction`` of the bundled collection's depth-100 pool with its
two-strata design (top k exhaustive, the rest at a uniform rate, to a budget) and prints 95%
intervals only for the estimator of each measure whose intervals are calibrated. This script
redraws the demo's design with ``--seeds`` seeds (2008, 2009, ...) and reports, per estimator,
the number of the 11 runs whose interval covers the frame truth (the pool judged completely)
per seed, its mean share, and the share of seeds with at least 10 of 11 covered (the demo's
promise). Same code path as the demo (:func:`irsample.commands.demo.top_depth`, the same design
string), so the numbers are the demo's.

Usage: python benchmarks/demo_coverage.py [--collection vaswani|cacm] [--fraction 0.1]
       [--seeds 20] [--estimators xinfAP,ht(AP),infNDCG,ht(nDCG),ht(P@10)]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

TARGETS = {"xinfAP": "AP", "infAP": "AP", "ht(AP)": "AP", "infNDCG": "nDCG", "ht(nDCG)": "nDCG",
           "ht(P@10)": "P@10", "iP@10": "P@10"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", choices=("vaswani", "cacm"), default="vaswani")
    parser.add_argument("--fraction", type=float, default=0.1)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--estimators", default="xinfAP,ht(AP),infNDCG,ht(nDCG),ht(P@10)")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import numpy as np

    from irsample.api import load
    from irsample.commands.demo import bundled, top_depth
    from irsample.design import Pool, SamplingFrame, parse_design
    from irsample.evaluation import evaluate_collection
    from irsample.experiments.data import parse_one

    names = [e.strip() for e in args.estimators.split(",") if e.strip()]
    qrels, runs = bundled(args.collection)
    collection, complete = load(qrels, runs)
    pool = Pool.from_runs(collection, depth=100)
    rel = np.maximum(complete.grade[pool.tdi], 0).astype(np.int64)
    frame = SamplingFrame.from_arrays(collection, pool.topic, pool.tdi, rel, source="pool")
    targets = sorted({TARGETS[e] for e in names})
    truth = evaluate_collection(collection, frame.judgments(),
                                [parse_one(t) for t in targets]).summary
    budget = max(1, round(args.fraction * len(frame)))
    top = top_depth(pool.best_rank, budget / 2, 100)
    design = parse_design(f"1-{top}:1,{top + 1}-100:0.5@{budget}")
    covered = {e: [] for e in names}
    for seed in range(2008, 2008 + args.seeds):
        judged = design.sample(frame, rng=seed)
        ev = evaluate_collection(collection, judged, [parse_one(e) for e in names], ci=0.95)
        low, high = ev.interval()
        for k, e in enumerate(names):
            t = truth[:, targets.index(TARGETS[e])]
            covered[e].append(int(((low[:, k] <= t) & (t <= high[:, k])).sum()))
    n = collection.n_runs
    print(f"{args.collection}, {design.name}, seeds 2008-{2007 + args.seeds}: runs (of {n}) "
          "whose 95% interval covers the frame truth")
    for e in names:
        c = np.array(covered[e])
        print(f"{e:9s} per seed {' '.join(map(str, c))}; mean share {c.mean() / n:.3f}; "
              f"seeds with >= {n - 1}/{n}: {np.mean(c >= n - 1):.2f}")


if __name__ == "__main__":
    main()
