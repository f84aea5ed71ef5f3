"""Power of ``compare`` against the complete judgments, on any design cell (issue 25).

``irsample simulate comparisons`` measures type-I error on twins for every design cell, and
accuracy (paper 002's protocol) only on the voorhees14 strategies, against the t-test over
topics. This asks the design comparison's own question on the real runs, all pairs of them: the
frame is the depth-``depth`` pool of the pooled runs (on TREC-8 at depth 100, the complete
qrels; ``--collection`` as ``ht_coverage.py`` names them), its truth each run's mean of
``measure``'s inner measure over the topics, and per trial the cell draws one sample and
``compare`` decides every pair at 0.05 (``experiments/comparisons.ht_test``: the topics fixed,
``design``, or as a sample of topics, ``topics``). Against the truth's sign of each difference,
over the pairs whose true means differ by at least ``--min-diff`` (any difference by default):
``power``, the share declared different with the truth's sign, and ``inverted``, with the
wrong sign; over all of them, over those the rule leaves unflagged (``unflagged real``, with
the share flagged printed first), and by size of the true difference (:data:`BINS`).

Usage: python benchmarks/compare_power.py [--collection trec8] [--shared ../shared]
       [--cell 'planned 20%'] [--trials 30] [--seed 2525] [--measure 'ht(AP)']
       [--variance design] [--depth 100] [--min-diff 0]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
#: edges of the bins of the true difference's size
BINS = (0.0, 0.01, 0.02, 0.05, 1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="trec8",
                        help="vaswani, cacm, trec8, covid, or QRELS:RUNS")
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--cell", default="planned 20%")
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--seed", type=int, default=2525)
    parser.add_argument("--measure", default="ht(AP)")
    parser.add_argument("--variance", default="design", choices=("design", "topics"))
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--min-diff", type=float, default=0.0)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "benchmarks"))

    from ht_coverage import paths

    from irsample.evaluation import evaluate_collection
    from irsample.experiments import CollectionFiles
    from irsample.experiments.comparisons import ht_test
    from irsample.experiments.coverage import design_cells
    from irsample.experiments.data import load
    from irsample.measures import parse
    from irsample.stats.random import derived_seed

    qrels, runs = paths(args.collection, Path(args.shared))
    pooled = qrels.parent / "run-pooled-flag.txt"
    files = CollectionFiles.of(runs, qrels, pooled=pooled if pooled.exists() else None)
    data = load(files)
    frame = data.frame(data.info.pooled_runs, args.depth)
    name, percent = args.cell.split()[0], float(args.cell.split()[1].rstrip("%"))
    cells = design_cells(len(frame), [percent], which=[name], recipe_name="compare_power",
                         depth=args.depth)
    design = cells[args.cell]
    collection = data.collection
    (measure,) = parse(args.measure)
    truth = evaluate_collection(collection, frame.judgments(), [measure.inner]).values[:, :, 0]
    first, second = np.triu_indices(collection.n_runs, k=1)
    true_diff = np.nanmean(truth[first], axis=1) - np.nanmean(truth[second], axis=1)
    real = np.abs(true_diff) >= max(args.min_diff, 1e-12)
    test = ht_test(args.measure, args.variance)
    rows = []
    start = time.time()
    for trial in range(args.trials):
        rng = np.random.default_rng(derived_seed(args.seed, "compare_power", args.cell, trial))
        p, diff, flag = test(collection, design.sample(frame, rng=rng), first, second)
        significant = p < 0.05
        right = significant & (np.sign(diff) == np.sign(true_diff))
        wrong = significant & (np.sign(diff) == -np.sign(true_diff)) & real
        rows.append((right, wrong, flag))
    right, wrong, flag = (np.array([r[k] for r in rows]) for k in range(3))
    size = np.abs(true_diff)

    def line(label, where):
        w = np.broadcast_to(where, right.shape)
        n = max(1, int(w.sum()))
        return (f"{label:<22} pairs {where.sum():>5}  power {right[w].sum() / n:.3f}  "
                f"inverted {wrong[w].sum() / n:.4f}")

    print(f"{args.collection} {args.cell}, {args.measure} {args.variance}, {args.trials} "
          f"trials, seed {args.seed}, "
          f"{collection.n_runs} runs ({len(first)} pairs), {time.time() - start:.0f} s")
    print(f"flagged {flag.mean():.3f}")
    print(line("all real", real))
    ok = ~flag
    n_ok = max(1, int((ok & real).sum()))
    print(f"{'unflagged real':<22} power {(right & ok & real).sum() / n_ok:.3f}  inverted "
          f"{(wrong & ok).sum() / n_ok:.4f}")
    for lo, hi in zip(BINS[:-1], BINS[1:]):
        print(line(f"|diff| in [{lo}, {hi})", real & (size >= lo) & (size < hi)))


if __name__ == "__main__":
    main()
