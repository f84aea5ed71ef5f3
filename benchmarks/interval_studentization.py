"""Experiment (a record for issues 23 and 25): why a 95% interval of a run's mean misses when its
variance is right on average.

An interval estimate -/+ 1.96 SE covers 95% when (estimate - truth) / SE is close to N(0, 1).
That needs the bias to be small against SE and the variance estimate right on average, but also
the variance estimate steady from sample to sample and unrelated to the error. Horvitz-Thompson
variances of a skewed population (most pooled documents non-relevant, a few relevant ones at
the top ranks carrying most of a run's DCG) are neither: a sample that catches a top-ranked
relevant document gets a high estimate and a large variance, one that misses it a low estimate
and a small variance, so the low estimates get the narrow intervals.

For one collection, design and measure this prints, per estimator (ht with its variance, which
is the anticipated one of ``irsample/measures/ht/anticipated.py`` on stratified samples, and
``ht-sample`` with the variance estimated from the sample alone; or ppi with each label source
of ``irsample simulate model-assisted``), over ``--trials`` seeded draws and every run:

- bias and RMS error of the run mean against the frame truth, and the mean SE;
- ``var-ratio``: the mean estimated variance over the mean squared error (1 = right on average);
- ``cover``: coverage of the normal 95% interval estimate -/+ 1.96 SE (the one these
  measurements were first made with, and the one ``eval --ci`` prints for P@k); ``logit``:
  coverage of the interval ``eval --ci`` prints for the ratios AP and nDCG, found on the logit
  scale where the normal one lies inside (0, 1) (``stats.intervals.logit_interval``);
  ``oracle``: coverage of estimate -/+ 1.96 RMS, the run's own RMS error over the trials in
  place of the estimated SE (what a variance estimate without noise would give; an in-sample
  yardstick, not an estimator);
- ``corr``: the correlation over trials of a run's error with its SE, averaged over runs
  (``se_error_corr`` of ``simulate ci-coverage``);
  ``cv(se)``: the SE's coefficient of variation over trials, averaged over runs;
- ``low-se``/``high-se``: coverage of the trials whose SE is below/above the run's median SE;
  ``misses-low``: the share of the misses where the estimate is below the truth.

Measured (seed 2525; ``--trials 100`` for ht, 30 for ppi): see REPRODUCTION.md, "Why intervals
miss where the variance is right on average".

Usage: python benchmarks/interval_studentization.py --collection covid|vaswani|cacm|trec8
       [--design uniform|2strata|planned] [--percent 10] [--measure nDCG|AP|P@10]
       [--trials 100] [--seed 2525] [--ppi kappa0.3,kappa0.5,kappa0.7,adversarial,fusion]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from ht_coverage import design_for, load, paths  # noqa: E402


def ht_runs(args):
    """(estimates, variances) of every run mean, trials x runs, and the truths: ht with its
    variance (the anticipated one where the design allows it) and with the sample's own."""
    from irsample.evaluation import evaluate_collection
    from irsample.measures import parse_all
    from irsample.measures.context import EvalContext
    from irsample.measures.ht.estimator import estimate

    collection, frame = load(args.collection, Path(args.shared))
    measures = parse_all([f"ht({args.measure})", "ht(num_rel)"])
    full = evaluate_collection(collection, frame.judgments(), [m.inner for m in measures])
    topics = full.values[0, :, 1] > 0  # topics with a relevant document in the frame
    truth = full.values[:, topics, 0].mean(axis=1)
    design = design_for(args.design, args.percent / 100.0, frame)
    shape = (collection.n_runs, collection.n_topics)
    out = {"ht": ([], []), "ht-sample": ([], [])}
    for child in np.random.SeedSequence(args.seed).spawn(args.trials):
        sample = design.sample(frame, rng=np.random.default_rng(child))
        e = estimate(EvalContext(collection, sample), measures[0].inner)
        mean = e.value.reshape(shape)[:, topics].mean(axis=1)
        for name, var in (("ht", e.variance), ("ht-sample", e.variance_from_sample)):
            out[name][0].append(mean)
            out[name][1].append(var.reshape(shape)[:, topics].sum(axis=1) / topics.sum() ** 2)
    return {k: (np.array(a), np.array(b)) for k, (a, b) in out.items()}, truth


def ppi_runs(args):
    """As :func:`ht_runs`, for ppi with each label source and ht, on the recipe's own draws."""
    from irsample.experiments.data import CollectionFiles
    from irsample.experiments.model_assisted import MEASURES, Setup, _means
    from irsample.measures.ppi.estimate import ppi_estimate

    qrels, runs = paths(args.collection, Path(args.shared))
    files = CollectionFiles(tuple(runs), str(qrels))
    setup = Setup(files, seed=args.seed, percents=(args.percent,), strategies=(args.design,),
                  kappas=(0.3, 0.5, 0.7), adv_runs=3, adv_depth=20, depth=100.0, mix=0.2)
    n, q = setup.collection.n_runs, setup.q
    sources = args.ppi.split(",")
    out = {name: ([], []) for name in [*sources, "ht"]}
    for trial in range(args.trials):
        for _, _, _, ctx, labels in setup.trial(trial):
            for name in sources:
                e = ppi_estimate(ctx, labels[name], args.measure)
                out[name][0].append(_means(e.value, setup.evaluated, q, n))
                out[name][1].append(_means(e.variance, setup.evaluated, q, n) / q)
            out["ht"][0].append(_means(e.ht, setup.evaluated, q, n))
            out["ht"][1].append(_means(e.ht_variance, setup.evaluated, q, n) / q)
    truth = setup.truth_mean[:, MEASURES.index(args.measure)]
    return {k: (np.array(a), np.array(b)) for k, (a, b) in out.items()}, truth


def report(name: str, est: np.ndarray, var: np.ndarray, truth: np.ndarray) -> str:
    from irsample.experiments.coverage import steadiness
    from irsample.stats.intervals import covers, logit_interval

    err = est - truth
    se = np.sqrt(var)
    covered = np.abs(err) <= 1.96 * se
    bounds = logit_interval(est, var, 0.95)
    logit = covers(est, bounds.low, bounds.high, truth)
    rms = np.sqrt((err * err).mean(axis=0))
    oracle = (np.abs(err) <= 1.96 * rms).mean()
    corr = steadiness(est, truth, se)["se_error_corr"]
    low = se < np.median(se, axis=0)
    missed = ~covered
    return (f"{name:12} bias {err.mean():+.4f} rms {np.sqrt((err * err).mean()):.4f} "
            f"se {se.mean():.4f} var-ratio {var.mean() / (err * err).mean():.3f} "
            f"cover {covered.mean():.3f} logit {logit.mean():.3f} oracle {oracle:.3f} "
            f"corr {corr:+.2f} "
            f"cv(se) {np.mean(se.std(axis=0) / se.mean(axis=0)):.3f} "
            f"low-se {covered[low].mean():.3f} high-se {covered[~low].mean():.3f} "
            f"misses-low {(err[missed] < 0).mean() if missed.any() else float('nan'):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="covid")
    parser.add_argument("--design", default="uniform")
    parser.add_argument("--percent", type=int, default=10)
    parser.add_argument("--measure", default="nDCG")
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seed", type=int, default=2525)
    parser.add_argument("--ppi", default="", help="label sources: run ppi instead of ht")
    parser.add_argument("--shared", default=os.path.join(os.path.dirname(__file__), "../../shared"))
    args = parser.parse_args()
    results, truth = (ppi_runs if args.ppi else ht_runs)(args)
    print(f"{args.collection} {args.design} {args.percent}% {args.measure}: {len(truth)} runs, "
          f"{args.trials} trials, seed {args.seed}")
    for name, (est, var) in results.items():
        print(report(name, est, var, truth))


if __name__ == "__main__":
    main()
