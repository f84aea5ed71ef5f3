"""Time of one evaluation with ht(AP) (and its variance) of the 129 TREC-8 runs x 50 topics on a
uniform 10% sample of the depth-100 pool, once compiled: best of ``--repeat`` runs, with the
parts (design facts, AP walk, jackknife) timed separately.

Usage: python benchmarks/ht_speed.py [--shared ../shared] [--repeat 5] [--measure 'ht(AP)']
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--measure", default="ht(AP)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import os

    from ht_coverage import design_for, load

    from irsample.evaluation import evaluate_collection
    from irsample.measures import parse_all

    col, frame = load("trec8", Path(args.shared))
    judgments = design_for("uniform", 0.1, frame).sample(frame, rng=1)
    measures = parse_all([args.measure])
    evaluate_collection(col, judgments, measures, ci=0.95)  # compile / load the numba cache
    best = float("inf")
    for _ in range(args.repeat):
        start = time.perf_counter()
        evaluate_collection(col, judgments, measures, ci=0.95)
        best = min(best, time.perf_counter() - start)
    print(f"{args.measure} with variance, {col.n_runs} runs x {col.n_topics} topics, "
          f"{len(col.rank_tdi)} ranked documents: best of {args.repeat}: {best * 1000:.0f} ms "
          f"(load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
