"""Speed of simulation trials on TREC-8 (129 runs, 50 topics), and a paper-002-like grid.

0. The target trial (issue 11: <= 60 ms on one thread): draw a new 2strata sample of the
   depth-100 pool of the 71 pooled runs and evaluate the 129 runs with xinfAP, infNDCG, infAP
   and bpref (point estimates), data loaded; median CPU time of this thread over ``--repeat``
   (>= 20) seeded trials after a warm-up, with the time of each step (draw, evaluate); with
   ``--phases`` also by phase (draw: select, judgments; evaluate: context, pooled positions,
   each measure, the rest).
1. One trial, data loaded: draw a stratified sample of the depth-100 pool of the 71 pooled runs,
   estimate xinfAP, infNDCG and infAP (with their variances and 95% intervals) for all 129
   runs, compare with the truth (per run rows; Kendall tau, RMS, coverage; with ``--pairs`` also
   the paired t-tests of all 8,256 run pairs). Median over ``--repeat`` trials after a warm-up,
   with the time of each step.
2. ``voorhees14``-like (Voorhees, SIGIR 2014, paper 002): ``--trials`` (50) random halves of
   the pooled runs x 4 strategies x 3 measures (MAP, nDCG, P@10, estimated by xinfAP, infNDCG
   and iP@10) with all-pairs t-tests, on ``--workers`` local processes: wall time including the
   workers' start and their loading of the collection, then paper 002's Table 1 (judgments per
   topic) and Table 2 (accuracy of the significant pairs: mean, min, max over trials).
   Paper 002's exact strata rates are not in our copy of the paper; the rates below are ours:
   pool25 = depth-25 pool; 1stratum = 30% of ranks 1-100; 2strata = ranks 1-10 + 20% of
   11-100; 3strata = 1-10 + 30% of 11-30 + 5% of 31-100.

Usage: python benchmarks/trial_speed.py [--shared ../shared] [--repeat 20] [--trials 50]
       [--workers 2] [--skip-grid] [--target-only] [--phases] [--out prefix]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

STRATEGIES = {
    "pool25": "1-25:1",
    "1stratum": "1-100:0.3",
    "2strata": "1-10:1,11-100:0.2",
    "3strata": "1-10:1,11-30:0.3,31-100:0.05",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared = Path(__file__).resolve().parents[1].parent / "shared"
    parser.add_argument("--shared", default=str(shared))
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--skip-grid", action="store_true")
    parser.add_argument("--target-only", action="store_true", help="only step 0")
    parser.add_argument("--phases", action="store_true",
                        help="step 0's time by phase and measure too")
    parser.add_argument("--out", default=None, help="write the grid's tables to this prefix")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import numpy as np

    from irsample.design import stratified
    from irsample.experiments import CollectionFiles, Experiment, load, strategy
    from irsample.experiments.trial import Cell, Task, TrialConfig, run_task

    data_dir = Path(args.shared) / "data/trec8-adhoc"
    files = CollectionFiles.of(data_dir / "runs", data_dir / "qrels.trec8.adhoc",
                               pooled=data_dir / "run-pooled-flag.txt",
                               groups=data_dir / "runs-pids")
    start = time.perf_counter()
    data = load(files)
    print(f"TREC-8: {data.collection.n_runs} runs, {data.collection.n_topics} topics, "
          f"{len(data.qrels.rel)} qrels; loaded in {time.perf_counter() - start:.1f} s")

    from irsample.experiments.splits import PooledRuns

    split = PooledRuns().splits(data.info, trial=0, seed=0)[0]
    design = stratified(STRATEGIES["2strata"])
    _target_trial(data, split, design, max(args.repeat, 20))
    if args.phases:
        _phases(data, split, design, max(args.repeat, 20))
    if args.target_only:
        return

    # ---- 1. one trial --------------------------------------------------------------------
    for pairs in (None, 0.05):
        config = TrialConfig(
            files, ("xinfAP", "infNDCG", "infAP"), ("AP", "nDCG", "AP"), 0.95, pairs)
        times, cpu = [], []
        for k in range(args.repeat + 1):
            task = Task(k, k, split, (Cell("2strata", "-", design, 100.0, 1000 + k),))
            t0 = time.perf_counter()
            out = run_task(config, task)
            times.append(time.perf_counter() - t0)
            cpu.append(out["cpu_seconds"])
        what = "with all-pairs t-tests" if pairs else "without pair tests"
        print(f"one trial, 129 runs, xinfAP+infNDCG+infAP with intervals, {what}: wall median "
              f"{1e3 * np.median(times[1:]):.0f} ms (min {1e3 * min(times[1:]):.0f}), CPU median "
              f"{1e3 * np.median(cpu[1:]):.0f} ms (min {1e3 * min(cpu[1:]):.0f}); first trial "
              f"{1e3 * times[0]:.0f} ms (truth, frame)")
    _steps(data, split, design, args.repeat)
    rows = len(out["runs"]["run"])
    print(f"  ({rows} run rows per trial; machine shared with other jobs: times are noisy)")

    if args.skip_grid:
        return
    # ---- 2. voorhees14-like grid ------------------------------------------------------------
    exp = Experiment(
        collection=files,
        strategies=[strategy(name, stratified(spec)) for name, spec in STRATEGIES.items()],
        measures={"xinfAP": "AP", "infNDCG": "nDCG", "iP@10": "P@10"},
        splits=["halves"], trials=args.trials, seed=2014, ci=0.95, alpha=0.05,
    )
    result = exp.run(executor="processes", workers=args.workers, progress=True)
    seconds, cpu = result.execution["seconds"], result.execution["task_cpu_seconds"]
    per_cell = 1e3 * cpu / len(trials_of(result))
    print(f"\nvoorhees14-like: {args.trials} trials x {len(STRATEGIES)} strategies x 3 measures, "
          f"all-pairs t-tests, {args.workers} processes: {seconds:.1f} s wall (workers' start "
          f"and loading included); tasks' CPU {cpu:.1f} s ({per_cell:.0f} ms per "
          f"strategy-trial)")
    trials = result.trials
    judged = trials[trials.measure == "xinfAP"].groupby("strategy", sort=False).judged.mean() / 50
    print("judgments per topic (mean over trials): "
          + ", ".join(f"{k} {v:.0f}" for k, v in judged.items()))
    table = trials.groupby(["strategy", "target"], sort=False).accuracy.agg(["mean", "min", "max"])
    print(table.unstack("target").round(3).to_string())
    if args.out:
        print("written:", *result.write(args.out))


def trials_of(result):
    """The (trial, strategy) cells of a result."""
    return result.trials.drop_duplicates(["trial", "strategy", "setting", "split"])


def _target_trial(data, split, design, repeat: int) -> None:
    """Step 0 of the module docstring: draw (seed 1000 + k) + evaluate, CPU ms of this thread."""
    import numpy as np

    from irsample.evaluation import evaluate_collection
    from irsample.experiments.trial import single_threaded
    from irsample.measures import parse_all

    measures = parse_all(["xinfAP", "infNDCG", "infAP", "bpref"])
    frame = data.frame(split.pool, 100.0)
    clock = time.thread_time
    draw, estimate, total, means = [], [], [], []
    with single_threaded():
        for k in range(repeat + 1):
            t0 = clock()
            judgments = design.sample(frame, rng=np.random.default_rng(1000 + k))
            t1 = clock()
            ev = evaluate_collection(data.collection, judgments, measures)
            t2 = clock()
            means.append(ev.summary.mean(axis=0))
            if k:
                draw.append(t1 - t0)
                estimate.append(t2 - t1)
                total.append(t2 - t0)
    print(f"target trial (2strata draw + xinfAP, infNDCG, infAP, bpref of {ev.summary.shape[0]} "
          f"runs, one thread, {repeat} trials): median {1e3 * np.median(total):.1f} ms CPU (min "
          f"{1e3 * min(total):.1f}; draw {1e3 * np.median(draw):.1f}, evaluate "
          f"{1e3 * np.median(estimate):.1f}); mean over runs of trial 0: "
          + ", ".join(f"{m.name} {v:.6f}" for m, v in zip(measures, means[0], strict=True)))


def _phases(data, split, design, repeat: int) -> None:
    """Step 0 in phases, median CPU ms of this thread: the draw (which rows: ``select``; their
    judgments: ``frame.judgments``), then the context, the pooled positions (grades and strata
    looked up on the pool's kept layout), each measure's ``compute`` in the order given (the
    sample_eval walk runs in xinfAP's; infNDCG reads it), and evaluate_collection's own
    remainder (evaluated topics, summaries: the whole call minus the phases before)."""
    import numpy as np

    from irsample.evaluation import evaluate_collection
    from irsample.experiments.trial import single_threaded
    from irsample.measures import parse_all
    from irsample.measures.context import EvalContext
    from irsample.measures.incomplete.strata_walk import pooled_positions

    measures = parse_all(["xinfAP", "infNDCG", "infAP", "bpref"])
    frame = data.frame(split.pool, 100.0)
    clock = time.thread_time
    names = ["select", "judgments", "context", "pooled positions",
             *(m.name for m in measures), "evaluate_collection remainder"]
    times = {name: [] for name in names}
    with single_threaded():
        for k in range(repeat + 1):
            marks = [clock()]
            sample = design.select(frame, rng=np.random.default_rng(1000 + k))
            marks.append(clock())
            judgments = frame.judgments(sample, source=design.name)
            marks.append(clock())
            ctx = EvalContext(data.collection, judgments)
            ctx.requested = tuple(measures)
            marks.append(clock())
            pooled_positions(ctx)
            marks.append(clock())
            for m in measures:
                m.compute(ctx)
                marks.append(clock())
            parts = np.diff(marks)
            start = clock()
            evaluate_collection(data.collection, judgments, measures)
            whole = clock() - start
            if k:
                for name, dt in zip(names, [*parts, whole - parts[2:].sum()], strict=True):
                    times[name].append(dt)
    print("  phases (median CPU ms): " + ", ".join(
        f"{name} {1e3 * np.median(v):.1f}" for name, v in times.items()))


def _steps(data, split, design, repeat: int) -> None:
    """Median time of each step of a trial: draw, estimate, compare (t-tests of 8,256 pairs)."""
    import numpy as np

    from irsample.evaluation import evaluate_collection
    from irsample.experiments.trial import single_threaded
    from irsample.measures import parse_all
    from irsample.stats.pairs import decisions

    measures = parse_all(["xinfAP", "infNDCG", "infAP"])
    frame = data.frame(split.pool, 100.0)
    steps = {"draw": [], "estimate": [], "estimate (no variances)": [], "t-tests, 3 measures": []}
    clock = time.thread_time  # CPU time of this thread: less sensitive to other jobs
    with single_threaded():
        for k in range(repeat + 1):
            t0 = clock()
            judgments = design.sample(frame, rng=np.random.default_rng(k))
            t1 = clock()
            ev = evaluate_collection(data.collection, judgments, measures, ci=0.95)
            t2 = clock()
            evaluate_collection(data.collection, judgments, measures)
            t3 = clock()
            for j in range(3):
                decisions(ev.values[:, :, j], alpha=0.05)
            t4 = clock()
            if k:
                for key, dt in zip(steps, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
                    steps[key].append(dt)
    medians = ", ".join(f"{k} {1e3 * np.median(v):.1f}" for k, v in steps.items())
    print(f"  steps (median CPU ms): {medians}")


if __name__ == "__main__":
    main()
