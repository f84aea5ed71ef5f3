"""Ranking runs without judgments: reference counts, Soboroff's pseudo-qrels (duplicates as
weights), Condorcet fusion (ties and losses), bias, and their parameter errors, on hand-made
rankings whose values are worked out in the comments."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from irsample.design import nojudge
from irsample.design.nojudge.fusion import condorcet_order
from irsample.errors import DesignError
from irsample.io import load_qrels, load_runs
from irsample.model import Collection, Judgments


def collection(rankings: dict[str, dict[str, str]]) -> Collection:
    """{run: {topic: "a b c"}} -> a collection (scores decreasing along each ranking)."""
    rows = [
        (topic, doc, float(100 - i), run)
        for run, topics in rankings.items()
        for topic, docs in topics.items()
        for i, doc in enumerate(docs.split())
    ]
    return Collection.build(load_runs(pd.DataFrame(rows, columns=["qid", "docno", "score", "tag"])))


# topic 1: r1 a b c, r2 b c d, r3 a d e; topic 2: r1 x, r2 x (r3 lacks topic 2)
REF = collection({
    "r1": {"1": "a b c", "2": "x"}, "r2": {"1": "b c d", "2": "x"}, "r3": {"1": "a d e"},
})


def test_refcount_basic_by_hand():
    # depth 2, topic 1: tops r1 {a, b}, r2 {b, c}, r3 {a, d}; c(a) = c(b) = 2, c(c) = c(d) = 1
    # rc sums: r1 1 + 1 = 2, r2 1 + 0 = 1, r3 1 + 0 = 1; topic 2: r1 1, r2 1, r3 0 (missing)
    s = nojudge.refcount(REF, depth=2)
    assert s.per_topic.tolist() == [[2, 1], [1, 1], [1, 0]]
    assert s.score.tolist() == [1.5, 1.0, 0.5]
    assert s.rank.tolist() == [1, 2, 3]
    # depth 3: every document but e is retrieved twice: r1 3, r2 3, r3 2 (+ topic 2 as above)
    s = nojudge.refcount(REF, depth=3)
    assert s.per_topic[:, 0].tolist() == [3, 3, 2]
    assert s.rank.tolist() == [1, 1, 3]  # equal scores share the rank
    assert s.frame()["run"].tolist() == ["r1", "r2", "r3"]


def test_refcount_weighted_by_hand():
    # depth 2: w(1) = 1, w(2) = 1/2; W(a) = 1 + 1, W(b) = 1/2 + 1, W(c) = W(d) = 1/2
    # r1: a 1 * (2 - 1) + b 1/2 * (3/2 - 1/2) = 1.5; r2: b 1 * (3/2 - 1) + c 0 = 0.5; r3: a 1 + d 0
    s = nojudge.refcount(REF, depth=2, weighted=True)
    assert s.per_topic[:, 0].tolist() == [1.5, 0.5, 1.0]


def test_bias_by_hand():
    # depth 2, topic 1 only: r1 {a, b}, r2 {a, c}, r3 {d, e}; c = (a 2, b 1, c 1, d 1, e 1),
    # ||c|| = sqrt(8): bias r1 = 1 - 3 / (sqrt 2 sqrt 8) = 1/4, r2 = 1/4, r3 = 1 - 2/4 = 1/2
    col = collection({"r1": {"1": "a b"}, "r2": {"1": "a c"}, "r3": {"1": "d e"}})
    assert nojudge.bias(col, depth=2) == pytest.approx([0.25, 0.25, 0.5])
    # restricted to r1, r2: c = (a 2, b 1, c 1), ||c|| = sqrt 6, cos = 3 / sqrt 12; r3 not scored
    b = nojudge.bias(col, depth=2, runs=[0, 1])
    assert b[:2] == pytest.approx([1 - 3 / np.sqrt(12)] * 2) and np.isnan(b[2])


def test_condorcet_order_wins_then_losses_then_docno():
    # r1 a b c, r2 c a b: a beats b 2:0, a-c 1:1 and b-c 1:1 tie.
    # wins a 1, b 0, c 0; losses a 0, b 1, c 0 -> a, c, b (c above b by fewer losses)
    order, wins, losses = condorcet_order(
        np.array([0, 0, 0, 1, 1, 1]), np.array([1, 2, 3, 1, 2, 3]),
        np.array([0, 1, 2, 2, 0, 1]), 3,
    )
    assert order.tolist() == [0, 2, 1]
    assert wins.tolist() == [1, 0, 0] and losses.tolist() == [0, 1, 0]
    # r1 a b c, r2 b a d: a-b 1:1, c-d 1:1 (each retrieved by one run, the other below it);
    # both a, b beat c, d 2:0 -> a, b tied (2 wins, 0 losses) in docno order, then c, d
    order, wins, losses = condorcet_order(
        np.array([0, 0, 0, 1, 1, 1]), np.array([1, 2, 3, 1, 2, 3]),
        np.array([0, 1, 2, 1, 0, 3]), 4,
    )
    assert order.tolist() == [0, 1, 2, 3]
    assert wins.tolist() == [2, 2, 0, 0] and losses.tolist() == [0, 0, 2, 2]


def test_condorcet_unretrieved_ranks_below_retrieved():
    # depth 3, r1 a b c, r2 b a d, r3 a c b: a beats b 2:1, c 3:0, d 3:0; b beats c 2:1 (r2 did
    # not retrieve c), d 3:0; c beats d 2:1 -> a b c d with 3, 2, 1, 0 wins
    order, wins, _ = condorcet_order(
        np.repeat([0, 1, 2], 3), np.tile([1, 2, 3], 3), np.array([0, 1, 2, 1, 0, 3, 0, 2, 1]), 4,
    )
    assert order.tolist() == [0, 1, 2, 3] and wins.tolist() == [3, 2, 1, 0]


def test_condorcet_pseudo_qrels_and_scores():
    # fused a b c d (above); fraction 0.5 -> {a, b} relevant. AP: r1 a b c -> 1; r2 b a d -> 1;
    # r3 a c b -> (1 + 2/3) / 2 = 5/6
    col = collection({"r1": {"1": "a b c"}, "r2": {"1": "b a d"}, "r3": {"1": "a c b"}})
    s = nojudge.condorcet(col, depth=3, fraction=0.5)
    assert s.score == pytest.approx([1.0, 1.0, 5 / 6])
    # fraction 0.25 -> round(1) = {a}: AP r1 1, r2 1/2, r3 1
    assert nojudge.condorcet(col, depth=3, fraction=0.25).score == pytest.approx([1.0, 0.5, 1.0])


def test_every_method_scores_a_missing_topic_0():
    """REF's r3 lacks topic 2: refcount, condorcet and soboroff all average over both topics,
    r3's topic 2 scoring 0 (condorcet and soboroff averaged over r3's own topic alone, and a
    run answering few topics could rank first by them and last by refcount)."""
    for scores in (nojudge.refcount(REF, depth=2), nojudge.condorcet(REF, depth=3, fraction=0.5),
                   nojudge.soboroff(REF, depth=3, mean=0.5, sd=0.0, trials=3, rng=1)):
        assert scores.per_topic[2, 1] == 0, scores.method
        assert scores.score[2] == pytest.approx(scores.per_topic[2].mean()), scores.method


def test_condorcet_select_fuses_the_most_biased_runs():
    # bias as in test_bias_by_hand: select 1/3 of 3 runs -> r3 alone; its fusion is d e and the
    # top half (round(0.5 * 2) = 1) is {d}: r3 scores 1, r1 and r2 never retrieve d
    col = collection({"r1": {"1": "a b"}, "r2": {"1": "a c"}, "r3": {"1": "d e"}})
    s = nojudge.condorcet(col, depth=2, fraction=0.5, select=1 / 3)
    assert s.score.tolist() == [0.0, 0.0, 1.0]
    assert "select=" in s.method


DUP = collection({"r1": {"1": "a"}, "r2": {"1": "a"}, "r3": {"1": "b"}})  # pool {a, a, b}


def _draws(mean, n_trials, seed=0):
    pooled = nojudge.pool(DUP, 1)
    rng = np.random.default_rng(seed)
    sets = []
    for _ in range(n_trials):
        docs, rel = nojudge.soboroff_draw(pooled, DUP.n_tdi, 1, mean=mean, sd=0.0, rng=rng)
        sets.append(frozenset(DUP.tdi_docno.take(pa.array(docs[rel])).to_pylist()))
    return sets


def test_soboroff_duplicates_are_weights():
    """Pool {a, a, b}: U = 2 distinct. mean 0.5 -> n = 1 entry of 3: a with probability 2/3.
    mean 1 -> n = 2 of 3 entries: {a} alone (both a entries) with probability 1/3, else {a, b};
    so fewer distinct documents than n can be drawn."""
    one = _draws(0.5, 3000)
    share_a = sum(s == {b"a"} for s in one) / len(one)
    assert all(len(s) == 1 for s in one)
    assert abs(share_a - 2 / 3) < 4 * np.sqrt(2 / 9 / 3000)
    two = _draws(1.0, 3000, seed=1)
    share_alone = sum(s == {b"a"} for s in two) / len(two)
    assert set(two) == {frozenset({b"a"}), frozenset({b"a", b"b"})}
    assert abs(share_alone - 1 / 3) < 4 * np.sqrt(2 / 9 / 3000)


def test_soboroff_scores_are_seeded_means_over_trials():
    col = collection(
        {
            "r1": {"1": "a b c", "2": "x y"},
            "r2": {"1": "b a d", "2": "y z"},
            "r3": {"1": "e a b", "2": "z"},
        }
    )
    one = nojudge.soboroff(col, mean=0.4, sd=0.2, rng=7, depth=2, trials=20)
    assert np.array_equal(
        one.score, nojudge.soboroff(col, mean=0.4, sd=0.2, rng=7, depth=2, trials=20).score
    )
    assert not np.array_equal(
        one.score, nojudge.soboroff(col, mean=0.4, sd=0.2, rng=8, depth=2, trials=20).score
    )
    assert one.per_topic.mean(axis=1) == pytest.approx(one.score)
    # sd = 0, mean 1: every pooled document is relevant in every trial; depth 1 pool {a, b, e}
    # (topic 1), {x, y, z} (topic 2). AP topic 1: r1 a b c -> (1 + 1) / 3, r2 b a d -> 2/3,
    # r3 e a b -> 1; topic 2: r1 x y -> 2/3, r2 y z -> 2/3, r3 z -> 1/3
    all_rel = nojudge.soboroff(col, mean=1.0, sd=0.0, rng=0, depth=1, trials=3)
    assert all_rel.per_topic == pytest.approx(
        np.array([[2 / 3, 2 / 3], [2 / 3, 2 / 3], [1, 1 / 3]])
    )


def test_relevant_fraction():
    table = load_qrels(pd.DataFrame({
        "qid": ["1", "1", "1", "1", "2", "2"], "docno": ["a", "b", "c", "d", "x", "y"],
        "rel": [1, 0, 0, 0, 2, 0],
    }))
    col = Collection.build(
        load_runs(pd.DataFrame({"qid": ["1", "2"], "docno": ["a", "x"], "score": 1.0, "tag": "r"})),
        [table],
    )
    mean, sd = nojudge.relevant_fraction(Judgments.from_qrels(col, table))
    assert (mean, sd) == pytest.approx((0.375, np.std([0.25, 0.5], ddof=1)))


@pytest.mark.parametrize("call, message", [
    (lambda: nojudge.refcount(REF, depth=0), "depth"),
    (lambda: nojudge.soboroff(REF, mean=1.5, sd=0.1, rng=0), "mean"),
    (lambda: nojudge.soboroff(REF, mean=0.1, sd=0.1, rng=None), "rng"),
    (lambda: nojudge.soboroff(REF, mean=0.1, sd=0.1, rng=0, trials=0), "trials"),
    (lambda: nojudge.condorcet(REF, fraction=0.0), "fraction"),
    (lambda: nojudge.condorcet(REF, select=2.0), "select"),
    (lambda: nojudge.condorcet(REF, measure="P.5,10"), "one measure"),
])
def test_parameter_errors(call, message):
    with pytest.raises(DesignError, match=message):
        call()
