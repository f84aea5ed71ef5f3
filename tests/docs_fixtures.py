"""Small judged samples made from the bundled Vaswani collection, for the tests of commands
that need a sample (compare, ht and ppi estimates) and for the examples of the docs."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np

import irsample

VASWANI = Path(irsample.__file__).resolve().parent / "data" / "vaswani"
#: four of Vaswani's bundled runs, whose depth-100 pool the status tests sample
FOUR_RUNS = [str(VASWANI / "runs" / f"{n}.run.gz")
             for n in ("bm25_k1.2_b0.75", "dfr_inexpb2_c1", "ql_dir_mu2000", "tf_raw")]


def make_sample_qrels(path: Path, runs, *, depth: int = 100, fraction: float = 0.2,
                      seed: int = 7) -> Path:
    """TREC qrels of the depth-``depth`` pool of ``runs`` (files in trec_eval's order, as the
    bundled runs are) on Vaswani, each pooled document judged with probability ``fraction``
    (its grade from the complete qrels, 0 when they do not list it) and -1 otherwise: a
    uniform sample, one stratum."""
    grades = {}
    with gzip.open(VASWANI / "qrels.gz", "rt") as fh:
        for line in fh:
            q, _, d, r = line.split()
            grades[q, d] = int(r)
    pool: dict[str, set] = {}
    for run in runs:
        seen: dict[str, int] = {}
        with gzip.open(run, "rt") as fh:
            for line in fh:
                q, _, d = line.split()[:3]
                seen[q] = seen.get(q, 0) + 1
                if seen[q] <= depth:
                    pool.setdefault(q, set()).add(d)
    rng = np.random.default_rng(seed)
    lines = []
    for q in sorted(pool, key=int):
        for d in sorted(pool[q]):
            judged = rng.random() < fraction
            lines.append(f"{q} 0 {d} {grades.get((q, d), 0) if judged else -1}\n")
    path.write_text("".join(lines))
    return path


def irds_home(root: Path) -> Path:
    """An IR_DATASETS_HOME holding Vaswani's qrels as ir_datasets caches them
    (``vaswani/qrels.txt``, the NPL archive's ``rlv-ass`` layout: per topic its id, then the
    relevant documents, then a ``   /`` line), so that ``irds:vaswani`` loads offline."""
    topics: dict[str, list[str]] = {}
    with gzip.open(VASWANI / "qrels.gz", "rt") as fh:
        for line in fh:
            q, _, d, r = line.split()
            assert r == "1"  # Vaswani's judgments are relevant-only, as the NPL file lists them
            topics.setdefault(q, []).append(d)
    (root / "vaswani").mkdir(parents=True)
    text = "".join(f"{q}\n {' '.join(docs)}\n   /\n" for q, docs in topics.items())
    (root / "vaswani" / "qrels.txt").write_text(text)
    return root
