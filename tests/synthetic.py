"""Synthetic test collections with complete judgments, built in memory (no files).

:func:`pooled_collection` imitates a TREC ad hoc collection on a small scale: per topic a
universe of documents with a few dozen relevant ones (grades 1 and 2 unless asked), runs of
increasing skill that score documents as skill * grade + noise and retrieve their top ``depth``,
and complete
judgments of the depth-``pool_depth`` pool of all runs (documents outside the pool are unjudged
and count as non-relevant, as in TREC). Run ``r{i}`` is better for larger ``i``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from irsample.io import load_qrels, load_runs
from irsample.model import Collection


def pooled_collection(
    seed: int, *, n_topics=10, n_runs=8, n_docs=3000, depth=200, pool_depth=100,
    relevant=(20, 80), noise=1.5, grades=(1, 1, 2),
):
    """(collection, complete qrels table) of a depth-``pool_depth`` pool over ``n_runs`` runs;
    a relevant document's grade is drawn from ``grades``."""
    rng = np.random.default_rng(seed)
    run_parts, qrels_parts = [], []
    for t in range(n_topics):
        grade = np.zeros(n_docs, dtype=np.int64)
        rel = rng.choice(n_docs, int(rng.integers(*relevant)), replace=False)
        grade[rel] = rng.choice(list(grades), len(rel))
        pooled = np.zeros(n_docs, dtype=bool)
        for r in range(n_runs):
            skill = 0.5 + 2.5 * r / max(n_runs - 1, 1)
            score = skill * grade + rng.normal(0.0, noise, n_docs)
            top = np.argsort(-score, kind="stable")[:depth]
            docnos = [f"d{d}" for d in top]
            run_parts.append(pd.DataFrame(
                {"qid": f"q{t}", "docno": docnos, "score": score[top], "tag": f"r{r}"}
            ))
            pooled[top[:pool_depth]] = True
        docs = np.flatnonzero(pooled)
        qrels_parts.append(pd.DataFrame(
            {"qid": f"q{t}", "docno": [f"d{d}" for d in docs], "rel": grade[docs]}
        ))
    runs = load_runs(pd.concat(run_parts, ignore_index=True))
    table = load_qrels(pd.concat(qrels_parts, ignore_index=True))
    return Collection.build(runs, [table]), table


def random_judgments(seed, *, n_topics, n_docs, n_runs, depth, grades):
    """(complete qrels as a DataFrame, runs table): per topic every one of ``n_docs`` documents
    graded at random from ``grades``, and ``n_runs`` runs each retrieving ``depth`` random
    documents with random scores (no relation between score and grade)."""
    rng = np.random.default_rng(seed)
    qrels, rows = [], []
    for t in range(n_topics):
        for d in range(n_docs):
            qrels.append((str(t), f"d{d}", int(rng.choice(grades))))
        for r in range(n_runs):
            for d in rng.choice(n_docs, depth, replace=False):
                rows.append((str(t), f"d{d}", float(rng.random()), f"r{r}"))
    runs = load_runs(pd.DataFrame(rows, columns=["qid", "docno", "score", "tag"]))
    return pd.DataFrame(qrels, columns=["qid", "docno", "rel"]), runs


def frame_labels(collection, frame, values, kind="grade"):
    """Automatic labels ``values`` (one per row of ``frame``) on ``collection``'s documents;
    NaN (no label) outside the frame."""
    from irsample.io.labels import AutoLabels

    v = np.full(collection.n_tdi, np.nan)
    v[frame.tdi] = values
    return AutoLabels(v, kind)


def moved_grade_labels(collection, frame, seed, share):
    """Grade labels: the frame's grades, a ``share`` of them moved one grade up or down (within
    0 and the frame's highest grade)."""
    rng = np.random.default_rng(seed)
    moved = rng.integers(-1, 2, len(frame)) * (rng.random(len(frame)) < share)
    return frame_labels(collection, frame, np.clip(frame.rel + moved, 0, max(frame.rel.max(), 1)))


def planned_world():
    """A pooled collection (8 topics, 5 runs, depth-40 pool, grades 1-2) with its sampling
    frame, and a planner's sample of 20% of it (a pilot, then a top-up whose earlier judgments
    are certain): the design on which ht's interval is its sample's own variance and ppi's
    label side can be redrawn (tests of ``irsample.measures.ppi.redraw``)."""
    from irsample.design import SamplingFrame
    from irsample.design.planner.sequential import PlannedDesign
    from irsample.measures import EvalContext

    collection, qrels = pooled_collection(11, n_topics=8, n_runs=5, n_docs=600, depth=60,
                                          pool_depth=40, relevant=(6, 20), grades=(1, 2))
    frame = SamplingFrame.from_qrels(collection, qrels)
    sample = PlannedDesign(int(0.2 * len(frame)), "xinfAP").sample(frame, rng=3)
    return collection, frame, EvalContext(collection, sample)
