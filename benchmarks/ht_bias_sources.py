"""Experiment (a record for issue 12): where ht(AP)'s bias of a run's mean over topics comes from.

ht(AP) (irsample/measures/ht/estimator.py) estimates a topic's AP by N^/R^ with a Taylor
correction; a topic whose sample holds no relevant document (R^ = 0, "unidentified") takes the
run's mean over the identified topics. This script splits the bias of the mean over topics,
against the frame's truth, into the part of the identified topics and the part of the imputed
ones, and prints the identified topics' bias by their number of relevant documents R in the frame.

It also tries an alternative for the identified topics, written from the identity
AP = m1 + (R - 1) pm, with m1 the mean over the relevant documents of 1/rank (0 when the run does
not retrieve the document) and pm the mean over ordered pairs (d, e) of distinct relevant
documents of [e ranked above d] / rank(d): ``hajek`` estimates m1 and pm by Hájek means over the
sampled relevant documents (weights 1/pi) and sampled pairs (weights 1/pi_de), and R by
Horvitz-Thompson; where fewer than two relevant documents are sampled it keeps ht(AP). Under an
equal-probability design the sampled relevant documents are a simple random sample of the
relevant ones given their number k, so both means are conditionally unbiased and the estimate is
linear in R^; the ratio N^/R^ instead has a pair part proportional to (k - 1)/f, biased down by
about (1 - f)/(f R) of it.

With ``--measure nDCG`` it splits ht(nDCG)'s bias instead (``ndcg_sources``): imputed topics
against identified ones, and within an identified topic (DCG^, IDCG^ the estimates, DCG, IDCG
the frame's truths) the error DCG^/IDCG^ - DCG/IDCG into a numerator part (DCG^ - DCG)/IDCG, an
ideal part DCG/IDCG^ - DCG/IDCG and their interaction, by the number k of relevant documents in
the topic's sample; "raw" is the ideal part with IDCG(C^) before the concavity correction.
The coverage printed with each estimator is that of the normal interval mean -/+ 1.96 SE of the
topics it splits (a yardstick for the bias against the spread; ``eval --ci`` prints AP's and
nDCG's intervals on the logit scale).

Measured (40 trials, seed 12, ht(nDCG) with the plain mean as imputation, before single-hit
donors): Vaswani 2strata 10% bias +0.054 = identified +0.011 + imputed +0.044 (identified:
numerator +0.077, ideal +0.041, interaction -0.108); Vaswani uniform 10% +0.060 = +0.011 +
0.049; CACM uniform 10% +0.070 = +0.032 + 0.038. Identified topics by frame R: Vaswani uniform
10% R < 5 +0.22, R 20-40 -0.04 (opposite signs, small net). With single-hit donors, CACM uniform
30%: -0.020 = -0.008 - 0.012 (single-hit topics' own estimates are biased -0.08 there).

Usage: python benchmarks/ht_bias_sources.py --collection vaswani|cacm|trec8 --design uniform
       [--fraction 0.1] [--trials 40] [--seed 12] [--measure AP|nDCG] [--graded K]
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from ht_coverage import design_for, load  # noqa: E402


def pairs_total(ctx, d) -> np.ndarray:
    """Per topic: sum over ordered pairs of distinct sampled relevant documents of 1/pi_de
    (the Horvitz-Thompson estimate of R(R - 1)), with pi_de as ``ht/inclusion.py`` has them."""
    from irsample.measures.ht.estimator import tdi_relevant

    sampled = (d.tdi_pi > 0) & (tdi_relevant(ctx) > 0)
    pi = d.tdi_pi[sampled]
    certain = pi >= 1.0
    cells = d.n_cells + 1  # certain documents form a cell of their own
    flat = ctx.collection.tdi_topic[sampled].astype(np.int64) * cells + np.where(
        certain, d.n_cells, d.tdi_cell[sampled])
    g = np.where(certain, 1.0, d.tdi_g[sampled])
    x = 1.0 / pi
    xg = np.where(g > 0, x / np.where(g > 0, g, 1.0), 0.0)

    def by_cell(w):
        return np.bincount(flat, weights=w, minlength=ctx.n_topics * cells).reshape(-1, cells)

    sx, sxg, sxg2 = by_cell(x), by_cell(xg), by_cell(xg * xg)
    cross = sx.sum(axis=1) ** 2 - (sx**2).sum(axis=1)
    return cross + (sxg**2 - sxg2).sum(axis=1)


def hajek_ap(ctx, est):
    """The ``hajek`` alternative (module docstring) per segment, or ht(AP)'s value."""
    from irsample.measures.context import safe_divide
    from irsample.measures.ht import imputation as db
    from irsample.measures.ht.inclusion import ht_design
    from irsample.measures.ht.jackknife import jackknife_variance

    d = ht_design(ctx)
    rank, rel = ctx.rank, ctx.rel()
    hit = (d.pos_pi > 0) & (rel != 0)
    seg = np.repeat(np.arange(ctx.n_seg), ctx.seg_len)
    n1 = np.bincount(seg[hit], weights=1.0 / (rank[hit] * d.pos_pi[hit]), minlength=ctx.n_seg)
    r, rr = est.den, pairs_total(ctx, d)[ctx.seg_topic]
    ok = (r > 0) & (rr > 0)
    taylor = est.plain - safe_divide(est.plain * est.var_den - est.cov, r * r)
    value = np.where(ok, safe_divide(n1, r) + (r - 1.0) * safe_divide(est.num - n1, rr), taylor)
    shape = (ctx.n_runs, ctx.n_topics)
    present = ctx.answered
    known = present & (r > 0).reshape(shape)
    missing = present & ~known & ~db.census_topics(ctx, d)[ctx.seg_topic].reshape(shape)
    own = jackknife_variance(ctx, d, est.replicates).reshape(shape)
    value, var = db.impute(value.reshape(shape), own, known, missing)
    return replace(est, value=value.ravel(), variance=var.ravel())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="vaswani")
    parser.add_argument("--design", default="uniform")
    parser.add_argument("--fraction", type=float, default=0.1)
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--shared", default=os.path.join(os.path.dirname(__file__), "../../shared"))
    parser.add_argument("--measure", default="AP", choices=("AP", "nDCG"))
    parser.add_argument("--graded", type=int, default=0,
                        help="regrade the relevant judgments 1..K (as simulate --graded)")
    args = parser.parse_args()
    if args.measure == "nDCG":
        ndcg_sources(args)
        return

    from irsample.evaluation import evaluate_collection
    from irsample.measures import parse_all
    from irsample.measures.ht import estimator as ht_estimator
    from irsample.measures.trec_eval import average_precision

    collection, frame = load(args.collection, Path(args.shared), args.graded)
    measures = parse_all(["ht(AP)", "ht(num_rel)"])
    full = evaluate_collection(collection, frame.judgments(), [m.inner for m in measures])
    truth, relevant = full.values[:, :, 0], full.values[0, :, 1]
    topics = relevant > 0
    design = design_for(args.design, args.fraction, frame)
    plain_estimate = ht_estimator._estimate

    def with_hajek(ctx, m):
        est = plain_estimate(ctx, m)
        return hajek_ap(ctx, est) if isinstance(m, average_precision.AP) else est

    print(f"{args.collection} {args.design} {args.fraction:.2f}: {int(topics.sum())} topics with "
          f"relevant documents in the frame (mean R {relevant[topics].mean():.1f}), "
          f"{args.trials} trials, seed {args.seed}")
    for name, estimator in (("ht(AP)", plain_estimate), ("hajek", with_hajek)):
        ht_estimator._estimate = estimator
        values, variances, found = [], [], []
        for child in np.random.SeedSequence(args.seed).spawn(args.trials):
            sample = design.sample(frame, rng=np.random.default_rng(child))
            ev = evaluate_collection(collection, sample, measures, ci=0.95)
            values.append(ev.values[:, :, 0])
            variances.append(ev.variance[:, :, 0])
            found.append(ev.values[0, :, 1] > 0)
        ht_estimator._estimate = plain_estimate
        error = (np.array(values) - truth)[:, :, topics]
        found = np.array(found)[:, None, topics]
        count = topics.sum()
        mean_error = error.mean(axis=2)
        half = 1.96 * np.sqrt(np.array(variances)[:, :, topics].sum(axis=2)) / count
        print(f"  {name:7} bias {mean_error.mean():+.4f} = identified "
              f"{(error * found).sum(axis=2).mean() / count:+.4f} + imputed "
              f"{(error * ~found).sum(axis=2).mean() / count:+.4f}; coverage "
              f"{(np.abs(mean_error) <= half).mean():.3f}; unidentified {1 - found.mean():.2f}")
        for low, high in ((1, 3), (3, 8), (8, 20), (20, 60), (60, np.inf)):
            band = (relevant[topics] >= low) & (relevant[topics] < high)
            if band.any():
                e = np.where(found[:, :, band], error[:, :, band], np.nan)
                print(f"    R in [{low}, {high}): {band.sum():3d} topics, identified-topic bias "
                      f"{np.nanmean(e):+.4f}")


def ndcg_sources(args) -> None:
    """ht(nDCG)'s bias of the run mean, split as the module docstring says."""
    from irsample.evaluation import evaluate_collection
    from irsample.measures import parse_all
    from irsample.measures.ht import estimator as ht_estimator
    from irsample.measures.ht.ideal_dcg import grade_counts, ideal_dcg
    from irsample.measures.ht.inclusion import ht_design
    from irsample.measures.ht.walks import NO_CUTOFF
    from irsample.measures.trec_eval.gain import NDCG
    from irsample.model import JUDGED

    collection, frame = load(args.collection, Path(args.shared), args.graded)
    measures = parse_all(["ht(nDCG)", "ht(num_rel)"])
    plain_estimate = ht_estimator._estimate
    seen = []

    def capture(ctx, m):
        est = plain_estimate(ctx, m)
        if isinstance(m, NDCG):
            j = ctx.judgments
            hit = ((j.state == JUDGED) & (j.grade > 0)).astype(np.float64)
            k = np.bincount(collection.tdi_topic, weights=hit, minlength=ctx.n_topics)
            counts, gains = grade_counts(ctx, ht_design(ctx))
            raw = ideal_dcg(counts, gains, NO_CUTOFF)
            shape = (ctx.n_runs, ctx.n_topics)
            seen.append((est.value.reshape(shape), est.num.reshape(shape),
                         est.den.reshape(shape), raw[ctx.seg_topic].reshape(shape), k))
        return est

    ht_estimator._estimate = capture
    full = evaluate_collection(collection, frame.judgments(), measures)
    _, dcg, idcg, _, _ = seen.pop()
    truth, relevant = full.values[:, :, 0], full.values[0, :, 1]
    topics = relevant > 0
    design = design_for(args.design, args.fraction, frame)
    for child in np.random.SeedSequence(args.seed).spawn(args.trials):
        sample = design.sample(frame, rng=np.random.default_rng(child))
        evaluate_collection(collection, sample, measures, ci=0.95)
    ht_estimator._estimate = plain_estimate
    value, num, den, raw, k = (np.array(a)[..., topics] for a in zip(*seen))
    t, dcg, idcg = truth[:, topics], dcg[:, topics], idcg[:, topics]
    count = topics.sum()
    found = np.broadcast_to((k > 0)[:, None, :], value.shape)
    error = value - t
    part_num = np.where(found, (num - dcg) / idcg, 0.0)
    part_den = np.where(found, dcg / np.where(found, den, 1.0) - t, 0.0)
    part_raw = np.where(found, dcg / np.where(found, raw, 1.0) - t, 0.0)

    def share(a, mask):  # contribution to the bias of the run mean over topics
        return (a * mask).sum(axis=2).mean() / count

    print(f"{args.collection} {args.design} {args.fraction:.2f} ht(nDCG): {int(count)} topics "
          f"(mean R {relevant[topics].mean():.1f}), {args.trials} trials, seed {args.seed}")
    ident = share(error, found)
    print(f"  bias {error.mean():+.4f} = identified {ident:+.4f} + imputed "
          f"{share(error, ~found):+.4f}; unidentified {1 - found.mean():.3f}")
    print(f"  identified = numerator {share(part_num, found):+.4f} + ideal "
          f"{share(part_den, found):+.4f} (raw {share(part_raw, found):+.4f}) + interaction "
          f"{ident - share(part_num, found) - share(part_den, found):+.4f}")
    for low, high in ((1, 2), (2, 3), (3, 5), (5, 9), (9, np.inf)):
        band = found & (k[:, None, :] >= low) & (k[:, None, :] < high)
        n = band.sum()
        if n:
            print(f"    k in [{low}, {high}): share {n / found.size:.3f}, contribution "
                  f"{share(error, band):+.4f} (numerator {share(part_num, band):+.4f}, ideal "
                  f"{share(part_den, band):+.4f}); per topic bias {error[band].mean():+.4f}")
    for low, high in ((1, 5), (5, 10), (10, 20), (20, 40), (40, np.inf)):
        band = (relevant[topics] >= low) & (relevant[topics] < high)
        if band.any():
            e = error[:, :, band]
            f = found[:, :, band]
            print(f"    R in [{low}, {high}): {band.sum():3d} topics, P(identified) "
                  f"{f.mean():.2f}, identified {np.nanmean(np.where(f, e, np.nan)):+.4f}, "
                  f"imputed {np.nanmean(np.where(~f, e, np.nan)) if (~f).any() else 0:+.4f}")


if __name__ == "__main__":
    main()
