"""The planner's rate band and forced top-ups (irsample.design.planner.plan), and a Monte-Carlo
check that a planned design's recorded inclusion probabilities (given the pilot:
irsample.design.sampling.allocated) make every Horvitz-Thompson total unbiased, on the synthetic
collection of tests/test_planner.py."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from irsample.design import SamplingFrame
from irsample.design.planner.plan import MIN_TOP_UP, PILOT_EDGE, SPREAD, pilot, plan
from irsample.design.planner.relevance_model import fit_relevance
from irsample.design.planner.sequential import PlannedDesign
from irsample.design.planner.variance_model import VarianceModel
from irsample.evaluation import evaluate_collection
from irsample.measures import parse_all

from .synthetic import pooled_collection
from .test_planner import ap_influence, cell_of, counts, ranked_rows, some_take

PLAN = importlib.import_module("irsample.design.planner.plan")


@pytest.fixture(scope="module")
def world():
    collection, table = pooled_collection(
        3, n_topics=6, n_runs=6, n_docs=800, depth=60, pool_depth=40, relevant=(10, 40)
    )
    return collection, SamplingFrame.from_qrels(collection, table)


@pytest.fixture(scope="module")
def piloted(world):
    _, frame = world
    judged = pilot(frame, 24).select(frame, rng=1).judged.copy()
    return judged, fit_relevance(frame, judged, frame.rel)


@pytest.mark.parametrize("budget", [150, 300, 500])
def test_every_cell_is_sampled_within_the_band_or_at_its_forced_minimum(world, piloted, budget,
                                                                        monkeypatch):
    _, frame = world
    judged, model = piloted
    monkeypatch.setattr(PLAN, "BIAS_LIMIT", -1.0)  # every plan is held to the band
    p = plan(frame, model, budget, judged=judged, required=(PILOT_EDGE,))
    rate = budget / len(frame)
    forced = p.judged + np.minimum(MIN_TOP_UP, p.size - p.judged)
    low = np.floor(rate / SPREAD * p.size + 1e-9)
    high = np.ceil(SPREAD * rate * p.size - 1e-9)
    assert p.budget == budget
    assert np.all(p.take >= np.minimum(np.maximum(low, forced), p.size))
    assert np.all(p.take <= np.maximum(high, forced))
    # every cell with unjudged documents gets new ones: two, or all that are left
    assert np.all(p.take - p.judged >= np.minimum(MIN_TOP_UP, p.size - p.judged))
    # on the same strata, the unconstrained optimum is at least as precise
    free = plan(frame, model, budget, judged=judged, edges=p.edges, spread=None)
    assert free.variance.mean() <= p.variance.mean() * (1 + 1e-9)


@pytest.mark.parametrize("budget", [150, 300])
def test_the_band_applies_when_the_free_plan_samples_few_relevant_documents_or_predicts_bias(
        world, piloted, budget, monkeypatch):
    _, frame = world
    judged, model = piloted
    kw = dict(judged=judged, required=(PILOT_EDGE,))
    free = plan(frame, model, budget, spread=None, **kw)
    monkeypatch.setattr(PLAN, "SPARSE", 0.0)  # only the predicted bias decides
    monkeypatch.setattr(PLAN, "BIAS_LIMIT", np.inf)
    assert np.array_equal(plan(frame, model, budget, **kw).take, free.take)
    monkeypatch.setattr(PLAN, "BIAS_LIMIT", -1.0)
    banded = plan(frame, model, budget, **kw)
    assert not np.array_equal(banded.take, free.take)
    # the plan says why it is banded, and its summary shows it
    assert free.banded == "" and "predicts a ratio bias" in banded.banded
    assert banded.banded in banded.summary() and "held within" not in free.summary()
    monkeypatch.setattr(PLAN, "BIAS_LIMIT", free.relative_bias)  # the free plan just passes
    assert np.array_equal(plan(frame, model, budget, **kw).take, free.take)
    monkeypatch.setattr(PLAN, "BIAS_LIMIT", free.relative_bias * 0.999)
    assert np.array_equal(plan(frame, model, budget, **kw).take, banded.take)
    se = np.sqrt(free.variance)
    assert free.relative_bias == pytest.approx(np.sqrt(np.mean((free.bias / se) ** 2)))
    # a free plan expected to sample few relevant documents per topic below certainty is banded
    # whatever its predicted bias: the median over topics of sum_c (n_c / N_c) E[R_c] over the
    # cells it does not judge whole, by hand from the model's probabilities
    found = []
    for t in range(frame.collection.n_topics):
        rows = frame.topic == t
        rank = frame.best_rank[rows]
        prob = model.prob[rows]
        total = 0.0
        cells = list(free.edges) + [free.depth + 1]
        for s in range(len(free.edges)):
            inside = (rank >= cells[s]) & (rank < cells[s + 1])
            if free.take[t, s] < free.size[t, s]:
                total += free.take[t, s] / free.size[t, s] * prob[inside].sum()
        found.append(total)
    vm = VarianceModel.build(frame, model, "xinfAP")
    assert np.allclose(PLAN.sampled_relevant(vm, free), found)
    expected = np.median(found)
    monkeypatch.setattr(PLAN, "BIAS_LIMIT", np.inf)
    monkeypatch.setattr(PLAN, "SPARSE", expected * 1.001)
    sparse = plan(frame, model, budget, **kw)
    assert np.array_equal(sparse.take, banded.take)
    assert f"would sample {expected:.1f} relevant documents below certainty" in sparse.banded
    monkeypatch.setattr(PLAN, "SPARSE", expected * 0.999)
    assert np.array_equal(plan(frame, model, budget, **kw).take, free.take)


def test_a_topic_judged_whole_has_no_sampled_ratio_and_leaves_the_median(world, piloted):
    _, frame = world
    judged, model = piloted
    vm = VarianceModel.build(frame, model, "xinfAP")
    census = plan(frame, model, len(frame), judged=judged, required=(PILOT_EDGE,), spread=None)
    assert np.all(census.take == census.size)
    assert np.all(np.isnan(PLAN.sampled_relevant(vm, census)))
    assert PLAN.band_reason(vm, census) == ""


def test_bias_weights_are_the_second_order_bias_of_the_ratio(world):
    """B[i, t, s] (1/n - 1/N) summed is -sum_c N_c^2 (1/n_c - 1/N_c) S_{yx,c} / (R_t T), the
    second-order bias of run i's mean of N^/R^ (Cochran §6.8), with y = u x the linearised AP
    and x the relevance, under a model that knows every grade."""
    col, frame = world
    everything = np.ones(len(frame), bool)
    vm = VarianceModel.build(frame, fit_relevance(frame, everything, frame.rel), "xinfAP")
    ap = evaluate_collection(col, frame.judgments(), parse_all(["map"])).values[:, :, 0]
    relevant = np.bincount(frame.topic, weights=frame.rel > 0, minlength=col.n_topics)
    assert np.allclose(vm.relevant, relevant)
    ranked = ranked_rows(frame)
    x = (frame.rel > 0).astype(np.float64)
    edges = (1, 6, 21)
    size, _, bias = vm.cells_and_bias(edges)
    take = some_take(size)
    factor = np.where(size > 0, 1 / np.maximum(take, 1) - 1 / np.maximum(size, 1), 0.0)
    stratum = cell_of(frame, edges)
    for i in frame.runs:
        direct = 0.0
        for t in range(col.n_topics):
            u = ap_influence(ranked[i, t], x, ap[i, t], relevant[t], len(frame))
            for s in range(len(edges)):
                on = (frame.topic == t) & (stratum == s)
                n = on.sum()
                if n < 2:
                    continue
                y = (u * x)[on]
                cov = np.sum((y - y.mean()) * (x[on] - x[on].mean())) / (n - 1)
                direct -= n * n * factor[t, s] * cov / (relevant[t] * col.n_topics)
        assert (bias[i] * factor).sum() == pytest.approx(direct, rel=1e-9, abs=1e-15)


def test_a_budget_too_small_for_two_per_cell_still_plans(world, piloted):
    # the pilot's budget: nothing left to top up, so the forced top-up gives way
    _, frame = world
    judged, model = piloted
    p = plan(frame, model, int(judged.sum()), judged=judged)
    assert np.array_equal(p.take, p.judged)


def test_a_planned_design_keeps_its_draws_and_counts(world):
    _, frame = world
    design = PlannedDesign(300, batches=2)
    sample = design.select(frame, rng=5)
    assert sample.judged.sum() == 300
    assert np.all((sample.inclusion > 0) | ~sample.judged)


@pytest.mark.montecarlo
def test_horvitz_thompson_totals_of_a_planned_design_are_unbiased(world, without_relevance_model):
    """Over 300 draws of a two-batch planned design (pilot, then two re-planned top-ups), the
    mean of ht(num_rel) per topic and of ht(P@10) (a linear total) per run and topic is the
    frame's truth within 3.5 standard errors of the Monte-Carlo mean (with 6 + 36 checks, a
    3.5 SE miss has probability ~2%); ht(AP)'s ratio reports its bias only."""
    collection, frame = world
    measures = parse_all(["ht(num_rel)", "ht(P@10)"])
    truth = evaluate_collection(collection, frame.judgments(), [m.inner for m in measures]).values
    design = PlannedDesign(200, batches=2)
    draws = np.array([
        evaluate_collection(collection, design.sample(frame, rng=seed), measures).values
        for seed in range(300)
    ])  # (draws, runs, topics, measures)
    mean = draws.mean(axis=0)
    se = draws.std(axis=0, ddof=1) / np.sqrt(len(draws))
    z = np.abs(mean - truth) / np.where(se > 0, se, np.inf)
    assert np.all(np.where(se > 0, z, np.abs(mean - truth) * 1e9) <= 3.5), z.max()
    # the frame's relevant documents, topic by topic, are all findable by the planned draws
    assert np.all(counts(frame, (1,), frame.rel > 0)[:, 0] == truth[0, :, 0])
