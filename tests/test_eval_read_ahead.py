"""What `irsample eval` does ahead of the evaluation must not change it: the reading threads read
TREC qrels (other formats stay with the caller), a collection answers lookups of the judgments
it was built with from the build, and the kernel warm-up leaves no trace."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

import numpy as np

import irsample.io.ahead as ahead_module
from irsample.api import measures_from
from irsample.io import load_qrels, load_runs
from irsample.io.ahead import ReadAhead
from irsample.model import Collection, Judgments
from irsample.streaming import evaluate_in_batches, load_kernels

DATA = Path(__file__).resolve().parents[1] / "irsample" / "data" / "vaswani"
QRELS = DATA / "qrels.gz"
RUNS = sorted((DATA / "runs").glob("*.run.gz"))


def test_reading_threads_read_trec_qrels_only(tmp_path):
    ahead = ReadAhead(RUNS)
    ahead.parse(QRELS)
    table, expected = ahead.qrels.result(), load_qrels(QRELS)
    assert table.source == expected.source
    assert table.qid.equals(expected.qid) and table.docno.equals(expected.docno)
    assert np.array_equal(table.rel, expected.rel)
    ahead.cancel()
    strata = tmp_path / "strata"
    strata.write_bytes(b"1 0 d1 s1 1\n1 0 d2 s1 0\n")
    for qrels, fmt in [(strata, None), (QRELS, "prels"), ("-", None)]:
        ahead = ReadAhead(RUNS)
        ahead.parse(qrels, fmt)
        assert ahead.qrels is None or ahead.qrels.result() is None  # left to the caller
        ahead.cancel()


def test_parse_loads_the_reader_kernels_first_in_the_calling_thread(monkeypatch):
    """Before any reading thread is given the qrels or a run: numba's set-up and the readers'
    kernels are the caller's (full priority), not a reading thread's."""
    seen = []

    def record():
        seen.append((threading.get_ident(), ahead.qrels, dict(ahead.early)))

    monkeypatch.setattr(ahead_module, "load_reader_kernels", record)
    ahead = ReadAhead(RUNS)
    ahead.parse(QRELS)
    assert seen == [(threading.get_ident(), None, {})]
    assert ahead.qrels is not None and ahead.early
    ahead.parse(QRELS)  # nothing left to start: no second load
    assert len(seen) == 1
    ahead.cancel()


def test_lookup_of_the_judgments_built_with_equals_the_search():
    qrels = load_qrels(QRELS)
    runs = load_runs(RUNS[:2])
    collection = Collection.build(runs, [qrels])
    topic, tdi = collection.lookup(qrels.qid, qrels.docno)
    other = dataclasses.replace(collection, located=())  # the binary search
    want_topic, want_tdi = other.lookup(qrels.qid, qrels.docno)
    assert np.array_equal(topic, want_topic) and np.array_equal(tdi, want_tdi)
    assert (tdi >= 0).all()
    j1, j2 = Judgments.from_qrels(collection, qrels), Judgments.from_qrels(other, qrels)
    assert np.array_equal(j1.grade, j2.grade) and np.array_equal(j1.state, j2.state)


def test_kernel_warm_up_changes_nothing():
    measures = measures_from(["official", "infAP", "ndcg"])
    before = evaluate_in_batches(QRELS, RUNS, measures)
    load_kernels(measures, {})
    load_kernels(measures_from(["statAP"]), {})  # needs prels: fails quietly
    after = evaluate_in_batches(QRELS, RUNS, measures)
    assert np.array_equal(before.values, after.values, equal_nan=True)
    assert np.array_equal(before.summary, after.summary, equal_nan=True)
