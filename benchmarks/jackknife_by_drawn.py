"""Where the demo's final ht(AP) and ht(nDCG) intervals are wider than their errors ask (issue 25).

``benchmarks/demo_coverage.py`` measures the demo's final intervals on CACM about 30% wider than
1.96 times their errors' root mean square (ht(AP)). Those final judgments judge the top band whole
beside sampled cells, so the ratios' variance is the sample's: the stratified delete-one
jackknife of the corrected ratio (``measures/ht/jackknife.py``). This script runs the demo's
rounds (:func:`irsample.commands.demo.setup`, :func:`~irsample.design.rounds.judge_in_rounds`,
seeds 2008, 2009, ... as ``irsample demo --seed``) and, for the final judgments (``rounds``)
and for ``--redraws`` fresh stratified simple random samples of the same sizes in the same cells
(``fixed``: what the final cells would give without the rounds' choices), prints per estimator:

- the run means' mean squared error against the frame truth, their mean estimated variance and
  the ratio of the two (above 1: intervals wider than the errors ask), and their mean error;
- per identified topic, grouped by the relevant documents drawn at random in it (pi < 1; the
  jackknife deletes only those), the topic estimates' summed squared error and, over it, the
  variance the interval takes (``shipped``), AP's jackknife of the plain ratio (``plain``), and
  the ratio's variance linearised at the run's mean over topics (``linear``).

``--variance anticipated`` gives the ratios the relevance model's anticipated variance on these
designs too (floored as on a stratified simple random sample: ``measures/ht/estimator.py``,
"Anticipated variance"), in this script's process only, in place of the jackknife that ships
for them; ``shipped`` is then that variance, and the rounds themselves run as shipped (their
flags read the shipped rule), so only the variance of their final judgments changes.

Usage: python benchmarks/jackknife_by_drawn.py [--collection cacm|vaswani|trec8|covid|QRELS:RUNS]
       [--shared ../shared] [--seeds 30]
       [--redraws 1] [--fraction 0.1] [--rounds 10] [--variance shipped|anticipated]
"""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(__file__))
from ht_coverage import paths  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

#: groups of topics by their relevant documents drawn at random (lowest, highest)
GROUPS = ((0, 0), (1, 1), (2, 2), (3, 4), (5, 8), (9, None))
MEASURES = ("AP", "nDCG")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="cacm",
                        help="cacm, vaswani, trec8, covid, or QRELS:RUNS (a qrels file and a "
                        "folder of runs)")
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--redraws", type=int, default=1)
    parser.add_argument("--fraction", type=float, default=0.1)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--variance", choices=("shipped", "anticipated"), default="shipped")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    import numpy as np

    from irsample.api import load
    from irsample.commands.demo import setup
    from irsample.commands.demo_text import ESTIMATORS
    from irsample.design.rounds import judge_in_rounds
    from irsample.evaluation import evaluate_collection
    from irsample.experiments.data import parse_one

    collection, complete = load(*paths(args.collection, Path(args.shared)))
    frame, design, budget, _ = setup(collection, complete, 100, args.fraction)
    truth = evaluate_collection(collection, frame.judgments(),
                                [parse_one(m) for m in MEASURES]).values
    measures = [parse_one(e) for e in ESTIMATORS.values()]
    sums: dict = {}
    rng = np.random.default_rng(7)
    seeds = range(2008, 2008 + args.seeds)
    for seed in seeds:
        state = judge_in_rounds(collection, frame, design, budget, args.rounds, seed,
                                measures)[-1].state
        with variance(args.variance):
            add(sums, "rounds", collection, state.judgments(frame, source="rounds"), truth)
            for fixed in redraws(frame, state, args.redraws, rng):
                add(sums, "fixed", collection, fixed.judgments(frame, source="rounds"), truth)
    print(f"{args.collection}: the demo's final judgments, seeds {seeds[0]}-{seeds[-1]}, and "
          f"{args.redraws} fixed redraw(s) of each; the ratios' variance {args.variance}")
    for (kind, m), s in sums.items():
        print(f"{kind:6s} ht({m}): run means' MSE {s['mse'] / s['runs']:.3g}, variance "
              f"{s['var'] / s['runs']:.3g} (ratio {s['var'] / s['mse']:.2f}), mean error "
              f"{s['error'] / s['runs']:+.4f}")
        for g, (low, high) in enumerate(GROUPS):
            e2, shipped, plain, linear, cells = s["groups"][g]
            name = f"{low}" if high == low else (f"{low}+" if high is None else f"{low}-{high}")
            print(f"    drawn relevant {name:>4s}: {int(cells):6d} topic estimates, squared "
                  f"error {e2:8.3f}; over it shipped {ratio(shipped, e2)}, plain "
                  f"{ratio(plain, e2) if m == 'AP' else '   -'}, linear {ratio(linear, e2)}")


@contextmanager
def variance(kind: str):
    """Within the block, with ``kind`` "anticipated", the ratios (AP, nDCG) take the relevance
    model's anticipated variance also where documents judged with certainty stand beside drawn
    ones (``anticipated.ratio_probabilities`` reads the model's probabilities there too)."""
    from irsample.measures.ht import anticipated, anticipated_terms

    shipped = anticipated_terms.ratio_probabilities
    if kind == "anticipated":
        anticipated_terms.ratio_probabilities = anticipated.grade_probabilities
    try:
        yield
    finally:
        anticipated_terms.ratio_probabilities = shipped


def ratio(a: float, b: float) -> str:
    return f"{a / b:4.2f}" if b > 0 else "   -"


def redraws(frame, state, n: int, rng):
    """``n`` states whose judgments are a simple random sample in every cell of ``state`` (the
    rounds' union) of the size the rounds judged there: one round drawn from nothing judged
    with those sizes (``design.rounds.next_round``, counts by ``cell_counts``)."""
    import numpy as np

    from irsample.design.rounds import cell_counts, next_round

    done = cell_counts(frame, state)[1]
    empty = replace(state, sample=replace(state.sample,
                                          judged=np.zeros_like(state.sample.judged)))
    for _ in range(n):
        yield next_round(frame, empty, int(done.sum()), rng, take=done)


def add(sums: dict, kind: str, collection, judgments, truth) -> None:
    """Add one evaluation's errors and variances to ``sums`` (module docstring)."""
    import numpy as np

    from irsample.experiments.data import parse_one
    from irsample.measures.context import EvalContext
    from irsample.measures.ht.estimator import estimate
    from irsample.measures.ht.imputation import linearised_variance
    from irsample.measures.ht.inclusion import ht_design
    from irsample.measures.ht.jackknife import ap_replicates, jackknife_variance
    from irsample.measures.ht.walks import NO_CUTOFF
    from irsample.measures.reliability import judged_relevant

    ctx = EvalContext(collection, judgments)
    shape = (ctx.n_runs, ctx.n_topics)
    tdi_topic = collection.tdi_topic
    drawn = judged_relevant(ctx) & (judgments.judged_inclusion(tdi_topic) < 1.0)
    found = np.bincount(tdi_topic[drawn], minlength=ctx.n_topics)
    topics = judgments.has_topic
    for j, m in enumerate(MEASURES):
        e = estimate(ctx, parse_one(m))
        error = e.value.reshape(shape) - truth[:, :, j]
        shipped = e.topic_variance.reshape(shape)
        linear = linearised_variance(e.var_num, e.cov, e.var_den, e.centre, e.den).reshape(shape)
        plain = np.zeros(shape)
        if m == "AP":
            d = ht_design(ctx)
            plain = jackknife_variance(ctx, d, ap_replicates(ctx, d, NO_CUTOFF)).reshape(shape)
        s = sums.setdefault((kind, m), {"mse": 0.0, "var": 0.0, "error": 0.0, "runs": 0,
                                        "groups": np.zeros((len(GROUPS), 5))})
        mean_error = error[:, topics].mean(axis=1)
        s["mse"] += float((mean_error ** 2).sum())
        s["var"] += float(e.variance.reshape(shape)[:, topics].sum() / topics.sum() ** 2)
        s["error"] += float(mean_error.sum())
        s["runs"] += ctx.n_runs
        identified = np.isfinite(shipped) & topics[None, :]
        for g, (low, high) in enumerate(GROUPS):
            top = found.max() if high is None else high
            cells = identified & ((found >= low) & (found <= top))[None, :]
            s["groups"][g] += ((error[cells] ** 2).sum(), shipped[cells].sum(),
                               plain[cells].sum(), linear[cells].sum(), cells.sum())


if __name__ == "__main__":
    main()
