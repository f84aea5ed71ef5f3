"""Which part of the reliability rule flags a draw, and is it right to? (issue 25)

For ``--draws`` samples of one design of ``irsample simulate ci-coverage`` (the depth-100 pool
of the pooled runs as the frame, its complete judgments as the truth; ``ht_coverage.design_for``)
this prints, per draw and per ratio estimator (ht(AP), ht(nDCG)), the share of the run means
whose 95% interval (as ``eval --ci`` prints it: on the logit scale since 2026-11-29, normal
before) covers the truth, the share the rule flags
(:func:`irsample.measures.reliability.assess`, as ``eval --ci`` applies it) and by which part:
weak topics (rule 2), and, as medians over the runs in standard errors of the mean, rule 3's
two terms: the estimated bias (the topics' signed biases summed, or for ht(AP), which removes
it, the bounds of the correction's error in quadrature) and the imputed topics' bound (the
spread of the run's estimates over its other topics, for each topic with no judged relevant
document). Beside the bound, the imputed topics' actual error against the truth, summed over
them, in the same units: where it is at least the bound, the flags it raises are right. Last,
the coverage of the draws that flag most of the run means against that of the others.

Measured on TREC-8 (planned and 2strata designs at 10%, 40 draws, seed 2525): REPRODUCTION.md,
"Why TREC-8's 10% samples are flagged".

Usage: python benchmarks/flag_anatomy.py [--collection trec8] [--design planned]
       [--percent 10] [--draws 40] [--seed 2525] [--shared ../shared]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from ht_coverage import design_for, load  # noqa: E402

MEASURES = {"ht(AP)": "AP", "ht(nDCG)": "nDCG"}


def anatomy(ctx, measure, truth: np.ndarray) -> dict:
    """The rule's outcome for ``measure`` on ``ctx`` and its parts (module docstring);
    ``truth`` (runs, topics) the target measure on the complete judgments."""
    from irsample.measures.ht.estimator import estimate
    from irsample.measures.reliability import (
        assess,
        found_per_topic,
        imputation_bound,
        judged_share,
        quadrature_cells,
        summed_bias,
    )
    from irsample.stats.intervals import covers, run_mean_interval

    shape = (ctx.n_runs, ctx.n_topics)
    e = estimate(ctx, measure.inner)
    value, variance = e.value.reshape(shape), e.variance.reshape(shape)
    answered = ctx.answered
    found = assess(ctx, measure, answered, variance, value)
    se = np.sqrt(np.where(answered, variance, 0.0).sum(axis=1))
    bias = np.where(answered, measure.estimated_bias(ctx).reshape(shape), 0.0)
    rule3 = summed_bias(bias, quadrature_cells(ctx, measure, shape))
    imputed = (found_per_topic(ctx) == 0) & (judged_share(ctx) < 1.0)
    cells = answered & imputed[None, :]
    bound = imputation_bound(value, answered, cells).sum(axis=1)
    actual = np.abs(np.where(cells, value - truth, 0.0).sum(axis=1))
    safe = np.where(se > 0, se, np.nan)
    q = np.maximum(answered.sum(axis=1), 1)
    true_mean = np.where(answered, truth, 0.0).sum(axis=1) / q
    # the interval eval --ci prints (Evaluation.interval)
    printed = run_mean_interval(value, variance, answered, 0.95, spread=e.variance_spread)
    return {"flagged": found.unreliable.mean(), "weak": found.many_weak.mean(),
            "cover": np.mean(covers(printed.estimate, printed.low, printed.high, true_mean)),
            "bias": np.nanmedian(rule3 / safe), "bound": np.nanmedian(bound / safe),
            "actual": np.nanmedian(actual / safe), "imputed": np.flatnonzero(imputed)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="trec8")
    parser.add_argument("--design", default="planned")
    parser.add_argument("--percent", type=float, default=10.0)
    parser.add_argument("--draws", type=int, default=40)
    parser.add_argument("--seed", type=int, default=2525)
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    args = parser.parse_args()

    from irsample.evaluation import evaluate_collection
    from irsample.measures import parse
    from irsample.measures.context import EvalContext

    collection, frame = load(args.collection, Path(args.shared))
    design = design_for(args.design, args.percent / 100.0, frame)
    targets = [parse(t)[0] for t in MEASURES.values()]
    truth = evaluate_collection(collection, frame.judgments(), targets).values
    topics = np.asarray(collection.topics)
    print(f"{args.collection}, {args.design} {args.percent:g}%, {args.draws} draws, seed "
          f"{args.seed}; medians over runs, in standard errors of the mean")
    print("draw  estimator  cover  flagged  weak>5%  rule-3 bias  imputed bound  imputed actual  "
          "imputed topics")
    flagged = {name: [] for name in MEASURES}
    covered = {name: [] for name in MEASURES}
    for i, child in enumerate(np.random.SeedSequence(args.seed).spawn(args.draws)):
        judgments = design.sample(frame, rng=np.random.default_rng(child))
        ctx = EvalContext(collection, judgments)
        for k, name in enumerate(MEASURES):
            part = anatomy(ctx, parse(name)[0], truth[:, :, k])
            flagged[name].append(part["flagged"])
            covered[name].append(part["cover"])
            print(f"{i:>4}  {name:<9}  {part['cover']:>5.2f}  {part['flagged']:>7.2f}  "
                  f"{part['weak']:>7.2f}  {part['bias']:>11.2f}  {part['bound']:>13.2f}  "
                  f"{part['actual']:>14.2f}  "
                  f"{', '.join(topics[part['imputed']]) or '-'}")
    for name, shares in flagged.items():
        shares, cover = np.asarray(shares), np.asarray(covered[name])
        most = shares > 0.5
        print(f"{name}: {shares.mean():.3f} of the run means flagged; {int(most.sum())} of "
              f"{len(shares)} draws flag more than half of them, where the intervals cover "
              f"{cover[most].mean() if most.any() else np.nan:.3f} (the other draws "
              f"{cover[~most].mean() if (~most).any() else np.nan:.3f})")


if __name__ == "__main__":
    main()
