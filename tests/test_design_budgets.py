"""Budgets, the depth-k + random design, paper 002's named strategies and design names."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irsample.design import (
    PRESETS,
    Budget,
    Pool,
    SamplingFrame,
    parse_design,
    preset,
    stratified,
    terabyte,
    uniform,
)
from irsample.design.sampling.budget import sizes_under_budget
from irsample.errors import DesignError

from .synthetic import pooled_collection


@pytest.fixture(scope="module")
def frame():
    collection, table = pooled_collection(11, n_topics=4, n_runs=5)
    return SamplingFrame.from_pool(Pool.from_runs(collection, depth=100), table)


@st.composite
def cells(draw):
    n_topics, n_strata = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    size = np.array(draw(st.lists(st.integers(0, 40), min_size=n_topics * n_strata,
                                  max_size=n_topics * n_strata))).reshape(n_topics, n_strata)
    rates = np.array(draw(st.lists(st.sampled_from([1.0, 0.5, 0.2, 0.05]), min_size=n_strata,
                                   max_size=n_strata)))
    return size, rates


@settings(max_examples=200, deadline=None)
@given(cells(), st.integers(1, 200), st.booleans())
def test_budget_sizes_sum_to_the_budget_and_keep_exhaustive_strata(case, total, per_topic):
    size, rates = case
    target = rates * size
    budget = Budget(total, per_topic)
    scopes = [size[t:t + 1] for t in range(len(size))] if per_topic else [size]
    nonempty = [int((s > 0).sum()) for s in scopes]
    counted = [s for s in scopes if s.sum() > 0 or not per_topic]  # empty topics are skipped
    if any(total > s.sum() for s in counted) or any(total < n for n in nonempty if n > 0):
        with pytest.raises(DesignError, match="budget of"):
            sizes_under_budget(size, target, budget)
        return
    take = sizes_under_budget(size, target, budget)
    assert np.all((take >= 1) | (size == 0)) and np.all(take <= size)
    rows = range(len(size)) if per_topic else [slice(None)]
    for t, scope in zip(rows, scopes):
        if scope.sum() == 0:
            continue
        k, n, goal = take[t], size[t], target[t]
        assert k.sum() == total
        exhaustive = (rates == 1) & (n > 0)
        free = (rates < 1) & (n > 0)
        if total >= n[exhaustive].sum() + free.sum():  # phase 1: exhaustive strata kept
            assert np.all(k[exhaustive] == n[exhaustive])
            inner = free & (k > 1) & (k < n)  # neither clipped at 1 nor capped at N
            if inner.any():  # one lambda with |k - lambda k*| < 1: proportional up to rounding
                assert np.max((k[inner] - 1) / goal[inner]) < np.min((k[inner] + 1) / goal[inner])


def test_budget_examples_by_hand():
    size = np.array([[10, 90]])
    # 1-10 exhaustive (10), 90 at 0.2 -> 18: 28 without a budget; budget 46 -> 36 from the rest
    assert sizes_under_budget(size, [[10, 18]], Budget(46)).tolist() == [[10, 36]]
    # budget below 10 + 1: every stratum scaled, the exhaustive one too
    assert sizes_under_budget(size, [[10, 18]], Budget(8)).tolist() == [[3, 5]]
    # two topics, one total budget: proportional to the targets
    two = np.array([[30], [10]])
    assert sizes_under_budget(two, two * 0.5, Budget(8)).ravel().tolist() == [6, 2]
    assert sizes_under_budget(two, two * 0.5, Budget(5, per_topic=True)).ravel().tolist() == [5, 5]
    with pytest.raises(DesignError, match="larger than the pool of topic 1 .10 documents"):
        sizes_under_budget(two, two * 0.5, Budget(11, per_topic=True))
    with pytest.raises(DesignError, match="larger than the pool .40 documents"):
        sizes_under_budget(two, two * 0.5, Budget(41))
    with pytest.raises(DesignError, match="smaller than the 2 non-empty"):
        sizes_under_budget(two, two * 0.5, Budget(1))
    for bad in (0, -3, 2.5, True):
        with pytest.raises(DesignError, match="budget must be an integer"):
            Budget(bad)


def test_budgeted_designs_judge_exactly_the_budget(frame):
    n = frame.pool_size()
    for design, per_topic in [
        (uniform(0.1, budget=100), False),
        (stratified("1-10:1,11-:0.1", budget=Budget(60, True)), True),
        (terabyte(5, budget=150), False),
        (preset("3strata", budget=Budget(40, True)), True),
    ]:
        for seed in range(5):
            s = design.select(frame, rng=seed)
            counts = np.bincount(frame.topic[s.judged], minlength=frame.n_topics)
            assert (counts.tolist() == [design.budget.total] * len(n)) if per_topic else (
                counts.sum() == design.budget.total), design.name
    # a uniform total budget is spread in proportion to the pool sizes
    s = uniform(0.5, budget=100).select(frame, rng=0)
    share = np.bincount(frame.topic[s.judged], minlength=frame.n_topics)
    assert np.all(np.abs(share - 100 * n / n.sum()) < 1)
    with pytest.raises(DesignError, match="larger than the pool"):
        uniform(0.5, budget=int(n.sum()) + 1).select(frame, rng=0)


def test_terabyte_judges_depth_k_and_as_many_more(frame):
    design = terabyte(10)
    s = design.select(frame, rng=3)
    deep = frame.best_rank > 10
    assert s.labels == ("1-10", "11-") and np.array_equal(s.stratum, deep.astype(int))
    assert np.all(s.judged[~deep]) and np.all(s.inclusion[~deep] == 1)
    for t in range(frame.n_topics):
        top = np.count_nonzero(~deep & (frame.topic == t))
        rest = np.count_nonzero(deep & (frame.topic == t))
        assert np.count_nonzero(s.judged & deep & (frame.topic == t)) == min(top, rest)
        assert np.allclose(s.inclusion[deep & (frame.topic == t)], min(top, rest) / rest)
    with pytest.raises(DesignError, match="depth k must be an integer"):
        terabyte(0)


def test_presets_are_paper_002_strategies(frame):
    assert set(PRESETS) == {"pool15", "pool25", "1stratum", "2strata", "3strata"}
    pool15 = preset("pool15").select(frame, rng=0)
    inside = frame.best_rank <= 15
    assert np.array_equal(pool15.judged, inside) and np.all(pool15.stratum[~inside] == -1)
    assert preset("pool7") == parse_design("pool7") and preset("pool7").depth == 7
    judged = preset("pool15").sample(frame, rng=0)
    assert judged.stratum_size.sum() == inside.sum()  # deeper documents are unpooled
    for name in ("1stratum", "2strata", "3strata"):
        d = preset(name)
        assert d.depth == 100 and d.name == name and d.strata[0].first == 1
        s = d.select(frame, rng=1)
        assert 0 < s.judged.sum() < len(frame)
    assert preset("2strata").strata[0].rate == 1 and preset("1stratum").strata[0].rate < 1
    with pytest.raises(DesignError, match="unknown strategy"):
        preset("4strata")


@pytest.mark.parametrize("name", [
    "uniform(0.3)", "uniform(0.25)@100", "stratified(1-10:1,11-:0.1)", "terabyte(10)@50/topic",
    "importance(0.1)", "importance(0.2)@500", "2strata", "pool25@20/topic", "pool9",
    "stratified(1-5:0.5,6-20:0.25,21-100:0.05)@300",
])
def test_design_names_parse_back(name):
    assert parse_design(name).name == name
    assert parse_design(parse_design(name).name) == parse_design(name)


@pytest.mark.parametrize(
    "text, message",
    [
        ("uniform(0)", r"\(0, 1\]"),
        ("uniform(x)", "not a number"),
        ("importance(1.5)", r"\(0, 1\]"),
        ("1-10:1,11-:1.2", r"\(0, 1\]"),
        ("terabyte(2.5)", "integer"),
        ("2strata@0", "budget"),
        ("2strata@x", "budget: expected"),
        ("nonsense", "cannot read design"),
        ("pool0", "unknown strategy .pool0."),
    ],
)
def test_bad_design_names_are_rejected(text, message):
    with pytest.raises(DesignError, match=message):
        parse_design(text)


def test_bare_spec_equals_stratified():
    assert parse_design("1-10:1,11-100:0.2") == stratified("1-10:1,11-100:0.2")
