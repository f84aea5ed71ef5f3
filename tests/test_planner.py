"""The design planner (irsample.design.planner.relevance_model, variance_model, planner,
sequential) on
synthetic collections: Neyman allocation against exhaustive search, the variance model against
the stratified-SRS variance of the true influences and against Monte-Carlo draws, plans and
their bounds, the budget for a half-width, the pilot, planning in batches and the relevance
model."""

from __future__ import annotations

import importlib
import itertools
import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import expit

from irsample.design import Pool, SamplingFrame
from irsample.design.nojudge.infer import expected_ap
from irsample.design.planner.allocation import neyman
from irsample.design.planner.plan import (
    EDGE_GRID,
    PILOT_EDGE,
    budget_for_halfwidth,
    candidate_edges,
    pilot,
    plan,
    plan_with,
)
from irsample.design.planner.relevance_model import RelevanceModel, features, fit_relevance
from irsample.design.planner.sequential import (
    BatchLog,
    PlannedDesign,
    default_pilot,
    judge_in_batches,
)
from irsample.design.planner.variance_model import VarianceModel, _expected_idcg, pool_depth
from irsample.errors import DesignError
from irsample.evaluation import evaluate_collection
from irsample.io import load_runs
from irsample.measures import parse_all
from irsample.model import Collection

from .synthetic import pooled_collection

WALK = 1000  # the estimators read a run's ranking to rank 1000

PLAN = importlib.import_module("irsample.design.planner.plan")


# ---------------------------------------------------------------------------------------------
# the synthetic collection most tests share: 6 topics, 6 runs of 60 documents, a depth-40 pool
# (so runs retrieve pool documents below the pool's depth), grades 0, 1 and 2


@pytest.fixture(scope="module")
def world():
    collection, table = pooled_collection(
        3, n_topics=6, n_runs=6, n_docs=800, depth=60, pool_depth=40, relevant=(10, 40)
    )
    frame = SamplingFrame.from_qrels(collection, table)
    assert pool_depth(frame) == 40 and np.isfinite(frame.best_rank).all()
    return SimpleNamespace(collection=collection, frame=frame, everything=np.ones(len(frame), bool))


@pytest.fixture(scope="module")
def truth(world):
    """Models that know every grade: 0/1 relevance and (gains) the grade."""
    f = world.frame
    return SimpleNamespace(binary=fit_relevance(f, world.everything, f.rel),
                           gains=fit_relevance(f, world.everything, f.rel, gains=True))


@pytest.fixture(scope="module")
def piloted(world):
    """A 60-document pilot and the model fitted to it."""
    f = world.frame
    judged = pilot(f, 60).select(f, rng=1).judged.copy()
    return SimpleNamespace(judged=judged, model=fit_relevance(f, judged, f.rel))


def ranked_rows(frame):
    """(run, topic) -> the pool row of every document of the run's top 1000 (-1: not a row)."""
    col = frame.collection
    row_of = np.full(col.n_tdi, -1, dtype=np.int64)
    row_of[frame.tdi] = np.arange(len(frame))
    out = {}
    for i in frame.runs:
        for t in range(col.n_topics):
            s = i * col.n_topics + t
            out[i, t] = row_of[col.rank_tdi[col.rank_offsets[s]:col.rank_offsets[s + 1]][:WALK]]
    return out


def ap_influence(rows, x, ap, relevant, n_rows):
    """AP's first-order influence u per frame row for one run and topic, by hand: ``rows`` the
    frame row at each rank (-1 outside the frame), ``x`` P(relevant) per row, ``ap`` and
    ``relevant`` the expected AP and R; u_d = (w_d - AP) / R at retrieved rows, with
    w_d = (1 + expected relevant above) / rank + sum below of x_e / rank_e; -AP / R elsewhere.
    """
    p = np.where(rows >= 0, x[np.maximum(rows, 0)], 0.0)
    k = np.arange(1, len(p) + 1)
    above = np.concatenate([[0.0], np.cumsum(p)[:-1]])
    tail = np.concatenate([np.cumsum((p / k)[::-1])[::-1][1:], [0.0]])
    w = (1 + above) / k + tail
    u = np.full(n_rows, -ap / relevant)
    u[rows[rows >= 0]] = (w[rows >= 0] - ap) / relevant
    return u


def cell_of(frame, edges):
    """Per row: its stratum under ``edges`` (best ranks up to the pool's depth)."""
    return np.searchsorted(np.array(edges), frame.best_rank, side="right") - 1


def stratified_variance(y, frame, edges, take):
    """sum over cells c = (topic, stratum) of N_c^2 (1/n_c - 1/N_c) S_c^2 / T^2 (Cochran 5.6)."""
    stratum = cell_of(frame, edges)
    n_topics = frame.collection.n_topics
    total = 0.0
    for t in range(n_topics):
        for s in range(len(edges)):
            rows = np.flatnonzero((frame.topic == t) & (stratum == s))
            n_c = len(rows)
            if n_c >= 2:
                total += n_c * n_c * (1 / take[t, s] - 1 / n_c) * np.var(y[rows], ddof=1)
    return total / n_topics**2


def predicted(weight, size, take):
    factor = np.where(size > 0, 1 / np.maximum(take, 1) - 1 / np.maximum(size, 1), 0.0)
    return (weight * factor).sum(axis=(1, 2))


def some_take(size):
    """A sample size in [1, N] for every non-empty cell (a third of it, rounded up)."""
    return np.where(size > 0, np.maximum(1, -(-size // 3)), 0)


def keys(frame, mask):
    """(qid, docno) of the masked rows."""
    col = frame.collection
    rows = np.flatnonzero(mask)
    docnos = col.tdi_docno.take(pa.array(frame.tdi[rows])).to_pylist()
    return frozenset((col.topics[t], d.decode()) for t, d in zip(frame.topic[rows], docnos))


def assert_conditional_inclusion(frame, planned, judged, inclusion):
    """The planned top-up records pi given the rows ``judged`` before (``allocated``'s module
    docstring): 1 for them, (k - m) / (N - m) for the rest of a topped-up cell, m / N where the
    plan adds nothing."""
    cell = (frame.topic, cell_of(frame, planned.edges))
    m, size, take = planned.judged, planned.size, planned.take
    topped = (take > m) | (size == m)
    rest = np.where(topped, (take - m) / np.maximum(size - m, 1), m / np.maximum(size, 1))
    pi = np.where(judged, np.where(topped, 1.0, rest)[cell], rest[cell])
    assert np.allclose(inclusion, pi)


def counts(frame, edges, mask):
    """Masked rows per (topic, stratum)."""
    out = np.zeros((frame.collection.n_topics, len(edges)), dtype=np.int64)
    np.add.at(out, (frame.topic[mask], cell_of(frame, edges)[mask]), 1)
    return out


# ---------------------------------------------------------------------------------------------
# 1. Neyman allocation


def objective(weight, take, size):
    return sum(w / n for w, n, s in zip(weight, take, size) if s > 0)


def exhaustive_minimum(weight, size, lower, budget):
    """min sum w/n over every integer allocation in [lower, size] summing to ``budget``: all
    choices of the first cells, the last one taking what is left."""
    ranges = [np.arange(lo, s + 1) for lo, s in zip(lower[:-1], size[:-1])]
    grid = np.array(list(itertools.product(*ranges)), dtype=np.int64).reshape(-1, len(ranges))
    last = budget - grid.sum(axis=1)
    ok = (last >= lower[-1]) & (last <= size[-1])
    alloc = np.column_stack([grid[ok], last[ok]])
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(size > 0, weight / alloc, 0.0)
    return float(terms.sum(axis=1).min())


@st.composite
def allocation_problems(draw):
    k = draw(st.integers(2, 6))
    size = np.array(draw(st.lists(st.integers(0, 12), min_size=k, max_size=k)))
    weight = np.array(draw(st.lists(st.one_of(st.just(0.0), st.floats(0.0, 100.0)),
                                    min_size=k, max_size=k)))
    lower = np.array([draw(st.integers(1, int(s))) if s else 0 for s in size])
    budget = draw(st.integers(int(lower.sum()), int(size.sum())))
    return weight, size, lower, budget


@settings(max_examples=300, deadline=None)
@given(allocation_problems())
def test_neyman_is_the_exhaustive_minimum(problem):
    weight, size, lower, budget = problem
    take = neyman(weight, size, lower, budget)
    assert take.sum() == budget and take.dtype == np.int64
    assert np.all(take >= lower) and np.all(take <= size)
    best = exhaustive_minimum(weight, size, lower, budget)
    assert abs(objective(weight, take, size) - best) <= 1e-9 * best


def test_neyman_keeps_the_shape_and_spans_any_range_of_weights():
    # weights 1e61 apart: a bisection over [0, max n/sqrt(w)] lost lambda (it gave [2, 1] here).
    # Plans meet such weights: a model fitted to a 60-document pilot (p down to ~1e-60) gave
    # cell weights from 4.6e-62 to 0.037, and a 300-judgment batch plan of 342 judgments.
    assert neyman(np.array([1.0, 1e-61]), np.array([2, 1]), np.array([1, 1]), 2).tolist() == [1, 1]
    weight = np.array([[4.0, 1.0], [0.0, 9.0]])
    take = neyman(weight, np.full((2, 2), 10), np.ones((2, 2)), 12)
    assert take.shape == (2, 2) and take.sum() == 12 and take[1, 0] == 1
    assert take[1, 1] > take[0, 0] > take[0, 1]  # n ~ sqrt(w): 3 : 2 : 1


@pytest.mark.parametrize("budget", [4, 21])
def test_neyman_refuses_budgets_outside_the_bounds(budget):
    with pytest.raises(DesignError, match=r"outside \[5, 20\]"):
        neyman(np.ones(2), np.array([10, 10]), np.array([2, 3]), budget)


# ---------------------------------------------------------------------------------------------
# 2. The variance model is exact where the model knows the truth


def true_ndcg_influence(frame, ranked):
    """y[run, row] = grade / (log2(rank + 1) IDCG_t), IDCG_t of topic t's relevant documents at
    their mean grade, rank the row's rank in the run (top 1000; 0 where not retrieved)."""
    grade = frame.rel.astype(np.float64)
    y = np.zeros((len(frame.runs), len(frame)))
    for t in range(frame.collection.n_topics):
        rel = grade[(frame.topic == t) & (grade > 0)]
        idcg = rel.mean() * sum(1 / math.log2(k + 1) for k in range(1, len(rel) + 1))
        for i in frame.runs:
            rows = ranked[i, t]
            k = np.flatnonzero(rows >= 0) + 1
            y[i, rows[rows >= 0]] = grade[rows[rows >= 0]] / (np.log2(k + 1) * idcg)
    return y


def test_ndcg_weights_are_the_stratified_variance_of_the_true_discounted_gains(world, truth):
    frame = world.frame
    ranked = ranked_rows(frame)
    assert any(np.any(rows[40:] >= 0) for rows in ranked.values())  # pool rows below depth 40
    y = true_ndcg_influence(frame, ranked)
    vm = VarianceModel.build(frame, truth.gains, "infNDCG")
    for edges in [(1,), (1, 6, 21), (1, 4, 11, 26)]:
        size, weight = vm.cells(edges)
        assert np.array_equal(size, counts(frame, edges, world.everything))
        take = some_take(size)
        direct = [stratified_variance(y[i], frame, edges, take) for i in frame.runs]
        assert np.allclose(predicted(weight, size, take), direct, rtol=1e-9, atol=0)


def test_expected_ideal_dcg_is_the_ideal_dcg_and_the_influence_gives_ndcg(world):
    """For binary grades IDCG at the mean gain is the plain ideal DCG, and with every document
    judged sum_d u_d x_d is the run's nDCG (trec_eval's ndcg)."""
    col, f = world.collection, world.frame
    binary = SamplingFrame.from_arrays(col, f.topic, f.tdi, (f.rel > 0).astype(np.int64))
    model = fit_relevance(binary, world.everything, binary.rel, gains=True)
    relevant = np.bincount(binary.topic, weights=binary.rel, minlength=col.n_topics)
    idcg = _expected_idcg(relevant, model, world.everything, binary.topic, col.n_topics)
    plain = [sum(1 / math.log2(k + 1) for k in range(1, int(r) + 1)) for r in relevant]
    assert np.allclose(idcg, plain, rtol=1e-12)
    vm = VarianceModel.build(binary, model, "infNDCG")
    ndcg = evaluate_collection(col, binary.judgments(), parse_all(["ndcg"])).values[:, :, 0]
    assert np.allclose(vm.cum_runs[0, :, :, -1], ndcg, rtol=1e-12)
    # a fractional expected count: R = 2.5 at gain 2 -> 2 (1 + 1/log2 3 + 0.5/log2 4)
    prob = np.array([1.0, 0.5, 0.5, 0.5, 0.0])
    fake = SimpleNamespace(prob=prob, mean=2 * prob)
    got = _expected_idcg(np.array([2.5]), fake, np.ones(5, bool), np.zeros(5, np.int64), 1)
    assert got[0] == pytest.approx(2 * (1 + 1 / math.log2(3) + 0.25))


def single_run_pool(order):
    """One topic, one run ranking documents d0..d(n-1) in ``order``; its whole-ranking pool."""
    n = len(order)
    runs = load_runs(pd.DataFrame({"qid": "q", "docno": [f"d{j}" for j in order],
                                   "score": np.arange(n, 0, -1.0), "tag": "R"}))
    return Pool.from_runs(Collection.build(runs), depth=n)


def test_ap_influence_is_the_derivative_of_expected_ap():
    rng = np.random.default_rng(7)
    pool = single_run_pool(rng.permutation(12))
    n = len(pool)
    p = rng.uniform(0.0, 1.0, n)
    model = RelevanceModel(p, np.ones(n), np.ones(n), (math.nan,) * 3, 0, 0)
    vm = VarianceModel.build(pool, model, "xinfAP")
    by_rank = np.argsort(pool.best_rank)  # rows in rank order
    assert np.array_equal(pool.best_rank[by_rank], np.arange(1, n + 1))
    r = p.sum()
    v = np.diff(vm.cum_runs[0, 0, 0], prepend=0.0)  # per rank: v_k mu_k with mu = 1
    ranked_p = p[by_rank]
    h = 1e-6
    for k in range(n):
        up, down = ranked_p.copy(), ranked_p.copy()
        up[k] += h
        down[k] -= h
        slope = (expected_ap(up, r) - expected_ap(down, r)) / (2 * h) * r  # d E[A] / d p_k
        assert v[k] * r == pytest.approx(slope, rel=1e-7, abs=1e-9)
    # the part every pool document shares: -E[A] / R^2 = -E[AP] / R
    assert -vm.shift[0, 0] * r == pytest.approx(expected_ap(ranked_p, r), rel=1e-12)


def test_ap_weights_use_the_true_ap_and_are_the_stratified_variance_of_its_influence(world, truth):
    col, frame = world.collection, world.frame
    vm = VarianceModel.build(frame, truth.binary, "xinfAP")
    ap = evaluate_collection(col, frame.judgments(), parse_all(["map"])).values[:, :, 0]
    relevant = np.bincount(frame.topic, weights=frame.rel > 0, minlength=col.n_topics)
    assert np.allclose(-vm.shift * relevant, ap, rtol=1e-12)  # E[AP] at 0/1 p is the AP
    ranked = ranked_rows(frame)
    x = (frame.rel > 0).astype(np.float64)
    edges = (1, 6, 21)
    size, weight = vm.cells(edges)
    take = some_take(size)
    for i in frame.runs:
        y = np.zeros(len(frame))
        for t in range(col.n_topics):
            u = ap_influence(ranked[i, t], x, ap[i, t], relevant[t], len(frame))
            on = frame.topic == t
            y[on] = (u * x)[on]
        direct = stratified_variance(y, frame, edges, take)
        assert predicted(weight[i:i + 1], size, take)[0] == pytest.approx(direct, rel=1e-9)


# ---------------------------------------------------------------------------------------------
# 3. Monte Carlo: a fixed planned design drawn 2,000 times


def test_predicted_variance_of_a_horvitz_thompson_ndcg_matches_2000_draws(world, truth):
    frame = world.frame
    n_topics = frame.collection.n_topics
    planned = plan(frame, truth.gains, 250, estimator="infNDCG")
    design = planned.design()
    y = true_ndcg_influence(frame, ranked_rows(frame))
    rng = np.random.default_rng(11)
    draws = 2000
    est = np.empty((draws, len(frame.runs)))
    for d in range(draws):
        sample = design.select(frame, rng=rng)
        weight = np.where(sample.judged, 1 / np.where(sample.judged, sample.inclusion, 1), 0.0)
        est[d] = y @ weight / n_topics  # mean over topics of the HT totals
    observed = est.var(axis=0, ddof=1)
    dev = (est - est.mean(axis=0)) ** 2
    se = np.sqrt(dev.var(axis=0, ddof=1) / draws)  # standard error of the sample variance
    assert np.all(np.abs(observed - planned.variance) <= 4 * se), (observed, planned.variance)
    truth_total = y.sum(axis=1) / n_topics  # the HT estimate is unbiased
    assert np.all(np.abs(est.mean(axis=0) - truth_total) <= 4 * np.sqrt(planned.variance / draws))


def estimator_ratio(world, model, estimator, draws=1000):
    """Predicted / observed variance of the mean ``estimator`` over draws of its plan (250)."""
    col, frame = world.collection, world.frame
    planned = plan(frame, model, 250, estimator=estimator)
    design = planned.design()
    measures = parse_all([estimator])
    rng = np.random.default_rng(5)
    values = np.array([
        evaluate_collection(col, frame.judgments(design.select(frame, rng=rng)), measures)
        .summary[:, 0] for _ in range(draws)
    ])
    assert np.isfinite(values).all()
    return planned.variance / values.var(axis=0, ddof=1)


def test_predicted_variance_of_statap_is_within_a_factor_of_one_and_a_half(world, truth):
    # statAP is a Horvitz-Thompson ratio: predicted / observed over 1,000 draws is 1.03-1.22
    # for the six runs (xinfAP, not tested: 0.87-1.82)
    ratio = estimator_ratio(world, truth.binary, "statAP")
    assert np.all((ratio > 1 / 1.5) & (ratio < 1.5)), ratio


@pytest.mark.xfail(strict=True, reason=(
    "infNDCG expands each run's sampled gains by d_s / m_s of its own retrieved documents and "
    "divides by an estimated IDCG; the HT model of the cell over-predicts its variance: "
    "predicted / observed over 1,000 draws is 1.48-2.68 for the six runs"))
def test_predicted_variance_of_infndcg_is_within_a_factor_of_one_and_a_half(world, truth):
    ratio = estimator_ratio(world, truth.gains, "infNDCG")
    assert np.all((ratio > 1 / 1.5) & (ratio < 1.5)), ratio


# ---------------------------------------------------------------------------------------------
# 4. Plans


def test_candidate_edges_are_every_subset_of_the_grid():
    grid = [e for e in EDGE_GRID if e <= 40]
    every = candidate_edges(40, 4)
    assert len(every) == len(set(every)) == sum(math.comb(len(grid), k) for k in range(4))
    assert all(e[0] == 1 and list(e) == sorted(set(e)) and e[-1] <= 40 for e in every)
    kept = candidate_edges(40, 3, required=(11, 50))  # 50 is beyond the depth
    assert len(kept) == 1 + len(grid) - 1 and all(11 in e and len(e) <= 3 for e in kept)
    with pytest.raises(DesignError, match="3 strata are fixed already"):
        candidate_edges(40, 2, required=(6, 11))


@pytest.mark.parametrize("estimator", ["xinfAP", "infNDCG", "statAP"])
def test_plan_spends_the_budget_within_its_bounds(world, piloted, estimator):
    frame, judged = world.frame, piloted.judged
    for budget in [int(judged.sum()), 100, 400, len(frame)]:
        p = plan(frame, piloted.model, budget, estimator=estimator, judged=judged,
                 required=(PILOT_EDGE,))
        assert p.budget == budget and p.estimator == estimator
        assert p.edges[0] == 1 and PILOT_EDGE in p.edges and len(p.edges) <= 4
        assert np.array_equal(p.size, counts(frame, p.edges, world.everything))
        assert np.array_equal(p.judged, counts(frame, p.edges, judged))
        assert np.all(p.take >= np.maximum(p.judged, p.size > 0)) and np.all(p.take <= p.size)
        assert p.variance.shape == (len(frame.runs),) and np.all(p.variance >= 0)
    # the pilot's budget: strata in which the pilot judged something in every non-empty cell
    only_pilot = plan(frame, piloted.model, int(judged.sum()), judged=judged)
    assert np.array_equal(only_pilot.take, only_pilot.judged)
    assert np.all(only_pilot.judged[only_pilot.size > 0] > 0)
    assert plan(frame, piloted.model, len(frame)).halfwidth == 0.0  # the whole pool: no error


def test_fixed_edges_are_kept(world, piloted):
    p = plan(world.frame, piloted.model, 200, edges=(1, 3, 21))
    assert p.edges == (1, 3, 21) and p.labels == ("1-2", "3-20", "21-40")
    assert np.array_equal(p.size, counts(world.frame, p.edges, world.everything))


def test_predicted_halfwidth_falls_as_the_budget_grows(world, truth, piloted, monkeypatch):
    # free plans and banded ones each fall with the budget; the planner's plan is one or the
    # other, and which can change with the budget (a larger free plan judges more cells whole
    # and may sample fewer relevant documents below certainty: plan.py, "Band")
    frame = world.frame
    budgets = (20, 50, 100, 200, 400, 800)
    for model in (truth.binary, piloted.model):
        chosen = [plan(frame, model, b) for b in budgets]
        free = [plan(frame, model, b, spread=None) for b in budgets]
        with monkeypatch.context() as m:
            m.setattr(PLAN, "BIAS_LIMIT", -1.0)  # every plan held to the band
            banded = [plan(frame, model, b) for b in budgets]
        for plans in (free, banded):
            widths = [p.halfwidth for p in plans]
            assert all(b < a for a, b in zip(widths, widths[1:])), widths
        assert all(np.array_equal(c.take, f.take) or np.array_equal(c.take, b.take)
                   for c, f, b in zip(chosen, free, banded))
    # what the unconstrained strata search minimises, the mean variance over runs, falls at
    # every step (the rate band moves with the budget; its own tests are below)
    vm = VarianceModel.build(frame, truth.binary, "xinfAP")
    mean = [plan_with(vm, frame, b, estimator="xinfAP", spread=None).variance.mean()
            for b in range(420, 451)]
    assert all(b <= a for a, b in zip(mean, mean[1:]))


def test_predicted_halfwidth_never_rises_by_one_more_judgment(world, truth):
    # around 436 judgments the best strata switch (1,6,11,26 -> 1,11,16,26): the half-width is
    # z sqrt(mean variance), the plan's own objective, so it cannot rise there
    widths = [plan(world.frame, truth.binary, b, spread=None).halfwidth
              for b in (434, 435, 436, 437)]
    assert all(b <= a for a, b in zip(widths, widths[1:])), widths


def test_plans_outside_the_pool_or_below_the_lower_bound_are_errors(world, piloted):
    frame, judged = world.frame, piloted.judged
    for budget in (len(frame) + 1, 5, int(judged.sum()) - 1):
        with pytest.raises(DesignError, match=f"no plan fits a budget of {budget} "):
            plan(frame, piloted.model, budget, judged=judged if budget > 5 else None)
    with pytest.raises(DesignError, match="no plan fits a budget of 20"):
        plan(frame, piloted.model, 20, edges=(1, 6, 21, 31))  # 24 non-empty cells
    with pytest.raises(DesignError, match="no variance model for 'P_10'"):
        plan(frame, piloted.model, 100, estimator="P_10")


def test_the_plan_draws_exactly_its_sizes(world, piloted):
    frame, judged = world.frame, piloted.judged
    p = plan(frame, piloted.model, 300, judged=judged, required=(PILOT_EDGE,))
    design = p.design(before=keys(frame, judged), label="round1")
    assert design.edges == p.edges and design.last == 40 and design.total == 300
    for seed in (0, 1):
        sample = design.select(frame, rng=seed)
        assert np.array_equal(counts(frame, p.edges, sample.judged), p.take)
        assert sample.judged[judged].all()
        assert_conditional_inclusion(frame, p, judged, sample.inclusion)


def test_summary_names_every_stratum(world, piloted):
    p = plan(world.frame, piloted.model, 300, judged=piloted.judged)
    text = p.summary()
    assert text.startswith("plan for xinfAP: 300 judgments over 6 topics, strata ")
    assert f"{p.halfwidth:.4f}" in text
    lines = text.splitlines()
    for s, label in enumerate(p.labels):
        row = next(line for line in lines if line.startswith(label + "\t")).split("\t")
        assert row[1:4] == [str(p.size[:, s].sum()), str(p.judged[:, s].sum()),
                            str(p.take[:, s].sum())]
    per_topic = p.take.sum(axis=1)
    assert f"per topic: {per_topic.min()}-{per_topic.max()} judgments" in text


# ---------------------------------------------------------------------------------------------
# 5. The budget for a target half-width


@pytest.mark.parametrize("target", [0.2, 0.1, 0.05, 0.02])
def test_budget_for_halfwidth_is_the_smallest_that_meets_the_target(world, piloted, target):
    frame = world.frame
    p = budget_for_halfwidth(frame, piloted.model, target, judged=piloted.judged, spread=None)
    assert p.halfwidth <= target
    assert budget_for_halfwidth(frame, piloted.model, target, judged=piloted.judged).halfwidth \
        <= target  # with the rate band: meets the target too
    tolerance = max(1, len(frame) // 1000)
    try:
        smaller = plan(frame, piloted.model, p.budget - tolerance - 1, judged=piloted.judged,
                       spread=None)
    except DesignError:
        return  # no plan that small at all
    assert smaller.halfwidth > target


def test_budget_for_halfwidth_reaches_any_positive_target(world, truth):
    # judging the whole pool predicts no error, so its "unreachable" error cannot happen
    p = budget_for_halfwidth(world.frame, truth.binary, 1e-12)
    assert p.halfwidth <= 1e-12 and p.budget <= len(world.frame)


def test_budget_for_halfwidth_is_the_smallest_across_a_change_of_strata(world, truth):
    target = plan(world.frame, truth.binary, 436, spread=None).halfwidth
    p = budget_for_halfwidth(world.frame, truth.binary, target, spread=None)
    assert p.budget == 436 and p.halfwidth <= target
    assert plan(world.frame, truth.binary, 435, spread=None).halfwidth > target


@pytest.mark.parametrize("target", [0.0, -0.1, math.nan])
def test_budget_for_halfwidth_needs_a_positive_target(world, piloted, target):
    with pytest.raises(DesignError, match="target half-width must be > 0"):
        budget_for_halfwidth(world.frame, piloted.model, target)


# ---------------------------------------------------------------------------------------------
# 6. The pilot

PILOT_TOPICS = tuple(f"q{i}" for i in range(5))
PILOT_WIDTH = 40
PILOT_COLLECTION = Collection.build(load_runs(pd.DataFrame({
    "qid": np.repeat(PILOT_TOPICS, PILOT_WIDTH),
    "docno": [f"d{i:02d}" for i in range(PILOT_WIDTH)] * len(PILOT_TOPICS),
    "score": np.tile(np.arange(PILOT_WIDTH, 0, -1.0), len(PILOT_TOPICS)), "tag": "R",
})))


def pool_of_halves(cells) -> Pool:
    """A depth-30 pool with cells[t] = (documents ranked 1-10, documents ranked 11-30)."""
    topic, docno, rank = [], [], []
    for t, (top, rest) in enumerate(cells):
        ranks = [1 + j % 10 for j in range(top)] + [11 + j % 20 for j in range(rest)]
        topic += [t] * len(ranks)
        docno += [f"d{i:02d}" for i in range(len(ranks))]
        rank += ranks
    qids = pa.array([PILOT_TOPICS[t] for t in topic], pa.string())
    _, tdi = PILOT_COLLECTION.lookup(qids, pa.array(docno, pa.string()))
    return Pool(PILOT_COLLECTION, (0,), 30.0, np.array(topic, np.int64), tdi,
                np.array(rank, np.float64), np.ones(len(topic), np.int32), None, "<halves>")


@st.composite
def pilot_cases(draw):
    cells = np.array([[draw(st.integers(0, 12)), draw(st.integers(0, 12))]
                      for _ in PILOT_TOPICS])
    if not cells.any():
        cells[0, 0] = 1
    size = draw(st.integers(int((cells > 0).sum()), int(cells.sum())))
    return cells, size


@settings(max_examples=200, deadline=None)
@given(pilot_cases())
def test_pilot_has_its_size_equal_shares_and_both_strata(case):
    cells, size = case
    pool = pool_of_halves(cells)
    design = pilot(pool, size)
    assert design.edges == (1, PILOT_EDGE) and design.last == 30
    take = np.array([dict(design.take).get(q, (0, 0)) for q in PILOT_TOPICS])
    assert take.sum() == size and pilot(pool, size).select(pool, rng=0).judged.sum() == size
    assert np.all(take <= cells) and np.all(take[cells > 0] >= 1)
    per_topic, pool_size = take.sum(axis=1), cells.sum(axis=1)
    # equal shares: a topic below the largest by more than one has no room left
    short = per_topic < per_topic.max() - 1
    assert np.all(per_topic[short] == pool_size[short]), (cells, take)
    # halves: within a topic the strata differ by at most one where both have room
    both = (take < cells).all(axis=1)
    assert np.all(np.abs(take[both, 0] - take[both, 1]) <= 1), (cells, take)


def test_pilot_of_the_frame_and_its_errors(world):
    frame = world.frame
    design = pilot(frame, 60)
    sample = design.select(frame, rng=3)
    assert np.array_equal(counts(frame, (1, PILOT_EDGE), sample.judged), np.full((6, 2), 5))
    assert np.all(sample.inclusion[sample.judged] > 0)
    with pytest.raises(DesignError, match="between 12 and 1109 judgments .* got 11"):
        pilot(frame, 11)
    with pytest.raises(DesignError, match="got 1110"):
        pilot(frame, len(frame) + 1)


# ---------------------------------------------------------------------------------------------
# 7. Judging in batches


@pytest.mark.parametrize("batches", [1, 3])
def test_batches_judge_the_budget_keep_the_pilot_and_the_strata(world, batches):
    frame = world.frame
    grades = lambda rows: frame.rel[rows]  # noqa: E731
    log = BatchLog()
    sample = judge_in_batches(frame, grades, 300, batches=batches, rng=8, log=log)
    assert sample.judged.sum() == 300
    assert default_pilot(300, 6) == 15 and default_pilot(100, 6) == 12 and default_pilot(9, 6) == 9
    assert default_pilot(1000, 6) == 50
    first = pilot(frame, 15).select(frame, rng=np.random.default_rng(8))  # the loop's first draw
    assert first.judged.sum() == 15 and sample.judged[first.judged].all()
    assert len(log.plans) == batches and log.judged[-1] == 300
    assert log.judged == [p.budget for p in log.plans]
    assert log.judged == sorted(log.judged) and log.plans[0].budget > 15
    earlier = {PILOT_EDGE}
    for p in log.plans:
        assert earlier <= set(p.edges)
        earlier = set(p.edges)
    last = log.plans[-1]
    assert np.array_equal(counts(frame, last.edges, sample.judged), last.take)
    if batches == 1:
        assert_conditional_inclusion(frame, last, first.judged, sample.inclusion)
    # any number of batches: per cell, the probabilities add up to the cell's sample size
    pi_sum = np.zeros_like(last.size, dtype=np.float64)
    np.add.at(pi_sum, (frame.topic, cell_of(frame, last.edges)), sample.inclusion)
    assert np.allclose(pi_sum, last.take)
    again = judge_in_batches(frame, grades, 300, batches=batches, rng=8)
    assert np.array_equal(again.judged, sample.judged)
    other = judge_in_batches(frame, grades, 300, batches=batches, rng=9)
    assert not np.array_equal(other.judged, sample.judged)


def test_batches_only_ask_the_assessor_about_new_documents(world):
    frame = world.frame
    asked = []

    def grades(rows):
        asked.append(rows.copy())
        return frame.rel[rows]

    sample = judge_in_batches(frame, grades, 200, estimator="infNDCG", batches=2, rng=4)
    every = np.concatenate(asked)
    assert len(every) == len(set(every.tolist())) == 200
    assert np.array_equal(np.sort(every), np.flatnonzero(sample.judged))


def test_planned_design_judgments_evaluate(world):
    col, frame = world.collection, world.frame
    measures = parse_all(["xinfAP", "infNDCG", "statAP"])
    design = PlannedDesign(250, estimator="infNDCG", batches=2)
    assert design.name == "plan(infNDCG,batches=2)@250"
    ev = evaluate_collection(col, design.sample(frame, rng=2), measures)
    assert np.isfinite(ev.summary).all() and np.isfinite(ev.values).all()
    with pytest.raises(DesignError, match="judges as it goes: it draws from a SamplingFrame"):
        design.select(Pool.from_runs(col, depth=40), rng=2)


def test_a_planned_design_of_the_whole_pool_gives_the_true_measures(world):
    col, frame = world.collection, world.frame
    judgments = PlannedDesign(len(frame), batches=2).sample(frame, rng=6)
    est = evaluate_collection(col, judgments, parse_all(["xinfAP", "infNDCG", "statAP"]))
    true = evaluate_collection(col, frame.judgments(), parse_all(["map", "ndcg"]))
    ap, ndcg = true.values[:, :, 0], true.values[:, :, 1]
    assert np.allclose(est.values[:, :, 0], ap, atol=1e-4)  # xinfAP's 1e-5 smoothing
    assert np.allclose(est.values[:, :, 1], ndcg, rtol=1e-12)
    assert np.allclose(est.values[:, :, 2], ap, rtol=1e-12)


@pytest.mark.parametrize("kwargs, message", [
    (dict(estimator="P_10"), "cannot plan for 'P_10'"),
    (dict(batches=0), "batches must be an integer >= 1"),
    (dict(batches=True), "batches must be an integer >= 1"),
    (dict(pilot_size=0), "pilot of 0 judgments for a budget of 100"),
    (dict(pilot_size=101), "pilot of 101 judgments"),
])
def test_bad_batch_parameters_are_design_errors(world, kwargs, message):
    frame = world.frame
    with pytest.raises(DesignError, match=message):
        judge_in_batches(frame, lambda rows: frame.rel[rows], 100, rng=0, **kwargs)


@pytest.mark.parametrize("kwargs, message", [
    (dict(budget=0), "budget must be an integer >= 1"),
    (dict(budget=2.5), "budget must be an integer >= 1"),
    (dict(budget=10, estimator="map"), "cannot plan for 'map'"),
])
def test_bad_planned_designs_are_design_errors(kwargs, message):
    with pytest.raises(DesignError, match=message):
        PlannedDesign(**kwargs)


# ---------------------------------------------------------------------------------------------
# 8. The relevance model


@pytest.fixture(scope="module")
def bigger():
    collection, table = pooled_collection(
        5, n_topics=20, n_runs=6, n_docs=800, depth=60, pool_depth=40, relevant=(10, 40)
    )
    return SamplingFrame.from_qrels(collection, table)


def test_fit_recovers_a_logistic_truth(bigger):
    frame = bigger
    x = features(frame)
    truth = np.array([-1.0, 1.2, -0.6])
    rng = np.random.default_rng(0)
    offset = rng.normal(0.0, 0.5, frame.collection.n_topics)
    p = expit(x @ truth + offset[frame.topic])
    rel = (rng.random(len(p)) < p).astype(np.int64)
    synthetic = SamplingFrame.from_arrays(frame.collection, frame.topic, frame.tdi, rel)
    model = fit_relevance(synthetic, np.ones(len(rel), bool), rel)
    assert model.judged == len(rel) and model.relevant == rel.sum()
    # standard errors of (a, b, c) from the Fisher information at the truth
    se = np.sqrt(np.diag(np.linalg.inv(x.T @ (x * (p * (1 - p))[:, None]))))
    assert np.all(np.abs(np.array(model.coefficients) - truth) < 4 * se), (model.coefficients, se)
    assert np.array_equal(model.prob, rel.astype(np.float64))  # judged rows keep their value


def test_judged_rows_keep_their_value_and_the_rest_is_predicted(world):
    frame = world.frame
    judged = np.random.default_rng(2).random(len(frame)) < 0.4
    for gains in (False, True):
        model = fit_relevance(frame, judged, frame.rel, gains=gains)
        relevant = frame.rel >= 1
        assert np.array_equal(model.prob[judged], relevant[judged].astype(np.float64))
        assert np.all((model.prob[~judged] > 0) & (model.prob[~judged] < 1))
        assert np.isfinite(model.coefficients).all()
        if gains:
            g = frame.rel[judged & relevant].astype(np.float64)
            assert np.array_equal(model.mean[judged], np.where(relevant, frame.rel, 0)[judged])
            assert np.array_equal(model.second[judged], model.mean[judged] ** 2)
            assert np.allclose(model.mean[~judged], model.prob[~judged] * g.mean())
            assert np.allclose(model.second[~judged], model.prob[~judged] * (g * g).mean())
        else:
            assert np.array_equal(model.mean, model.prob)
            assert np.array_equal(model.second, model.prob)


@pytest.mark.parametrize("fraction", [0.05, 0.1])
def test_without_both_kinds_of_judgments_the_prior_is_used(world, fraction):
    frame = world.frame
    n_topics = frame.collection.n_topics
    nothing = np.zeros(len(frame), bool)
    model = fit_relevance(frame, nothing, frame.rel, prior_fraction=fraction)
    assert all(math.isnan(c) for c in model.coefficients) and model.judged == 0
    pool = frame.pool_size()
    assert np.allclose(model.expected_relevant(frame.topic, n_topics), fraction * pool,
                       rtol=1e-9)
    tilt = np.exp(features(frame)[:, 1])  # within a topic p is proportional to N_t q_d
    ratio = model.prob / tilt
    for t in range(n_topics):
        assert np.allclose(ratio[frame.topic == t], ratio[frame.topic == t][0])
    # judged non-relevant rows only: still the prior, the judged rows at 0
    judged = (frame.rel == 0) & (np.arange(len(frame)) % 3 == 0)
    model = fit_relevance(frame, judged, frame.rel, prior_fraction=fraction)
    assert math.isnan(model.coefficients[0]) and np.all(model.prob[judged] == 0)
    assert np.allclose(model.prob[~judged], fraction * (tilt / np.bincount(
        frame.topic, weights=tilt)[frame.topic] * pool[frame.topic])[~judged])


def test_fit_refuses_a_mask_of_the_wrong_length(world):
    with pytest.raises(DesignError, match="judged mask of"):
        fit_relevance(world.frame, np.ones(3, bool), world.frame.rel)
