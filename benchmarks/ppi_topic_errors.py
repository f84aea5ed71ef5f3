"""Experiment (a record for issue 25): which topics carry the error of ppi's and ht's run means,
and does their interval variance carry it too?

Draws ``--trials`` samples of one design of ``irsample simulate model-assisted`` (the same
seeds: trial t's draw is that of the recipe run on this one design and percentage; a stratified
simple random sample or any other), labels the frame with one of the recipe's label sources,
and computes ppi(M) and ht(M) (``--measure``, AP or nDCG) on every run and topic. Prints, for
each estimator: the coverage of the 95% intervals of the run means (normal, against the frame
truth), their mean variance over their mean squared error (median over runs), and the topics
with the largest squared error summed over runs and draws, each with its share of the total,
the interval variance it was given (summed alike) and, for ppi, the share of draws in which ppi
departs from ht on it (lambda > 0) and its mean error over runs on those draws and on the rest,
with ht's on the same draws.

Usage: python benchmarks/ppi_topic_errors.py [--collection covid] [--strategy uniform]
       [--percent 30] [--trials 100] [--labels kappa0.7] [--measure nDCG] [--seed 5]
       [--shared ../shared]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from ht_coverage import recipe_cell, recipe_cell_arguments  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    recipe_cell_arguments(parser, ROOT)
    parser.add_argument("--measure", default="nDCG", choices=("AP", "nDCG"))
    args = parser.parse_args()
    from irsample.evaluation import evaluate_collection
    from irsample.measures import parse
    from irsample.measures.ppi.estimate import ppi_estimate

    setup = recipe_cell(args.collection, Path(args.shared), args.seed, args.percent, args.strategy)
    (m,) = parse(args.measure)
    c = setup.collection
    shape = (c.n_runs, c.n_topics)
    evaluated = setup.evaluated
    truth = np.nan_to_num(evaluate_collection(c, setup.frame.judgments(), [m]).values[:, :, 0])
    q = np.maximum(setup.q, 1)
    draws = {k: [] for k in ("ppi", "ppi_var", "ht", "ht_var", "moved")}
    for trial in range(args.trials):
        for _, _, _, ctx, sources in setup.trial(trial):
            e = ppi_estimate(ctx, sources[args.labels], m)
            for key, x in (("ppi", np.nan_to_num(e.value)), ("ppi_var", e.variance),
                           ("ht", np.nan_to_num(e.ht)), ("ht_var", e.ht_variance)):
                draws[key].append(np.where(evaluated, x.reshape(shape), 0.0))
            draws["moved"].append((e.lam != 0).reshape(shape))
        print(f"{trial + 1} draws", file=sys.stderr, end="\r")
    moved = np.array(draws["moved"]).any(axis=1)  # (draws, topics)
    print(f"{args.collection} {args.strategy} {args.percent:g}% {args.labels}, {m.name}: "
          f"{args.trials} draws, seed {args.seed}")
    for name in ("ppi", "ht"):
        err = np.array(draws[name]) - np.where(evaluated, truth, 0.0)
        var = np.array(draws[name + "_var"])
        mean_err, mean_var = err.sum(axis=2) / q, var.sum(axis=2) / q**2
        covered = np.abs(mean_err) <= 1.96 * np.sqrt(mean_var)
        ratio = np.median(mean_var.mean(axis=0) / (mean_err**2).mean(axis=0))
        print(f"{name}({m.name}): run means covered {covered.mean():.3f}, variance / mean squared "
              f"error {ratio:.3f}")
        sq, given = (err**2).mean(axis=0).sum(axis=0), var.mean(axis=0).sum(axis=0)
        for t in np.argsort(-sq)[:4]:
            line = (f"  topic {c.topics[t]}: share of the squared error {sq[t] / sq.sum():.2f}; "
                    f"squared error {sq[t]:.2f}, interval variance {given[t]:.2f}")
            if name == "ppi" and moved[:, t].any():
                ht_err = np.array(draws["ht"])[:, :, t] - truth[:, t]
                on = moved[:, t]
                line += (f"; departs from ht on {on.mean():.2f} of the draws, mean error there "
                         f"{err[on, :, t].mean():+.3f} (ht {ht_err[on].mean():+.3f})")
                if (~on).any():
                    line += f", elsewhere {err[~on, :, t].mean():+.3f}"
            print(line)


if __name__ == "__main__":
    main()
