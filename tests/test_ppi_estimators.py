"""Prediction-powered estimators (irsample.measures.ppi) on synthetic graded collections.

Exactness: labels equal to the truth give the full-judgment measure with variance 0; labels all
0 give the HT estimator (lambda = 0) and its variance. Unbiasedness of the corrected totals for
a fixed lambda (Monte Carlo over draws), the linear variance formula against the spread over
draws, and ppi-python as an oracle for the mean (one topic, uniform sample).
"""

from __future__ import annotations

import numpy as np
import pytest

from irsample.design import SamplingFrame, stratified, uniform
from irsample.errors import MeasureError
from irsample.evaluation import evaluate_collection
from irsample.io.labels import AutoLabels
from irsample.measures import EvalContext, parse
from irsample.measures.ppi import design_arrays, discount_sum, ppi_estimate
from irsample.measures.ppi_kernels import ap_walk
from irsample.model import Judgments

from .synthetic import pooled_collection

TARGETS = [("AP", None, "AP"), ("nDCG", None, "nDCG"), ("nDCG", 10, "nDCG@10"),
           ("P", 10, "P@10"), ("num_rel", None, "num_rel")]


@pytest.fixture(scope="module")
def world():
    collection, qrels = pooled_collection(7, n_topics=6, n_runs=5, n_docs=800, depth=100,
                                          pool_depth=40, relevant=(15, 40))
    frame = SamplingFrame.from_qrels(collection, qrels)
    truth = frame.judgments()
    return collection, frame, truth


def _labels(collection, frame, values, kind="grade"):
    v = np.full(collection.n_tdi, np.nan)
    v[frame.tdi] = values
    return AutoLabels(v, kind)


def _truth_values(collection, truth, name):
    return evaluate_collection(collection, truth, parse(name)).values[:, :, 0].ravel()


@pytest.mark.parametrize("design", [uniform(0.2), stratified("1-5:1,6-:0.15")],
                         ids=["uniform", "2strata"])
@pytest.mark.parametrize("kind,k,name", TARGETS, ids=[t[2] for t in TARGETS])
def test_labels_equal_to_truth_give_the_full_judgment_measure(world, design, kind, k, name):
    collection, frame, truth = world
    sample = design.sample(frame, rng=3)
    e = ppi_estimate(EvalContext(collection, sample), _labels(collection, frame, frame.rel),
                     kind, k)
    expected = _truth_values(collection, truth, name)
    have = np.isfinite(expected)
    np.testing.assert_allclose(e.value[have], expected[have], atol=1e-9)
    np.testing.assert_allclose(e.variance, 0.0, atol=1e-12)
    assert np.all(e.lam == 1.0)
    assert np.any(e.ht_variance > 0)  # the sample alone is uncertain


@pytest.mark.parametrize("design", [uniform(0.2), stratified("1-5:1,6-:0.15")],
                         ids=["uniform", "2strata"])
@pytest.mark.parametrize("kind,k,name", TARGETS, ids=[t[2] for t in TARGETS])
def test_constant_zero_labels_give_ht(world, design, kind, k, name):
    collection, frame, _ = world
    sample = design.sample(frame, rng=4)
    e = ppi_estimate(EvalContext(collection, sample),
                     _labels(collection, frame, np.zeros(len(frame))), kind, k)
    np.testing.assert_allclose(e.value, e.ht, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(e.variance, e.ht_variance, rtol=1e-9, atol=1e-15)


def test_ht_precision_and_relevant_count_by_hand(world):
    """lambda = 0: P@10 = (1/10) sum over sampled relevant in the top 10 of 1/pi; R = sum 1/pi."""
    collection, frame, _ = world
    sample = uniform(0.3).sample(frame, rng=5)
    ctx = EvalContext(collection, sample)
    zero = _labels(collection, frame, np.zeros(len(frame)))
    d = design_arrays(collection, sample)
    judged_rel = d.sampled & (sample.grade >= 1)
    weight = np.where(judged_rel, 1.0 / np.where(d.sampled, d.pi, 1.0), 0.0)
    p10 = ppi_estimate(ctx, zero, "P", 10).value
    r = ppi_estimate(ctx, zero, "num_rel").value
    T = collection.n_topics
    for s in range(collection.n_runs * T):
        top = collection.rank_tdi[collection.rank_offsets[s]:collection.rank_offsets[s + 1]][:10]
        assert p10[s] == pytest.approx(weight[top].sum() / 10)
        topic = s % T
        assert r[s] == pytest.approx(weight[collection.tdi_topic == topic].sum())


def _numerator(collection, sample, labels, lam):
    ctx = EvalContext(collection, sample)
    d = design_arrays(collection, sample)
    y = np.where(d.sampled, sample.grade >= 1, 0).astype(np.float64)
    f = np.where(d.in_frame, labels.relevance(1), 0.0)
    pi = np.where(d.sampled, d.pi, 1.0)
    known, ht_y, ht_f, _ = ap_walk(ctx.offsets, ctx.seg_topic, ctx.pos_tdi, y, f, d.in_frame,
                                   d.sampled, pi, d.stratum, d.same, y, -f, d.size.shape[1])
    return ht_y + lam * (known - ht_f)


@pytest.mark.parametrize("design", [uniform(0.25), stratified("1-5:1,6-:0.2")],
                         ids=["uniform", "2strata"])
def test_ap_numerator_with_residual_of_products_is_unbiased(world, design):
    """E[lambda Pred(f) + sum_S (y - lambda f)/(k pi) + sum_S pairs (y y - lambda f f)/(k pi_jk)]
    = sum_{j<=k} y_j y_k / k, for noisy labels and a fixed lambda (2,000 draws)."""
    collection, frame, truth = world
    rng = np.random.default_rng(11)
    noisy = np.where(rng.random(len(frame)) < 0.15, 1 - np.minimum(frame.rel, 1), frame.rel)
    labels = _labels(collection, frame, noisy)
    exact = _numerator(collection, truth, labels, 0.7)  # census: the true numerator
    draws = np.array([_numerator(collection, design.sample(frame, rng=i), labels, 0.7)
                      for i in range(2000)])
    se = draws.std(axis=0) / np.sqrt(len(draws))
    z = (draws.mean(axis=0) - exact) / np.where(se > 0, se, 1.0)
    assert np.mean(np.abs(z) < 3.3) > 0.97


def test_linear_estimates_unbiased_and_variance_matches_spread(world):
    """ppi(P@10) and ppi(num_rel) at fixed lambda: mean over draws = truth; the mean estimated
    variance is within 15% of the variance over draws (the stratified SRS formula is unbiased)."""
    collection, frame, truth = world
    rng = np.random.default_rng(12)
    noisy = np.clip(frame.rel + rng.integers(-1, 2, len(frame)) * (rng.random(len(frame)) < 0.2),
                    0, 2)
    labels = _labels(collection, frame, noisy)
    design = stratified("1-5:0.6,6-:0.2")
    for kind, k, name in [("P", 10, "P@10"), ("num_rel", None, "num_rel")]:
        out = [ppi_estimate(EvalContext(collection, design.sample(frame, rng=i)), labels, kind,
                            k, tuning=0.6) for i in range(1500)]
        values = np.array([e.value for e in out])
        variances = np.array([e.variance for e in out])
        expected = _truth_values(collection, truth, name)
        if kind == "num_rel":
            expected = np.tile(np.bincount(frame.topic[frame.rel >= 1],
                                           minlength=collection.n_topics), collection.n_runs)
        se = values.std(axis=0) / np.sqrt(len(values))
        live = values.var(axis=0) > 0
        z = (values.mean(axis=0) - expected)[live] / se[live]
        assert np.mean(np.abs(z) < 3.3) > 0.97, name
        ratio = variances.mean(axis=0)[live].sum() / values.var(axis=0)[live].sum()
        assert 0.85 < ratio < 1.15, (name, ratio)


def test_ppi_python_oracle_for_the_mean():
    """One topic, a uniform sample: ppi(num_rel) / N is PPI's mean estimate
    mean_F f + mean_S (y - lambda f) (ppi-python with the whole frame as unlabelled data)."""
    ppi_py = pytest.importorskip("ppi_py")
    collection, qrels = pooled_collection(3, n_topics=1, n_runs=4, n_docs=500, depth=80,
                                          pool_depth=60)
    frame = SamplingFrame.from_qrels(collection, qrels)
    rng = np.random.default_rng(0)
    f = np.clip((frame.rel >= 1) * 0.7 + rng.random(len(frame)) * 0.3, 0, 1)
    labels = _labels(collection, frame, f, "probability")
    sample = uniform(0.3).sample(frame, rng=1)
    judged = sample.state[frame.tdi] == 2
    y = (frame.rel[judged] >= 1).astype(float)
    for lam in (1.0, 0.5):
        e = ppi_estimate(EvalContext(collection, sample), labels, "num_rel", tuning=lam)
        oracle = ppi_py.ppi_mean_pointestimate(y, f[judged], f, lam=lam)
        assert e.value[0] / len(frame) == pytest.approx(float(np.ravel(oracle)[0]), rel=1e-9)


def test_discount_sum_interpolates_the_ideal_dcg():
    assert discount_sum(np.array([0.0, 1.0, 3.0]))[2] == pytest.approx(1 + 1 / np.log2(3) + 0.5)
    assert discount_sum(np.array([1.5]))[0] == pytest.approx(1 + 0.5 / np.log2(3))
    assert discount_sum(np.array([7.0]), 2)[0] == pytest.approx(1 + 1 / np.log2(3))


def test_measures_need_labels_and_name_a_supported_target(world):
    collection, frame, _ = world
    sample = uniform(0.3).sample(frame, rng=2)
    assert parse("ppi(AP)")[0].name == "ppi(AP)"
    assert parse("ppi(nDCG@10)")[0].target == "nDCG@10"
    with pytest.raises(MeasureError):
        parse("ppi(Rprec)")
    with pytest.raises(MeasureError, match="automatic labels"):
        evaluate_collection(collection, sample, parse("ppi(AP)"))
    labels = _labels(collection, frame, frame.rel)
    ev = evaluate_collection(collection, sample, parse("ppi(AP)") + parse("auto(AP)") + parse("AP"),
                             ci=0.95, auto_labels=labels)
    truth = evaluate_collection(collection, frame.judgments(), parse("AP"))
    np.testing.assert_allclose(ev.summary[:, 0], truth.summary[:, 0], atol=1e-9)
    np.testing.assert_allclose(ev.summary[:, 1], truth.summary[:, 0], atol=1e-9)  # exact labels
    np.testing.assert_allclose(ev.summary_variance[:, 0], 0.0, atol=1e-12)


def test_judgments_without_strata_are_one_uniform_stratum(world):
    collection, frame, _ = world
    sample = uniform(0.5).sample(frame, rng=9)
    plain = Judgments.from_arrays(collection, frame.topic, frame.tdi,
                                  np.where(sample.state[frame.tdi] == 2, frame.rel, -1))
    labels = _labels(collection, frame, np.zeros(len(frame)))
    a = ppi_estimate(EvalContext(collection, sample), labels, "AP")
    b = ppi_estimate(EvalContext(collection, plain), labels, "AP")
    np.testing.assert_allclose(a.value, b.value)


def test_every_target_name_parses():
    for name in ("ppi(AP)", "ppi(map)", "ppi(nDCG)", "ppi(ndcg_cut_10)", "ppi(P@5)",
                 "ppi(num_rel)", "ppi(NumRel)", "auto(P_10)"):
        m = parse(name)[0]
        assert parse(m.name) == [m]
    assert parse("ppi(num_rel)")[0].summary == "sum"


@pytest.mark.parametrize("design", [uniform(0.25), stratified("1-5:1,6-:0.2")],
                         ids=["uniform", "2strata"])
def test_zero_labels_equal_design_based_ht_for_linear_measures(world, design):
    """ppi(M) with labels all 0 is ht(M) (issue 12's estimators) for the linear measures: the
    same values and variances. (AP and nDCG: both are HT ratios, but ht(M) corrects and imputes
    its ratios its own way; see the module docstring of ppi.py.)"""
    collection, frame, _ = world
    sample = design.sample(frame, rng=21)
    zero = _labels(collection, frame, np.zeros(len(frame)))
    names = ["ht(P@10)", "ppi(P@10)", "ht(num_rel)", "ppi(num_rel)"]
    ev = evaluate_collection(collection, sample, [m for n in names for m in parse(n)], ci=0.95,
                             auto_labels=zero)
    for j in (0, 2):
        np.testing.assert_allclose(ev.values[:, :, j + 1], ev.values[:, :, j], equal_nan=True)
        np.testing.assert_allclose(ev.variance[:, :, j + 1], ev.variance[:, :, j], rtol=1e-9,
                                   equal_nan=True)
