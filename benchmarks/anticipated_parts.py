"""Experiment (a record for issue 25): where the anticipated variance of ht(M) is off, the
relevance model or the linearisation?

For one collection, design and measure this draws ``--trials`` seeded samples and, on each,
computes ht(M) three times over: with its anticipated variance (``irsample/measures/ht/
anticipated.py``: unjudged documents filled in by the fitted relevance model), with the same
variance but the truth in place of the model (every frame document's grade known: the
linearised design variance itself, with the sample's denominator Y^), and with the variance
from the sample alone. Per (run, topic) it compares the mean of each variance over the draws
with the Monte Carlo variance of the estimate (and its mean squared error against the frame
truth), summed over the (run, topic) cells identified in every draw (Y^ > 0: no imputation)
and over all cells; 1 is right on average. Last, the five topics where the model's variance
exceeds the truth's most, summed over runs, with their relevant documents in the frame.

If the truth's column is far from 1 the linearisation (or the estimated denominator it divides
by) is off, whatever the model; if the model's column differs from the truth's, the model is.
The numbers are in REPRODUCTION.md, "Anticipated variance".

Two more views of the model: whether its counts are calibrated, and where its excess sits.
Per topic x stratum cell sampled below rate 1, by the relevant documents the sample found there
(0, 1, 2, 3 or more): the model's expected relevant documents among the cell's unjudged ones
against the truth's, and the share of cells whose unjudged documents hold none. And the topics
whose estimate is exact in every draw (every relevant document of the frame judged with
certainty, so the design varies nothing that matters): the variance the model gives them
against the truth's 0, beside the model's variance over the squared error on the other topics.
``--stratum-sd SD`` fits the model with a topic x stratum intercept of that prior sd
(``anticipated.fit_model(..., stratum_sd=SD)``, an option) instead of the shipped one;
``--topic-sd SD`` sets the topic intercepts' prior sd (shipped: 3); ``--open-cells`` fits the
model on the judged documents of the cells sampled below rate 1 alone (``open_cells_only``).
``--empty-share PI0`` adds a study of the cells whose sample found no relevant document: their
unjudged documents hold none with probability PI0 and otherwise the model's probabilities over
1 - PI0 (the expected count kept), a two-point mixture of the model's variance on each topic
with such a cell; PI0 is given, not estimated (the truth's share of such cells holding none is
the oracle). Each variance's coverage of the run means (normal intervals) is printed too.

Usage: python benchmarks/anticipated_parts.py --collection vaswani|cacm|covid|trec8
       [--design uniform|2strata|planned|top10] [--percent 10] [--measure AP|nDCG|P@10]
       [--trials 30] [--seed 2525] [--stratum-sd SD] [--topic-sd SD] [--open-cells]
       [--empty-share PI0] [--shared ../shared]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from ht_coverage import design_for, load  # noqa: E402

WORDS = {"open_cells_only": "the cells judged whole left out of the fit",
         "whole_rate": "the topic's relevant share in its cells judged whole a covariate"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="cacm")
    parser.add_argument("--design", default="2strata")
    parser.add_argument("--percent", type=float, default=10.0)
    parser.add_argument("--measure", default="AP")
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--seed", type=int, default=2525)
    parser.add_argument("--stratum-sd", type=float, default=None)
    parser.add_argument("--topic-sd", type=float, default=None)
    parser.add_argument("--open-cells", action="store_true")
    parser.add_argument("--whole-rate", action="store_true")
    parser.add_argument("--empty-share", type=float, default=None)
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared"))
    args = parser.parse_args()
    from irsample.measures import parse
    from irsample.measures.context import EvalContext
    from irsample.measures.ht import anticipated, anticipated_terms
    from irsample.measures.ht import estimator as ht
    from irsample.model import UNPOOLED

    collection, frame = load(args.collection, Path(args.shared))
    complete = frame.judgments()
    n_grades = complete.stratum_grades.shape[2]
    truth_grades = np.zeros((collection.n_tdi, n_grades))
    inside = np.flatnonzero(complete.state != UNPOOLED)
    truth_grades[inside, np.clip(complete.grade[inside], 0, n_grades - 1)] = 1.0
    (measure,) = parse(args.measure)
    shape = (collection.n_runs, collection.n_topics)
    truth = ht.estimate(EvalContext(collection, complete), measure).value.reshape(shape)
    fitted, fitted_ratio = ht.grade_probabilities, anticipated_terms.ratio_probabilities
    shipped_fit = anticipated.fit_model
    options = {k: v for k, v in (("stratum_sd", args.stratum_sd), ("topic_sd", args.topic_sd),
                                 ("open_cells_only", args.open_cells or None),
                                 ("whole_rate", args.whole_rate or None)) if v is not None}
    if options:  # the rule's model passes its own priors (topic_sd=1, stratum_sd=None): kept
        def variant_fit(ctx, d, label=None, **priors):
            return shipped_fit(ctx, d, label, **(priors or options))
        anticipated.fit_model = variant_fit

    def oracle(ctx, d):  # P@k reads grade_probabilities, the ratios ratio_probabilities
        if fitted(ctx, d) is None:
            return None
        return truth_grades[anticipated.frame_positions(ctx).docs]

    def oracle_ratio(ctx, d):
        return None if fitted_ratio(ctx, d) is None else oracle(ctx, d)

    design = design_for(args.design, args.percent / 100.0, frame)
    variances = {"model": [], "truth as model": [], "sample": []}
    if args.empty_share is not None:
        variances[f"mixture {args.empty_share:g}"] = []
    values, known = [], []
    counts = np.zeros((4, 5))  # found 0, 1, 2, 3+: cells, expected, true, with none, P(none)
    try:
        for child in np.random.SeedSequence(args.seed).spawn(args.trials):
            sample = design.sample(frame, rng=np.random.default_rng(child))
            for name, probabilities, ratio in (("model", fitted, fitted_ratio),
                                               ("truth as model", oracle, oracle_ratio)):
                ht.grade_probabilities = probabilities
                anticipated_terms.ratio_probabilities = ratio
                ctx = EvalContext(collection, sample)
                e = ht.estimate(ctx, measure)
                variances[name].append(e.variance.reshape(shape))
                if name == "model":
                    counts += cell_calibration(ctx, complete)
            variances["sample"].append(e.variance_from_sample.reshape(shape))
            if args.empty_share is not None:
                variances[f"mixture {args.empty_share:g}"].append(mixture_variance(
                    collection, sample, measure, args.empty_share, fitted, fitted_ratio,
                    variances["model"][-1]))
            values.append(e.value.reshape(shape))
            known.append(e.den.reshape(shape) > 0)
    finally:
        ht.grade_probabilities = fitted
        anticipated_terms.ratio_probabilities = fitted_ratio
        anticipated.fit_model = shipped_fit
    values = np.array(values)
    always = np.array(known).all(axis=0)
    observed = values.var(axis=0)
    mse = ((values - truth) ** 2).mean(axis=0)
    model_name = ("shipped model" if not options else "model with " + ", ".join(
        WORDS[k] if k in WORDS else f"{k} {v:g}" for k, v in options.items()))
    print(f"{args.collection} {args.design} {args.percent:g}% {args.measure}: {args.trials} "
          f"draws, seed {args.seed}, {model_name}; cells identified in every draw: "
          f"{always.mean():.2f}")
    error = (values - truth).mean(axis=2)  # the run means' errors (draws, runs)
    for name, v in variances.items():
        mean = np.mean(v, axis=0)
        se = np.sqrt(np.sum(v, axis=2)) / shape[1]
        print(f"{name:15s} identified cells: mean variance / Monte Carlo variance "
              f"{mean[always].sum() / observed[always].sum():.3f}, / MSE "
              f"{mean[always].sum() / mse[always].sum():.3f}; all cells / MSE "
              f"{mean.sum() / mse.sum():.3f}; run means covered "
              f"{np.mean(np.abs(error) <= 1.96 * se):.3f}")
    by_topic = {name: np.where(always, np.mean(v, axis=0), 0.0).sum(axis=0)
                for name, v in variances.items()}
    excess = by_topic["model"] - by_topic["truth as model"]
    relevant = np.bincount(collection.tdi_topic[inside], weights=complete.grade[inside] > 0,
                           minlength=collection.n_topics)
    print("topics the model overstates most (identified cells, summed over runs; model / truth "
          "as model / Monte Carlo; relevant documents in the frame):")
    for t in np.argsort(-excess)[:5]:
        print(f"  {collection.topics[t]}: share of the excess {excess[t] / excess.sum():.2f}; "
              f"{by_topic['model'][t]:.4f} / {by_topic['truth as model'][t]:.4f} / "
              f"{np.where(always, observed, 0.0)[:, t].sum():.4f}; {relevant[t]:.0f} relevant")

    print("sampled topic x stratum cells by the relevant documents found in them: cells a draw; "
          "relevant among their unjudged documents a cell, the model's / the truth's; share "
          "holding none, the model's (mean probability) / the truth's")
    for k, (cells, expected, true, none, p_none) in enumerate(counts):
        if cells:
            found = k if k < 3 else "3+"
            print(f"  found {found}: {cells / args.trials:.1f}; {expected / cells:.2f} / "
                  f"{true / cells:.2f}; {p_none / cells:.1%} / {none / cells:.0%}")
    exact = (values == truth).all(axis=(0, 1))  # topics exact for every run in every draw
    for name in [n for n in variances if n == "model" or n.startswith("mixture")]:
        model = np.mean(variances[name], axis=0)
        share = model[:, exact].sum() / model.sum()
        print(f"{name}: topics exact in every draw: {int(exact.sum())} of {len(exact)}, "
              f"variance (summed over runs) {model[:, exact].sum():.4f}, {share:.0%} of all; "
              f"other topics: variance / MSE {model[:, ~exact].sum() / mse[:, ~exact].sum():.3f}")


def sampled_cells(ctx):
    """The frame's documents in their cells (topic x stratum): per document its cell and
    whether it is judged; per cell whether it is sampled below rate 1 (some of its documents
    judged, not all) and the relevant documents judged in it (the judged grade)."""
    from irsample.measures.ht import anticipated
    from irsample.model import JUDGED

    fp = anticipated.frame_positions(ctx)
    j = ctx.judgments
    judged = j.state[fp.docs] == JUDGED
    relevant = judged & (j.grade[fp.docs] >= max(ctx.rel_level, 1))
    n_strata = j.stratum_size.shape[1]
    cell = fp.topic * n_strata + fp.stratum
    n = ctx.n_topics * n_strata
    size, sampled = np.bincount(cell, minlength=n), np.bincount(cell[judged], minlength=n)
    return cell, judged, (sampled > 0) & (sampled < size), np.bincount(cell[relevant],
                                                                       minlength=n)


def found_none_cells(ctx):
    """Per document of the frame: whether it is unjudged in a cell (topic x stratum) sampled
    below rate 1 whose sample found no relevant document; per topic: whether it has such a
    cell."""
    cell, judged, open_, found = sampled_cells(ctx)
    empty = open_ & (found == 0)
    n_strata = len(empty) // ctx.n_topics
    topics = np.zeros(ctx.n_topics, dtype=bool)
    topics[np.flatnonzero(empty) // n_strata] = True
    return empty[cell] & ~judged, topics


def mixture_variance(collection, sample, measure, pi0, fitted, fitted_ratio, model_variance):
    """(runs, topics): ``--empty-share``'s variance: on each topic with a cell that found no
    relevant document, pi0 x the variance with those cells' unjudged documents all non-relevant
    + (1 - pi0) x the variance with their probabilities of relevance over (1 - pi0), capped at
    1; elsewhere the model's (``model_variance``)."""
    from irsample.measures.context import EvalContext
    from irsample.measures.ht import anticipated_terms
    from irsample.measures.ht import estimator as ht

    parts = []
    for empty in (True, False):
        def shifted(base, empty=empty):
            def probabilities(ctx, d):
                probs = base(ctx, d)
                if probs is None:
                    return None
                rows, _ = found_none_cells(ctx)
                probs = probs.copy()
                if empty:
                    probs[rows, 1:] = 0.0
                else:
                    rel = probs[rows, 1:] / (1.0 - pi0)
                    probs[rows, 1:] = rel / np.maximum(rel.sum(axis=1, keepdims=True), 1.0)
                probs[rows, 0] = 1.0 - probs[rows, 1:].sum(axis=1)
                return probs
            return probabilities
        ht.grade_probabilities = shifted(fitted)
        anticipated_terms.ratio_probabilities = shifted(fitted_ratio)
        try:
            context = EvalContext(collection, sample)
            parts.append(ht.estimate(context, measure).variance.reshape(model_variance.shape))
        finally:
            ht.grade_probabilities, anticipated_terms.ratio_probabilities = fitted, fitted_ratio
    _, topics = found_none_cells(context)
    return np.where(topics[None, :], pi0 * parts[0] + (1.0 - pi0) * parts[1], model_variance)


def cell_calibration(ctx, complete) -> np.ndarray:
    """(4, 5): for the cells (topic x stratum) sampled below rate 1, grouped by the relevant
    documents judged in them (0, 1, 2, 3+): the count of cells, the model's expected relevant
    documents among their unjudged documents, the truth's, the cells whose unjudged documents
    hold none, and the model's probability of that (prod (1 - p_d)), summed."""
    from irsample.measures.ht import anticipated
    from irsample.measures.ht.inclusion import ht_design

    model = anticipated._relevance_model(ctx, ht_design(ctx))
    out = np.zeros((4, 5))
    if model is None:
        return out
    fitted = model[1]
    cell, judged, open_, found = sampled_cells(ctx)
    n = len(open_)
    truly = complete.grade[anticipated.frame_positions(ctx).docs] > 0
    expected = np.bincount(cell[~judged], weights=fitted[~judged], minlength=n)
    true = np.bincount(cell[~judged & truly], minlength=n)
    p_none = np.exp(np.bincount(cell[~judged], weights=np.log1p(-np.minimum(fitted[~judged],
                                                                         1 - 1e-12)),
                                minlength=n))
    found = np.minimum(found, 3)
    for k in range(4):
        sel = open_ & (found == k)
        out[k] += (sel.sum(), expected[sel].sum(), true[sel].sum(), (sel & (true == 0)).sum(),
                   p_none[sel].sum())
    return out

if __name__ == "__main__":
    main()
