"""Benchmark: inferred relevance judgments on TREC-8 (paper 003's table "Difference of inferred
qrels from actual qrels"; Aslam & Yilmaz, CIKM 2007).

For each fraction of the pool judged (uniform samples per topic, k = round(f N_t), seeded), AP of
all 129 runs per topic is estimated by infAP and R^ by sample_eval's estimator; relevance
probabilities of the unjudged pool documents are fitted (:mod:`irsample.design.nojudge.infer`) and
rounded three ways. Precision, recall and F1 of the inferred relevant set against the official
qrels are per-topic means (topics with relevant documents; all 50), over the whole pool (judged
documents included, as qrels) and over the unjudged documents only. An "oracle" row fits the
exact AP and R with the same sample, separating the fit from the estimators' noise.

Usage: PYTHONPATH=. python benchmarks/infer_trec8.py [--shared ../shared] [--seeds 0]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

FRACTIONS = (0.02, 0.05, 0.10, 0.20)
#: paper 003's table (docs judged, precision, recall, F1)
PUBLISHED = [(0.017, 0.5562, 0.3833, 0.4171), (0.041, 0.5919, 0.5495, 0.5332),
             (0.063, 0.6243, 0.6004, 0.5880), (0.117, 0.7068, 0.6887, 0.6906),
             (0.218, 0.8101, 0.7694, 0.7835)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--shared", default=str(Path(__file__).resolve().parents[1].parent / "shared")
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from irsample.design import SamplingFrame, uniform
    from irsample.design.nojudge.infer import agreement, estimates_from_sample, infer_relevance
    from irsample.evaluation import evaluate_collection
    from irsample.io import load_qrels, load_runs
    from irsample.measures import parse_all
    from irsample.model import Collection, Judgments

    data = Path(args.shared) / "data/trec8-adhoc"
    runs = load_runs(sorted((data / "runs").iterdir()))
    qrels = load_qrels(str(data / "qrels.trec8.adhoc"))
    collection = Collection.build(runs, [qrels])
    truth = Judgments.from_qrels(collection, qrels)
    frame = SamplingFrame.from_qrels(collection, qrels)
    true_ap = evaluate_collection(collection, truth, parse_all(["AP"])).values[:, :, 0]
    true_r = np.bincount(np.repeat(np.arange(collection.n_topics), np.diff(truth.grade_offsets))
                         [truth.judged_grades > 0], minlength=collection.n_topics).astype(float)
    print("paper 003 (Aslam & Yilmaz 2007): judged  P      R      F1")
    for f, p, r, f1 in PUBLISHED:
        print(f"{'':35s}{f:6.1%}  {p:.4f} {r:.4f} {f1:.4f}")
    print(f"\n{'sample':22s} {'judged':>6s} {'rounding':9s} {'P':>6s} {'R':>6s} {'F1':>6s}"
          f"   unjudged only: {'P':>6s} {'R':>6s} {'F1':>6s}  fit rms  s")
    for seed in args.seeds:
        for fraction in FRACTIONS:
            sample = uniform(fraction).sample(frame, rng=seed)
            judged = np.count_nonzero(sample.state == 2) / np.count_nonzero(sample.state)
            start = time.perf_counter()
            ap, r_hat = estimates_from_sample(collection, sample)
            cases = [("uniform", ap, r_hat)]
            if fraction == 0.05:
                cases.append(("oracle AP, R", true_ap, true_r))
            for label, a, r in cases:
                fit = infer_relevance(collection, sample, a, r, rounding="top")
                took = time.perf_counter() - start
                for rounding in ("top", "threshold", "random"):
                    rounded = fit.rounded(rounding, rng=seed)
                    pool_m = agreement(rounded, truth).mean
                    new_m = agreement(rounded, truth, unjudged_only=True).mean
                    print(f"{label + f' {fraction:.0%} s{seed}':22s} {judged:6.1%} {rounding:9s} "
                          f"{pool_m[0]:6.3f} {pool_m[1]:6.3f} {pool_m[2]:6.3f}   "
                          f"{'':15s}{new_m[0]:6.3f} {new_m[1]:6.3f} {new_m[2]:6.3f}  "
                          f"{np.nanmean(fit.rms):.4f} {took:5.1f}", flush=True)
                start = time.perf_counter()


if __name__ == "__main__":
    main()
