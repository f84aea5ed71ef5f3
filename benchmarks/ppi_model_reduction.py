"""Experiment (a record for issue 25): is ppi's variance reduction R short because of the
relevance model, and on which topics?

On stratified simple random samples ppi(nDCG)'s interval is ht's anticipated variance times R,
R = sum A_ppi / sum A_ht over a run's topics taken by the difference form, both anticipated by
a relevance model (``irsample/measures/ppi/anticipated.py``). For one design of ``irsample
simulate model-assisted`` (the same seeds: trial t's draw is that of the recipe run on this
one design and percentage; a stratified simple random sample: uniform or 2strata) this computes,
on each draw, R with the fitted label-informed model and with the truth in its place (every frame
document's grade known: the linearised design variance itself, at the draw's lambda), and
prints, over the draws: the median over runs of each R and of the observed reduction (the Monte
Carlo variance of ppi(nDCG)'s run mean over ht(nDCG)'s), the share of draws whose R over all
runs with the truth is more than twice the model's, and the topics that carry the largest
share of the truth's residual variance in those draws, with the model's and ht's variance
there (summed over runs).

Usage: python benchmarks/ppi_model_reduction.py [--collection covid] [--strategy uniform]
       [--percent 30] [--trials 100] [--labels kappa0.7] [--seed 5] [--shared ../shared]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from ht_coverage import recipe_cell, recipe_cell_arguments  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    recipe_cell_arguments(parser, ROOT)
    args = parser.parse_args()
    from irsample.measures import parse
    from irsample.measures.ht import anticipated
    from irsample.measures.ht.inclusion import ht_design
    from irsample.measures.ppi.anticipated import label_model, residual_variance
    from irsample.measures.ppi.estimate import label_contexts, ppi_estimate
    from irsample.measures.ppi.label_judgments import informative_topics

    setup = recipe_cell(args.collection, Path(args.shared), args.seed, args.percent, args.strategy)
    complete = setup.frame.judgments()
    (m,) = parse("nDCG")
    n_runs, n_topics = setup.collection.n_runs, setup.collection.n_topics
    shape = (n_runs, n_topics)
    ppi_means, ht_means, parts = [], [], []
    for trial in range(args.trials):
        for _, _, _, ctx, sources in setup.trial(trial):
            labels = sources[args.labels]
            e = ppi_estimate(ctx, labels, m)
            grades = label_contexts(ctx, labels)[2]
            d = ht_design(ctx)
            docs = anticipated.frame_positions(ctx).docs
            plain = anticipated.ratio_probabilities(ctx, d)
            if plain is None:
                raise SystemExit(f"{args.strategy}: no anticipated variance (not a stratified "
                                 "simple random sample)")
            label, informed = label_model(ctx, d, grades)  # the fit ppi_estimate made
            truth = np.zeros_like(plain)
            truth[np.arange(len(docs)), np.clip(complete.grade[docs], 0, plain.shape[1] - 1)] = 1.0
            none = np.zeros_like(e.lam_h)
            useful = informative_topics(grades, ctx.judgments,
                                        ctx.collection.tdi_topic.astype(np.int64), n_topics)
            moved = ((e.lam != 0) & useful[ctx.seg_topic]).reshape(shape)
            parts.append({name: np.where(moved, residual_variance(ctx, d, m, probs, label, lam)
                                         .reshape(shape), 0.0)
                          for name, probs, lam in (
                              ("ppi model", informed, e.lam_h), ("ht model", plain, none),
                              ("ppi truth", truth, e.lam_h), ("ht truth", truth, none))})
            evaluated = setup.evaluated
            q = np.maximum(setup.q, 1)
            ppi_means.append(np.where(evaluated, np.nan_to_num(e.value.reshape(shape)), 0.0)
                             .sum(axis=1) / q)
            ht_means.append(np.where(evaluated, np.nan_to_num(e.ht.reshape(shape)), 0.0)
                            .sum(axis=1) / q)
        print(f"{trial + 1} draws", file=sys.stderr, end="\r")

    def run_ratio(num, den):
        return np.mean([safe(p[num].sum(axis=1), p[den].sum(axis=1)) for p in parts], axis=0)

    def safe(a, b):
        return np.where(b > 0, a / np.where(b > 0, b, 1.0), np.nan)

    observed = np.var(ppi_means, axis=0, ddof=1) / np.var(ht_means, axis=0, ddof=1)
    print(f"{args.collection} {args.strategy} {args.percent:g}% {args.labels}, ppi(nDCG): "
          f"{args.trials} draws, seed {args.seed}")
    per_run = run_ratio("ppi model", "ht model"), run_ratio("ppi truth", "ht truth")
    print(f"median over runs: R with the model {np.nanmedian(per_run[0]):.3f}, with the truth "
          f"{np.nanmedian(per_run[1]):.3f}, observed reduction {np.nanmedian(observed):.3f}")
    whole = np.array([[p[k].sum() for k in ("ppi model", "ht model", "ppi truth", "ht truth")]
                      for p in parts])
    model_r, truth_r = whole[:, 0] / whole[:, 1], whole[:, 2] / whole[:, 3]
    apart = truth_r > 2.0 * model_r
    print(f"R over all runs, median over draws: model {np.median(model_r):.3f}, truth "
          f"{np.median(truth_r):.3f}; draws where the truth's is over twice the model's: "
          f"{apart.mean():.2f}")
    if apart.any():
        by_topic = {k: np.mean([p[k].sum(axis=0) for p, a in zip(parts, apart) if a], axis=0)
                    for k in parts[0]}
        top = np.argsort(-by_topic["ppi truth"])[:3]
        total = by_topic["ppi truth"].sum()
        for t in top:
            print(f"  topic {setup.collection.topics[t]}: share of the truth's ppi variance "
                  f"{by_topic['ppi truth'][t] / total:.2f}; ppi truth / model / ht truth / ht "
                  f"model {by_topic['ppi truth'][t]:.2f} / {by_topic['ppi model'][t]:.2f} / "
                  f"{by_topic['ht truth'][t]:.2f} / {by_topic['ht model'][t]:.2f}")


if __name__ == "__main__":
    main()
