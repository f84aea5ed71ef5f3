"""TREC-8 (shared): adaptive judging finds more relevant documents than depth-k pooling.

The 71 pooled runs, depth 100: the candidates are exactly the official depth-100 pool, so the
qrels judge every candidate. With 10% of each topic's pool judged, Hedge and local move-to-front
find more relevant documents than the depth-k pooling order (Aslam et al. CIKM 2003; Cormack et
al. SIGIR 1998); benchmarks/finding_relevant.py prints the full comparison.
"""

from __future__ import annotations

import numpy as np
import pytest

from irsample.design import DepthOrder, Hedge, MoveToFront, QrelsAssessor, judge_adaptively
from irsample.design.adaptive.methods import JudgingProblem
from irsample.io import load_qrels, load_runs
from irsample.model import Collection

pytestmark = pytest.mark.shared


@pytest.fixture(scope="module")
def trec8(shared):
    base = shared / "data" / "trec8-adhoc"
    flags = dict(line.split() for line in (base / "run-pooled-flag.txt").read_text().splitlines())
    runs = load_runs(
        [base / "runs" / f"input.{n}.gz" for n in sorted(flags) if flags[n] == "judged"]
    )
    qrels = load_qrels(str(base / "qrels.trec8.adhoc"))
    return Collection.build(runs, [qrels]), qrels


def test_hedge_at_10_percent_finds_more_relevant_documents_than_depth_k(trec8):
    collection, qrels = trec8
    pool = JudgingProblem.build(collection, depth=100).n_candidates
    assert pool.sum() == len(qrels)  # the candidates are the official pool
    budget = np.floor(0.1 * pool + 0.5).astype(np.int64)
    found = {}
    for method in [DepthOrder(), Hedge(), MoveToFront()]:
        assessor = QrelsAssessor(collection, qrels)
        result = judge_adaptively(collection, method, assessor, budget=budget, depth=100, rng=1)
        assert len(result) == budget.sum() and assessor.outside == 0
        found[method.name] = int(result.relevant_found().sum())
    relevant = int((qrels.rel > 0).sum())
    # measured: depth-k 32%, Hedge 62%, MTF 55% of the 4,728 relevant documents
    assert found["hedge(beta=0.1)"] > 1.5 * found["depth"], found
    assert found["mtf"] > 1.3 * found["depth"], found
    assert found["depth"] > 0.2 * relevant
