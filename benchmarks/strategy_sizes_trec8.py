"""Judgment-set sizes of paper 002's sampling strategies on TREC-8 (its Table 1 protocol).

Voorhees, "The effect of sampling strategy on inferred measures", SIGIR 2014: the judged
(pooled) runs are split at random into halves, only one half is pooled and sampled, and the
size of the judgment set is averaged over 50 trials. Here: the 71 pooled TREC-8 runs
(``run-pooled-flag.txt``), 50 seeded splits, the first 35 runs of each random permutation
pooled to depth 100; each strategy (irsample.design.sampling.named.PRESETS, and the ``--extra``
designs)
draws once per split (seed = split number) from that pool. The official qrels are the complete
depth-100 pool of all 71 runs, so every document selected has a judgment: no selection is lost,
unlike on the paper's TREC 2012 collection.

Printed per strategy: its strata, the mean judgment-set size (documents over 50 topics) with its
standard deviation, minimum and maximum over the splits, and the mean per topic. The paper's
Table 1 values are not in the text we have (the table did not survive extraction, and we found
no other copy), so they cannot be printed next to ours; the presets' rates are ours (see
irsample/design/sampling/named.py).

Usage: PYTHONPATH=. python benchmarks/strategy_sizes_trec8.py [--shared ../shared] [--trials 50]
       [--seed 2014] [--extra 'uniform(0.3)' ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--shared", default=str(Path(__file__).resolve().parents[1].parent / "shared")
    )
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--seed", type=int, default=2014)
    parser.add_argument("--extra", nargs="*", default=["terabyte(10)", "importance(0.15)"],
                        help="further designs to size the same way")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from irsample.design import PRESETS, Pool, SamplingFrame, parse_design
    from irsample.design.pools import runs_from_list
    from irsample.io import load_qrels, load_runs
    from irsample.io.lists import read_run_list
    from irsample.model import Collection

    base = Path(args.shared) / "data" / "trec8-adhoc"
    start = time.perf_counter()
    names = read_run_list(base / "run-pooled-flag.txt")
    runs = load_runs([base / "runs" / f"input.{name}.gz" for name, _ in names])
    qrels = load_qrels(base / "qrels.trec8.adhoc")
    collection = Collection.build(runs, [qrels])
    pooled = np.array(runs_from_list(collection, names, "run-pooled-flag.txt"))
    print(f"TREC-8: {len(pooled)} pooled runs, {collection.n_topics} topics, {len(qrels)} "
          f"judgments; loaded in {time.perf_counter() - start:.1f} s")
    designs = {name: parse_design(name) for name in list(PRESETS) + list(args.extra)}
    half = len(pooled) // 2
    rng = np.random.default_rng(args.seed)
    sizes = {name: [] for name in designs}
    pool100 = []
    start = time.perf_counter()
    for trial in range(args.trials):
        chosen = rng.permutation(pooled)[:half]
        frame = SamplingFrame.from_pool(Pool.from_runs(collection, chosen, depth=100), qrels)
        pool100.append(len(frame))
        for name, design in designs.items():
            sizes[name].append(int(design.select(frame, rng=trial).judged.sum()))
    print(f"{args.trials} random halves of {half} runs in {time.perf_counter() - start:.1f} s; "
          f"their depth-100 pool: {np.mean(pool100):.0f} documents on average "
          f"({np.mean(pool100) / collection.n_topics:.1f} per topic)\n")
    print(f"{'strategy':<17}{'strata (rank:rate)':<30}{'mean':>9}{'sd':>8}{'min':>8}{'max':>8}"
          f"{'per topic':>11}")
    for name, design in designs.items():
        spec = getattr(design, "spec", "-")
        s = np.array(sizes[name])
        print(f"{name:<17}{spec:<30}{s.mean():>9.1f}{s.std(ddof=1):>8.1f}{s.min():>8d}"
              f"{s.max():>8d}{s.mean() / collection.n_topics:>11.1f}")


if __name__ == "__main__":
    main()
