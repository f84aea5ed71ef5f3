"""Experiment (a record for issue 14): where ppi(nDCG)'s bias on the topics the difference form
leaves to ht comes from, split by topic kind.

Per trial of the ``model-assisted`` recipe's draws (same seeds, one label source, one design),
the segments (run x topic) the difference form does not take (``ppi/difference.py``: fewer than
two sampled human-relevant documents or an unstable ideal DCG) are split by k_y, the number of
sampled human-relevant documents of the topic (0: ht_y imputes it), and k_f, the number of
sampled labelled-relevant ones (0: ht_f imputes it). Per kind it prints the contribution to the
bias of a run's mean over topics (sum over the kind's segments / (runs x topics)) of
ht_y - nDCG(y) and of ht_f - nDCG(f) (the control variate's error: ppi's bias on those
segments is the first minus lambda times the second), and the share of segments. The taken
segments' bias (the difference form's) is printed as one more row.

Measured (Vaswani, uniform 10%, 20 trials, seed 2024; share of segments, then contributions
ht_y - y / ht_f - f / ppi - y, ppi with ``kept="control"``):

| kind | share | kappa 0.7 | fusion |
|---|---|---|---|
| taken (difference form) | 0.31 / 0.33 | +0.012 / +0.012 / +0.002 | +0.011 / -0.015 / +0.019 |
| kept, k_y=0, k_f=0 | 0.11 / 0.11 | +0.004 / -0.014 / -0.001 | -0.000 / -0.018 / -0.001 |
| kept, k_y=0, k_f>0 | 0.23 / 0.23 | +0.011 / -0.039 / -0.004 | +0.016 / -0.016 / +0.013 |
| kept, k_y=1, k_f=0 | 0.00 / 0.07 | -0.000 / -0.000 / -0.000 | -0.018 / -0.012 / -0.018 |
| kept, k_y=1, k_f>0 | 0.27 / 0.21 | -0.015 / -0.007 / -0.010 | +0.003 / +0.003 / +0.000 |
| kept, k_y>=2 | 0.08 / 0.06 | +0.005 / +0.007 / -0.001 | +0.006 / +0.014 / -0.002 |

The first form tried, ht_y + lambda (f - ht_f) with ht_f's own imputation, had ppi - y = +0.049
on the k_y=0, k_f>0 kind at kappa 0.7 (ht_f - f = -0.039 there): ``ppi/control_variate.py``.

Usage: python benchmarks/ppi_kept_bias.py --collection vaswani|cacm --design uniform|2strata
       [--labels kappa0.7] [--trials 20] [--seed 2024] [--percent 10]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="vaswani")
    parser.add_argument("--design", default="uniform")
    parser.add_argument("--labels", default="kappa0.7")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--percent", type=float, default=10)
    args = parser.parse_args()

    from irsample.evaluation import evaluate_collection
    from irsample.experiments.data import CollectionFiles
    from irsample.experiments.model_assisted import Setup
    from irsample.measures import parse
    from irsample.measures.ht.estimator import estimate as ht_estimate
    from irsample.measures.ppi.difference import difference_estimate
    from irsample.measures.ppi.estimate import label_contexts, ppi_estimate
    from irsample.measures.ppi.label_judgments import informative_topics
    from irsample.model import JUDGED

    base = HERE.parent / "irsample" / "data" / args.collection
    files = CollectionFiles.of(base / "runs", base / "qrels.gz")
    # the recipe's draws: kappas (0.3, 0.5, 0.7), 3 favoured runs' top 20, depth 100
    setup = Setup(files, seed=args.seed, percents=(args.percent,),
                  strategies=("uniform", "2strata"), kappas=(0.3, 0.5, 0.7), adv_runs=3,
                  adv_depth=20, depth=100.0, mix=0.2)
    c = setup.collection
    m = parse("nDCG")[0]
    truth = np.nan_to_num(  # nDCG of the frame's grades, per segment
        evaluate_collection(c, setup.frame.judgments(), [m]).values[:, :, 0].ravel())
    sums: dict = {}
    n_seg_total = 0
    for trial in range(args.trials):
        _, _, sample, ctx, sources = next(cell for cell in setup.trial(trial)
                                          if cell[0] == args.design)
        lab = sources[args.labels]
        ctx_f, census, grades = label_contexts(ctx, lab)
        hy = ht_estimate(ctx, m)
        hf = ht_estimate(ctx_f, m)
        auto = np.nan_to_num(m.compute(census))
        topic = c.tdi_topic.astype(np.int64)
        useful_t = informative_topics(grades, sample, topic, ctx.n_topics)
        theta, _, kept, _ = difference_estimate(ctx, m, grades, hy.value, hy.den, useful_t,
                                                "stratum")
        j = sample
        k_y = np.bincount(topic[(j.state == JUDGED) & (j.grade > 0)], minlength=ctx.n_topics)
        k_f = np.bincount(topic[(j.state == JUDGED) & (grades > 0)], minlength=ctx.n_topics)
        ky, kf = k_y[ctx.seg_topic], k_f[ctx.seg_topic]
        present = (sample.has_topic[ctx.seg_topic]) & (ctx.seg_len > 0)
        e = ppi_estimate(ctx, lab, m, kept="control")
        n_seg_total += present.sum()
        kinds = {
            "taken (difference form)": present & ~kept,
            "kept, k_y=0, k_f=0": present & kept & (ky == 0) & (kf == 0),
            "kept, k_y=0, k_f>0": present & kept & (ky == 0) & (kf > 0),
            "kept, k_y=1, k_f=0": present & kept & (ky == 1) & (kf == 0),
            "kept, k_y=1, k_f>0": present & kept & (ky == 1) & (kf > 0),
            "kept, k_y>=2": present & kept & (ky >= 2),
        }
        for name, mask in kinds.items():
            s = sums.setdefault(name, np.zeros(5))
            s += [mask.sum(), np.sum((np.nan_to_num(hy.value) - truth)[mask]),
                  np.sum((np.nan_to_num(hf.value) - auto)[mask]),
                  np.sum((np.nan_to_num(e.value) - truth)[mask]),
                  np.sum(e.lam[mask])]
    print(f"{args.collection} {args.design} {args.percent:g}% {args.labels}, {args.trials} "
          f"trials, seed {args.seed}: contributions to the bias of a run's mean")
    print(f"{'kind':28s} {'share':>6s} {'ht_y-y':>8s} {'ht_f-f':>8s} {'ppi-y':>8s} {'lam':>6s}")
    for name, s in sums.items():
        print(f"{name:28s} {s[0] / n_seg_total:6.3f} {s[1] / n_seg_total:+8.4f} "
              f"{s[2] / n_seg_total:+8.4f} {s[3] / n_seg_total:+8.4f} "
              f"{s[4] / max(s[0], 1):6.3f}")


if __name__ == "__main__":
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    main()
