"""Finding relevant documents on TREC-8: depth-k pooling against move-to-front and Hedge.

Candidates are the documents the runs retrieved within depth 100; with the 71 pooled runs
(default) that is exactly the official depth-100 pool, so the official qrels judge every
candidate (a simulated assessor never guesses). Per topic t the budget is
b_t = floor(f * N_t + 0.5) judgments, N_t the topic's depth-100 pool size, for f = 5%, 10%, 20%:

- depth-k: the pooling order (rank 1 of every run, in the runs' order, then rank 2, ...) cut at
  b_t: the largest depth-k pool that fits, plus the first new documents at depth k + 1 in run
  order;
- local MTF and Hedge (beta = 0.1): b_t judgments per topic;
- global MTF: the same total sum_t b_t, shared out over the topics by the method itself.

Printed: the fraction of all relevant documents found (sum over topics of relevant judged /
4,728 relevant in the qrels), the mean per-topic recall, and the time each method took.
Cormack et al. (SIGIR 1998, §6.1) and Aslam et al. (CIKM 2003) report that MTF and Hedge find
far more relevant documents than depth-k pooling for the same number of judgments.

Usage: PYTHONPATH=. python benchmarks/finding_relevant.py [--shared ../shared]
       [--runs pooled|all] [--fractions 0.05,0.1,0.2] [--seed 1998] [--beta 0.1]
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
    parser.add_argument("--runs", choices=("pooled", "all"), default="pooled")
    parser.add_argument("--fractions", default="0.05,0.1,0.2")
    parser.add_argument("--seed", type=int, default=1998)
    parser.add_argument("--beta", type=float, default=0.1)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from irsample.design.adaptive.assessor import QrelsAssessor
    from irsample.design.adaptive.judging import judge_adaptively
    from irsample.design.adaptive.methods import DepthOrder, Hedge, JudgingProblem, MoveToFront
    from irsample.io import load_qrels, load_runs
    from irsample.model import Collection

    base = Path(args.shared) / "data" / "trec8-adhoc"
    flags = dict(line.split() for line in (base / "run-pooled-flag.txt").read_text().splitlines())
    names = sorted(n for n, f in flags.items() if args.runs == "all" or f == "judged")
    start = time.perf_counter()
    runs = load_runs([base / "runs" / f"input.{n}.gz" for n in names])
    qrels = load_qrels(str(base / "qrels.trec8.adhoc"))
    collection = Collection.build(runs, [qrels])
    problem = JudgingProblem.build(collection, depth=100)
    topic, tdi = collection.lookup(qrels.qid, qrels.docno)
    relevant = np.bincount(topic[qrels.rel > 0], minlength=collection.n_topics)
    in_qrels = np.zeros(collection.n_tdi, bool)
    in_qrels[tdi[tdi >= 0]] = True
    pool = problem.n_candidates
    print(f"TREC-8: {len(runs)} {args.runs} runs, {collection.n_topics} topics, depth-100 pool "
          f"{pool.sum()} documents ({int((problem.candidates & ~in_qrels).sum())} not in the "
          f"qrels), {relevant.sum()} relevant; loaded in {time.perf_counter() - start:.1f} s")

    methods = {"depth-k": DepthOrder(), "MTF local": MoveToFront("local"),
               "MTF global": MoveToFront("global"), f"Hedge({args.beta:g})": Hedge(args.beta)}
    print(f"{'budget':>7s} {'judged':>7s}  " + "  ".join(f"{m:>18s}" for m in methods))
    for fraction in (float(f) for f in args.fractions.split(",")):
        budget = np.floor(fraction * pool + 0.5).astype(np.int64)
        cells = []
        for method in methods.values():
            assessor = QrelsAssessor(collection, qrels)
            shared = method.scope == "global"
            tick = time.perf_counter()
            result = judge_adaptively(
                collection, method, assessor, budget=int(budget.sum()) if shared else budget,
                depth=100, rng=args.seed,
            )
            took = time.perf_counter() - tick
            assert len(result) == budget.sum() and not result.pending.any()
            found = result.relevant_found()
            recall = np.mean(found[relevant > 0] / relevant[relevant > 0])
            note = f"*{assessor.outside}" if assessor.outside else ""
            cells.append(f"{found.sum() / relevant.sum():.3f} {recall:.3f} {took:4.1f}s{note}")
        print(f"{fraction:7.0%} {budget.sum():7d}  " + "  ".join(f"{c:>18s}" for c in cells))
    print("cells: fraction of all relevant found, mean per-topic recall, seconds "
          "(*n: n judged documents outside the qrels, taken as non-relevant)")


if __name__ == "__main__":
    main()
