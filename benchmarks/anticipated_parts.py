"""Experiment (a record for issue 25): where the anticipated variance of ht(M) is off, the
relevance model or the linearisation?

For one collection, design and measure this draws ``--trials`` seeded samples and, on each,
computes ht(M) three times over: with its anticipated variance (``irsample/measures/ht/
anticipated.py``: unjudged documents filled in by the fitted relevance model), with the same
variance but the truth in place of the model (every frame document's grade known: the
linearised design variance itself, with the sample's denominator Y^), and with the variance
from the sample alone. Per (run, topic) it compares the mean of each variance over the draws
with the Monte Carlo variance of the estimate (and its mean squared error against the frame
truth), summed over the (run, topic) cells identified in every draw (Y^ > 0: no imputation)
and over all cells; 1 is right on average. Last, the five topics where the model's variance
exceeds the truth's most, summed over runs, with their relevant documents in the frame.

If the truth's column is far from 1 the linearisation (or the estimated denominator it divides
by) is off, whatever the model; if the model's column differs from the truth's, the model is.
The numbers are in REPRODUCTION.md, "Anticipated variance".

Usage: python benchmarks/anticipated_parts.py --collection vaswani|cacm|covid|trec8
       [--design uniform|2strata] [--percent 10] [--measure AP|nDCG|P@10] [--trials 30]
       [--seed 2525] [--shared ../shared]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from ht_coverage import design_for, load  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="cacm")
    parser.add_argument("--design", default="2strata")
    parser.add_argument("--percent", type=float, default=10.0)
    parser.add_argument("--measure", default="AP")
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--seed", type=int, default=2525)
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared"))
    args = parser.parse_args()
    from irsample.measures import parse
    from irsample.measures.context import EvalContext
    from irsample.measures.ht import anticipated, anticipated_terms
    from irsample.measures.ht import estimator as ht
    from irsample.model import UNPOOLED

    collection, frame = load(args.collection, Path(args.shared))
    complete = frame.judgments()
    n_grades = complete.stratum_grades.shape[2]
    truth_grades = np.zeros((collection.n_tdi, n_grades))
    inside = np.flatnonzero(complete.state != UNPOOLED)
    truth_grades[inside, np.clip(complete.grade[inside], 0, n_grades - 1)] = 1.0
    (measure,) = parse(args.measure)
    shape = (collection.n_runs, collection.n_topics)
    truth = ht.estimate(EvalContext(collection, complete), measure).value.reshape(shape)
    fitted, fitted_ratio = ht.grade_probabilities, anticipated_terms.ratio_probabilities

    def oracle(ctx, d):  # P@k reads grade_probabilities, the ratios ratio_probabilities
        if fitted(ctx, d) is None:
            return None
        return truth_grades[anticipated.frame_positions(ctx).docs]

    def oracle_ratio(ctx, d):
        return None if fitted_ratio(ctx, d) is None else oracle(ctx, d)

    design = design_for(args.design, args.percent / 100.0, frame)
    variances = {"model": [], "truth as model": [], "sample": []}
    values, known = [], []
    try:
        for child in np.random.SeedSequence(args.seed).spawn(args.trials):
            sample = design.sample(frame, rng=np.random.default_rng(child))
            for name, probabilities, ratio in (("model", fitted, fitted_ratio),
                                               ("truth as model", oracle, oracle_ratio)):
                ht.grade_probabilities = probabilities
                anticipated_terms.ratio_probabilities = ratio
                e = ht.estimate(EvalContext(collection, sample), measure)
                variances[name].append(e.variance.reshape(shape))
            variances["sample"].append(e.variance_from_sample.reshape(shape))
            values.append(e.value.reshape(shape))
            known.append(e.den.reshape(shape) > 0)
    finally:
        ht.grade_probabilities = fitted
        anticipated_terms.ratio_probabilities = fitted_ratio
    values = np.array(values)
    always = np.array(known).all(axis=0)
    observed = values.var(axis=0)
    mse = ((values - truth) ** 2).mean(axis=0)
    print(f"{args.collection} {args.design} {args.percent:g}% {args.measure}: {args.trials} "
          f"draws, seed {args.seed}; cells identified in every draw: {always.mean():.2f}")
    for name, v in variances.items():
        mean = np.mean(v, axis=0)
        print(f"{name:15s} identified cells: mean variance / Monte Carlo variance "
              f"{mean[always].sum() / observed[always].sum():.3f}, / MSE "
              f"{mean[always].sum() / mse[always].sum():.3f}; all cells / MSE "
              f"{mean.sum() / mse.sum():.3f}")
    by_topic = {name: np.where(always, np.mean(v, axis=0), 0.0).sum(axis=0)
                for name, v in variances.items()}
    excess = by_topic["model"] - by_topic["truth as model"]
    relevant = np.bincount(collection.tdi_topic[inside], weights=complete.grade[inside] > 0,
                           minlength=collection.n_topics)
    print("topics the model overstates most (identified cells, summed over runs; model / truth "
          "as model / Monte Carlo; relevant documents in the frame):")
    for t in np.argsort(-excess)[:5]:
        print(f"  {collection.topics[t]}: share of the excess {excess[t] / excess.sum():.2f}; "
              f"{by_topic['model'][t]:.4f} / {by_topic['truth as model'][t]:.4f} / "
              f"{np.where(always, observed, 0.0)[:, t].sum():.4f}; {relevant[t]:.0f} relevant")


if __name__ == "__main__":
    main()
