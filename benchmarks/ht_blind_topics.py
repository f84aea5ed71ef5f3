"""Experiment (a record for issue 25): how often is ht(P@k)'s design variance blind, and what
does ``unseen_variance`` do to the intervals?

A topic's ht(P@k) variance is the cell formula's (``measures/ht/inclusion.py``) on the sampled
documents of the run's top k; when they agree (all non-relevant, typically) it is 0 however many
of the top k are unjudged, and the estimate can still be wrong (a relevant document not drawn).
``measures/ht/imputation.py:unseen_variance`` adds u p (1 - p) / k^2 on such topics. For draws of
one design of ``irsample simulate ci-coverage`` (the depth-100 pool of the pooled runs as the
frame, the frame's complete judgments as the truth), this prints the share of (run, topic)
estimates that are blind (cell variance 0 with unjudged positions in the top k) and of those
that are blind and wrong, and the coverage of the run means' 95% intervals with the cell
variance alone and with the term (normal intervals, as ``eval --ci`` prints them for P@k).

Measured (TREC-8, planned design, 40 draws, seed 7): at 30% of the pool 0.166 of the estimates
were blind and 0.021 blind and wrong, with 0.298 of the squared error; the intervals covered
0.882 with the cell variance alone and 0.985 with the term (half-width x1.30); at 20% 0.433 and
0.102 (0.283 of the squared error), coverage 0.909 -> 0.969 (x1.16). The 100-trial check is
REPRODUCTION.md, "Calibrated or flagged".

Usage: python benchmarks/ht_blind_topics.py --collection trec8|covid|vaswani|cacm
       --design uniform|2strata|planned [--percent 30] [--trials 40] [--seed 7] [--k 10]
       [--shared ../shared]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="trec8")
    parser.add_argument("--design", default="planned")
    parser.add_argument("--percent", type=float, default=30.0)
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from reliability_grid import files as collection_files

    from irsample.evaluation import evaluate_collection
    from irsample.experiments.coverage import designs
    from irsample.experiments.data import load
    from irsample.experiments.model_assisted import build_frame
    from irsample.measures import EvalContext, parse
    from irsample.measures.ht.estimator import estimate
    from irsample.measures.ht.imputation import unseen_variance
    from irsample.model import POOLED

    data = load(collection_files(args.collection, Path(args.shared)))
    frame, col = build_frame(data, 100.0), data.collection
    (made,) = designs(len(frame), [args.percent], which=(args.design,))
    ((_, design),) = made.designs
    (m,) = parse(f"P@{args.k}")
    truth = evaluate_collection(col, frame.judgments(), [m]).values[:, :, 0]
    shape = truth.shape
    blind, wrong, squared, covered_cell, covered, widen = [], [], [], [], [], []
    for child in np.random.SeedSequence(args.seed).spawn(args.trials):
        ctx = EvalContext(col, design.sample(frame, rng=np.random.default_rng(child)))
        e = estimate(ctx, m)
        value = e.value.reshape(shape)
        cell = e.var_num.reshape(shape)  # the cell variance: the term is added to ``variance``
        full = e.variance.reshape(shape)
        assert np.allclose(full - cell, unseen_variance(ctx, e.value, e.var_num, args.k)
                           .reshape(shape))
        present = ctx.answered
        state = ctx.judgments.state[ctx.pos_tdi]
        seg = np.repeat(np.arange(ctx.n_seg), ctx.seg_len)
        top = (ctx.rank <= args.k) & (state == POOLED)
        unjudged = np.bincount(seg, weights=top, minlength=ctx.n_seg).reshape(shape)
        is_blind = present & (cell <= 0) & (unjudged > 0)
        blind.append(is_blind.sum() / present.sum())
        wrong.append((is_blind & (np.abs(value - truth) > 1e-12)).sum() / present.sum())
        e2 = np.where(present, (value - truth) ** 2, 0.0)
        squared.append((e2 * is_blind).sum() / max(e2.sum(), 1e-300))
        q = present.sum(axis=1)
        error = np.where(present, value - truth, 0.0).sum(axis=1) / q
        for variance, into in ((cell, covered_cell), (full, covered)):
            se = np.sqrt(np.where(present, variance, 0.0).sum(axis=1)) / q
            into.append(np.abs(error) <= 1.96 * se + 1e-12)
        widen.append(np.sqrt(np.where(present, full, 0).sum()) /
                     max(np.sqrt(np.where(present, cell, 0).sum()), 1e-300))
    print(f"{args.collection}, {args.design} {args.percent:g}%, ht(P@{args.k}), {args.trials} "
          f"draws, seed {args.seed}")
    print(f"blind estimates {np.mean(blind):.3f}, blind and wrong {np.mean(wrong):.3f}, "
          f"their share of the squared error {np.mean(squared):.3f}")
    print(f"coverage of the run means' 95% intervals: cell variance {np.mean(covered_cell):.3f}, "
          f"with the unseen term {np.mean(covered):.3f} (half-width x{np.mean(widen):.2f})")


if __name__ == "__main__":
    main()
