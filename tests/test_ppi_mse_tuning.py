"""ppi(M)'s weight that counts the labels' side's bias (``tuning="mse"``, irsample.measures.ppi):
a lambda per topic, fitted on the run's other topics, minimising the estimated variance plus
lambda^2 (sum b_f)^2, b_f = c - M(f) per topic with c the labels' ht over the design drawn
again (``ppi/redraw.py``).

On a planned sample (ht's interval the sample's own variance) the weight is the closed form
for AP and a grid point for nDCG, never above the default's; where the design cannot be
redrawn, or ht has its anticipated variance, the option is the default tuning.
"""

from __future__ import annotations

import numpy as np
import pytest

from irsample.design import importance, stratified
from irsample.errors import MeasureError
from irsample.measures import EvalContext, parse
from irsample.measures.ht.estimator import estimate as ht_estimate
from irsample.measures.ppi.ap_ratio import choose
from irsample.measures.ppi.estimate import label_contexts, ppi_estimate
from irsample.measures.ppi.redraw import corrected_value, label_centre

from .synthetic import moved_grade_labels, planned_world

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


@pytest.fixture(scope="module")
def labels(world):
    collection, frame = world
    return moved_grade_labels(collection, frame, 2, 0.25)


def test_choose_adds_the_squared_bias_of_the_same_sums():
    """Per segment, over the run's other topics: sum C / (sum V_f + (sum b)^2), clipped."""
    rng = np.random.default_rng(4)
    n_runs, n_topics = 3, 5
    cov = rng.uniform(0.0, 1.0, (n_runs * n_topics, 1))
    v_f = cov + rng.uniform(0.1, 1.0, cov.shape)
    bias = rng.normal(0.0, 0.5, cov.shape)
    lam = choose(cov, v_f, "run", n_runs, n_topics, bias=bias)
    plain = choose(cov, v_f, "run", n_runs, n_topics)
    for s in range(n_runs * n_topics):
        run = s // n_topics
        others = [run * n_topics + t for t in range(n_topics) if run * n_topics + t != s]
        expected = cov[others].sum() / (v_f[others].sum() + bias[others].sum() ** 2)
        assert lam[s, 0] == pytest.approx(min(max(expected, 0.0), 1.0), rel=1e-12)
    assert np.all(lam <= plain)
    np.testing.assert_array_equal(choose(cov, v_f, "run", n_runs, n_topics, bias=0 * bias),
                                  plain)


@pytest.mark.parametrize("m", [AP, NDCG], ids=["AP", "nDCG"])
def test_mse_weight_is_never_above_the_default_on_a_planned_sample(planned, labels, m):
    assert not ht_estimate(planned, m).anticipated
    default = ppi_estimate(planned, labels, m)
    mse = ppi_estimate(planned, labels, m, tuning="mse")
    assert np.all(mse.lam <= default.lam + 1e-12)
    assert np.any(mse.lam < default.lam)  # these labels' ratio is biased on this design
    np.testing.assert_array_equal(mse.ht, default.ht)
    if m is NDCG:  # nDCG's weights are grid points, one per segment (cross-fitted)
        np.testing.assert_allclose(mse.lam * 20, np.round(mse.lam * 20), atol=1e-9)


def test_ap_weight_is_the_closed_form_with_the_redraws_bias(planned, labels):
    default = ppi_estimate(planned, labels, AP)
    mse = ppi_estimate(planned, labels, AP, tuning="mse")
    grades = label_contexts(planned, labels)[2]
    centre, _ = label_centre(planned, AP, grades, corrected_value(AP, default.auto))
    bias = centre - default.auto
    # lambda = C / V_f per run (cross-fitted) for the default; with the bias in V_f's place
    # V_f + (sum b)^2: so C / lambda, the default's V_f sum, grows by the squared bias sum
    moved = (default.lam > 0) & (mse.lam > 0) & (default.lam < 1) & (mse.lam < 1)
    assert moved.any()
    ratio = default.lam[moved] / mse.lam[moved]
    assert np.all(ratio >= 1.0 - 1e-12)
    n_runs, n_topics = planned.n_runs, planned.n_topics
    seg = np.flatnonzero(moved)
    run = seg // n_topics
    by_run = np.where(default.lam > 0, bias, 0.0).reshape(n_runs, n_topics)
    b_others = by_run.sum(axis=1)[run] - by_run.ravel()[seg]
    assert np.all((ratio > 1.0 + 1e-9) == (np.abs(b_others) > 1e-9))


def test_mse_is_the_default_where_the_design_cannot_be_redrawn_or_ht_is_anticipated(world,
                                                                                    labels):
    collection, frame = world
    weighted = EvalContext(collection, importance(0.3).sample(frame, rng=1))
    strata = EvalContext(collection, stratified("1-10:0.9,11-40:0.25").sample(frame, rng=2))
    assert ht_estimate(strata, AP).anticipated
    for ctx in (weighted, strata):
        for m in (AP, NDCG):
            a, b = ppi_estimate(ctx, labels, m), ppi_estimate(ctx, labels, m, tuning="mse")
            np.testing.assert_array_equal(a.value, b.value)
            np.testing.assert_array_equal(a.variance, b.variance)


def test_mse_is_named_in_the_error_for_an_unknown_tuning(planned, labels):
    with pytest.raises(MeasureError, match="tuning"):
        ppi_estimate(planned, labels, AP, tuning="msq")
