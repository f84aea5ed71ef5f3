"""ppi's variance reduction anticipated by a relevance model that reads the labels
(irsample/measures/ppi/anticipated.py).

- With the truth for the model, the anticipated variance of the difference form's residual
  is the design variance of ppi's estimator at a fixed lambda: the Monte Carlo variance of
  ppi(P@10) (a total: exact) and ppi(nDCG@10) (a ratio: to first order) over 400 draws of a
  stratified sample, graded grades, labels that move a third of the grades.
- At lambda 0 it is ht's anticipated variance, bit for bit.
- On a stratified sample, ppi's interval variance is ht's times the model's reduction.
- The model's label weights (the difference form's ``tuning="model"``) minimise that
  anticipated variance per topic and stratum, against a grid of weights.
"""

from __future__ import annotations

import numpy as np
import pytest

from irsample.design import Stratified, parse_strata
from irsample.measures import parse
from irsample.measures.context import EvalContext
from irsample.measures.ht.anticipated import frame_positions, ratio_probabilities
from irsample.measures.ht.estimator import estimate
from irsample.measures.ht.inclusion import ht_design
from irsample.measures.ppi.anticipated import (
    label_model,
    model_reduction,
    model_weights,
    residual_variance,
)
from irsample.measures.ppi.estimate import label_contexts, ppi_estimate

from .synthetic import moved_grade_labels
from .test_ht_anticipated import _true_grades
from .test_ht_estimators import synthetic

DESIGN = Stratified(parse_strata("1-10:0.6,11-:0.25"))


@pytest.fixture(scope="module")
def world():
    col, frame = synthetic(4, n_topics=4, n_docs=300, depth=120, grades=(0, 0, 1, 1, 2))
    return col, frame, moved_grade_labels(col, frame, 1, 0.35)


def _label(ctx, labels, n_grades):
    grades = label_contexts(ctx, labels)[2]
    return np.clip(grades[frame_positions(ctx).docs], 0, n_grades - 1)


@pytest.mark.parametrize("name", ["P@10", "nDCG@10"])
def test_with_the_truth_for_a_model_it_is_the_design_variance_of_ppi(world, name,
                                                                     without_relevance_model):
    """The draws' estimates (the difference form at a fixed lambda, whose value does not read
    the fitted model: drawn without it) vary as the residual's variance with the truth as the
    model says."""
    col, frame, labels = world
    (m,) = parse(name)
    values = []
    for child in np.random.SeedSequence(5).spawn(400):
        ctx = EvalContext(col, DESIGN.sample(frame, rng=np.random.default_rng(child)))
        e = ppi_estimate(ctx, labels, m, tuning=0.6, form="difference")
        np.testing.assert_allclose(e.lam, 0.6)  # every topic in the difference form
        values.append(e.value)
    d = ht_design(ctx)
    truth = _true_grades(col, frame)[frame_positions(ctx).docs]
    lam_h = np.full((ctx.n_topics, d.n_cells), 0.6)
    label = _label(ctx, labels, truth.shape[1])
    predicted = residual_variance(ctx, d, m, truth, label, lam_h)
    observed = np.var(values, axis=0)
    print(name, "anticipated / observed variance", round(predicted.sum() / observed.sum(), 3))
    # the total exactly (400 draws: within ~7%), the ratio to first order
    assert abs(predicted.sum() / observed.sum() - 1.0) < 0.1
    # the labels do help: ht's design variance (lambda 0, the same truth) is larger
    ht_variance = residual_variance(ctx, d, m, truth, label, np.zeros_like(lam_h))
    print(name, "ppi / ht design variance", round(predicted.sum() / ht_variance.sum(), 3))
    assert predicted.sum() < 0.7 * ht_variance.sum()


@pytest.mark.parametrize("name", ["P@10", "nDCG"])
def test_at_lambda_zero_it_is_hts_anticipated_variance(world, name):
    col, frame, labels = world
    (m,) = parse(name)
    ctx = EvalContext(col, DESIGN.sample(frame, rng=3))
    d = ht_design(ctx)
    probs = ratio_probabilities(ctx, d)
    lam_h = np.zeros((ctx.n_topics, d.n_cells))
    got = residual_variance(ctx, d, m, probs, _label(ctx, labels, probs.shape[1]), lam_h)
    hy = estimate(ctx, m)
    if name == "nDCG":
        np.testing.assert_array_equal(got, hy.model_bias.at_centre)
    else:  # P@k adds the unseen positions' variance where a topic's is 0 (none here)
        np.testing.assert_array_equal(got, hy.variance)


def test_ppi_takes_hts_interval_variance_times_the_models_reduction(world):
    col, frame, labels = world
    (m,) = parse("nDCG")
    ctx = EvalContext(col, DESIGN.sample(frame, rng=7))
    e = ppi_estimate(ctx, labels, m)
    hy = estimate(ctx, m)
    assert hy.anticipated and np.any(e.lam > 0)
    moved = e.lam > 0
    reduction = model_reduction(ctx, m, label_contexts(ctx, labels)[2], e.lam_h, moved)
    expected = hy.variance * np.repeat(np.minimum(reduction, 1.0), ctx.n_topics)
    np.testing.assert_allclose(e.variance[moved], expected[moved], rtol=1e-12)
    np.testing.assert_array_equal(e.variance[~moved], hy.variance[~moved])
    assert np.all(reduction[np.isfinite(reduction)] < 1.0)


@pytest.mark.parametrize("name", ["P@10", "nDCG"])
def test_the_models_weights_minimise_its_anticipated_variance(world, name):
    """Per topic and stratum, no weight of a grid over [0, 1] (the other stratum's held) gives
    a smaller anticipated variance of the residual, summed over the topic's runs, than the
    chosen one; ppi's ``tuning="model"`` takes these weights."""
    col, frame, labels = world
    (m,) = parse(name)
    ctx = EvalContext(col, DESIGN.sample(frame, rng=11))
    d = ht_design(ctx)
    grades = label_contexts(ctx, labels)[2]
    use = np.ones(ctx.n_seg, dtype=bool)
    lam = model_weights(ctx, m, grades, use)
    assert lam.shape == (ctx.n_topics, d.n_cells)
    # P@10: the deep stratum holds no run's top 10, its weight moves nothing (NaN)
    moving = [0] if name == "P@10" else [0, 1]
    assert np.all(np.isfinite(lam[:, moving])) and np.all(np.isnan(lam[:, len(moving):]))
    chosen = lam[:, moving]
    assert np.all((chosen >= 0) & (chosen <= 1)) and np.ptp(chosen) > 0.05  # by topic
    lam = np.where(np.isnan(lam), 0.5, lam)
    label, informed = label_model(ctx, d, grades)

    def summed(lam_h):
        v = residual_variance(ctx, d, m, informed, label, lam_h)
        return np.bincount(ctx.seg_topic, weights=v, minlength=ctx.n_topics)

    best = summed(lam)
    for h in moving:
        for x in np.linspace(0.0, 1.0, 41):
            other = lam.copy()
            other[:, h] = x
            assert np.all(best <= summed(other) * (1 + 1e-9) + 1e-15), (h, x)
    e = ppi_estimate(ctx, labels, m, tuning="model")
    if name == "P@10":  # every topic in the difference form: the model's weights as they are
        np.testing.assert_allclose(e.lam_h[:, moving], chosen, rtol=1e-12)


@pytest.mark.parametrize("name", ["nDCG", "nDCG@10"])
def test_model_tuning_is_the_pooled_weight_where_a_stratum_is_judged_whole(world, name):
    """Beside a stratum judged whole ht's ratios take the sample's variance (P@k keeps the
    model's), so there is no anticipated variance for the model's weights to minimise:
    ``tuning="model"`` is then the default pooled weight per stratum, value and variance bit
    for bit, in either form (its coverage is the default's, measured)."""
    col, frame, labels = world
    (m,) = parse(name)
    ctx = EvalContext(col, Stratified(parse_strata("1-5:1,6-:0.3")).sample(frame, rng=4))
    assert not estimate(ctx, m).anticipated
    for form in ("control", "difference"):
        model, pooled = (ppi_estimate(ctx, labels, m, tuning=t, form=form)
                         for t in ("model", "stratum"))
        np.testing.assert_array_equal(model.value, pooled.value)
        np.testing.assert_array_equal(model.variance, pooled.variance)
        assert np.any(model.value != estimate(ctx, m).value)  # the labels moved the estimate
