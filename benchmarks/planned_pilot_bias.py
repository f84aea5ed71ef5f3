"""Why is ht(AP)'s variance short on the planner's designs? Given the pilot, or over pilots.

The planner's design (``ci-coverage``'s ``planned``: a pilot of 5% of the budget, a relevance
model fitted to it, a plan for xinfAP, top-ups drawn by that plan) judges the pilot's documents
with certainty (pi = 1) and tops up each cell by a simple random sample of the rest, so ht(M)'s
estimate and its sample variance are those of a stratified SRS given the pilot. This draws the
top-ups ``--trials`` times for each of ``--pilots`` fixed pilots (0: a new pilot every trial,
the design as ``ci-coverage`` draws it) on the collection's depth-100 pool (``--depth D``: its
depth-D pool) and prints, per pilot
and over all, the run means' bias in standard deviations of the estimate over the trials, the
predicted over the observed standard deviation (``sd_ratio``, median over runs) and the
coverage of the 95% intervals (``normal``: estimate -/+ z sd, the interval these measurements
were first made with; ``logit``: found on the logit scale where the normal interval lies inside
(0, 1), the one ``eval --ci`` prints for AP and nDCG); then, per pilot, the topics whose mean
error over the runs is largest, with the relevant documents the top-ups find there on average,
how often none, and the pool's relevant documents. Given a pilot the variance is the top-ups'
alone; over pilots the estimate's spread also holds how its conditional bias moves with the
pilot. ``--take-all-top``
runs the experiment of lifting the planner's rate band (``design/planner/bounds.py``) for the
first stratum, so a banded plan may judge the best-ranked documents whole, as an unbanded one
does. ``--plan free`` or ``--plan band`` draws the top-ups of the pilot's unbanded or banded
plan instead of the planner's choice, and every pilot's line gives the band's switch (the
unbanded plan's predicted bias and its median topic's relevant documents sampled below
certainty: ``plan.sampled_relevant``); ``--trials 0`` prints only the switch.

Measured (TREC-8, 10%, seed 7): REPRODUCTION.md, "Planned designs: the pilot moves ht(AP)'s
bias"; the switch on four collections: "The band's switch".

Usage: python benchmarks/planned_pilot_bias.py [--collection trec8] [--percent 10]
       [--pilots 5] [--trials 20] [--measure 'ht(AP)'] [--seed 7] [--shared ../shared]
       [--take-all-top] [--pilot-size N] [--plan switch|free|band] [--depth 100]
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from ht_coverage import load  # noqa: E402


def planned_design(frame, budget: int, rng, why: list | None = None, size: int | None = None,
                   which: str = "switch"):
    """The planner's design after a pilot drawn with ``rng`` (``judge_in_batches``' first
    batch, one batch), as a design whose ``select`` draws the top-ups; ``why`` gets the band's
    switch: the unbanded plan's predicted relative bias, its median topic's relevant documents
    sampled below certainty and whether the planner bands; ``size`` the pilot's judgments
    (default: the planner's, 5% of the budget); ``which``: the planner's plan (``switch``), the
    unbanded one (``free``) or the banded one (``band``)."""
    from irsample.design.planner.plan import SPREAD, pilot, plan, sampled_relevant
    from irsample.design.planner.relevance_model import fit_relevance
    from irsample.design.planner.sequential import PILOT_EDGE, default_pilot, judged_keys
    from irsample.design.planner.variance_model import VarianceModel

    grade = np.zeros(len(frame.topic), dtype=np.int64)
    size = default_pilot(budget, frame.collection.n_topics) if size is None else size
    first = pilot(frame, size).select(frame, rng=rng)
    judged = np.asarray(first.judged, dtype=bool).copy()
    grade[judged] = frame.rel[judged]
    model = fit_relevance(frame, judged, grade, rel_level=1, gains=False)
    kw = dict(estimator="xinfAP", judged=judged, required=(PILOT_EDGE,))
    planned = plan(frame, model, budget, **kw)
    free = plan(frame, model, budget, spread=None, **kw)
    if why is not None:
        found = sampled_relevant(VarianceModel.build(frame, model, "xinfAP"), free)
        why += [free.relative_bias, float(np.nanmedian(found)), bool(planned.banded)]
    if which == "band":  # the banded plan, whatever the switch says
        planner = importlib.import_module("irsample.design.planner.plan")
        limit, planner.BIAS_LIMIT = planner.BIAS_LIMIT, -1.0
        try:
            planned = plan(frame, model, budget, spread=SPREAD, **kw)
        finally:
            planner.BIAS_LIMIT = limit
    return (free if which == "free" else planned).design(before=judged_keys(frame, judged))


def take_all_top() -> None:
    """Let the band's upper sizes be the whole first stratum (``--take-all-top``)."""
    plan_module = importlib.import_module("irsample.design.planner.plan")
    banded = plan_module.upper_sizes

    def upper_sizes(size, lo, budget, band):
        hi = np.array(banded(size, lo, budget, band))
        if band is not None:
            hi[:, 0] = size[:, 0]
        return hi

    plan_module.upper_sizes = upper_sizes


def summary(label: str, est, sd, truth_mean) -> None:
    """One line: bias over the trials' spread, sd_ratio and coverage of the run means (normal
    and logit-scale intervals)."""
    from irsample.stats.intervals import covers, logit_interval, z

    spread = est.std(axis=0)
    logit = logit_interval(est, sd * sd, 0.95)
    print(f"{label}: bias / spread {np.median((est.mean(0) - truth_mean) / spread):+.3f} "
          f"(median over runs), mean bias {np.mean(est.mean(0) - truth_mean):+.4f}, sd_ratio "
          f"{np.median(sd.mean(0) / spread):.3f}, coverage normal "
          f"{np.mean(np.abs(est - truth_mean) <= z(0.95) * sd):.3f}, logit "
          f"{np.mean(covers(est, logit.low, logit.high, truth_mean)):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="trec8")
    parser.add_argument("--percent", type=float, default=10.0)
    parser.add_argument("--pilots", type=int, default=5)
    parser.add_argument("--trials", type=int, default=20, help="top-ups per pilot")
    parser.add_argument("--measure", default="ht(AP)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--take-all-top", action="store_true")
    parser.add_argument("--pilot-size", type=int, default=None,
                        help="the pilot's judgments (default 5%% of the budget)")
    parser.add_argument("--depth", type=int, default=100, help="pool depth of the frame")
    parser.add_argument("--plan", choices=("switch", "free", "band"), default="switch",
                        help="the planner's plan (default), the unbanded or the banded one")
    args = parser.parse_args()
    if args.take_all_top:
        take_all_top()

    from irsample.design.planner.plan import BIAS_LIMIT, SPARSE
    from irsample.evaluation import evaluate_collection
    from irsample.measures import parse
    from irsample.measures.context import EvalContext
    from irsample.measures.ht.estimator import estimate
    from irsample.measures.reliability import found_per_topic

    collection, frame = load(args.collection, Path(args.shared), depth=args.depth)
    budget = int(round(args.percent / 100.0 * len(frame)))
    (measure,) = parse(args.measure)
    truth = evaluate_collection(collection, frame.judgments(), [measure.inner]).values[:, :, 0]
    valid = np.isfinite(truth)
    truth_mean = np.where(valid, truth, 0.0).sum(axis=1) / valid.sum(axis=1)
    relevant = np.bincount(frame.topic[frame.rel > 0], minlength=collection.n_topics)
    seeds = np.random.SeedSequence(args.seed).spawn(max(args.pilots, 1) + 1)
    pilots = [np.random.default_rng(s) for s in seeds[1:]] if args.pilots else [None]
    draws = np.random.default_rng(seeds[0])
    shape = (collection.n_runs, collection.n_topics)
    print(f"{args.collection}, planned {args.percent:g}%, {args.measure}: "
          f"{args.pilots or 'a new'} pilot{'s' if args.pilots != 1 else ''} x {args.trials} "
          f"top-ups, seed {args.seed}"
          + ("; the first stratum may be taken whole" if args.take_all_top else "")
          + ("" if args.plan == "switch" else f"; the {args.plan} plan"))
    every_est, every_sd = [], []
    for k, pilot_rng in enumerate(pilots):
        why: list = []
        fixed = (None if pilot_rng is None
                 else planned_design(frame, budget, pilot_rng, why, args.pilot_size, args.plan))
        est, sd, error, found = [], [], [], []
        for _ in range(args.trials):
            design = (fixed if fixed is not None
                      else planned_design(frame, budget, draws, size=args.pilot_size,
                                          which=args.plan))
            ctx = EvalContext(collection, frame.judgments(design.select(frame, rng=draws),
                                                          source="planned"))
            e = estimate(ctx, measure.inner)
            value, variance = e.value.reshape(shape), e.variance.reshape(shape)
            answered = ctx.answered & valid  # topics without judgments have no truth
            q = answered.sum(axis=1)
            est.append(np.where(answered, value, 0.0).sum(axis=1) / q)
            sd.append(np.sqrt(np.where(answered, variance, 0.0).sum(axis=1)) / q)
            error.append(np.nanmean(np.where(answered, value - truth, np.nan), axis=0))
            found.append(found_per_topic(ctx))
        if args.trials:
            est, sd, error, found = map(np.array, (est, sd, error, found))
            every_est.append(est)
            every_sd.append(sd)
            summary(f"pilot {k}" if fixed is not None else "new pilot per trial", est, sd,
                    truth_mean)
        if why:
            print(f"{'  ' if args.trials else f'pilot {k}: '}band's switch: the unbanded plan's "
                  f"predicted bias {why[0]:.3f} SE (bands above {BIAS_LIMIT:g}), its median "
                  f"topic's relevant documents sampled below certainty {why[1]:.2f} (bands "
                  f"below {SPARSE:g}): " + ("banded" if why[2] else "unbanded"))
        if not args.trials:
            continue
        worst = np.argsort(-np.abs(error.mean(axis=0)))[:3]
        print("  " + "; ".join(
            f"topic {collection.topics[t]}: error {error[:, t].mean():+.3f}, found "
            f"{found[:, t].mean():.1f} ({np.mean(found[:, t] == 0):.0%} none) of "
            f"{relevant[t]}" for t in worst))
    if len(every_est) > 1:
        summary("all pilots", np.concatenate(every_est), np.concatenate(every_sd), truth_mean)


if __name__ == "__main__":
    main()
