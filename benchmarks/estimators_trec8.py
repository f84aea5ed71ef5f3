"""Benchmark: sample_eval's estimators over all 129 TREC-8 runs, data already loaded.

For each golden stratified judgment set (../shared/golden/trec8/*.sample_eval.qrels.gz), with the
runs and judgments parsed and built once, times ``evaluate_collection`` for

- xinfAP + infNDCG (the issue's target: <= 60 ms, i.e. >= 1000x sample_eval.pl's ~0.5 s per
  run, ~67 s for 129 runs on these machines);
- sample_eval's whole measure set (xinfAP, infNDCG, iP@10/50/1000, inum_rel(_ret), iprec@rec);
- xinfAP + infNDCG with 95% confidence intervals (the variance walk added);

and prints the best and median of ``--repeat`` timings and the speed-up against 67 s.

Usage: python benchmarks/estimators_trec8.py [--shared ../shared] [--repeat 9]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

SAMPLE_EVAL_SECONDS = 67.0  #: sample_eval.pl on 129 runs (issue 3: ~0.5 s per run)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--shared", default=str(Path(__file__).resolve().parents[1].parent / "shared")
    )
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from irsample.evaluation import evaluate_collection
    from irsample.io import load_qrels, load_runs
    from irsample.measures import parse_all
    from irsample.model import Collection, Judgments

    shared = Path(args.shared)
    runs = load_runs(sorted((shared / "data/trec8-adhoc/runs").iterdir()))
    cases = [
        ("xinfAP + infNDCG", ["xinfAP", "infNDCG"], None),
        ("sample_eval set", ["sample_eval"], None),
        ("xinfAP + infNDCG, 95% CI", ["xinfAP", "infNDCG"], 0.95),
    ]
    print(f"{len(runs)} runs; sample_eval.pl reference: {SAMPLE_EVAL_SECONDS:.0f} s")
    print(f"{'judgments':58s} {'case':26s} {'best ms':>8s} {'median':>8s} {'speed-up':>9s}")
    for path in sorted((shared / "golden/trec8").glob("*.sample_eval.qrels.gz")):
        qrels = load_qrels(str(path))
        collection = Collection.build(runs, [qrels])
        judgments = Judgments.from_qrels(collection, qrels)
        for label, names, ci in cases:
            measures = parse_all(names)
            evaluate_collection(collection, judgments, measures, ci=ci)  # compile / warm caches
            times = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                evaluate_collection(collection, judgments, measures, ci=ci)
                times.append(time.perf_counter() - start)
            best, median = min(times), statistics.median(times)
            print(
                f"{path.name.split('.')[0][:58]:58s} {label:26s} {best * 1e3:8.1f} "
                f"{median * 1e3:8.1f} {SAMPLE_EVAL_SECONDS / median:8.0f}x"
            )


if __name__ == "__main__":
    main()
