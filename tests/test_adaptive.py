"""Adaptive judging: move-to-front pooling and Hedge traced by hand on a tiny topic, budgets,
batches, reproducibility, the judgments produced, and hypothesis properties on random
collections (every judged document retrieved, none twice, budget exact, all relevant found
when the budget is the pool)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irsample.design import (
    DepthOrder,
    Hedge,
    MoveToFront,
    QrelsAssessor,
    judge_adaptively,
    parse_method,
)
from irsample.design.adaptive.judging import budget_caps, water_fill
from irsample.design.adaptive.methods import JudgingProblem
from irsample.errors import DesignError
from irsample.io import load_qrels, load_runs
from irsample.model import JUDGED, UNPOOLED, Collection

from .synthetic import pooled_collection

# One topic, three runs of four documents each; grades a c e h relevant, b d f g not.
RUNS = {"A": "abcd", "B": "ceaf", "C": "ghba"}
GRADES = dict(a=1, b=0, c=1, d=0, e=1, f=0, g=0, h=1)


def collection_of(runs: dict[str, str], grades: dict[str, int], topic="1"):
    rows = [(topic, d, 10.0 - i, tag) for tag, docs in runs.items() for i, d in enumerate(docs)]
    tables = load_runs(pd.DataFrame(rows, columns=["qid", "docno", "score", "tag"]))
    qrels = load_qrels(
        pd.DataFrame({"qid": topic, "docno": list(grades), "rel": list(grades.values())})
    )
    return Collection.build(tables, [qrels]), qrels


@pytest.fixture(scope="module")
def tiny():
    return collection_of(RUNS, GRADES)


def order(tiny, method, **options):
    collection, qrels = tiny
    options.setdefault("budget", 8)
    options.setdefault("rng", 0)
    result = judge_adaptively(collection, method, QrelsAssessor(collection, qrels), **options)
    return "".join(result.docnos())


def test_seed_0_reads_the_runs_in_the_order_b_c_a():
    # the lists' random keys are rng.permutation(3); the hand traces below assume B, C, A first
    assert np.argsort(np.random.default_rng(0).permutation(3)).tolist() == [1, 2, 0]


@pytest.mark.parametrize("scope", ["local", "global"])
def test_move_to_front_by_hand(tiny, scope):
    """B: c, e, a relevant, f not (B drops to -1); C: g not (-1); A: a is judged relevant (free,
    A moves to the front), b not; all at -1, A found a relevant document last: c (free, back to
    0), d not; A and B are exhausted; C: h relevant (then b, a free). One topic: global = local.
    """
    assert order(tiny, MoveToFront(scope)) == "ceafgbdh"


def test_move_to_front_batches_assume_proposed_documents_relevant(tiny):
    """Batch 1: c, then e and a as if c were relevant. Batch 2: f, then (B exhausted) C's g, h.
    Batch 3: f and g were not relevant; A's a (judged relevant) puts A in front: b, then d."""
    assert order(tiny, MoveToFront(), batch=3) == "ceafghbd"


def test_hedge_by_hand(tiny):
    """beta = 0.1, v(r) = H(4) - H(r - 1): 2.083, 1.083, 0.583, 0.25 at ranks 1-4.
    Step 1 scores (equal weights): a 2.917 (A1 B3 C4), c 2.667, g 2.083, b 1.667: a, relevant,
    so w = 10^(2.083, 0.583, 0.25) for A, B, C. Step 2: b = 121.2 * 1.083 + 1.78 * 0.583 = 132.3
    beats c = 78.7: b, not relevant: w_A = 10, w_C = 10^-0.333. Step 3: c = 13.8 beats e = 4.15:
    c, relevant: w_A = 10^1.583, w_B = 10^2.667. Then e (502.9), f (w_B 10^3.75 * 0.25 = 1406),
    d (9.6), g (0.97), h."""
    assert order(tiny, Hedge(0.1)) == "abcefdgh"


def test_hedge_batch_takes_the_best_documents_then_learns(tiny):
    """Batch 1: the three best scores a, c, g. Then A and B gained (a, c relevant), C lost
    (g at its rank 1 is not relevant): b (A2, C3) = 502.9 + 0.009 edges out e (B2) = 502.9."""
    assert order(tiny, Hedge(0.1), batch=3, budget=5) == "acgbe"


def test_hedge_with_beta_1_is_a_fixed_metasearch_ranking(tiny):
    # scores never change: a 2.917, c 2.667, g 2.083, b 1.667, e 1.083, h 1.083, d 0.25, f 0.25
    assert order(tiny, Hedge(1.0), budget=4) == "acgb"


def test_depth_order_is_the_pooling_order(tiny):
    # rank 1 of A, B, C: a c g; rank 2: b e h; rank 3 adds nothing; rank 4: d f
    assert order(tiny, DepthOrder()) == "acgbehdf"


def test_local_methods_go_round_robin_and_global_mtf_follows_relevance():
    # topic 1 "easy": every document relevant; topic 2 "hard": none
    runs = {"A": "abcd", "B": "bcda"}
    rows = [(t, f"{t}{d}", 10.0 - i, tag) for t in "12" for tag, docs in runs.items()
            for i, d in enumerate(docs)]
    collection = Collection.build(
        load_runs(pd.DataFrame(rows, columns=["qid", "docno", "score", "tag"]))
    )
    qrels = load_qrels(
        pd.DataFrame(
            {
                "qid": list("11112222"),
                "docno": [f"{t}{d}" for t in "12" for d in "abcd"],
                "rel": [1, 1, 1, 1, 0, 0, 0, 0],
            }
        )
    )
    assessor = QrelsAssessor(collection, qrels)
    local = judge_adaptively(collection, MoveToFront(), assessor, budget=4, rng=1)
    assert local.topic.tolist() == [0, 1, 0, 1]
    glob = judge_adaptively(collection, MoveToFront("global"), assessor, budget=6, rng=1)
    # the lists of topic 1 keep yielding relevant documents: all of them are judged early
    first = glob.topic.tolist()
    assert first.count(0) == 4 and first.index(0) <= 2 and sorted(first[-2:]) == [1, 1]


def test_budgets_are_exact_and_water_filled():
    assert water_fill(10, np.array([2, 10, 10])).tolist() == [2, 4, 4]
    assert water_fill(11, np.array([2, 10, 10])).tolist() == [2, 5, 4]
    assert water_fill(50, np.array([2, 10, 10])).tolist() == [2, 10, 10]
    n = np.array([3, 0, 8])
    caps, total = budget_caps(5, per_topic=True, n_candidates=n, scope="local")
    assert caps.tolist() == [3, 0, 5] and total == 8
    caps, total = budget_caps(7, per_topic=False, n_candidates=n, scope="global")
    assert caps.tolist() == [3, 0, 8] and total == 7
    assert budget_caps([1, 1, 9], per_topic=False, n_candidates=n, scope="local")[1] == 9
    with pytest.raises(DesignError, match="2 per-topic budgets for 3 topics"):
        budget_caps([1, 2], per_topic=False, n_candidates=n, scope="local")
    with pytest.raises(DesignError, match="non-negative integer"):
        budget_caps(-1, per_topic=False, n_candidates=n, scope="local")


def test_methods_and_options_are_validated(tiny):
    assert (
        parse_method("hedge", beta=0.5) == Hedge(0.5)
        and parse_method("mtf-global").name == "mtf-global"
    )
    with pytest.raises(DesignError, match="beta is a parameter of hedge"):
        parse_method("mtf", beta=0.5)
    with pytest.raises(DesignError, match="unknown judging method"):
        parse_method("random")
    with pytest.raises(DesignError, match=r"beta must be in \(0, 1\]"):
        Hedge(0.0)
    with pytest.raises(DesignError, match="batch and rel_level"):
        order(tiny, Hedge(), batch=0)
    with pytest.raises(DesignError, match="depth must be at least 1"):
        order(tiny, Hedge(), depth=0)
    with pytest.raises(DesignError, match="rng must be"):
        order(tiny, Hedge(), rng=None)


def test_result_as_judgments_qrels_and_order(tiny):
    collection, qrels = tiny
    result = judge_adaptively(
        collection, Hedge(), QrelsAssessor(collection, qrels), budget=3, rng=0
    )
    judgments = result.judgments()
    judged = np.flatnonzero(judgments.state == JUDGED)
    assert sorted(judged.tolist()) == sorted(result.tdi.tolist())
    assert np.all(judgments.state[np.setdiff1d(np.arange(collection.n_tdi), judged)] == UNPOOLED)
    assert judgments.grade[result.tdi].tolist() == [1, 0, 1]
    assert result.qrels_text() == "1 0 a 1\n1 0 b 0\n1 0 c 1\n"
    assert result.order_text() == "step\ttopic\tdocno\tgrade\n1\t1\ta\t1\n2\t1\tb\t0\n3\t1\tc\t1\n"
    assert result.relevant_found().tolist() == [2] and result.complete


def test_documents_outside_the_qrels_are_judged_non_relevant_and_counted():
    collection, qrels = collection_of(RUNS, {"a": 1, "c": 1})
    assessor = QrelsAssessor(collection, qrels)
    result = judge_adaptively(collection, DepthOrder(), assessor, budget=4, rng=0)
    assert "".join(result.docnos()) == "acgb" and result.grade.tolist() == [1, 1, 0, 0]
    assert assessor.outside == 2


def test_documents_the_qrels_list_below_0_are_judged_non_relevant_and_counted_apart():
    """A -2 row (the Web track's) is pooled, not judged: graded 0, counted as listed unjudged."""
    collection, qrels = collection_of(RUNS, {"a": 1, "c": -2, "g": -1})
    assessor = QrelsAssessor(collection, qrels)
    result = judge_adaptively(collection, DepthOrder(), assessor, budget=4, rng=0)
    assert "".join(result.docnos()) == "acgb" and result.grade.tolist() == [1, 0, 0, 0]
    assert (assessor.outside, assessor.unjudged) == (1, 2)


def test_depth_limits_the_candidates(tiny):
    collection, qrels = tiny
    problem = JudgingProblem.build(collection, depth=2)
    assert problem.n_candidates.tolist() == [6]  # a b c e g h
    assert order(tiny, DepthOrder(), depth=2) == "acgbeh"  # the budget stops at 6 candidates
    assert sorted(order(tiny, Hedge(), depth=2)) == sorted("acgbeh")


# ------------------------------------------------------------------------------- properties

METHODS = [MoveToFront("local"), MoveToFront("global"), Hedge(0.1), Hedge(0.7), DepthOrder()]


@st.composite
def collections(draw):
    """2-3 topics, 2-4 runs retrieving 0-8 of 12 documents each, grades 0-2."""
    rows, qrels = [], []
    for t in range(draw(st.integers(2, 3))):
        for r in range(draw(st.integers(2, 4))):
            docs = draw(st.lists(st.integers(0, 11), max_size=8, unique=True))
            rows += [(f"q{t}", f"d{d}", float(-i), f"r{r}") for i, d in enumerate(docs)]
        grades = draw(st.lists(st.integers(0, 2), min_size=12, max_size=12))
        qrels += [(f"q{t}", f"d{d}", g) for d, g in enumerate(grades)]
    if not rows:
        rows = [("q0", "d0", 1.0, "r0")]
    runs = load_runs(pd.DataFrame(rows, columns=["qid", "docno", "score", "tag"]))
    table = load_qrels(pd.DataFrame(qrels, columns=["qid", "docno", "rel"]))
    return Collection.build(runs, [table]), table


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=collections(), budget=st.integers(0, 40), batch=st.integers(1, 4),
       per_topic=st.booleans(), depth=st.sampled_from([None, 3]), seed=st.integers(0, 9))
def test_properties_of_every_method(data, budget, batch, per_topic, depth, seed):
    collection, qrels = data
    problem = JudgingProblem.build(collection, depth=depth)
    relevant = QrelsAssessor(collection, qrels)._grade >= 1
    for method in METHODS:
        def run(b=budget, method=method, **kw):
            return judge_adaptively(
                collection, method, QrelsAssessor(collection, qrels), budget=b,
                per_topic=per_topic, depth=depth, batch=batch, rng=seed, **kw)

        result = run()
        n = problem.n_candidates
        expected = np.minimum(budget, n).sum() if per_topic else min(budget, n.sum())
        assert len(result) == expected and result.complete
        assert problem.candidates[result.tdi].all()  # retrieved by some run within the depth
        assert len(np.unique(result.tdi)) == len(result)  # nobody judged twice
        assert np.array_equal(collection.tdi_topic[result.tdi], result.topic)
        if per_topic:
            assert np.all(np.bincount(result.topic, minlength=len(n)) <= budget)
        again = run()
        assert np.array_equal(again.tdi, result.tdi) and np.array_equal(again.grade, result.grade)
        everything = run(b=int(n.sum()))  # budget = pool: every relevant candidate is found
        found = np.zeros(collection.n_tdi, bool)
        found[everything.tdi] = True
        assert np.array_equal(found, problem.candidates)
        assert everything.relevant_found().sum() == (relevant & problem.candidates).sum()


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=collections(), budget=st.integers(1, 30), batch=st.integers(1, 3),
       method=st.sampled_from(METHODS), seed=st.integers(0, 9))
def test_resuming_from_the_history_reproduces_the_uninterrupted_session(data, budget, batch,
                                                                        method, seed):
    """A person judging batch by batch (each invocation restarts from the files' history) gets
    the same order as a simulation with the same batch size."""
    collection, qrels = data
    options = dict(budget=budget, batch=batch, rng=seed)
    simulated = judge_adaptively(collection, method, QrelsAssessor(collection, qrels), **options)
    truth = QrelsAssessor(collection, qrels)._grade
    history = (np.zeros(0, np.int64),) * 3
    for _ in range(budget + 1):
        result = judge_adaptively(collection, method, _Pending(), history=history, **options)
        grade = np.where(result.pending, np.maximum(truth[result.tdi], 0), result.grade)
        history = (result.topic, result.tdi, grade)
        if not result.pending.any():
            break
    assert np.array_equal(result.tdi, simulated.tdi) and result.complete


class _Pending:
    """An assessor that has judged nothing yet (every document handed out stays pending)."""

    def judge(self, topic, docs):
        return np.full(len(docs), -1)


def test_synthetic_collection_adaptive_methods_beat_the_depth_order():
    collection, qrels = pooled_collection(3, n_topics=6, n_runs=8)
    found = {}
    for method in [DepthOrder(), MoveToFront(), MoveToFront("global"), Hedge()]:
        result = judge_adaptively(collection, method, QrelsAssessor(collection, qrels),
                                  budget=30, per_topic=True, depth=100, rng=0)
        found[method.name] = int(result.relevant_found().sum())
    assert min(found["mtf"], found["hedge(beta=0.1)"]) > found["depth"], found
