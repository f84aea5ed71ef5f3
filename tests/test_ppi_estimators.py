"""Prediction-powered estimators (irsample.measures.ppi.estimate) on synthetic graded collections.

Exactness for every supported measure and several designs: labels equal to the truth give the
full-judgment measure with variance 0; constant labels give ht(M) itself (value and variance).
AP's numerator is the residual-of-products formula (pair by pair); unbiasedness of the linear
totals for a fixed lambda (Monte Carlo over draws) and their variance against the spread over
draws; ppi-python as an oracle for the mean (one topic, uniform sample).
"""

from __future__ import annotations

import numpy as np
import pytest

from irsample.design import SamplingFrame, stratified, uniform
from irsample.errors import MeasureError
from irsample.evaluation import evaluate_collection
from irsample.io.labels import AutoLabels
from irsample.measures import EvalContext, parse
from irsample.measures.ht.estimator import estimate as ht_estimate
from irsample.measures.ppi.difference import Parts
from irsample.measures.ppi.estimate import ppi_estimate
from irsample.measures.ppi.label_judgments import label_grades, labelled_census, labelled_sample
from irsample.model import Judgments

from .synthetic import frame_labels, moved_grade_labels, pooled_collection

NAMES = ["AP", "nDCG", "nDCG@10", "P@10", "num_rel"]


def _world(grades):
    collection, qrels = pooled_collection(7, n_topics=6, n_runs=5, n_docs=800, depth=100,
                                          pool_depth=40, relevant=(15, 40), grades=grades)
    frame = SamplingFrame.from_qrels(collection, qrels)
    truth = frame.judgments()
    return collection, frame, truth


@pytest.fixture(scope="module")
def world():
    return _world((1, 1, 2))


@pytest.fixture(scope="module")
def graded_world():
    """The same world with grades 1-3 (nDCG's ideal DCG then has three layers)."""
    return _world((1, 2, 3))


def _truth_values(collection, truth, name):
    return evaluate_collection(collection, truth, parse(name)).values[:, :, 0].ravel()


DESIGNS = [uniform(0.2), stratified("1-5:1,6-:0.15"), stratified("1-10:0.5,11-:0.1")]
DESIGN_IDS = ["uniform", "2strata", "2strata-sampled-top"]


@pytest.mark.parametrize("design", DESIGNS, ids=DESIGN_IDS)
@pytest.mark.parametrize("name", NAMES)
def test_labels_equal_to_truth_give_the_full_judgment_measure(world, design, name):
    collection, frame, truth = world
    sample = design.sample(frame, rng=3)
    e = ppi_estimate(EvalContext(collection, sample),
                     frame_labels(collection, frame, frame.rel), name)
    expected = _truth_values(collection, truth, name)
    have = np.isfinite(expected)
    np.testing.assert_allclose(e.value[have], expected[have], atol=1e-9)
    np.testing.assert_allclose(e.variance, 0.0, atol=1e-12)
    np.testing.assert_allclose(e.lam, 1.0, atol=1e-12)
    assert np.any(e.ht_variance > 0)  # the sample alone is uncertain


@pytest.mark.parametrize("design", DESIGNS, ids=DESIGN_IDS)
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("constant", [0, 1, 2])
def test_constant_labels_give_ht_exactly(world, design, name, constant):
    """Labels constant over the pool carry no information: ppi(M) is ht(M), value and
    variance, bit for bit (lambda = 0), for every M and design."""
    collection, frame, _ = world
    sample = design.sample(frame, rng=4)
    labels = frame_labels(collection, frame, np.full(len(frame), constant))
    ev = evaluate_collection(collection, sample, parse(f"ht({name})") + parse(f"ppi({name})"),
                             ci=0.95, auto_labels=labels)
    np.testing.assert_array_equal(ev.values[:, :, 1], ev.values[:, :, 0])
    np.testing.assert_array_equal(ev.variance[:, :, 1], ev.variance[:, :, 0])
    e = ppi_estimate(EvalContext(collection, sample), labels, name)
    assert np.all(e.lam == 0.0)


def test_constant_labels_on_some_topics_keep_ht_there(world):
    """Informative labels on some topics, constant on others: the constant topics keep ht."""
    collection, frame, _ = world
    sample = uniform(0.25).sample(frame, rng=6)
    values = np.where(frame.topic < 3, frame.rel, 0)
    e = ppi_estimate(EvalContext(collection, sample), frame_labels(collection, frame, values), "AP")
    flat = np.tile(np.arange(collection.n_topics) >= 3, collection.n_runs)
    np.testing.assert_array_equal(e.value[flat], e.ht[flat])
    np.testing.assert_array_equal(e.variance[flat], e.ht_variance[flat])
    assert np.all(e.lam[~flat] > 0)


def test_ht_precision_and_relevant_count_by_hand(world):
    """lambda = 0: P@10 = (1/10) sum over sampled relevant in the top 10 of 1/pi; R = sum 1/pi."""
    collection, frame, _ = world
    sample = uniform(0.3).sample(frame, rng=5)
    ctx = EvalContext(collection, sample)
    zero = frame_labels(collection, frame, np.zeros(len(frame)))
    judged = sample.state == 2
    topic = collection.tdi_topic
    pi = (np.bincount(topic[judged], minlength=collection.n_topics)
          / np.bincount(frame.topic, minlength=collection.n_topics))[topic]
    weight = np.where(judged & (sample.grade >= 1), 1.0 / pi, 0.0)
    p10 = ppi_estimate(ctx, zero, "P@10").value
    r = ppi_estimate(ctx, zero, "num_rel").value
    T = collection.n_topics
    for s in range(collection.n_runs * T):
        top = collection.rank_tdi[collection.rank_offsets[s]:collection.rank_offsets[s + 1]][:10]
        assert p10[s] == pytest.approx(weight[top].sum() / 10)
        assert r[s] == pytest.approx(weight[topic == s % T].sum())


def test_stratum_weights_follow_where_the_labels_predict(world):
    """Labels equal to the truth in the top stratum and unrelated to it below: lambda near 1
    in the top stratum, near 0 below (one weight per stratum, pooled over runs and topics)."""
    collection, frame, _ = world
    rng = np.random.default_rng(2)
    design = stratified("1-10:0.5,11-:0.2")
    sample = design.sample(frame, rng=4)
    top = sample.stratum[frame.tdi] == 0
    values = np.where(top, frame.rel, rng.integers(0, 3, len(frame)))
    e = ppi_estimate(EvalContext(collection, sample), frame_labels(collection, frame, values),
                     "num_rel")
    assert np.all(e.lam_h[:, 0] > 0.95) and np.all(e.lam_h[:, 1] < 0.2), e.lam_h[0]


def _residual_of_products(collection, sample, frame, y_grade, f_grade, lam):
    """AP's numerator by the formula of ppi/estimate.py, pair by pair: lambda Num(f) +
    sum_S (y - lambda f)/(k pi) + sum_{j<k in S} (y_j y_k - lambda f_j f_k)/(k pi_jk)."""
    judged = sample.state == 2
    topic = collection.tdi_topic
    size = np.bincount(frame.topic, minlength=collection.n_topics).astype(float)
    taken = np.bincount(topic[judged], minlength=collection.n_topics).astype(float)
    y = np.zeros(collection.n_tdi)
    f = np.zeros(collection.n_tdi)
    y[frame.tdi], f[frame.tdi] = frame.rel >= 1, f_grade >= 1
    out = []
    for s in range(collection.n_runs * collection.n_topics):
        t = s % collection.n_topics
        p1 = taken[t] / size[t]
        p2 = taken[t] * (taken[t] - 1) / (size[t] * (size[t] - 1))
        ranked = collection.rank_tdi[collection.rank_offsets[s]:collection.rank_offsets[s + 1]]
        total = 0.0
        for k, dk in enumerate(ranked, 1):
            total += lam * f[dk] / k + lam * f[dk] * f[ranked[:k - 1]].sum() / k
            if judged[dk]:
                total += (y[dk] - lam * f[dk]) / (k * p1)
                above = ranked[:k - 1][judged[ranked[:k - 1]]]
                total += ((y[dk] * y[above] - lam * f[dk] * f[above]) / (k * p2)).sum()
        out.append(total)
    return np.array(out)


def test_ap_numerator_is_the_residual_of_products(world):
    """ht's AP numerator on the humans minus lambda times the same on the labels, plus lambda
    times the labels' own numerator, is the residual-of-products formula of the docstring."""
    collection, frame, _ = world
    rng = np.random.default_rng(11)
    noisy = np.where(rng.random(len(frame)) < 0.15, 1 - np.minimum(frame.rel, 1), frame.rel)
    labels = frame_labels(collection, frame, noisy)
    sample = uniform(0.3).sample(frame, rng=8)
    ctx = EvalContext(collection, sample)
    ap = parse("AP")[0]
    grades = label_grades(labels, sample, collection.tdi_topic)
    census = ht_estimate(EvalContext(collection, labelled_census(collection, sample, grades)), ap)
    on_labels = ht_estimate(EvalContext(collection, labelled_sample(collection, sample, grades)),
                            ap)
    lam = 0.7
    combined = ht_estimate(ctx, ap).num + lam * (census.num - on_labels.num)
    expected = _residual_of_products(collection, sample, frame, frame.rel, noisy, lam)
    np.testing.assert_allclose(combined, expected, rtol=1e-9)


def test_labelled_sample_keeps_the_design_and_documents_no_run_retrieved(world):
    """With labels equal to the human grades, the labelled sample is the sample again: same
    states, strata, counts, grades, and the judged documents without a ranking."""
    collection, frame, _ = world
    sample = stratified("1-5:1,6-:0.3").sample(frame, rng=2)
    judged = sample.state[frame.tdi] == 2
    strata = sample.stratum[frame.tdi]
    # three extra judged documents of topic 0 that no run retrieved (tdi -1), one relevant
    topic = np.concatenate([frame.topic, [0, 0, 0, 1]])
    tdi = np.concatenate([frame.tdi, [-1, -1, -1, -1]])
    rel = np.concatenate([np.where(judged, frame.rel, -1), [2, 0, 0, -1]])
    stratum = np.concatenate([strata, [1, 1, 0, 1]])
    full = Judgments.from_arrays(collection, topic, tdi, rel, stratum=stratum,
                                 labels=sample.stratum_labels)
    grades = np.where(full.state == 2, full.grade, 0)
    again = labelled_sample(collection, full, grades)
    for name in ("state", "grade", "stratum", "stratum_size", "stratum_sampled"):
        np.testing.assert_array_equal(getattr(again, name), getattr(full, name), err_msg=name)
    np.testing.assert_array_equal(again.stratum_grades, full.stratum_grades)


def test_probability_labels_label_the_expected_count_most_probable():
    """Per topic, the round(sum p) documents of highest p become relevant."""
    from types import SimpleNamespace
    p = np.array([0.9, 0.1, 0.6, 0.3, 0.2, 0.0, 0.8, 0.4])
    topic = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    judgments = SimpleNamespace(state=np.full(8, 2))
    grades = label_grades(AutoLabels(p, "probability"), judgments, topic)
    # topic 0: sum 1.9 -> 2 (0.9, 0.6); topic 1: sum 1.4 -> 1 (0.8)
    np.testing.assert_array_equal(grades, [1, 0, 1, 0, 0, 0, 1, 0])


@pytest.mark.parametrize("tuning", ["stratum-or-run", "topic", "global"])
def test_tuned_interval_never_wider_than_ht_for_a_run(world, tuning):
    collection, frame, _ = world
    rng = np.random.default_rng(3)
    noisy = np.where(rng.random(len(frame)) < 0.3, 1 - np.minimum(frame.rel, 1), frame.rel)
    sample = uniform(0.2).sample(frame, rng=12)
    for name in ("AP", "nDCG"):
        e = ppi_estimate(EvalContext(collection, sample), frame_labels(collection, frame, noisy),
                         name, tuning=None if tuning == "stratum-or-run" else tuning)
        shape = (collection.n_runs, collection.n_topics)
        assert np.all(e.variance.reshape(shape).sum(axis=1)
                      <= e.ht_variance.reshape(shape).sum(axis=1) * (1 + 1e-12))
        assert np.all((e.lam >= 0) & (e.lam <= 1))


@pytest.mark.montecarlo
def test_linear_estimates_unbiased_and_variance_matches_spread(world):
    """ppi(P@10) and ppi(num_rel) at fixed lambda: mean over draws = truth; the mean estimated
    variance is within 15% of the variance over draws (the stratified SRS formula is unbiased)."""
    collection, frame, truth = world
    labels = moved_grade_labels(collection, frame, 12, 0.2)
    design = stratified("1-5:0.6,6-:0.2")
    for name in ("P@10", "num_rel"):
        out = [ppi_estimate(EvalContext(collection, design.sample(frame, rng=i)), labels, name,
                            tuning=0.6) for i in range(600)]
        values = np.array([e.value for e in out])
        variances = np.array([e.variance for e in out])
        expected = _truth_values(collection, truth, name)
        if name == "num_rel":
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
    # 0/1 probabilities: the labels' grades are the probabilities themselves
    f = np.where(rng.random(len(frame)) < 0.2, 1 - (frame.rel >= 1), frame.rel >= 1) * 1.0
    labels = frame_labels(collection, frame, f, "probability")
    sample = uniform(0.3).sample(frame, rng=1)
    judged = sample.state[frame.tdi] == 2
    y = (frame.rel[judged] >= 1).astype(float)
    for lam in (1.0, 0.5):
        e = ppi_estimate(EvalContext(collection, sample), labels, "num_rel", tuning=lam)
        oracle = ppi_py.ppi_mean_pointestimate(y, f[judged], f, lam=lam)
        assert e.value[0] / len(frame) == pytest.approx(float(np.ravel(oracle)[0]), rel=1e-9)


def test_measures_need_labels_and_name_a_supported_target(world):
    collection, frame, _ = world
    sample = uniform(0.3).sample(frame, rng=2)
    assert parse("ppi(AP)")[0].name == "ppi(AP)"
    assert parse("ppi(nDCG@10)")[0].target == "nDCG@10"
    with pytest.raises(MeasureError):
        parse("ppi(Rprec)")
    with pytest.raises(MeasureError, match="automatic labels"):
        evaluate_collection(collection, sample, parse("ppi(AP)"))
    labels = frame_labels(collection, frame, frame.rel)
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
    assert plain.probabilities == "none"  # -1 rows without a design: stated below
    plain = plain.assuming("uniform")
    labels = frame_labels(collection, frame, np.zeros(len(frame)))
    a = ppi_estimate(EvalContext(collection, sample), labels, "AP")
    b = ppi_estimate(EvalContext(collection, plain), labels, "AP")
    np.testing.assert_allclose(a.value, b.value)


def test_every_target_name_parses():
    for name in ("ppi(AP)", "ppi(map)", "ppi(nDCG)", "ppi(ndcg_cut_10)", "ppi(P@5)",
                 "ppi(num_rel)", "ppi(NumRel)", "auto(P_10)"):
        m = parse(name)[0]
        assert parse(m.name) == [m]
    assert parse("ppi(num_rel)")[0].summary == "sum"


@pytest.mark.parametrize("which", ["world", "graded_world"])
def test_ndcg_parts_are_unbiased_difference_estimates(which, request):
    """nDCG's numerator DCG^ at a fixed coefficient per document (different per stratum) is
    unbiased for the full-judgment DCG, with grades 1-2 and 1-3: mean over 400 stratified draws
    within 3.3 SE."""
    collection, frame, truth = request.getfixturevalue(which)
    labels = moved_grade_labels(collection, frame, 21, 0.3)
    design = stratified("1-5:0.6,6-:0.2")
    m = parse("nDCG")[0]
    values = []
    for i in range(400):
        sample = design.sample(frame, rng=i)
        grades = label_grades(labels, sample, collection.tdi_topic)
        parts = Parts(EvalContext(collection, sample), m, grades)
        coef = np.where(sample.stratum == 0, 0.9, 0.4)
        values.append(parts.at(coef)[0])
    values = np.array(values)
    ctx = EvalContext(collection, truth)
    gains = np.where(ctx.judged, np.maximum(ctx.pos_grade, 0), 0).astype(float)
    discount = 1.0 / np.log2(ctx.rank + 1.0)
    dcg = np.bincount(np.repeat(np.arange(ctx.n_seg), ctx.seg_len), weights=gains * discount,
                      minlength=ctx.n_seg)
    se = values.std(axis=0) / np.sqrt(len(values))
    live = se > 0
    z = (values.mean(axis=0) - dcg)[live] / se[live]
    assert np.mean(np.abs(z) < 3.3) > 0.95


def test_labels_equal_to_truth_say_their_zero_width_is_not_checked(world):
    """Labels that agree with every judged document leave ppi a standard error of rounding
    size: the interval is flagged with a reason that says so (no bias-to-SE ratio of 10^7)."""
    collection, frame, _ = world
    sample = uniform(0.2).sample(frame, rng=3)
    labels = frame_labels(collection, frame, frame.rel)
    ev = evaluate_collection(collection, sample, parse("ppi(AP)"), ci=0.95, auto_labels=labels)
    table = ev.frame(per_topic=False)
    assert (table["high"] - table["low"]).abs().max() < 1e-7
    assert (table["status"] == "unreliable").all()
    for reason in table["reason"]:
        assert reason.startswith("a standard error of 0 where the pool is not judged whole")
        assert "of its standard error" not in reason
