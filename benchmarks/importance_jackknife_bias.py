"""Could the jackknife's own bias estimate flag ht(nDCG)'s run means on importance samples?

On importance samples ht(nDCG) is the Taylor-corrected ratio with the jackknife of that
estimator as its variance (``ht/ndcg_replicates.py``), and on TREC-8 at 10-20% its run means
keep a bias of +0.001-0.004 that the reliability rule does not see. The stratified jackknife
also estimates a bias, b_J = sum_h (n_h - 1)(mean_h theta_(-d) - theta^) per topic (Wolter,
*Introduction to Variance Estimation*, §4.5). This prints, over the draws, the run means'
mean error against the frame truth, the mean of b_J summed over each run's identified topics
(over the topics), their correlation draw by draw (over runs x draws: whether a rule reading
b_J would pick the means that miss), and the median of |b_J| over the run mean's standard
error (how many means a limit of 0.35 would flag).

Usage: python benchmarks/importance_jackknife_bias.py --collection trec8|covid|vaswani|cacm
       [--fraction 0.1] [--trials 30] [--seed 12] [--shared ../shared]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def jackknife_bias(ctx, est) -> np.ndarray:
    """Per segment: b_J = sum_h (n_h - 1)(mean_h theta_(-d) - theta^) from the estimate's
    replicates (the cell's deletions of grade 0 counted n_h less its units' times)."""
    from irsample.measures.ht.inclusion import ht_design

    d = ht_design(ctx)
    rep_offsets, rep, base, (offsets, cell, pi, _) = est.replicates
    n = d.cell_n.astype(np.float64)
    n_runs, n_topics = ctx.n_runs, ctx.n_topics
    out = np.zeros(ctx.n_seg)
    for t in range(n_topics):
        segs = np.arange(n_runs) * n_topics + t
        u = rep_offsets[segs[0] + 1] - rep_offsets[segs[0]]
        units = rep[rep_offsets[segs][:, None] + np.arange(u)]
        cells, unit_pi = cell[offsets[t]:offsets[t + 1]], pi[offsets[t]:offsets[t + 1]]
        for h in range(d.n_cells):
            nh = n[t, h]
            if nh < 2:
                continue
            cols = (cells == h) & (unit_pi < 1.0)
            mean = (units[:, cols].sum(axis=1) + (nh - cols.sum()) * base[segs, h]) / nh
            out[segs] += (nh - 1.0) * (mean - est.value[segs])
    return out


def main() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from ht_coverage import importance_study

    args, truth, draws = importance_study(__doc__.splitlines()[0], trials=30)
    shape = truth.shape
    errors, biases, ses = [], [], []
    for ctx, e in draws:
        b = np.where(e.known, jackknife_bias(ctx, e), 0.0).reshape(shape)
        errors.append((e.value.reshape(shape) - truth).mean(axis=1))
        biases.append(b.sum(axis=1) / shape[1])
        ses.append(np.sqrt(e.variance.reshape(shape).sum(axis=1)) / shape[1])
    err, bias, se = (np.array(x) for x in (errors, biases, ses))
    print(f"{args.collection} importance {args.fraction:g}, {args.trials} draws (seed "
          f"{args.seed}): mean error {err.mean():+.4f}, mean jackknife bias {bias.mean():+.4f}, "
          f"correlation over draws {np.corrcoef(err.ravel(), bias.ravel())[0, 1]:+.2f}, "
          f"median |b_J| / se {np.median(np.abs(bias) / se):.2f}")


if __name__ == "__main__":
    main()
