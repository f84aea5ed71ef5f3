"""Benchmark: system rankings without relevance judgments on TREC-8 (129 runs, 50 topics).

For every method of :mod:`irsample.design.nojudge.methods`, the correlation of its system ranking
with
the true one (MAP on the official qrels, which are the complete depth-100 pool): Kendall's tau-b,
tau_AP (Yilmaz, Aslam & Robertson 2008; truth = true MAP) and Pearson's r, plus the time taken.
Soboroff's normal parameters are TREC-8's own (mean and sd over topics of R_t / |pool_t|), as the
paper took them from TREC; its scores average ``--trials`` seeded draws, repeated for three
seeds to show the spread. Defaults chosen before looking (depth 100, Condorcet top 10%) are
marked with *; the other rows are a small sensitivity grid, not a tuned result.

Usage: PYTHONPATH=. python benchmarks/nojudge_trec8.py [--shared ../shared] [--trials 50]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--shared", default=str(Path(__file__).resolve().parents[1].parent / "shared")
    )
    parser.add_argument("--trials", type=int, default=50)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from irsample.design import nojudge
    from irsample.evaluation import evaluate_collection
    from irsample.io import load_qrels, load_runs
    from irsample.measures import parse_all
    from irsample.model import Collection, Judgments
    from irsample.stats import kendall_tau, pearson, tau_ap

    data = Path(args.shared) / "data/trec8-adhoc"
    runs = load_runs(sorted((data / "runs").iterdir()))
    qrels = load_qrels(str(data / "qrels.trec8.adhoc"))
    collection = Collection.build(runs, [qrels])
    truth = Judgments.from_qrels(collection, qrels)
    true_map = evaluate_collection(collection, truth, parse_all(["AP"])).summary[:, 0]
    mean, sd = nojudge.relevant_fraction(truth)
    print(f"TREC-8: {collection.n_runs} runs, {collection.n_topics} topics; "
          f"relevant fraction of the pool: mean {mean:.4f}, sd {sd:.4f}")
    print(f"{'method':58s} {'tau-b':>6s} {'tau_ap':>6s} {'r':>6s} {'s':>6s}")

    def row(label, estimator, **options):
        start = time.perf_counter()
        scores = estimator(collection, **options)
        took = time.perf_counter() - start
        print(f"{label:58s} {kendall_tau(true_map, scores.score).statistic:6.3f} "
              f"{tau_ap(true_map, scores.score).statistic:6.3f} "
              f"{pearson(true_map, scores.score).statistic:6.3f} {took:6.1f}", flush=True)

    for seed in (0, 1, 2):
        row(f"soboroff depth 100, seed {seed}" + (" *" if seed == 0 else ""), nojudge.soboroff,
            mean=mean, sd=sd, rng=seed, depth=100, trials=args.trials)
    row("soboroff depth 10, seed 0", nojudge.soboroff,
        mean=mean, sd=sd, rng=0, depth=10, trials=args.trials)
    for depth in (10, 100, 1000):
        for weighted in (False, True):
            label = f"refcount depth {depth}{' weighted' if weighted else ' basic'}"
            row(label + (" *" if depth == 100 and not weighted else ""),
                nojudge.refcount, depth=depth, weighted=weighted)
    for depth in (30, 100):
        for fraction in (0.05, 0.1, 0.2):
            for select in (None, 0.5, 0.2):
                label = f"condorcet depth {depth}, top {fraction:.0%}" + (
                    f", {select:.0%} most biased runs" if select else ", all runs")
                star = depth == 100 and fraction == 0.1 and select is None
                row(label + (" *" if star else ""), nojudge.condorcet,
                    depth=depth, fraction=fraction, select=select)

if __name__ == "__main__":
    main()
