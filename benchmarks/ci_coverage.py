"""Coverage of the confidence intervals on TREC-8 (paper 000 §3's experiment, extended).

The truth is each run's MAP (and nDCG) with the whole sampling frame judged (the frame truth,
issue 12); the frame here is every entry of TREC-8's official qrels, which are exactly the
depth-100 pool of the pooled runs, so it is also the MAP on the complete qrels. For each
judged fraction f (default 10%, 20%, 30%) and trial (default 100), a seeded design draws a
sample of the pool, the estimators give each run a mean over topics with a 95% interval, and we
count how often the interval covers the truth:

- uniform(f), a simple random sample of f of each topic's pool: infAP (trec_eval's, c = 2) and
  infAP(c=1.5) against MAP;
- a 2-strata design by best rank, 1-20 at rate min(1, 2f) and 21- at rate f/2: xinfAP against
  MAP, infNDCG against ndcg.

Printed per fraction, estimator and variance method (``--methods``, default all of jackknife,
covariance and paper, side by side on the same samples; infNDCG has one variance estimator,
printed once): the judged fraction actually drawn, the coverage (runs x trials whose interval
covers the truth; nominal 0.95), the centred coverage (intervals covering the estimator's
Monte-Carlo mean over the trials instead of the truth: the coverage the variance would give
without the estimator's bias), the mean bias and RMS error of the estimate, the mean predicted
standard error against the standard deviation observed across trials, and the
Kolmogorov-Smirnov pass rate: per run, the standardised errors (estimate - truth) / predicted
sd over the trials are tested against N(0, 1) at the 5% level (the paper reports 90% of the
systems passing for infAP). After each design: milliseconds per trial for the draw, and for one
evaluate_collection with intervals per method.

The recipe ``irsample simulate ci-coverage`` (:mod:`irsample.experiments.coverage`) runs the
default variance methods of these and the design-based ht(M) estimators on uniform, 2strata and
planned designs at equal judgments, on any collection, against the frame truth, with a
pool-bias section; both use :func:`irsample.experiments.coverage.interval_checks` for the
coverage and the KS pass rate.

Usage: python benchmarks/ci_coverage.py [--shared ../shared] [--trials 100]
       [--fractions 0.1,0.2,0.3] [--seed 2008] [--methods jackknife,covariance,paper]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--shared", default=str(Path(__file__).resolve().parents[1].parent / "shared")
    )
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--fractions", default="0.1,0.2,0.3")
    parser.add_argument("--seed", type=int, default=2008)
    parser.add_argument("--methods", default="jackknife,covariance,paper")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from irsample.design import SamplingFrame, stratified, uniform
    from irsample.evaluation import evaluate_collection
    from irsample.experiments.coverage import interval_checks
    from irsample.io import load_qrels, load_runs
    from irsample.measures import parse_all
    from irsample.model import Collection

    shared = Path(args.shared)
    start = time.perf_counter()
    runs = load_runs(sorted((shared / "data/trec8-adhoc/runs").iterdir()))
    qrels = load_qrels(str(shared / "data/trec8-adhoc/qrels.trec8.adhoc"))
    collection = Collection.build(runs, [qrels])
    frame = SamplingFrame.from_qrels(collection, qrels)
    truth = evaluate_collection(collection, frame.judgments(), parse_all(["map", "ndcg"]))
    true_map, true_ndcg = truth.summary[:, 0], truth.summary[:, 1]
    print(f"TREC-8: {collection.n_runs} runs, {collection.n_topics} topics, "
          f"{len(frame)} pool documents; loaded in {time.perf_counter() - start:.1f} s")

    cases = {
        "uniform": (["infAP", "infAP(c=1.5)"], [true_map, true_map]),
        "2strata": (["xinfAP", "infNDCG"], [true_map, true_ndcg]),
    }
    methods = args.methods.split(",")
    header = (f"{'f':>5s} {'design':24s} {'estimator':13s} {'variance':10s} {'judged':>7s} "
              f"{'coverage':>9s} {'centred':>8s} {'bias':>8s} {'rmse':>7s} {'pred.se':>8s} "
              f"{'obs.sd':>7s} "
              f"{'KS pass':>8s}")
    print(header)
    seeds = np.random.SeedSequence(args.seed)
    for fraction in (float(f) for f in args.fractions.split(",")):
        designs = {
            "uniform": uniform(fraction),
            "2strata": stratified(f"1-20:{min(1.0, 2 * fraction):g},21-:{fraction / 2:g}"),
        }
        for key, design in designs.items():
            names, truths = cases[key]
            measures = parse_all(names)
            order = [
                next(i for i, m in enumerate(measures) if m.name == parse_all([n])[0].name)
                for n in names
            ]
            estimates = np.empty((args.trials, collection.n_runs, len(names)))
            variances = {m: np.empty_like(estimates) for m in methods}
            judged = np.empty(args.trials)
            seconds = dict.fromkeys(["draw", *methods], 0.0)
            for trial, child in enumerate(seeds.spawn(args.trials)):
                t0 = time.perf_counter()
                judgments = design.sample(frame, rng=np.random.default_rng(child))
                seconds["draw"] += time.perf_counter() - t0
                judged[trial] = judgments.stratum_sampled.sum() / judgments.stratum_size.sum()
                for method in methods:
                    t0 = time.perf_counter()
                    ev = evaluate_collection(
                        collection, judgments, measures, ci=0.95, variance=method
                    )
                    seconds[method] += time.perf_counter() - t0
                    estimates[trial] = ev.summary[:, order]
                    variances[method][trial] = ev.summary_variance[:, order]
            for j, (name, true) in enumerate(zip(names, truths)):
                est = estimates[:, :, j]
                for method in methods if name != "infNDCG" else methods[:1]:
                    sd = np.sqrt(variances[method][:, :, j])
                    centred = np.abs(est - est.mean(axis=0)) <= 1.959963984540054 * sd
                    checks = interval_checks(est, np.broadcast_to(true, est.shape), sd)
                    label = method if name != "infNDCG" else "-"
                    print(
                        f"{fraction:5.2f} {design.name[:24]:24s} {name:13s} {label:10s} "
                        f"{judged.mean():7.3f} {checks['coverage']:9.3f} {centred.mean():8.3f} "
                        f"{np.mean(est - true):+8.4f} "
                        f"{np.sqrt(np.mean((est - true) ** 2)):7.4f} {sd.mean():8.4f} "
                        f"{checks['observed_sd']:7.4f} {checks['ks_pass']:8.3f}"
                    )
            per = ", ".join(f"{k} {v / args.trials * 1e3:.0f}" for k, v in seconds.items())
            print(f"      (ms per trial: {per}; each method = evaluate_collection with intervals)")


if __name__ == "__main__":
    main()
