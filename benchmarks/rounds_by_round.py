"""Experiment (issue 25): how the intervals of judging in rounds fare round by round.

``irsample simulate rounds`` reports round 1 and the final round. This script follows the same
draws (the recipe's generator per trial and first design, ``experiments.rounds.trial_rng``)
through every round and prints, per round, the share of the pool judged and per estimator:
the share of run means flagged, the coverage of all 95% intervals and of the unflagged ones
against the frame truth (the measure with the whole pool judged), and the root mean squared
error over the root mean squared standard error (1: the intervals are as wide as the errors).
A round's rows pool the trials that reached it (the rounds stop when nothing is flagged).

A second line per round, for the ratio estimators: over all run means, the topics imputed
(no judged relevant document) though half or more of their pool is judged, per trial, and
their part of each mean's error against the bound rule 3 once gave them (the spread of the
run's estimates over its other topics), both in standard errors of the mean: such a topic may
have no relevant document, and then its truth is 0 and the imputed value all error
(``measures/reliability/bias.py``, ``imputation_bound``).

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
RATIOS = ESTIMATORS[:2]  # the estimators that impute a topic without judged relevant documents


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
    complete = evaluate_collection(collection, frame.judgments(),
                                   [parse(TARGETS[e])[0] for e in ESTIMATORS])
    truth = complete.summary
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
                (ev.summary - truth) ** 2, ev.summary_variance,
                *imputed_late(collection, frame, step, complete.values)))
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
        topics = sum(g[5] for g in got)
        if topics:
            err, spread = (np.concatenate([g[i] for g in got]) for i in (6, 7))
            print(f"    imputed, judged half or more: {topics / len(got):.1f} topics a trial; "
                  "their error / the spread's bound, in se of the mean: " + " | ".join(
                      f"{name} {err[:, j].mean():+.2f} / {spread[:, j].mean():.2f}"
                      for j, name in enumerate(RATIOS)))


def imputed_late(collection, frame, step, truth_values):
    """The round's topics imputed with half or more of their pool judged: their number, and per
    run mean x ratio estimator their summed error and the spread's bound on them, over the
    mean's standard error."""
    from irsample.measures import EvalContext
    from irsample.measures.reliability import (
        SETTLED,
        found_per_topic,
        imputation_bound,
        imputed_topics,
        judged_share,
    )

    ev, evaluated = step.evaluation, step.evaluation.evaluated
    ctx = EvalContext(collection, step.state.judgments(frame, source="rounds"))
    found, share = found_per_topic(ctx), judged_share(ctx)
    imputed = imputed_topics(found, share)
    late = imputed & (share >= SETTLED)
    cells = evaluated & late[None, :]
    q = np.maximum(evaluated.sum(axis=1), 1)
    err, spread = np.zeros((2, ctx.n_runs, len(RATIOS)))
    for j in range(len(RATIOS)):
        values = ev.values[:, :, j]
        se = np.sqrt(ev.summary_variance[:, j])
        se = np.where(se > 0, se, np.inf)
        bound = imputation_bound(values, evaluated, evaluated & imputed[None, :])
        err[:, j] = np.where(cells, values - truth_values[:, :, j], 0.0).sum(axis=1) / q / se
        spread[:, j] = np.where(cells, bound, 0.0).sum(axis=1) / q / se
    return int(late.sum()), err, spread


if __name__ == "__main__":
    main()
