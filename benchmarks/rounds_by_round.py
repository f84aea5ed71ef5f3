"""Experiment (issue 25): how the intervals of judging in rounds fare round by round.

``irsample simulate rounds`` reports round 1 and the final round. This script follows the same
draws (the recipe's generator per trial and first design, ``experiments.rounds.trial_rng``)
through every round and prints, per round, the share of the pool judged and per estimator:
the share of run means flagged, the coverage of all 95% intervals and of the unflagged ones
against the frame truth (the measure with the whole pool judged), and the root mean squared
error over the root mean squared standard error (1: the intervals are as wide as the errors).
A round's rows pool the trials that reached it (the rounds stop when nothing is flagged).

Usage: python benchmarks/rounds_by_round.py [--collection vaswani|cacm|covid] [--trials 20]
       [--seed 2525] [--design uniform|2strata] [--percent 10] [--shared ../shared]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ht_coverage import paths  # noqa: E402

ESTIMATORS = ("ht(AP)", "ht(nDCG)", "ht(P@10)")


def main() -> None:
    from irsample.design.rounds import judge_in_rounds
    from irsample.evaluation import evaluate_collection
    from irsample.experiments.data import CollectionFiles, load
    from irsample.experiments.model_assisted import build_frame
    from irsample.experiments.rounds import DESIGNS, TARGETS, first_design, trial_rng
    from irsample.measures import parse
    from irsample.stats.intervals import covers

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="vaswani")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seed", type=int, default=2525)
    parser.add_argument("--design", default="uniform", choices=DESIGNS)
    parser.add_argument("--percent", type=float, default=10.0)
    parser.add_argument("--max-rounds", type=int, default=10)
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared"))
    args = parser.parse_args()

    qrels, runs = paths(args.collection, Path(args.shared))
    data = load(CollectionFiles(runs=tuple(runs), qrels=str(qrels)))
    collection, frame = data.collection, build_frame(data, 100.0)
    measures = [parse(e)[0] for e in ESTIMATORS]
    truth = evaluate_collection(collection, frame.judgments(),
                                [parse(TARGETS[e])[0] for e in ESTIMATORS]).summary
    budget = max(1, int(round(args.percent / 100.0 * len(frame))))
    d = DESIGNS.index(args.design)
    rows: dict[int, list] = {}
    for trial in range(args.trials):
        rng = trial_rng(args.seed, trial, d)
        steps = judge_in_rounds(collection, frame,
                                first_design(args.design, budget, args.percent / 100.0),
                                budget, args.max_rounds, rng, measures)
        for k, step in enumerate(steps, start=1):
            ev = step.evaluation
            rows.setdefault(k, []).append((
                step.state.judged / len(frame), step.flagged,
                covers(ev.summary, step.low, step.high, truth),
                (ev.summary - truth) ** 2, ev.summary_variance))
    print(f"{args.collection}, rounds of {args.percent:g}% from {args.design}, "
          f"{args.trials} trials, seed {args.seed}: per estimator flagged / coverage of all "
          "(of the unflagged) / rms error over rms se")
    for k, got in sorted(rows.items()):
        judged = np.mean([g[0] for g in got])
        flagged, covered, err2, var = (np.concatenate([g[i] for g in got]) for i in range(1, 5))
        parts = []
        for j, name in enumerate(ESTIMATORS):
            fl, cov = flagged[:, j], covered[:, j]
            unfl = f"{cov[~fl].mean():.3f}" if (~fl).any() else "-"
            ratio = (np.sqrt(err2[:, j].mean() / var[:, j].mean()) if var[:, j].mean() > 0
                     else float("nan"))
            parts.append(f"{name} {fl.mean():.2f} / {cov.mean():.3f} ({unfl}) / {ratio:.2f}")
        print(f"round {k:2d} ({len(got):3d} trials, {judged:.0%} judged): " + " | ".join(parts))


if __name__ == "__main__":
    main()
