"""ppi(M)'s label centre under the design (irsample.measures.ppi.redraw): the design drawn again on
the automatic labels, and the correction lambda (centre - ht_f) that has mean 0 (the option
``centre="design"``; M(f) stays the default centre).

A synthetic pooled collection, judged by the planner's design (a pilot, then a top-up whose
documents judged before are certain): the design ht(AP) and ht(nDCG) take the sample's own
variance on, where the option centres ppi's correction on the redraws.
"""

from __future__ import annotations

import numpy as np
import pytest

from irsample.design import importance, stratified
from irsample.measures import EvalContext, parse
from irsample.measures.ht.estimator import estimate as ht_estimate
from irsample.measures.ppi.estimate import label_contexts, ppi_estimate
from irsample.measures.ppi.redraw import cell_design, corrected_value, label_centre
from irsample.model import JUDGED

from .synthetic import frame_labels, moved_grade_labels, planned_world

AP, NDCG = parse("AP")[0], parse("nDCG")[0]


@pytest.fixture(scope="module")
def built():
    return planned_world()


@pytest.fixture(scope="module")
def world(built):
    return built[:2]


@pytest.fixture(scope="module")
def planned(built):
    return built[2]


def test_planned_sample_is_redrawn_with_its_certain_documents_and_cell_sizes(planned):
    j = planned.judgments
    design = cell_design(planned)
    assert design is not None
    assert design.certain.any() and (~design.certain & (j.state[design.pooled] == JUDGED)).any()
    draws = design.draws(np.random.default_rng(0), 3000)
    assert draws[:, design.certain].all()  # the pilot is in every draw
    per_cell = np.stack([np.bincount(design.cell[d], minlength=j.stratum_size.size)
                         for d in draws[:5]])
    judged = np.bincount(design.cell[j.state[design.pooled] == JUDGED],
                         minlength=j.stratum_size.size)
    np.testing.assert_array_equal(per_cell, np.broadcast_to(judged, per_cell.shape))
    # every document at its inclusion probability: the frequencies within 4.5 binomial errors
    freq = draws.mean(axis=0)
    open_ = ~design.certain & (design.pi > 0)
    err = np.sqrt(design.pi * (1 - design.pi) / len(draws))
    assert np.all(np.abs(freq - design.pi)[open_] <= 4.5 * err[open_])
    assert np.all(freq[design.pi == 0] == 0)
    # and the sampled documents' pi are the ones the design gave them
    sampled = j.state[design.pooled] == JUDGED
    np.testing.assert_allclose(design.pi[sampled], j.inclusion[design.pooled][sampled])


def test_designs_that_cannot_be_redrawn(world):
    collection, frame = world
    weighted = importance(0.3).sample(frame, rng=1)  # unequal probabilities within a cell
    assert cell_design(EvalContext(collection, weighted)) is None
    strata = stratified("1-10:1,11-40:0.25").sample(frame, rng=1)
    assert cell_design(EvalContext(collection, strata)) is not None


def test_centre_is_the_mean_of_ht_on_the_labels_over_the_designs_draws(world):
    """The centre from one sample's redraws equals the mean of ht_f over independent draws of
    the design that drew it (a stratified design with a certain top stratum), within Monte
    Carlo error; M(f), which the correction took before, is off it by the labels' ratio
    bias."""
    collection, frame = world
    design = stratified("1-5:1,6-40:0.12")
    labels = moved_grade_labels(collection, frame, 4, 0.3)
    ctx = EvalContext(collection, design.sample(frame, rng=0))
    _, census, grades = label_contexts(ctx, labels)
    centre, mc = label_centre(ctx, AP, grades, lambda e: np.nan_to_num(e.value), redraws=400)
    values = []
    for draw in range(1, 301):
        ctx_d = EvalContext(collection, design.sample(frame, rng=draw))
        values.append(np.nan_to_num(ht_estimate(label_contexts(ctx_d, labels)[0], AP).value))
    values = np.array(values)
    mean = values.mean(axis=0)
    se = np.sqrt(values.var(axis=0, ddof=1) / len(values) + mc)
    moving = se > 1e-9
    z = (centre - mean)[moving] / se[moving]
    assert np.abs(z).max() < 4.5 and abs(z.mean()) < 4.5 / np.sqrt(z.size)
    auto = np.nan_to_num(AP.compute(census))
    bias = np.abs(auto - mean)[moving] / se[moving]  # the labels' ratio bias, in errors
    assert np.sum(bias ** 2) > 1.5 * max(np.sum(z ** 2), z.size)  # 85 against 25 and 40


def test_design_centre_moves_the_correction_only(planned, world):
    collection, frame = world
    labels = moved_grade_labels(collection, frame, 2, 0.25)
    for m in (AP, NDCG):
        centred = ppi_estimate(planned, labels, m, tuning=0.5, centre="design")
        census = ppi_estimate(planned, labels, m, tuning=0.5)  # the default
        assert not ht_estimate(planned, m).anticipated
        assert np.any(centred.value != census.value)
        # the correction's centre moved, nothing else: ppi - ppi_census = lambda (c - M(f))
        grades = label_contexts(planned, labels)[2]
        centre, mc = label_centre(planned, m, grades, corrected_value(m, census.auto))
        kept = census.lam == 0.5  # corrected at the fixed weight (1: labels taken as they are)
        if m is NDCG:  # the control variate corrects the topics ht identifies
            kept &= ht_estimate(planned, m).den > 0
        assert kept.any()
        np.testing.assert_allclose((centred.value - census.value)[kept],
                                   (0.5 * (centre - census.auto))[kept], atol=1e-12)
        np.testing.assert_allclose((centred.value - census.value)[~kept], 0.0, atol=1e-15)
        np.testing.assert_allclose((centred.variance - census.variance)[kept],
                                   (0.25 * mc)[kept], rtol=1e-9, atol=1e-15)


def test_repeatable_and_stratified_samples_keep_the_census(world, planned):
    collection, frame = world
    labels = moved_grade_labels(collection, frame, 2, 0.25)
    a = ppi_estimate(planned, labels, AP, centre="design")
    b = ppi_estimate(EvalContext(planned.collection, planned.judgments), labels, AP,
                     centre="design")
    np.testing.assert_array_equal(a.value, b.value)  # a fixed seed: the same numbers
    strata = EvalContext(collection, stratified("1-10:0.9,11-40:0.25").sample(frame, rng=2))
    assert ht_estimate(strata, AP).anticipated  # ppi's variance is the anticipated one there
    np.testing.assert_array_equal(ppi_estimate(strata, labels, AP, centre="design").value,
                                  ppi_estimate(strata, labels, AP).value)


def test_constant_labels_keep_ht_with_the_designs_centre(planned, world):
    collection, frame = world
    constant = frame_labels(collection, frame, np.ones(len(frame)))
    e = ppi_estimate(planned, constant, AP, centre="design")
    np.testing.assert_array_equal(e.value, e.ht)
    np.testing.assert_array_equal(e.variance, e.ht_variance)
