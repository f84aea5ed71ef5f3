"""Coverage of the demo's final intervals over seeds: how often what ``irsample demo`` prints holds.

``irsample demo`` judges ``--fraction`` of the bundled collection's depth-100 pool with its
two-strata design (top k exhaustive, the rest at a uniform rate, to a budget), then judges more
in rounds of the same size while some interval is flagged (up to ``--rounds``), and prints
ht(AP), ht(nDCG) and ht(P@10) with their 95% intervals and statuses. This script runs the demo's
own loop (:func:`irsample.commands.demo.setup` and :func:`~irsample.design.rounds.judge_in_rounds`,
the same seeds: seed s here is ``irsample demo --seed s``) with ``--seeds`` seeds (2008, 2009,
...) and reports per estimator: the runs (of 11) whose final interval covers the frame truth per
seed, the mean share, the share of seeds with at least 10 of 11 covered; the share of final
intervals flagged and the coverage of the unflagged and of the flagged ones; the width ratio
(:func:`width_ratio`: the intervals' mean half-width over 1.96 times the errors' root mean
square) and the variance ratio (:func:`variance_ratio`: the estimated variances over the mean
squared error, the width's part that is not the t quantile's); the same for round 1 alone; and
the rounds and share of the pool judged.

``--once ESTIMATORS`` instead draws the round-1 design once per seed (as the demo did before it
judged in rounds) and reports the coverage of those estimators' intervals: the evidence cited by
``irsample/commands/calibration.py`` (which ``irsample plan`` follows).

Usage: python benchmarks/demo_coverage.py [--collection cacm|vaswani] [--fraction 0.1]
       [--rounds 10] [--seeds 20] [--once xinfAP,ht(AP),infNDCG,ht(nDCG)]
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
    parser.add_argument("--collection", choices=("cacm", "vaswani"), default="cacm")
    parser.add_argument("--fraction", type=float, default=0.1)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--once", default="",
                        help="estimators to evaluate on one draw of round 1 (the old demo)")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from irsample.api import load
    from irsample.commands.demo import bundled, setup

    qrels, runs = bundled(args.collection)
    collection, complete = load(qrels, runs)
    frame, design, budget, _ = setup(collection, complete, 100, args.fraction)
    seeds = range(2008, 2008 + args.seeds)
    if args.once:
        once(collection, frame, design, [e.strip() for e in args.once.split(",") if e.strip()],
             seeds, args.collection)
    else:
        rounds(collection, frame, design, budget, args, seeds)


def truth_of(collection, frame, names):
    from irsample.evaluation import evaluate_collection
    from irsample.experiments.data import parse_one

    return evaluate_collection(collection, frame.judgments(),
                               [parse_one(TARGETS[e]) for e in names]).summary


def rounds(collection, frame, design, budget, args, seeds) -> None:
    """The round-based demo's coverage (module docstring)."""
    import numpy as np

    from irsample.commands.demo_text import ESTIMATORS
    from irsample.design.rounds import judge_in_rounds
    from irsample.experiments.data import parse_one
    from irsample.stats.intervals import covers

    names = list(ESTIMATORS.values())
    truth = truth_of(collection, frame, names)
    measures = [parse_one(e) for e in names]
    n = collection.n_runs
    stats = {when: {"covered": [], "flagged": [], "hit_ok": [], "hit_flagged": [],
                    "half": [], "error": [], "variance": []} for when in ("round 1", "final")}
    spent, judged = [], []
    for seed in seeds:
        history = judge_in_rounds(collection, frame, design, budget, args.rounds, seed, measures)
        for when, step in (("round 1", history[0]), ("final", history[-1])):
            hit = covers(step.evaluation.summary, step.low, step.high, truth)
            s = stats[when]
            s["covered"].append(hit.sum(axis=0))
            s["flagged"].append(step.flagged.sum(axis=0))
            s["hit_ok"].append((hit & ~step.flagged).sum(axis=0))
            s["hit_flagged"].append((hit & step.flagged).sum(axis=0))
            s["half"].append((np.asarray(step.high) - np.asarray(step.low)) / 2.0)
            s["error"].append(np.asarray(step.evaluation.summary) - truth)
            s["variance"].append(np.asarray(step.evaluation.summary_variance))
        spent.append(history[-1].state.rounds)
        judged.append(history[-1].state.judged / len(frame))
    print(f"{args.collection}, {design.name} then rounds of {budget:,} (at most {args.rounds}), "
          f"seeds {seeds[0]}-{seeds[-1]}: rounds {np.mean(spent):.2f} on average "
          f"(min {min(spent)}, max {max(spent)}), {np.mean(judged):.1%} of the pool judged")
    for when, s in stats.items():
        c, f = np.array(s["covered"]), np.array(s["flagged"])
        ok, bad = np.array(s["hit_ok"]), np.array(s["hit_flagged"])
        print(f"{when}: runs (of {n}) whose 95% interval covers the frame truth")
        for k, e in enumerate(names):
            unflagged = len(seeds) * n - f[:, k].sum()
            print(f"  {e:9s} per seed {' '.join(map(str, c[:, k]))}; mean share "
                  f"{c[:, k].mean() / n:.3f}; seeds with >= {n - 1}/{n}: "
                  f"{np.mean(c[:, k] >= n - 1):.2f}; flagged "
                  f"{f[:, k].sum() / (len(seeds) * n):.2f}; coverage unflagged "
                  f"{(ok[:, k].sum() / unflagged) if unflagged else float('nan'):.3f}, flagged "
                  f"{(bad[:, k].sum() / f[:, k].sum()) if f[:, k].sum() else float('nan'):.3f}"
                  f"; width ratio {width_ratio(s, k):.2f}; variance ratio "
                  f"{variance_ratio(s, k):.2f}")


def width_ratio(s: dict, k: int) -> float:
    """Mean half-width of the intervals of estimator ``k`` over 1.96 times the root mean
    square of their errors (estimate - truth) over runs and seeds: about 1 where the intervals
    are as wide as the errors ask, above 1 where they are wider."""
    import numpy as np

    half = np.array(s["half"])[:, :, k]
    error = np.array(s["error"])[:, :, k]
    return float(np.nanmean(half) / (1.96 * np.sqrt(np.nanmean(error ** 2))))


def variance_ratio(s: dict, k: int) -> float:
    """The estimated variances of estimator ``k``'s means (averaged over runs and seeds) over
    the mean square of their errors: the width ratio's part that is the variance's, squared
    (the rest is the t quantile's, where the interval takes one)."""
    import numpy as np

    variance = np.array(s["variance"])[:, :, k]
    error = np.array(s["error"])[:, :, k]
    return float(np.nanmean(variance) / np.nanmean(error ** 2))


def once(collection, frame, design, names, seeds, name) -> None:
    """The round-1 design drawn once per seed (``design.sample(frame, rng=seed)``), the coverage
    of ``names``' intervals."""
    import numpy as np

    from irsample.evaluation import evaluate_collection
    from irsample.experiments.data import parse_one

    truth = truth_of(collection, frame, names)
    covered = {e: [] for e in names}
    for seed in seeds:
        judged = design.sample(frame, rng=seed)
        ev = evaluate_collection(collection, judged, [parse_one(e) for e in names], ci=0.95)
        low, high = ev.interval()
        for k, e in enumerate(names):
            t = truth[:, k]
            covered[e].append(int(((low[:, k] <= t) & (t <= high[:, k])).sum()))
    n = collection.n_runs
    print(f"{name}, {design.name} drawn once, seeds {seeds[0]}-{seeds[-1]}: runs (of {n}) "
          "whose 95% interval covers the frame truth")
    for e in names:
        c = np.array(covered[e])
        print(f"{e:9s} per seed {' '.join(map(str, c))}; mean share {c.mean() / n:.3f}; "
              f"seeds with >= {n - 1}/{n}: {np.mean(c >= n - 1):.2f}")


if __name__ == "__main__":
    main()
