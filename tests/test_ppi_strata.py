"""ppi(AP) stratum by stratum (irsample.measures.ppi.ap_ratio) and the sampled documents outside the
collection in the difference form's variance (irsample.measures.ppi.difference).

AP: the labels' steps E_{h-1} - E_h telescope to AP(f) - ht_f; exactness (labels = truth, constant
labels) with a weight per stratum; the numerator of ht_y + sum_h lambda_h (E_{h-1} - E_h) is
unbiased for the full-judgment numerator at fixed, different weights (Monte Carlo); the run's
interval is never wider than ht's for any labels (hypothesis).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irsample.design import SamplingFrame, stratified
from irsample.evaluation import evaluate_collection
from irsample.measures import EvalContext, parse
from irsample.measures.ht.estimator import estimate as ht_estimate
from irsample.measures.ppi.estimate import ppi_estimate
from irsample.measures.ppi.label_judgments import (
    census_possible,
    label_grades,
    labelled_census,
    labelled_sample,
)
from irsample.model import Judgments

from .synthetic import frame_labels, pooled_collection

AP = parse("AP")[0]
TWO_STRATA = [stratified("1-5:0.6,6-:0.15"), stratified("1-10:0.5,11-:0.1")]


@pytest.fixture(scope="module")
def world():
    collection, qrels = pooled_collection(17, n_topics=5, n_runs=4, n_docs=600, depth=80,
                                          pool_depth=40, relevant=(15, 35))
    frame = SamplingFrame.from_qrels(collection, qrels)
    return collection, frame, frame.judgments()


def _noisy(collection, frame, seed, share):
    rng = np.random.default_rng(seed)
    flip = rng.random(len(frame)) < share
    return frame_labels(collection, frame, np.where(flip, 1 - np.minimum(frame.rel, 1), frame.rel))


def _steps(collection, sample, grades):
    """E_0 = AP(f), E_1 (stratum 0 sampled, 1 judged completely by the labels), E_2 = ht_f:
    the AP estimates (value, numerator) of the module docstring of ppi_ap."""
    mask = np.zeros(sample.stratum_size.shape, bool)
    mask[:, 1:] = True
    out = []
    for judgments in (labelled_census(collection, sample, grades),
                      labelled_sample(collection, sample, grades, census=mask),
                      labelled_sample(collection, sample, grades)):
        est = ht_estimate(EvalContext(collection, judgments), AP)
        out.append((np.nan_to_num(est.value), est.num))
    return out


@pytest.mark.parametrize("design", TWO_STRATA, ids=["top-certain", "top-sampled"])
def test_labels_equal_to_truth_are_exact_per_stratum(world, design):
    collection, frame, truth = world
    sample = design.sample(frame, rng=5)
    e = ppi_estimate(EvalContext(collection, sample),
                     frame_labels(collection, frame, frame.rel), "AP", tuning="stratum")
    expected = evaluate_collection(collection, truth, [AP]).values[:, :, 0].ravel()
    np.testing.assert_allclose(e.value, expected, atol=1e-9)
    np.testing.assert_allclose(e.variance, 0.0, atol=1e-12)
    np.testing.assert_allclose(e.lam_h, 1.0, atol=1e-12)
    assert np.any(e.ht_variance > 0)


@pytest.mark.parametrize("design", TWO_STRATA, ids=["top-certain", "top-sampled"])
@pytest.mark.parametrize("constant", [0, 1])
def test_constant_labels_keep_ht_bit_for_bit_per_stratum(world, design, constant):
    collection, frame, _ = world
    sample = design.sample(frame, rng=6)
    e = ppi_estimate(EvalContext(collection, sample),
                     frame_labels(collection, frame, np.full(len(frame), constant)), "AP",
                     tuning="stratum")
    np.testing.assert_array_equal(e.value, e.ht)
    np.testing.assert_array_equal(e.variance, e.ht_variance)
    assert np.all(e.lam_h == 0.0)


def test_steps_telescope_and_complete_census_is_the_labels_value(world):
    """E_0 (every cell judged by its labels) is AP(f); the steps sum to AP(f) - ht_f; the
    per-stratum estimate is ht_y + sum_h lambda_h (E_{h-1} - E_h) with its reported weights."""
    collection, frame, _ = world
    sample = stratified("1-10:0.5,11-:0.1").sample(frame, rng=7)
    labels = _noisy(collection, frame, 3, 0.25)
    ctx = EvalContext(collection, sample)
    grades = label_grades(labels, sample, collection.tdi_topic)
    full = np.ones(sample.stratum_size.shape, bool)
    everything = ht_estimate(EvalContext(collection, labelled_sample(
        collection, sample, grades, census=full)), AP)
    e = ppi_estimate(ctx, labels, "AP", tuning="stratum")
    np.testing.assert_allclose(np.nan_to_num(everything.value), e.auto, atol=1e-12)
    (e0, _), (e1, _), (e2, _) = _steps(collection, sample, grades)
    np.testing.assert_allclose((e0 - e1) + (e1 - e2), e.auto - np.nan_to_num(e.ht_f), atol=1e-12)
    lam = e.lam_h
    assert np.any(np.abs(lam[:, 0] - lam[:, 1]) > 0.05)  # the strata's weights differ
    expected = e.ht + lam[:, 0] * (e0 - e1) + lam[:, 1] * (e1 - e2)
    used = lam.max(axis=1) > 0
    np.testing.assert_allclose(e.value[used], expected[used], atol=1e-12)


@pytest.mark.montecarlo
def test_numerator_unbiased_at_fixed_weights_per_stratum(world, without_relevance_model):
    """Num(ht_y) + 0.9 (Num E_0 - Num E_1) + 0.3 (Num E_1 - Num E_2) over 400 stratified draws:
    mean within 3.3 SE of the full-judgment numerator sum_{j<=k} y_j y_k / k."""
    collection, frame, truth = world
    labels = _noisy(collection, frame, 9, 0.3)
    design = stratified("1-10:0.5,11-:0.12")
    lam = (0.9, 0.3)
    values = []
    for i in range(400):
        sample = design.sample(frame, rng=100 + i)
        grades = label_grades(labels, sample, collection.tdi_topic)
        (_, n0), (_, n1), (_, n2) = _steps(collection, sample, grades)
        ny = ht_estimate(EvalContext(collection, sample), AP).num
        values.append(ny + lam[0] * (n0 - n1) + lam[1] * (n1 - n2))
    values = np.array(values)
    expected = ht_estimate(EvalContext(collection, truth), AP).num
    se = values.std(axis=0) / np.sqrt(len(values))
    live = se > 0
    z = (values.mean(axis=0) - expected)[live] / se[live]
    assert live.sum() > 10
    assert np.mean(np.abs(z) < 3.3) > 0.95, z


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(share=st.floats(0.0, 0.6), seed=st.integers(0, 10_000), draw=st.integers(0, 10_000),
       tuning=st.sampled_from(["run", "stratum", "topic", "global"]))
def test_never_wider_than_ht_and_weights_in_range(world, share, seed, draw, tuning):
    collection, frame, _ = world
    sample = stratified("1-10:0.5,11-:0.15").sample(frame, rng=draw)
    e = ppi_estimate(EvalContext(collection, sample), _noisy(collection, frame, seed, share),
                     "AP", tuning=tuning)
    shape = (collection.n_runs, collection.n_topics)
    assert np.all(e.variance.reshape(shape).sum(axis=1)
                  <= e.ht_variance.reshape(shape).sum(axis=1) * (1 + 1e-9) + 1e-20)
    assert np.all((e.lam_h >= 0) & (e.lam_h <= 1)) and np.all((e.lam >= 0) & (e.lam <= 1))
    if tuning != "stratum":
        assert np.all(e.lam_h == e.lam_h[:, :1])


def _with_outside(collection, frame, sample):
    """The sample plus judged and unjudged documents that no run retrieved (tdi -1), in both
    strata of every topic, some relevant."""
    judged = sample.state[frame.tdi] == 2
    strata = sample.stratum[frame.tdi]
    extra_t = np.repeat(np.arange(collection.n_topics), 6)
    extra_rel = np.tile([2, 1, 0, 1, -1, -1], collection.n_topics)
    extra_s = np.tile([1, 1, 1, 0, 1, 0], collection.n_topics)
    return Judgments.from_arrays(
        collection, np.concatenate([frame.topic, extra_t]),
        np.concatenate([frame.tdi, np.full(len(extra_t), -1)]),
        np.concatenate([np.where(judged, frame.rel, -1), extra_rel]),
        stratum=np.concatenate([strata, extra_s]), labels=sample.stratum_labels)


def test_documents_no_run_retrieved_enter_the_difference_variance(world):
    """ppi(num_rel) at lambda = 0 is ht(num_rel) term by term, the sampled documents no run
    retrieved included: its variance is ht's (before, they entered the cells' counts with z = 0)."""
    collection, frame, _ = world
    sample = stratified("1-10:0.5,11-:0.2").sample(frame, rng=3)
    full = _with_outside(collection, frame, sample)
    ctx = EvalContext(collection, full)
    labels = _noisy(collection, frame, 1, 0.2)
    e = ppi_estimate(ctx, labels, "num_rel", tuning=0.0)
    ht = ht_estimate(ctx, parse("num_rel")[0])
    np.testing.assert_allclose(e.value, ht.value, rtol=1e-12)
    np.testing.assert_allclose(e.variance, ht.variance, rtol=1e-9)
    plain = ppi_estimate(EvalContext(collection, sample), labels, "num_rel", tuning=0.0)
    assert np.all(e.variance > plain.variance)  # the extra relevant documents add variance
    # the per-stratum AP falls back to one weight per run: some cells have unsampled documents
    # outside the collection, so those cells cannot be judged completely
    assert not census_possible(collection, full).all()
    a = ppi_estimate(ctx, labels, "AP", tuning="stratum")
    assert np.all(a.lam_h == a.lam_h[:, :1])
    np.testing.assert_allclose(a.value, ppi_estimate(ctx, labels, "AP").value, atol=1e-12)
