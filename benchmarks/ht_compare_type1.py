"""Type-I error of ht(M) paired comparisons on pairs whose frame truths are equal.

For every run of the bundled Vaswani collection (or TREC-8), a twin is built by permuting, within
each topic, the documents of the run's ranking among those of equal frame grade (documents the
frame does not hold count as grade 0): the twin has the same relevance at every rank, so every
measure's truth on the frame is the same for run and twin, topic by topic; the documents differ,
so samples see them differently. Each trial draws a design sample of the frame, compares each
run with its twin (irsample.comparison, no multiplicity correction), and counts p < 0.05.

Usage: python benchmarks/ht_compare_type1.py [--collection vaswani] [--trials 200]
       [--design uniform|2strata] [--fraction 0.1] [--measure 'ht(AP)'] [--seed 3]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="vaswani")
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--design", default="uniform")
    parser.add_argument("--fraction", type=float, default=0.1)
    parser.add_argument("--measures", default="ht(AP),ht(nDCG),ht(P@10)")
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from ht_coverage import design_for, load

    from irsample.comparison import compare_collection
    from irsample.design import SamplingFrame
    from irsample.io import load_runs
    from irsample.model import Collection

    col, frame = load(args.collection, Path(args.shared))
    rng = np.random.default_rng(args.seed)
    grade = np.zeros(col.n_tdi, dtype=np.int64)
    grade[frame.tdi] = frame.rel
    rows = []
    for r, name in enumerate(col.run_names):
        for t, topic in enumerate(col.topics):
            s = r * col.n_topics + t
            tdi = col.rank_tdi[col.rank_offsets[s]:col.rank_offsets[s + 1]]
            twin = tdi.copy()
            for g in np.unique(grade[tdi]):
                at = np.flatnonzero(grade[tdi] == g)
                twin[at] = tdi[rng.permutation(at)]
            score = len(tdi) - np.arange(len(tdi), dtype=np.float64)
            docs = [col.tdi_docno[int(i)].as_py().decode() for i in tdi]
            twins = [col.tdi_docno[int(i)].as_py().decode() for i in twin]
            rows += [(topic, d, sc, name) for d, sc in zip(docs, score)]
            rows += [(topic, d, sc, name + "~twin") for d, sc in zip(twins, score)]
    runs = load_runs(pd.DataFrame(rows, columns=["qid", "docno", "score", "tag"]))
    pair_col = Collection.build(runs)
    # the frame on the new collection: same (topic, docno) rows
    qid = pa_strings([col.topics[t] for t in frame.topic])
    docno = pa_strings([col.tdi_docno[int(i)].as_py().decode() for i in frame.tdi])
    topic, tdi = pair_col.lookup(qid, docno)
    keep = tdi >= 0
    pair_frame = SamplingFrame.from_arrays(pair_col, topic[keep], tdi[keep], frame.rel[keep])
    design = design_for(args.design, args.fraction, pair_frame)
    names = pair_col.run_names
    twin_of = {n: names.index(n + "~twin") for n in names if not n.endswith("~twin")}
    print(f"{args.collection}: {len(twin_of)} run/twin pairs, {args.design} {args.fraction}, "
          f"{args.trials} trials, seed {args.seed} (frame keeps {keep.mean():.3f} of the rows)")
    for measure in args.measures.split(","):
        rejected = total = 0
        z = []
        for child in np.random.SeedSequence(args.seed).spawn(args.trials):
            judgments = design.sample(pair_frame, rng=np.random.default_rng(child))
            table = compare_collection(pair_col, judgments, measure, correction="none")
            pairs = table[table.run_b == table.run_a + "~twin"]
            rejected += int((pairs.p < 0.05).sum())
            total += len(pairs)
            z += list(pairs["diff"] / pairs.se.where(pairs.se > 0, np.nan))
        z = np.array(z, dtype=float)
        print(f"{measure:12} type-I error at 0.05: {rejected / total:.3f} ({rejected}/{total}); "
              f"sd of z = {np.nanstd(z):.3f}")


def pa_strings(values):
    import pyarrow as pa

    return pa.array(values, pa.string())


if __name__ == "__main__":
    main()
