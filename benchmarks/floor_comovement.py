"""Experiment (a record for issue 25): why ht(AP)'s intervals on thin stratified simple random
samples miss where their variance is right on average: the floor follows the draw.

On a stratified SRS ht(AP)'s variance is the anticipated one (``ht/anticipated.py``), floored
by rho = max(1, sum of the sample's variances / sum of the anticipated ones) over every
identified (run, topic) of the evaluation, both linearised at the model's centre, or the
same with the ratio's jackknife in the sample's place, whichever is larger
(``ht/estimator.py``, :func:`floor_factor`): the model falls short where runs succeed beyond
the documents' consensus, and rho makes that up. But rho is the sample's own variance, which
rises and falls with the estimate (a draw that catches the relevant documents many runs rank
first gets a high estimate and a high rho), so the floor brings back the co-movement the
anticipated variance was built to remove.

Per draw it recomputes rho from the estimate's parts (``Estimate.var_num``, ``cov``,
``var_den`` at ``model_bias.centre``; the same :func:`floor_factor`), and prints over the
draws: rho's mean and sd and the share of draws where it binds (rho > 1), corr(rho, mean
error) and corr(mean se, mean error) over the draws (means over the runs), and the coverage of
the 95% intervals of the run means

- ``printed``: as ``irsample eval --ci`` prints them (``Evaluation.interval``: on the logit
  scale since 2026-11-29, and so are the two others);
- ``oracle``: with each draw's rho replaced by its mean over the draws (a floor that does not
  follow the draw; a yardstick, not an estimator);
- ``t``: where the floor binds, a t quantile on each run's Satterthwaite degrees of freedom of
  the sample's jackknife (``ht/jackknife.py``, "Degrees of freedom"), as the planner's designs
  take it.

Measured with the linearised floor alone (TREC-COVID round 5, uniform 5%, 100 draws, seed
2525), before the floor at the jackknife: rho binds in 93% of the
draws, mean 1.745, sd 0.751, corr(rho, mean error) +0.67; coverage 0.958 printed, 0.960 oracle,
0.965 t on the logit scale; on the normal scale, before it, 0.947, 0.962 and 0.954
(REPRODUCTION.md, "The cells left below 0.93" and "Logit-scale intervals"). With the floor the
larger of the two (2026-12-06, 281ee81, the same command): rho binds in 83% of the draws, mean
1.502, sd 0.593, corr(rho, mean error) +0.65; coverage 0.960 printed, 0.960 oracle, 0.967 t.

Usage: python benchmarks/floor_comovement.py --collection covid --design uniform
       --fraction 0.05 [--trials 100] [--seed 2525]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from ht_coverage import design_for, load  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def floor_ratios(ctx, est, jackknife) -> tuple[float, float]:
    """The two ratios the estimator's floor takes the larger of (with 1) for an estimate whose
    variance is the anticipated one A: sum lin / sum A and sum ``jackknife`` / sum A (per
    segment) over the (run, topic) cells it floors, identified and answered
    (``topic_states``), lin the sample's variance linearised at the model's centre."""
    from irsample.measures.context import safe_divide
    from irsample.measures.ht.imputation import linearised_variance, topic_states
    from irsample.measures.ht.inclusion import ht_design

    mb = est.model_bias
    lin = linearised_variance(est.var_num, est.cov, est.var_den, mb.centre, est.den)
    known = topic_states(ctx, ht_design(ctx), est.den)[0].ravel()
    expected = mb.at_centre[known].sum()
    return (float(safe_divide(lin[known].sum(), expected)),
            float(safe_divide(jackknife[known].sum(), expected)))


def floor_of(ctx, est, jackknife) -> float:
    """The floor factor rho of an ht(AP) estimate whose variance is the anticipated one: the
    larger of 1 and :func:`floor_ratios`, as the estimator takes it."""
    return max(1.0, *floor_ratios(ctx, est, jackknife))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="covid")
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--design", default="uniform", choices=("uniform", "2strata"))
    parser.add_argument("--fraction", type=float, default=0.05)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seed", type=int, default=2525)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from irsample.evaluation import evaluate_collection
    from irsample.measures import parse
    from irsample.measures.context import EvalContext
    from irsample.measures.ht.estimator import estimate
    from irsample.measures.ht.inclusion import ht_design
    from irsample.measures.ht.jackknife import jackknife_variance
    from irsample.stats.intervals import covers, logit_interval, mean_degrees_of_freedom

    col, frame = load(args.collection, Path(args.shared))
    (ap,), (ht_ap,) = parse("AP"), parse("ht(AP)")
    truth = evaluate_collection(col, frame.judgments(), [ap]).summary[:, 0]
    design = design_for(args.design, args.fraction, frame)
    rho, nu, se, means, err, printed = [], [], [], [], [], []
    for child in np.random.SeedSequence(args.seed).spawn(args.trials):
        judgments = design.sample(frame, rng=np.random.default_rng(child))
        ev = evaluate_collection(col, judgments, [ht_ap], ci=0.95)
        ctx = EvalContext(col, judgments)
        est = estimate(ctx, ap)
        if est.model_bias is None:
            raise SystemExit("this design's variance is not the anticipated one")
        own, spread = jackknife_variance(ctx, ht_design(ctx), est.replicates, spread=True)
        rho.append(floor_of(ctx, est, own))
        nu.append(mean_degrees_of_freedom(own, spread, ev.evaluated))
        se.append(np.sqrt(ev.summary_variance[:, 0]))
        means.append(ev.summary[:, 0])
        low, high = ev.interval()
        printed.append((low[:, 0], high[:, 0]))
        err.append(ev.summary[:, 0] - truth)
    rho, nu, se, means, err = (np.array(x) for x in (rho, nu, se, means, err))
    print(f"{args.collection} {args.design} {args.fraction:g}: {col.n_runs} runs, {args.trials} "
          f"draws, seed {args.seed}")
    print(f"rho: mean {rho.mean():.3f}, sd {rho.std(ddof=1):.3f}, binds in "
          f"{(rho > 1).mean():.2f} of the draws; corr(rho, mean error) "
          f"{np.corrcoef(rho, err.mean(axis=1))[0, 1]:+.2f}, corr(mean se, mean error) "
          f"{np.corrcoef(se.mean(axis=1), err.mean(axis=1))[0, 1]:+.2f}")
    oracle_se = se * np.sqrt(rho.mean() / rho)[:, None]
    df = np.where((rho > 1)[:, None], nu, np.inf)
    print(f"degrees of freedom where the floor binds: median {np.median(nu[rho > 1]):.1f}")
    truths = np.broadcast_to(truth, means.shape)
    limits = {"printed": tuple(np.array(printed).transpose(1, 0, 2)),  # (low, high) x draws
              # the other two on the printed intervals' (logit) scale: Evaluation.interval's
              "oracle": logit_interval(means, oracle_se**2, 0.95),
              "t": logit_interval(means, se * se, 0.95, df=df)}
    for label, (low, high) in limits.items():
        print(f"  {label:8} coverage {covers(means, low, high, truths).mean():.3f}")


if __name__ == "__main__":
    main()
