"""Where ht(nDCG)'s Taylor correction falls short on importance samples: its parts over draws.

ht(nDCG) is the ratio theta^ = X^ / Y^ of the Horvitz-Thompson DCG of a run and the ideal DCG of
the estimated grade counts, less its second-order bias b^ = (theta^ v(Y^) - c(X^, Y^)) / Y^^2
(``measures/ht/estimator.py``, "nDCG's ratio bias"; Cochran, *Sampling Techniques*, §6.8) on
topics whose sample holds more than two relevant documents. On statAP's AP-prior samples
(``importance(f)``) of TREC-8 the run means keep a bias of about a third of their standard
error. This draws ``--trials`` samples and prints, per group of topics by the mean number of
relevant documents their samples hold, in run-mean units (summed over the group's topics,
divided by all topics, averaged over runs):

- ``plain`` and ``corrected``: the bias of X^/Y^ and of the estimate;
- ``second``: the second-order term at the true moments over the draws,
  (theta Var(Y^) - Cov(X^, Y^)) / E[Y^]^2, and ``est``: the mean of b^ (what is removed);
- the first part of b^ three ways: theta Var(Y^) / E[Y^]^2 (true), theta E[v] / E[Y^]^2 (the
  variance estimate's mean, ``v/Var`` its ratio to Var(Y^) summed over the group's topics) and
  E[theta^ v / Y^^2] (as b^ reads it, each draw divided by its own Y^^2);
- ``cov``: Cov(X^, Y^) / E[Y^]^2 against the mean of c / E[Y^]^2;
- ``corr``: over draws, the correlation of a segment's v / Y^^2 with its plain ratio's error,
  the median over the group's segments (negative: the draws that estimate high read the
  smaller relative variance, so are corrected least).

Topics estimated (Y^ > 0) in every draw only.

Usage: python benchmarks/importance_ratio_bias.py --collection trec8|covid|vaswani|cacm
       [--fraction 0.1] [--trials 200] [--seed 12] [--shared ../shared]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
GROUPS = ((3, 10), (10, 20), (20, 40), (40, np.inf))


def main() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from ht_coverage import importance_study

    from irsample.model import JUDGED

    args, truth, draws = importance_study(__doc__.splitlines()[0], trials=200)
    shape = truth.shape
    keep = {k: [] for k in ("num", "den", "plain", "value", "var_den", "cov", "known")}
    hits = []
    for ctx, e in draws:
        for name, got in keep.items():
            got.append(np.asarray(getattr(e, name), dtype=np.float64).reshape(shape))
        j = ctx.judgments
        found = (j.state == JUDGED) & (j.grade > 0)
        hits.append(np.bincount(ctx.collection.tdi_topic[found], minlength=ctx.n_topics))
    x, y, plain, value, v, c, known = (np.array(keep[k]) for k in keep)
    every = (known > 0).all(axis=(0, 1))
    mean_hits = np.array(hits).mean(axis=0)
    ex, ey = x.mean(axis=0), y.mean(axis=0)
    var_y = y.var(axis=0, ddof=1)
    cov_xy = ((x - ex) * (y - ey)).sum(axis=0) / (args.trials - 1)
    y_draw = np.where(y > 0, y, 1.0)
    b_hat = (plain * v - c) / y_draw**2
    print(f"{args.collection} importance {args.fraction:g}, {args.trials} draws (seed "
          f"{args.seed}); run-mean units")
    print(f"{'hits':>9} {'topics':>6} {'plain':>8} {'corr.':>8} {'second':>8} {'est':>8} | "
          f"{'tVar/Y2':>8} {'tE[v]/Y2':>8} {'v/Var':>6} {'E[tv/y2]':>8} | {'Cov/Y2':>8} "
          f"{'E[c]/Y2':>8} {'corr':>6}")
    ey2 = ey**2
    relvar = v / y_draw**2
    err = plain - truth
    rc, ec = relvar - relvar.mean(axis=0), err - err.mean(axis=0)
    corr = (rc * ec).sum(axis=0) / np.sqrt((rc**2).sum(axis=0) * (ec**2).sum(axis=0) + 1e-300)
    for lo, hi in GROUPS:
        t = every & (mean_hits >= lo) & (mean_hits < hi)
        if not t.any():
            continue

        def share(a, t=t):  # (runs, topics): the group's part of the run means, over runs
            return a[:, t].sum(axis=1).mean() / shape[1]

        ratio = v[:, 0, t].mean(axis=0).sum() / var_y[0, t].sum()  # a topic's, run 0's row
        print(f"[{lo:g},{hi:g}) {t.sum():6d} {share(plain.mean(axis=0) - truth):+8.4f} "
              f"{share(value.mean(axis=0) - truth):+8.4f} "
              f"{share((truth * var_y - cov_xy) / ey2):+8.4f} {share(b_hat.mean(axis=0)):+8.4f} "
              f"| {share(truth * var_y / ey2):+8.4f} {share(truth * v.mean(axis=0) / ey2):+8.4f} "
              f"{ratio:6.3f} {share((plain * v / y_draw**2).mean(axis=0)):+8.4f} "
              f"| {share(cov_xy / ey2):+8.4f} {share(c.mean(axis=0) / ey2):+8.4f} "
              f"{np.median(corr[:, t]):+6.2f}")

if __name__ == "__main__":
    main()
