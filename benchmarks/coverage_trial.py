"""CPU time of one ``ci-coverage`` trial (issue 25, item 6): is validation fast enough to run
100 trials on TREC-8?

One trial of ``irsample simulate ci-coverage`` is one task of its experiment: the default grid
of 12 cells (uniform, 2strata and planned designs at 5, 10, 20 and 30% of the depth-100 pool of
the pooled runs), each a draw and six estimators with 95% intervals (infAP, xinfAP, infNDCG,
ht(AP), ht(nDCG), ht(P@10)) for every run, compared with the frame truth. This runs the tasks
of ``--trials`` trials (seed ``--seed``) one after the other in this process, as the recipe's
workers do, and prints each task's process CPU time (user + sys, all threads: BLAS threads
count too): the first task also computes the truths, which every later task of the process
reads from its cache, so the per-trial figure is the median of the later ones. With
``--steps``: the median CPU of each step of a trial (draw per design, each estimator's estimate
and variance), measured by calling the steps one by one on the same draws.

100 trials on ``--workers 2`` take about 100 x (per-trial CPU) / 2 of wall time on two free
cores, plus each worker's loading of the collection.

Usage: python benchmarks/coverage_trial.py [--shared ../shared] [--collection trec8]
       [--trials 4] [--seed 12] [--steps]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--shared", default=str(Path(__file__).resolve().parents[1].parent / "shared"))
    parser.add_argument("--collection", choices=("trec8", "vaswani", "cacm"), default="trec8")
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--steps", action="store_true", help="CPU per step of a trial too")
    args = parser.parse_args()
    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root))
    import numpy as np

    from irsample.experiments.coverage import ESTIMATORS, designs
    from irsample.experiments.data import CollectionFiles, load
    from irsample.experiments.registry import Context, pool_size
    from irsample.experiments.runner import Experiment
    from irsample.experiments.trial import run_task

    if args.collection == "trec8":
        d = Path(args.shared) / "data" / "trec8-adhoc"
        files = CollectionFiles.of(d / "runs", d / "qrels.trec8.adhoc",
                                   pooled=d / "run-pooled-flag.txt", groups=d / "runs-pids")
    else:
        d = root / "irsample" / "data" / args.collection
        files = CollectionFiles.of(d / "runs", d / "qrels.gz")
    start = time.process_time()
    data = load(files)
    pool = pool_size(Context(files, seed=args.seed))
    print(f"{args.collection}: {data.collection.n_runs} runs, depth-100 pool {pool:,} "
          f"documents; loaded in {time.process_time() - start:.1f} s CPU")
    exp = Experiment(collection=files, strategies=designs(pool, (5.0, 10.0, 20.0, 30.0)),
                     measures=ESTIMATORS, seed=args.seed, trials=args.trials, ci=0.95,
                     alpha=None)
    tasks = exp.tasks(data.info)
    cpu = []
    for task in tasks:
        t0 = time.process_time()
        run_task(exp.config, task)
        cpu.append(time.process_time() - t0)
        print(f"  trial {task.trial}: {cpu[-1]:.2f} s CPU", flush=True)
    later = cpu[1:] or cpu
    print(f"per trial: median {np.median(later):.2f} s CPU (min {min(later):.2f}, max "
          f"{max(later):.2f}) over trials 1-{len(cpu) - 1}; trial 0 with the truths "
          f"{cpu[0]:.2f} s; 100 trials on 2 workers ~ {100 * np.median(later) / 2 / 60:.1f} "
          "min of wall time on two free cores")
    if args.steps:
        _steps(exp, data, tasks)


def _steps(exp, data, tasks) -> None:
    """Median CPU per trial of each step (module docstring), trials after the first."""
    import numpy as np

    from irsample.experiments.data import parse_one
    from irsample.experiments.trial import single_threaded
    from irsample.measures.context import EvalContext

    measures = [parse_one(m) for m in exp.config.estimators]
    per_trial = defaultdict(list)
    clock = time.process_time
    with single_threaded():
        for task in tasks:
            sub = data.subcollection(task.split.evaluate)
            step = defaultdict(float)
            for cell in task.cells:
                frame = data.frame(task.split.pool, cell.depth)
                t0 = clock()
                judgments = cell.design.sample(frame, rng=np.random.default_rng(cell.seed))
                step[f"draw {cell.strategy}"] += clock() - t0
                ctx = EvalContext(sub, judgments)
                ctx.requested = tuple(measures)
                for m in measures:
                    t0 = clock()
                    m.compute(ctx)
                    t1 = clock()
                    m.variance(ctx, "jackknife")
                    step[f"{m.name} estimate"] += t1 - t0
                    step[f"{m.name} variance"] += clock() - t1
            for name, seconds in step.items():
                per_trial[name].append(seconds)
    rows = sorted(((float(np.median(v[1:] or v)), k) for k, v in per_trial.items()),
                  reverse=True)
    total = sum(s for s, _ in rows)
    print("steps (median CPU s per trial): " + ", ".join(
        f"{name} {s:.3f}" for s, name in rows if s >= 0.005) + f"; sum {total:.2f}")


if __name__ == "__main__":
    main()
