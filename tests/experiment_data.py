"""A small TREC-like collection written to files, for the experiment runner's tests.

Per topic, a universe of documents with a few relevant ones (grades 1, 2); runs of increasing
skill score documents as skill * grade + noise and rank their top ``depth``. Runs belong to
groups; the ``pooled`` runs' top ``pool_depth`` documents form the pool, judged completely
(qrels). Files: ``runs/r<i>.txt``, ``qrels.txt``, ``pooled.txt`` (``run judged|notjudged``) and
``groups.txt`` (TREC's colon-separated ``run:group:...`` runs table).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

GROUPS = ("g0", "g0", "g1", "g1", "g1", "g2", "g3", "g3")  # run r<i> belongs to GROUPS[i]
POOLED = (True, False, True, True, False, True, True, False)


def write_collection(folder: Path, *, seed: int = 5, n_topics: int = 6, n_docs: int = 400,
                     depth: int = 60, pool_depth: int = 20) -> dict:
    """Write the files under ``folder``; returns their paths (``runs`` is the folder)."""
    rng = np.random.default_rng(seed)
    runs_dir = folder / "runs"
    runs_dir.mkdir(parents=True)
    lines = {r: [] for r in range(len(GROUPS))}
    qrels = []
    for t in range(n_topics):
        grade = np.zeros(n_docs, dtype=np.int64)
        rel = rng.choice(n_docs, int(rng.integers(8, 30)), replace=False)
        grade[rel] = rng.choice([1, 1, 2], len(rel))
        pooled = np.zeros(n_docs, dtype=bool)
        for r in range(len(GROUPS)):
            skill = 0.3 + 2.0 * r / (len(GROUPS) - 1)
            score = skill * grade + rng.normal(0.0, 1.0, n_docs)
            top = np.argsort(-score, kind="stable")[:depth]
            lines[r] += [f"q{t} Q0 d{d} {k + 1} {score[d]:.6f} r{r}\n" for k, d in enumerate(top)]
            if POOLED[r]:
                pooled[top[:pool_depth]] = True
        qrels += [f"q{t} 0 d{d} {grade[d]}\n" for d in np.flatnonzero(pooled)]
    for r, text in lines.items():
        (runs_dir / f"r{r}.txt").write_text("".join(text))
    (folder / "qrels.txt").write_text("".join(qrels))
    (folder / "pooled.txt").write_text(
        "".join(f"r{r} {'judged' if p else 'notjudged'}\n" for r, p in enumerate(POOLED)))
    (folder / "groups.txt").write_text(
        "".join(f"r{r}:{g}:someone@example.org:adhoc:automatic\n" for r, g in enumerate(GROUPS)))
    return {"runs": runs_dir, "qrels": folder / "qrels.txt", "pooled": folder / "pooled.txt",
            "groups": folder / "groups.txt"}
