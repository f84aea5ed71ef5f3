"""Experiment (kept as a record of a negative result): a model-based pseudo-population bootstrap
correction of ht(M)'s ratio bias on thinly sampled strata.

ht(AP) = N^/R^ is biased on the sparse collections' 2strata samples (REPRODUCTION.md, issue 12)
because R^ has a relative SD near 1 per topic. A finite-population bootstrap (Booth, Butler &
Hall, JASA 1994) estimates the bias of any estimator by redrawing the design from a
pseudo-population; the design-based pseudo-population (each judged row repeated 1/pi times)
has no relevant document in a stratum whose sample found none, so the unjudged rows are
filled here from a model instead:

- fill ``eb``: relevant with probability (k + a) / (n + a + b) per (topic, stratum) cell, a
  Beta(a, b) prior per stratum fitted across topics by moments;
- fill ``model``: the planner's relevance model (logistic on the runs' AP prior and best rank,
  topic offsets; design/planner/relevance_model.py) fitted on the sample.

Per trial: draw the design, estimate; then B times: fill a pseudo-population (judged rows keep
their grades), take its truth M*, redraw the design from it, estimate M^*; the bias is
mean(M^* - M*) per run. Printed: coverage and half-width of the plain interval, of the
bootstrap's basic interval, and of the corrected estimate with the design variance (+ (b/2)^2).

Usage: python benchmarks/ht_bootstrap_bias.py --collection vaswani|cacm --design 2strata
       [--percent 10] [--trials 15] [--boot 30] [--fill model|eb] [--measure "ht(AP)"]

Measured (seed 12, 30 replicates, 40 trials, default model fill), 2strata (best rank 1-20 at
four times 21-100) at 10% judged, coverage of the 95% interval of a run's mean / half-width:

- Vaswani ht(AP): plain bias +0.040, coverage 0.848 / 0.070; corrected bias +0.008, coverage
  0.943 with the design variance, 0.957 / 0.077 with (b/2)^2 added; the bootstrap's own
  interval 0.791 / 0.051 (its spread is too narrow).
- Vaswani ht(nDCG): plain bias +0.0616, coverage 0.511 / 0.063; corrected +0.0213,
  coverage 0.930, 0.964 / 0.075 with (b/2)^2.
- CACM ht(AP): the plain estimate is unbiased here (+0.0005, coverage 0.980 / 0.111) and the
  model fill over-corrects it to -0.037 (coverage 0.905).

The correction follows the model, not the design: it fixes Vaswani and breaks CACM, so it was
not adopted.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from ht_coverage import load  # noqa: E402  (the bundled collections' depth-100 frames)


def beta_fill(frame, sample) -> np.ndarray:
    """P(relevant) of every row: (k + a) / (n + a + b) per (topic, stratum) cell, with a
    Beta(a, b) prior per stratum fitted across topics by the method of moments."""
    y = (frame.rel >= 1).astype(float)
    p = np.zeros(len(frame))
    n_topics = frame.n_topics
    for h in np.unique(sample.stratum[sample.stratum >= 0]):
        rows = sample.stratum == h
        topic = frame.topic[rows]
        judged = sample.judged[rows].astype(float)
        k = np.bincount(topic, weights=y[rows] * judged, minlength=n_topics)
        n = np.bincount(topic, weights=judged, minlength=n_topics)
        ok = n > 0
        mean = k[ok].sum() / max(n[ok].sum(), 1.0)
        spread = max(np.var(k[ok] / n[ok]) - np.mean(mean * (1 - mean) / n[ok]), 1e-6)
        strength = np.clip(mean * (1 - mean) / spread - 1, 1.0, 1000.0)
        cell = (k + mean * strength) / (n + strength)
        p[rows] = cell[topic]
    return p


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="vaswani")
    parser.add_argument("--design", default="2strata", help="2strata, uniform or a design name")
    parser.add_argument("--percent", type=float, default=10.0)
    parser.add_argument("--trials", type=int, default=15)
    parser.add_argument("--boot", type=int, default=30)
    parser.add_argument("--fill", choices=("model", "eb"), default="model")
    parser.add_argument("--measure", default="ht(AP)")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--shared", default="../shared")
    args = parser.parse_args()

    from irsample.design import parse_design, uniform
    from irsample.design.planner.relevance_model import fit_relevance
    from irsample.evaluation import evaluate_collection
    from irsample.measures import parse_all

    collection, frame = load(args.collection, args.shared)
    budget = max(1, round(args.percent / 100 * len(frame)))
    if args.design == "uniform":
        design = uniform(args.percent / 100)
    elif args.design == "2strata":
        design = parse_design(f"1-20:0.8,21-100:0.2@{budget}")
    else:
        design = parse_design(args.design)
    estimator, target = parse_all([args.measure]), parse_all([args.measure[3:-1]])
    truth = evaluate_collection(collection, frame.judgments(), target).summary[:, 0]
    rng = np.random.default_rng(args.seed)
    covered = {"plain": 0, "bootstrap": 0, "corrected": 0, "corrected+(b/2)^2": 0}
    width = dict.fromkeys(covered, 0.0)
    bias_plain, bias_corrected, count, start = [], [], 0, time.time()
    for trial in range(args.trials):
        sample = design.select(frame, rng=rng)
        ev = evaluate_collection(collection, frame.judgments(sample), estimator, ci=0.95)
        value, sd = ev.summary[:, 0], np.sqrt(ev.summary_variance[:, 0])
        if args.fill == "model":
            grade = np.where(sample.judged, frame.rel, 0)
            p = fit_relevance(frame, sample.judged, grade).prob
        else:
            p = beta_fill(frame, sample)
        errors = np.empty((args.boot, collection.n_runs))
        for b in range(args.boot):
            filled = (rng.random(len(frame)) < p).astype(np.int64)
            pseudo = replace(frame, rel=np.where(sample.judged, frame.rel, filled))
            pseudo._memo.update(frame._memo)  # same rows: the design's allocation is the same
            t_star = evaluate_collection(collection, pseudo.judgments(), target).summary[:, 0]
            again = design.select(pseudo, rng=rng)
            m_star = evaluate_collection(collection, pseudo.judgments(again), estimator)
            errors[b] = m_star.summary[:, 0] - t_star
        bias = errors.mean(axis=0)
        corrected = value - bias
        intervals = {
            "plain": (value, 1.96 * sd),
            "corrected": (corrected, 1.96 * sd),
            "corrected+(b/2)^2": (corrected, 1.96 * np.sqrt(sd**2 + (bias / 2) ** 2)),
        }
        for name, (centre, half) in intervals.items():
            covered[name] += int(np.sum(np.abs(centre - truth) <= half))
            width[name] += float(np.sum(half))
        low = value - np.quantile(errors, 0.975, axis=0)
        high = value - np.quantile(errors, 0.025, axis=0)
        covered["bootstrap"] += int(np.sum((low <= truth) & (truth <= high)))
        width["bootstrap"] += float(np.sum((high - low) / 2))
        count += collection.n_runs
        bias_plain.append(np.mean(value - truth))
        bias_corrected.append(np.mean(corrected - truth))
        print(f"trial {trial}: bias plain {np.mean(bias_plain):+.4f} corrected "
              f"{np.mean(bias_corrected):+.4f} ({time.time() - start:.0f} s)", flush=True)
    for name in covered:
        print(f"{name:18s} coverage {covered[name] / count:.3f}  "
              f"half-width {width[name] / count:.4f}")


if __name__ == "__main__":
    main()
