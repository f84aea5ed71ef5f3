"""Synthetic runs over a qrels file, to validate irsample on collections whose runs we do not have.

    python scripts/synthetic_runs.py QRELS OUTDIR [--runs 10] [--depth 100] [--seed 2]
                                     [--prefix dl] [--gz-every 0]

Each run ``PREFIX00``, ``PREFIX01``, ... ranks, for every topic of QRELS, a random 40-90% of
that topic's qrels documents (up to DEPTH) padded to DEPTH with documents the qrels do not
list (``FAKE-topic-n``, non-relevant), by score ``quality * grade + N(0, 1)`` with a quality
per run drawn from U(0.3, 2.0) (a negative grade counts as 0). Three runs carry what real runs
do and test collections trip over: run 1 leaves out every fifth topic, run 2 returns 5
documents on every seventh, run 3 rounds its scores to integers (ties). Every run's documents
are judged or outside the qrels, so the qrels are the truth of the frame the runs make.

The validation of the session of 2026-12-01 (REPRODUCTION.md, "A collection we do not have:
DL 2019 passages with synthetic runs") used
``QRELS = ../shared/data/reference-qrels/qrels.dl19-passage.txt.gz`` with the defaults.
"""

from __future__ import annotations

import argparse
import gzip
from collections import defaultdict
from pathlib import Path

import numpy as np

from irsample.io import load_qrels


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """topic -> docno -> grade in file order, read by irsample's qrels reader (plain or gzip;
    a malformed line is an error naming its file and line)."""
    table = load_qrels(str(path))
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for qid, docno, rel in zip(table.qid.to_pylist(), table.docno.to_pylist(),
                               np.asarray(table.rel).tolist()):
        qrels[qid.decode()][docno.decode()] = int(rel)
    return qrels


def write_runs(qrels, outdir: Path, *, n_runs: int, depth: int, seed: int, prefix: str,
               gz_every: int = 0) -> list[Path]:
    """Write the runs (see the module docstring); returns their paths."""
    rng = np.random.default_rng(seed)
    outdir.mkdir(parents=True, exist_ok=True)
    paths = []
    for r in range(n_runs):
        name = f"{prefix}{r:02d}"
        quality = rng.uniform(0.3, 2.0)
        lines = []
        for ti, topic in enumerate(sorted(qrels)):
            if r == 1 and ti % 5 == 0:  # a run that leaves topics out
                continue
            docs = list(qrels[topic].items())
            n_judged = min(len(docs), int(depth * rng.uniform(0.4, 0.9)))
            chosen = [docs[i] for i in rng.choice(len(docs), size=n_judged, replace=False)]
            chosen += [(f"FAKE-{topic}-{rng.integers(1e9)}", 0) for _ in range(depth - n_judged)]
            length = 5 if r == 2 and ti % 7 == 0 else depth  # a short ranking
            grade = np.array([max(g, 0) for _, g in chosen], float)
            score = quality * grade + rng.normal(0, 1, len(chosen))
            if r == 3:  # ties
                score = np.round(score, 0)
            order = np.argsort(-score, kind="stable")[:length]
            lines += [f"{topic} Q0 {chosen[i][0]} {rank} {score[i]:.4f} {name}\n"
                      for rank, i in enumerate(order, 1)]
        gz = gz_every > 0 and r % gz_every == 0
        path = outdir / (name + (".run.gz" if gz else ".run"))
        with (gzip.open if gz else open)(path, "wt") as fh:
            fh.writelines(lines)
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("qrels", type=Path)
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--prefix", default="dl")
    parser.add_argument("--gz-every", type=int, default=0,
                        help="gzip every Nth run (0: none)")
    args = parser.parse_args()
    paths = write_runs(read_qrels(args.qrels), args.outdir, n_runs=args.runs, depth=args.depth,
                       seed=args.seed, prefix=args.prefix, gz_every=args.gz_every)
    print(f"wrote {len(paths)} runs to {args.outdir}")


if __name__ == "__main__":
    main()
