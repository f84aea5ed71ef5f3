"""Experiment (a record for issue 25): the blind topics of the planner's top-ups, what their
undrawn documents hold against what the relevance model expects, and what their variance does
to the run means' intervals.

On the planner's designs ht(AP) and ht(nDCG) take the sample's stratified jackknife, and a
topic whose documents drawn below certainty hold no relevant one (a blind topic: jackknife 0)
takes c times the relevance model's anticipated variance times the posterior mean of its rate
over the model's, (k + O_t) / (k + E_t) (``ht/blind_topics.py``). Per draw (``--trials`` seeded
samples of the planner's design, ``benchmarks/ht_coverage.py``'s ``design_for``) this prints

- the topics blind on every run (no relevant document drawn below certainty, some judged):
  per draw how many, and on average the documents drawn below certainty, the model's fitted
  relevance summed over them (E_t), its expected relevant documents among the undrawn ones, and
  how many the complete judgments hold there;
- for the run means' normal 95% intervals, with the variance as shipped, without the frailty
  factor (the model's variance times c alone, as before it) and with the sample's variance
  alone (no blind topic replaced): their coverage of the frame truth, the summed mean variance
  over the summed variance across draws (1 where it is right on average) and the median over
  runs of the bias over the spread.

Usage: python benchmarks/blind_topic_variance.py --collection covid|trec8|cacm|vaswani|QRELS:RUNS
       [--fraction 0.3] [--measure nDCG|AP] [--trials 100] [--seed 11] [--shared ../shared]
"""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from ht_coverage import design_for, load_with_truth  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = ("shipped", "without the frailty", "the sample's alone")


@contextmanager
def variant(kind: str):
    """The estimator's blind topics as shipped, without :func:`topic_frailty` (every topic's
    factor 1) or not replaced at all."""
    from irsample.measures.ht import blind_topics, estimator

    replace, frailty = estimator.with_blind_topics, blind_topics.topic_frailty
    if kind == VARIANTS[1]:
        blind_topics.topic_frailty = lambda ctx, d: np.ones(ctx.n_topics)
    elif kind == VARIANTS[2]:
        estimator.with_blind_topics = lambda ctx, d, inner, own, known: own
    try:
        yield
    finally:
        estimator.with_blind_topics, blind_topics.topic_frailty = replace, frailty


def blind_topics(ctx, truth_relevant: np.ndarray) -> list[tuple]:
    """Per topic blind on every run: (documents drawn below certainty, E_t, the model's
    expected relevant among the undrawn, the relevant ones among them)."""
    from irsample.measures.ht.anticipated import (
        fitted_relevance,
        frame_positions,
        grade_probabilities,
    )
    from irsample.measures.ht.inclusion import ht_design
    from irsample.model import JUDGED

    d = ht_design(ctx)
    probs = grade_probabilities(ctx, d)
    if probs is None:
        return []
    fitted = fitted_relevance(ctx, d, for_rule=False)
    fp = frame_positions(ctx)
    j = ctx.judgments
    judged = j.state[fp.docs] == JUDGED
    pi = d.tdi_pi[fp.docs]
    drawn = judged & (pi > 0) & (pi < 1)
    relevant = judged & (j.grade[fp.docs] >= 1)
    rows = []
    for t in range(ctx.n_topics):
        of_t = fp.topic == t
        if (of_t & relevant).any() and not (of_t & drawn & relevant).any():
            undrawn = of_t & ~judged
            rows.append(((of_t & drawn).sum(), fitted[of_t & drawn].sum(),
                         (1.0 - probs[undrawn, 0]).sum(),
                         truth_relevant[fp.docs[undrawn]].sum()))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="covid")
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--fraction", type=float, default=0.3)
    parser.add_argument("--measure", default="nDCG", choices=("nDCG", "AP"))
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from irsample.measures.context import EvalContext
    from irsample.measures.ht.estimator import estimate

    col, frame, m, truth = load_with_truth(args.collection, Path(args.shared), args.measure)
    evaluated = np.isfinite(truth).all(axis=0)
    truth_relevant = np.zeros(col.n_tdi, dtype=bool)
    known = frame.tdi >= 0
    truth_relevant[frame.tdi[known]] = frame.rel[known] > 0
    design = design_for("planned", args.fraction, frame)
    means = {kind: [] for kind in VARIANTS}
    variances = {kind: [] for kind in VARIANTS}
    blind = []
    for child in np.random.SeedSequence(args.seed).spawn(args.trials):
        judgments = design.sample(frame, rng=np.random.default_rng(child))
        for kind in VARIANTS:
            with variant(kind):
                ctx = EvalContext(col, judgments)
                est = estimate(ctx, m)
            if est.model_bias is not None:
                raise SystemExit("this design's variance is the anticipated one")
            if kind == VARIANTS[0]:
                blind += blind_topics(ctx, truth_relevant)
            means[kind].append(est.value.reshape(truth.shape)[:, evaluated].mean(axis=1))
            variances[kind].append(est.variance.reshape(truth.shape)[:, evaluated].sum(axis=1)
                                   / evaluated.sum() ** 2)
    name = Path(args.collection.split(":")[0]).name
    print(f"{name} planned {args.fraction:g} ht({args.measure}): {col.n_runs} runs, "
          f"{args.trials} draws, seed {args.seed}")
    if blind:
        b = np.array(blind, dtype=np.float64).mean(axis=0)
        print(f"topics blind on every run: {len(blind) / args.trials:.1f} a draw of "
              f"{evaluated.sum()}; drawn below certainty {b[0]:.0f}, the model's relevant "
              f"among them E_t {b[1]:.2f}; among the undrawn: the model {b[2]:.2f}, the "
              f"complete judgments {b[3]:.2f}")
    else:
        print("topics blind on every run: none")
    target = truth[:, evaluated].mean(axis=1)
    for kind in VARIANTS:
        mean, var = np.array(means[kind]), np.array(variances[kind])
        spread = mean.std(axis=0, ddof=1)
        cover = (np.abs(mean - target) <= 1.96 * np.sqrt(var)).mean()
        print(f"  {kind:20} coverage {cover:.3f}, variance / spread^2 "
              f"{var.mean(axis=0).sum() / (spread ** 2).sum():.3f}, bias / spread (median) "
              f"{np.median((mean.mean(axis=0) - target) / spread):+.3f}")


if __name__ == "__main__":
    main()
