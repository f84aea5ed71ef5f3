"""Write synthetic MS MARCO-sized runs and qrels (seeded) for the memory benchmark.

Each run has 6,980 topics x 1,000 documents (about 276 MB of text, like an MS MARCO passage dev
run): ``qid Q0 docno rank score tag`` with MS MARCO-like ids (qids and passage ids are integers
below 8.8 million). Within a topic, the k-th candidate is drawn from its own block of 7
passage ids, so documents never repeat inside a topic; each run shuffles the candidates and
scores them in descending order. The qrels judge 1-3 relevant passages per topic among the
candidates (so every run finds some) plus a few non-relevant ones.

Usage: python benchmarks/make_msmarco_sized.py OUT_DIR [--runs 10] [--topics 6980] [--depth 1000]
       [--seed 7]
Writes OUT_DIR/qrels.txt and OUT_DIR/run01.txt ... (not committed: regenerate them).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as csv

N_PASSAGES = 8_841_823


def candidates(
    n_topics: int, depth: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """(qids (n_topics,), candidate passage ids (n_topics, depth)), distinct within a topic."""
    qids = np.sort(rng.choice(1_100_000, size=n_topics, replace=False)) + 1
    span = depth * 7
    start = rng.integers(0, N_PASSAGES - span, size=n_topics)
    blocks = start[:, None] + np.arange(depth)[None, :] * 7
    return qids, blocks + rng.integers(0, 7, size=(n_topics, depth))


def write_run(path: Path, qids, docs, tag: str, rng: np.random.Generator) -> None:
    n_topics, depth = docs.shape
    order = rng.permuted(np.tile(np.arange(depth), (n_topics, 1)), axis=1)
    ranked = np.take_along_axis(docs, order, axis=1)
    scores = np.sort(rng.normal(10.0, 3.0, size=(n_topics, depth)), axis=1)[:, ::-1]
    table = pa.table({
        "qid": np.repeat(qids, depth),
        "q0": pa.array(["Q0"] * (n_topics * depth)).dictionary_encode(),
        "docno": ranked.ravel(),
        "rank": np.tile(np.arange(1, depth + 1), n_topics),
        "score": np.round(scores.ravel(), 6),
        "tag": pa.array([tag] * (n_topics * depth)).dictionary_encode(),
    })
    options = csv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    csv.write_csv(table, path, options)


def write_qrels(path: Path, qids, docs, rng: np.random.Generator) -> None:
    n_topics, depth = docs.shape
    rows = []
    for t in range(n_topics):
        picked = rng.choice(depth, size=rng.integers(2, 6), replace=False)
        n_rel = rng.integers(1, min(3, len(picked)) + 1)
        for i, k in enumerate(picked):
            rows.append(f"{qids[t]} 0 {docs[t, k]} {1 if i < n_rel else 0}\n")
    path.write_text("".join(rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--topics", type=int, default=6980)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    qids, docs = candidates(args.topics, args.depth, rng)
    write_qrels(args.out / "qrels.txt", qids, docs, rng)
    for r in range(1, args.runs + 1):
        path = args.out / f"run{r:02d}.txt"
        write_run(path, qids, docs, f"synthetic{r:02d}", np.random.default_rng([args.seed, r]))
        print(f"{path}: {path.stat().st_size / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
