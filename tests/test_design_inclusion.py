"""Inclusion probabilities of the new designs over 1,000 seeded draws, the AP prior and the
importance sampler (paper 003): frequencies against pi, exact sample sizes, an unbiased R^."""

from __future__ import annotations

from pathlib import Path
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irsample
from irsample.design import Budget, Pool, SamplingFrame, ap_prior, importance, parse_design
from irsample.design.sampling.importance import inclusion_probabilities
from irsample.errors import DesignError
from irsample.io import load_runs
from irsample.model import Collection

from .synthetic import pooled_collection

DRAWS = 1000


@pytest.fixture(scope="module")
def frame():
    collection, table = pooled_collection(5, n_topics=3, n_runs=4)
    return SamplingFrame.from_pool(Pool.from_runs(collection, depth=60), table)


def draws(design, frame):
    rng = np.random.default_rng(2024)
    return np.array([design.select(frame, rng=rng).judged for _ in range(DRAWS)])


def assert_frequencies_match(samples, pi):
    """Every document's frequency within a Bonferroni bound (family-wise 0.1%) of its pi, where
    the normal approximation holds (D pi (1 - pi) >= 10); take-alls always, pi = 0 never."""
    freq = samples.mean(axis=0)
    assert np.all(freq[pi == 1] == 1) and np.all(freq[pi == 0] == 0)
    ok = DRAWS * pi * (1 - pi) >= 10
    z = (freq[ok] - pi[ok]) / np.sqrt(pi[ok] * (1 - pi[ok]) / DRAWS)
    assert np.abs(z).max() <= NormalDist().inv_cdf(1 - 0.001 / (2 * max(ok.sum(), 1)))


@pytest.mark.parametrize(
    "name",
    [
        "terabyte(5)",
        "uniform(0.2)@150",
        "1-10:1,11-30:0.3,31-:0.1@30/topic",
        "3strata",
        "1stratum@90",
    ],
)
def test_srs_designs_include_each_stratum_at_its_rate(frame, name):
    """Per (topic, stratum) cell: exactly k documents in every draw; the share of the first half
    of the cell's rows within 3 SE of pi = k/N; every document within a Bonferroni bound."""
    design = parse_design(name)
    samples = draws(design, frame)
    sample = design.select(frame, rng=0)
    inside = sample.stratum >= 0
    cell = np.where(inside, frame.topic * len(sample.labels) + sample.stratum, -1)
    for c in np.unique(cell[inside]):
        rows = np.flatnonzero(cell == c)
        k = samples[:, rows].sum(axis=1)
        assert np.all(k == k[0]) and k[0] == round(sample.inclusion[rows[0]] * len(rows))
        half = rows[: max(len(rows) // 2, 1)]
        share = samples[:, half].mean(axis=1)
        pi = sample.inclusion[rows[0]]
        if pi == 1:
            assert np.all(share == 1)
            continue
        se = share.std(ddof=1) / np.sqrt(DRAWS)
        assert se > 0 and abs(share.mean() - pi) <= 3 * se, (name, c, share.mean(), pi, se)
    assert_frequencies_match(samples, sample.inclusion)
    assert np.array_equal(design.select(frame, rng=7).judged, design.select(frame, rng=7).judged)


@pytest.mark.parametrize("name", ["importance(0.1)", "importance(0.3)", "importance(0.1)@100",
                                  "importance(0.1)@25/topic"])
def test_importance_sampling_includes_each_document_with_its_probability(frame, name):
    design = parse_design(name)
    samples = draws(design, frame)
    pi = design.select(frame, rng=0).inclusion
    assert_frequencies_match(samples, pi)
    per_topic = np.stack(
        [samples[:, frame.topic == t].sum(axis=1) for t in range(frame.n_topics)], 1
    )
    expected = np.array([pi[frame.topic == t].sum() for t in range(frame.n_topics)])
    if design.budget is not None and not design.budget.per_topic:
        assert np.all(per_topic.sum(axis=1) == design.budget.total)  # exactly the budget
        assert np.all(np.abs(per_topic - expected) < 1)  # each topic: floor or ceil of sum pi
    else:
        assert np.all(per_topic == np.round(expected))  # exactly n_t per topic
    # pi proportional to the prior below the cap: bins of pi get their mean pi within 3 SE
    weight = ap_prior(frame)
    free = (pi > 0) & (pi < 1)
    for t in range(frame.n_topics):
        rows = free & (frame.topic == t)
        ratio = pi[rows] / weight[rows]
        assert np.allclose(ratio, ratio[0])
    edges = np.quantile(pi[free], [0, 0.25, 0.5, 0.75, 1])
    for lo, hi in zip(edges[:-1], edges[1:]):
        rows = free & (pi >= lo) & (pi <= hi)
        share = samples[:, rows].mean(axis=1)
        assert abs(share.mean() - pi[rows].mean()) <= 3 * share.std(ddof=1) / np.sqrt(DRAWS)
    assert np.array_equal(design.select(frame, rng=3).judged, design.select(frame, rng=3).judged)


@pytest.mark.parametrize("name,floor", [("importance(0.1,floor=0.7)", 0.7),  # floors that
                                        ("importance(0.3,floor=0.8)", 0.8),  # bind on this
                                        ("importance(0.1,floor=0.9)@100", 0.9)])  # frame
def test_a_floor_on_the_prior_lifts_the_smallest_inclusion_probabilities(frame, name, floor):
    """importance(F,floor=A): pi = min(1, c w') with w' = max(w, A / N_t), each weight raised to
    at least A times its topic's uniform weight (the same documents, the same sample sizes);
    below 1, pi is proportional to w' over each group the sizes are set in (a topic; the frame
    under a total budget B), every pi at least A n_t / ((1 + A) N_t) (A B / (T (1 + A) N_t)
    under B), the documents above the floor in statAP's proportions, and every document drawn
    at its pi."""
    design = parse_design(name)
    assert design.floor == floor and parse_design(design.name) == design
    plain = parse_design(name.replace(f",floor={floor:g}", ""))
    assert plain.floor == 0.0
    pi, pi_star = design.select(frame, rng=0).inclusion, plain.select(frame, rng=0).inclusion
    inside = pi_star > 0
    assert np.array_equal(pi > 0, inside)
    size = np.bincount(frame.topic[inside], minlength=frame.n_topics)
    prior = ap_prior(frame)
    raised = np.where(inside, np.maximum(prior, floor / size[frame.topic]), 0.0)
    groups = [inside] if design.budget is not None else [
        inside & (frame.topic == t) for t in range(frame.n_topics)]
    for rows in groups:
        assert pi[rows].sum() == pytest.approx(pi_star[rows].sum())
        free = rows & (pi < 1)
        assert np.allclose(pi[free] / raised[free], (pi[free] / raised[free])[0])
    n = np.bincount(frame.topic, weights=pi, minlength=frame.n_topics)
    least = (floor * n / ((1 + floor) * size) if design.budget is None else
             floor * design.budget.total / (frame.n_topics * (1 + floor) * size))
    assert np.all(pi[inside] >= least[frame.topic[inside]] - 1e-12)
    assert np.any(inside & (prior < floor / np.maximum(size, 1)[frame.topic]))  # it binds
    assert pi[inside].min() > pi_star[inside].min()  # the floor lifts the least likely
    samples = draws(design, frame)
    assert_frequencies_match(samples, pi)
    sizes = np.stack([samples[:, frame.topic == t].sum(axis=1) for t in range(frame.n_topics)],
                     1)
    if design.budget is None:
        assert np.all(sizes == np.round(n))
    else:
        assert np.all(sizes.sum(axis=1) == design.budget.total)


@pytest.mark.parametrize("name", ["importance(0.1,floor=1)", "importance(0.1,floor=-0.1)",
                                  "importance(0.1,mix=0.1)", "importance(0.1,floor=)"])
def test_a_floor_outside_its_range_is_refused(name):
    with pytest.raises(DesignError, match="importance"):
        parse_design(name)


def test_horvitz_thompson_r_is_unbiased_under_importance_sampling(frame):
    """E[sum over sampled relevant of 1/pi] = R: the mean of statAP's R^ over 1,000 draws is
    within 3 SE of every topic's true R."""
    design = importance(0.1)
    rng = np.random.default_rng(1)
    pi = design.select(frame, rng=0).inclusion
    relevant = frame.rel > 0
    r_hat = []
    for _ in range(DRAWS):
        s = design.select(frame, rng=rng).judged & relevant
        r_hat.append(np.bincount(frame.topic[s], weights=1 / pi[s], minlength=frame.n_topics))
    r_hat = np.array(r_hat)
    truth = np.bincount(frame.topic[relevant], minlength=frame.n_topics)
    se = r_hat.std(axis=0, ddof=1) / np.sqrt(DRAWS)
    assert np.all(np.abs(r_hat.mean(axis=0) - truth) <= 3 * se), (r_hat.mean(axis=0), truth, se)


def test_ap_prior_by_hand():
    """Z = 3: w = (1 + H_3 - H_{r-1}) / 6 = 17/36, 11/36, 8/36; averaged over runs; cut at depth."""
    runs = load_runs(pd.DataFrame({
        "qid": "1", "docno": ["a", "b", "c", "b", "d"], "score": [3.0, 2, 1, 2, 1],
        "tag": ["A", "A", "A", "B", "B"],
    }))
    col = Collection.build(runs)
    pool = Pool.from_runs(col, depth=None)
    w = dict(zip(pool.docnos(), ap_prior(pool)))
    z2 = {1: (1 + 1.5) / 4, 2: (1 + 0.5) / 4}  # Z = 2: 5/8, 3/8
    assert w["a"] == pytest.approx(17 / 36 / 2)
    assert w["b"] == pytest.approx((11 / 36 + z2[1]) / 2)
    assert w["c"] == pytest.approx(8 / 36 / 2) and w["d"] == pytest.approx(z2[2] / 2)
    assert sum(w.values()) == pytest.approx(1.0)
    cut = dict(
        zip(*[Pool.from_runs(col, depth=1).docnos(), ap_prior(Pool.from_runs(col, depth=1))])
    )
    assert cut == {"a": 0.5, "b": 0.5}  # Z = 1: w(1) = (1 + 1) / 2


def test_ap_prior_does_not_depend_on_the_order_of_the_run_files():
    """The weights sum over the runs; in file order the sums differed in the last bit for 3,053
    of CACM's 15,289 pool documents (reversed file order, depth 100), and so did pi."""
    files = sorted(str(p) for p in (Path(irsample.__file__).parent / "data" / "cacm" / "runs")
                   .iterdir())

    def by_document(order):
        col = Collection.build(load_runs(order))
        pool = Pool.from_runs(col, depth=100)
        keys = zip(np.asarray(col.topics)[pool.topic], pool.docnos())
        w = ap_prior(pool)
        pi = np.zeros_like(w)
        for t in np.unique(pool.topic):
            rows = np.flatnonzero(pool.topic == t)
            pi[rows] = inclusion_probabilities(w[rows], max(1, round(0.1 * len(rows))))
        return dict(zip(keys, zip(w, pi)))

    forward, backward = by_document(files), by_document(files[::-1])
    assert len(files) > 5 and forward == backward  # bit for bit


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(1e-4, 1.0), min_size=1, max_size=30), st.data())
def test_inclusion_probabilities_sum_to_n_and_are_capped(weights, data):
    w = np.array(weights)
    n = data.draw(st.integers(1, len(w)))
    pi = inclusion_probabilities(w, n)
    assert pi.sum() == pytest.approx(n) and np.all((pi > 0) & (pi <= 1))
    free = pi < 1
    if free.any():
        c = pi[free] / w[free]
        assert np.allclose(c, c[0])
        assert np.all(c[0] * w[~free] >= 1 - 1e-9)  # take-alls are the heaviest


def test_importance_budget_errors(frame):
    with pytest.raises(Exception, match="larger than the pool"):
        importance(0.1, budget=len(frame) + 1).select(frame, rng=0)
    with pytest.raises(Exception, match="larger than the pool of topic"):
        importance(0.1, budget=Budget(10_000, per_topic=True)).select(frame, rng=0)


def test_documents_outside_the_runs_are_outside_the_importance_design():
    collection, table = pooled_collection(5, n_topics=2, n_runs=4)
    frame = SamplingFrame.from_qrels(collection, table, runs=[0, 1])  # runs 2, 3 not pooled
    s = importance(0.2).select(frame, rng=0)
    assert np.all((s.stratum == -1) == np.isinf(frame.best_rank))
    assert np.all(s.inclusion[np.isinf(frame.best_rank)] == 0)
    judged = importance(0.2).sample(frame, rng=0)
    assert judged.stratum_size.sum() == np.count_nonzero(np.isfinite(frame.best_rank))
