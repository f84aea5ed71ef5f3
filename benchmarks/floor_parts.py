"""Experiment (a record for issue 25): which part of ht(AP)'s and ht(nDCG)'s floor binds on
stratified simple random samples, and what each gives against the draws' own spread.

On these samples a ratio's variance is the anticipated one A (``ht/anticipated.py``) scaled by
rho = the larger of 1, sum lin / sum A and sum J / sum A over the identified (run, topic) cells
(``ht/estimator.py``, :func:`floor_factor`): lin the sample's variance linearised at the model's
centre, J the ratio's stratified delete-one jackknife (AP: of the plain ratio; nDCG: of the
corrected ratio less its second-order excess S, ``ht/ndcg_replicates.py``). A delete-one
jackknife errs upward by the statistic's higher-order terms (Efron & Stein, Ann. Statist. 9,
1981), more for a ratio that carries its own second-order correction. Per draw (``--trials``
seeded samples of one design) this prints the mean over draws of the three ratios, nDCG's J
before S is taken away and its plain-ratio jackknife over A (which the estimator does not
compute on these designs), and rho's, and, with the floor as shipped, at the linearised variance
alone and with none (A itself; the estimator run again with :func:`floor_factor` replaced in
this process), the run means' normal 95% intervals on the raw scale: their coverage of the frame
truth, the median over runs of the mean standard error over the estimates' standard deviation
across draws, and the summed mean variance over the summed variance across draws (1 where the
variance is right on average; flagged intervals count too).

Usage: python benchmarks/floor_parts.py --collection covid|trec8|cacm|vaswani|QRELS:RUNS
       [--design uniform|2strata] [--fraction 0.05] [--measure nDCG|AP] [--trials 60]
       [--seed 7]
"""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from floor_comovement import floor_ratios  # noqa: E402
from ht_coverage import design_for, load_with_truth  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FLOORS = ("shipped", "linearised", "none")


@contextmanager
def floor(kind: str):
    """The estimator's :func:`floor_factor` as shipped, at the linearised variance alone (its
    first call; the second, the jackknife's, returns 1) or none (every call returns 1)."""
    from irsample.measures.ht import estimator

    shipped = estimator.floor_factor
    calls = []

    def replaced(expected, own, known):
        calls.append(None)
        if kind == "none" or (kind == "linearised" and len(calls) % 2 == 0):
            return 1.0
        return shipped(expected, own, known)

    estimator.floor_factor = replaced if kind != "shipped" else shipped
    try:
        yield
    finally:
        estimator.floor_factor = shipped


def parts(ctx, est, measure) -> tuple[float, float, float, float]:
    """sum lin / sum A and sum J / sum A over the identified cells (:func:`floor_ratios`), sum
    (J - S) / sum A with S nDCG's second-order excess (``ndcg_replicates.ndcg_second_order``:
    what its floor takes; AP's is J), and the plain ratio's sum J / sum A (AP's J, from its
    replicates, is of the plain ratio: the ratios agree)."""
    from irsample.measures.ht.estimator import ndcg_totals
    from irsample.measures.ht.ideal_dcg import hits_and_donors
    from irsample.measures.ht.inclusion import ht_design
    from irsample.measures.ht.jackknife import jackknife_variance
    from irsample.measures.ht.ndcg_replicates import ndcg_replicates, ndcg_second_order
    from irsample.measures.ht.walks import NO_CUTOFF
    from irsample.measures.reliability import FEW
    from irsample.model import JUDGED

    d = ht_design(ctx)
    if measure == "AP":
        lin, jk = floor_ratios(ctx, est, jackknife_variance(ctx, d, est.replicates))
        return lin, jk, jk, jk
    _, term, den, _ = ndcg_totals(ctx, d, NO_CUTOFF)
    j = ctx.judgments
    hits, _ = hits_and_donors(ctx, d, (j.state == JUDGED) & (j.grade > 0))
    identified = den.value[ctx.seg_topic] > 0
    correct = (hits > FEW)[ctx.seg_topic] & identified
    jk = jackknife_variance(ctx, d, ndcg_replicates(ctx, d, term, NO_CUTOFF, correct))
    less = jk - ndcg_second_order(ctx, d, term, NO_CUTOFF, correct)
    plain = jackknife_variance(ctx, d, ndcg_replicates(ctx, d, term, NO_CUTOFF,
                                                       np.zeros_like(correct)))
    return (*floor_ratios(ctx, est, jk), floor_ratios(ctx, est, less)[1],
            floor_ratios(ctx, est, plain)[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="covid")
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--design", default="uniform", choices=("uniform", "2strata"))
    parser.add_argument("--fraction", type=float, default=0.05)
    parser.add_argument("--measure", default="nDCG", choices=("nDCG", "AP"))
    parser.add_argument("--trials", type=int, default=60)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from irsample.measures.context import EvalContext
    from irsample.measures.ht.estimator import estimate

    col, frame, m, truth = load_with_truth(args.collection, Path(args.shared), args.measure)
    shape = truth.shape
    evaluated = np.isfinite(truth).all(axis=0)
    design = design_for(args.design, args.fraction, frame)
    ratios, rho = [], []
    means = {kind: [] for kind in FLOORS}
    variances = {kind: [] for kind in FLOORS}
    for child in np.random.SeedSequence(args.seed).spawn(args.trials):
        judgments = design.sample(frame, rng=np.random.default_rng(child))
        for kind in FLOORS:
            with floor(kind):
                ctx = EvalContext(col, judgments)
                est = estimate(ctx, m)
            if est.model_bias is None:
                raise SystemExit("this design's variance is not the anticipated one")
            if kind == "shipped":
                ratios.append(parts(ctx, est, args.measure))
                rho.append(est.model_bias.floor)
            value = est.value.reshape(shape)[:, evaluated]
            means[kind].append(value.mean(axis=1))
            variances[kind].append(est.variance.reshape(shape)[:, evaluated].sum(axis=1)
                                   / evaluated.sum() ** 2)
    ratios = np.array(ratios)
    print(f"{args.collection} {args.design} {args.fraction:g} ht({args.measure}): {col.n_runs} "
          f"runs, {args.trials} draws, seed {args.seed}")
    print(f"over A, mean over draws: linearised {ratios[:, 0].mean():.3f}, jackknife "
          f"{ratios[:, 1].mean():.3f}, less its second-order terms {ratios[:, 2].mean():.3f}, "
          f"plain ratio's jackknife {ratios[:, 3].mean():.3f}; rho "
          f"{np.mean(rho):.3f} (binds in {np.mean(np.array(rho) > 1):.2f} of the draws)")
    target = truth[:, evaluated].mean(axis=1)
    for kind in FLOORS:
        mean, var = np.array(means[kind]), np.array(variances[kind])
        se = np.sqrt(var)
        cover = (np.abs(mean - target) <= 1.96 * se).mean()
        spread = mean.std(axis=0, ddof=1)
        print(f"  floor {kind:10} coverage {cover:.3f}, se / sd (median) "
              f"{np.median(se.mean(axis=0) / spread):.2f}, variance / spread^2 "
              f"{var.mean(axis=0).sum() / (spread ** 2).sum():.2f}")


if __name__ == "__main__":
    main()
