"""ppi(nDCG) on the topics the difference form leaves to ht (irsample.measures.ppi.control_variate):
ht(nDCG) on the humans with ht on the labels as control variate, imputed topics included.

A synthetic collection with few relevant documents per topic, so that at a 15% uniform sample
many topics hold 0 or 1 sampled relevant documents (imputed by ht, or single-hit donors).
"""

from __future__ import annotations

import numpy as np
import pytest

from irsample.design import SamplingFrame, importance, uniform
from irsample.errors import MeasureError
from irsample.evaluation import evaluate_collection
from irsample.measures import EvalContext, parse
from irsample.measures.ppi.estimate import ppi_estimate

from .synthetic import frame_labels, moved_grade_labels, pooled_collection

NDCG = parse("nDCG")[0]


def _world(grades):
    collection, qrels = pooled_collection(5, n_topics=12, n_runs=4, n_docs=500, depth=60,
                                          pool_depth=30, relevant=(2, 9), grades=grades)
    frame = SamplingFrame.from_qrels(collection, qrels)
    truth = evaluate_collection(collection, frame.judgments(), [NDCG]).values[:, :, 0].ravel()
    return collection, frame, truth


@pytest.fixture(scope="module")
def world():
    return _world((1, 1, 2))


@pytest.fixture(scope="module")
def graded_world():
    """The same sparse world with grades 1-3."""
    return _world((1, 2, 3))


def _kept(e):
    """Segments ppi took by the control variate (ht_f known there)."""
    return np.isfinite(e.ht_f)


@pytest.mark.parametrize("kept", ["control", "identified"])
def test_true_labels_exact_on_imputed_and_single_hit_topics(world, kept):
    from irsample.measures.ht.estimator import estimate

    collection, frame, truth = world
    labels = frame_labels(collection, frame, frame.rel)
    seen_imputed = 0
    for draw in range(4):
        sample = uniform(0.15).sample(frame, rng=draw)
        ctx = EvalContext(collection, sample)
        e = ppi_estimate(ctx, labels, NDCG, kept=kept, form="difference")
        have = np.isfinite(truth)
        imputed = estimate(ctx, NDCG).den == 0
        exact = have & (~imputed if kept == "identified" else True)
        np.testing.assert_allclose(e.value[exact], truth[exact], atol=1e-9)
        if kept == "control":
            np.testing.assert_allclose(e.variance, 0.0, atol=1e-12)
        seen_imputed += int(np.sum(imputed & have))
    assert seen_imputed > 0  # the draws do exercise imputed topics


def test_constant_labels_and_kept_ht_give_ht_bit_for_bit(world):
    collection, frame, _ = world
    sample = uniform(0.15).sample(frame, rng=1)
    ctx = EvalContext(collection, sample)
    constant = ppi_estimate(ctx, frame_labels(collection, frame, np.ones(len(frame))), NDCG,
                            kept="control", form="difference")
    np.testing.assert_array_equal(constant.lam, 0.0)
    np.testing.assert_array_equal(constant.value, constant.ht)
    np.testing.assert_array_equal(constant.variance, constant.ht_variance)
    labels = moved_grade_labels(collection, frame, 3, 0.2)
    plain = ppi_estimate(ctx, labels, NDCG, kept="ht", form="difference")
    control = ppi_estimate(ctx, labels, NDCG, kept="control", form="difference")
    off = plain.lam == 0  # the topics the difference form leaves to ht
    assert off.any() and (control.lam[off] > 0).any()
    np.testing.assert_array_equal(plain.value[off], plain.ht[off])
    np.testing.assert_array_equal(plain.variance[off], plain.ht_variance[off])
    np.testing.assert_array_equal(control.value[~off], plain.value[~off])  # taken: unchanged
    with pytest.raises(MeasureError):
        ppi_estimate(ctx, labels, NDCG, kept="labels")


def test_forms_control_difference_and_auto(world):
    """ppi(nDCG)'s forms: ``control`` puts the control variate on every topic ht identifies, the
    difference form's included, and keeps ht's imputation (at a fixed weight the topics that
    form leaves get what ``kept="identified"`` gives them); ``auto`` is the difference form
    where ht's interval is the anticipated variance (a uniform sample) and the control variate
    where it is the sample's own (an importance sample); constant labels give ht bit for bit
    in either; an unknown form is an error."""
    collection, frame, _ = world
    ctx = EvalContext(collection, uniform(0.5).sample(frame, rng=1))  # ratios identified
    labels = moved_grade_labels(collection, frame, 3, 0.2)
    control = ppi_estimate(ctx, labels, NDCG, form="control")
    difference = ppi_estimate(ctx, labels, NDCG, form="difference")
    taken = difference.value != difference.ht  # the segments the difference form estimates
    assert taken.any() and (control.value[taken] != difference.value[taken]).any()
    assert (control.lam[taken] > 0).any() and control.lam_h is None
    fixed = ppi_estimate(ctx, labels, NDCG, tuning=0.5, form="control")
    cv = ppi_estimate(ctx, labels, NDCG, tuning=0.5, kept="identified", form="difference")
    off = difference.lam == 0
    assert off.any()
    np.testing.assert_array_equal(fixed.value[off], cv.value[off])
    np.testing.assert_array_equal(ppi_estimate(ctx, labels, NDCG).value, difference.value)
    weighted = EvalContext(collection, importance(0.5).sample(frame, rng=1))
    np.testing.assert_array_equal(ppi_estimate(weighted, labels, NDCG).value,
                                  ppi_estimate(weighted, labels, NDCG, form="control").value)
    constant = frame_labels(collection, frame, np.ones(len(frame)))
    for c in (ctx, weighted):
        for form in ("control", "difference"):
            e = ppi_estimate(c, constant, NDCG, form=form)
            np.testing.assert_array_equal(e.value, e.ht)
            np.testing.assert_array_equal(e.variance, e.ht_variance)
    with pytest.raises(MeasureError, match="form"):
        ppi_estimate(ctx, labels, NDCG, form="ratio")


def _runs_over_draws(world, labels, lam, kept, draws):
    collection, frame, truth = world
    have = np.isfinite(truth)
    n_runs = collection.n_runs
    corr, err_ppi, err_ht = [], [], []
    for draw in range(draws):
        sample = uniform(0.15).sample(frame, rng=100 + draw)
        e = ppi_estimate(EvalContext(collection, sample), labels, NDCG, tuning=lam, kept=kept,
                         form="difference")
        corr.append(np.where(have, e.value - e.ht, 0.0).reshape(n_runs, -1).mean(axis=1))
        err_ppi.append(np.where(have, e.value - truth, 0.0).reshape(n_runs, -1).mean(axis=1))
        err_ht.append(np.where(have, e.ht - truth, 0.0).reshape(n_runs, -1).mean(axis=1))
    return map(np.array, (corr, err_ppi, err_ht))


@pytest.mark.parametrize("which", ["world", "graded_world"])
def test_correction_is_minus_hts_error_for_true_labels_at_fixed_lambda(which, request):
    """At lambda = 1 with true labels the correction of a run's mean is exactly -(ht's error),
    draw by draw, with grades 1-2 and 1-3: the labels' side reproduces the humans' estimator,
    imputation and the ideal DCG's correction included."""
    world = request.getfixturevalue(which)
    collection, frame, _ = world
    corr, err_ppi, err_ht = _runs_over_draws(world, frame_labels(collection, frame, frame.rel), 1.0,
                                             "control", 20)
    np.testing.assert_allclose(corr, -err_ht, atol=1e-9)
    np.testing.assert_allclose(err_ppi, 0.0, atol=1e-9)


@pytest.mark.montecarlo
@pytest.mark.parametrize("kept", ["control", "identified"])
def test_correction_at_fixed_lambda_over_repeated_draws(world, kept):
    """At a fixed lambda (0.6) and noisy labels, over 150 draws: ppi's mean error against the
    truth is within 0.05 for every run (not exactly 0: the ratio and the imputation are
    approximately unbiased), and its RMS error below ht's for every run. On this sparse world
    (2-9 relevant documents a topic, grades 1-2, 15% judged) ht(nDCG) itself is biased by up to
    +0.10 (the best run; a grade a topic's sample misses leaves the ideal DCG short), and the
    labels take most of it away (measured: ppi's mean errors -0.034 to +0.035, ht's +0.018 to
    +0.097; RMS ppi 0.07-0.22 against ht 0.08-0.27)."""
    collection, frame, _ = world
    labels = moved_grade_labels(collection, frame, 11, 0.3)
    corr, err_ppi, err_ht = _runs_over_draws(world, labels, 0.6, kept, 150)
    assert np.mean(corr != 0) > 0.5  # the correction is active
    assert np.all(np.abs(err_ppi.mean(axis=0)) < 0.05)
    rms = np.sqrt((err_ppi**2).mean(axis=0))
    assert np.all(rms < np.sqrt((err_ht**2).mean(axis=0)))


def test_rule_three_reads_hts_bias_signed_where_the_labels_move_ppi_ndcg(world):
    """ppi(nDCG) takes plain ratios in both its forms, so where the labels move its estimate on
    a stratified simple random sample (ht's bias the relevance model's, steady over draws) the
    reliability rule reads ht(nDCG)'s bias with its sign, also where ht(nDCG) removes it; where
    its value is ht(nDCG)'s own (``PPIEstimate.as_ht``: the topics the difference form leaves
    to ht) it reads ht's, corrected where ht corrects (``PPI.corrected``). ppi(AP) corrects as
    ht(AP) does and reads ht's bounds."""
    from irsample.measures.ht.measure import HT
    from irsample.measures.ppi.measures import PPI, attach_labels

    collection, frame, _ = world
    ctx = EvalContext(collection, uniform(0.3).sample(frame, rng=2))
    attach_labels(ctx, moved_grade_labels(collection, frame, 11, 0.3))
    ht, ppi = HT("nDCG"), PPI("nDCG")
    as_ht = ppi_estimate(ctx, ctx.auto_labels, NDCG).as_ht
    assert as_ht.any() and not as_ht.all()  # both kinds of segment in this draw
    np.testing.assert_array_equal(ppi.corrected(ctx), ht.corrected(ctx) & as_ht)
    np.testing.assert_array_equal(ppi.bias_in_quadrature(ctx), ppi.corrected(ctx))
    signed, own = ht.estimated_bias(ctx, signed=True), ht.estimated_bias(ctx)
    np.testing.assert_array_equal(ppi.estimated_bias(ctx), np.where(as_ht, own, signed))
    assert (ht.corrected(ctx) & ~as_ht).any()  # a segment ht corrects and ppi does not
    assert not np.array_equal(own, signed)
    ht_ap, ppi_ap = HT("AP"), PPI("AP")
    np.testing.assert_array_equal(ppi_ap.corrected(ctx), ht_ap.corrected(ctx))
    np.testing.assert_array_equal(ppi_ap.bias_in_quadrature(ctx), ht_ap.corrected(ctx))
    np.testing.assert_array_equal(ppi_ap.estimated_bias(ctx), ht_ap.estimated_bias(ctx))


def test_rule_three_reads_a_bound_in_quadrature_where_ppi_ndcgs_bias_is_the_samples(world):
    """On an importance sample ht(nDCG)'s ratio bias is the sample's (no relevance model at its
    centre), which rises and falls with ht's error: where the labels move ppi(nDCG) the rule
    reads |b^_y| times Y^'s coefficient of variation, a bound of no fixed sign added in
    quadrature (``PPI.bias_in_quadrature`` there), and ht's own reading where ppi's value is
    ht's."""
    from irsample.measures.ht.estimator import estimate
    from irsample.measures.ht.measure import HT
    from irsample.measures.ppi.measures import PPI, attach_labels

    collection, frame, _ = world
    ctx = EvalContext(collection, importance(0.3).sample(frame, rng=2))
    attach_labels(ctx, moved_grade_labels(collection, frame, 11, 0.3))
    ht, ppi = HT("nDCG"), PPI("nDCG")
    e = estimate(ctx, NDCG)
    assert e.model_bias is None
    as_ht = ppi_estimate(ctx, ctx.auto_labels, NDCG).as_ht
    assert (~as_ht).any()
    # the control variate takes ht's corrected ratios here, so ppi corrects where ht does; the
    # rule adds the bound in quadrature there and wherever the labels move the estimate
    np.testing.assert_array_equal(ppi.corrected(ctx), ht.corrected(ctx))
    np.testing.assert_array_equal(ppi.bias_in_quadrature(ctx), ht.corrected(ctx) | ~as_ht)
    ok = e.den > 0
    y = np.where(ok, e.den, 1.0)
    b = np.where(ok, (e.plain * e.var_den - e.cov) / y**2, 0.0)
    cv = np.minimum(np.sqrt(np.maximum(e.var_den, 0.0)) / y, 1.0)
    bound = np.abs(b) * cv
    np.testing.assert_allclose(ppi.estimated_bias(ctx),
                               np.where(as_ht, ht.estimated_bias(ctx), bound))
    moved = ~as_ht & (b != 0)
    assert moved.any() and (bound[moved] < np.abs(b[moved])).all()
    ppi_ap, ht_ap = PPI("AP"), HT("AP")
    np.testing.assert_array_equal(ppi_ap.estimated_bias(ctx), ht_ap.estimated_bias(ctx))


def test_ppi_kept_as_ht_gets_hts_status(world):
    """Labels constant on every topic carry no information: ppi(nDCG) is ht(nDCG) on every
    segment, with ht's variance, so the rule reads the same bias and gives the same status."""
    from irsample.measures.ppi.measures import attach_labels
    from irsample.measures.reliability import assess

    collection, frame, _ = world
    ctx = EvalContext(collection, uniform(0.3).sample(frame, rng=2))
    attach_labels(ctx, frame_labels(collection, frame, np.zeros(len(frame.rel))))
    ht, ppi = parse("ht(nDCG)")[0], parse("ppi(nDCG)")[0]
    assert ppi_estimate(ctx, ctx.auto_labels, NDCG).as_ht.all()
    # ht corrects some topics, where its signed bias (the reading where labels move ppi) differs
    assert ht.corrected(ctx).any()
    assert not np.array_equal(ht.estimated_bias(ctx), ht.estimated_bias(ctx, signed=True))
    shape = (ctx.n_runs, ctx.n_topics)
    found = [assess(ctx, m, ctx.answered, np.asarray(m.variance(ctx)).reshape(shape),
                    np.asarray(m.compute(ctx)).reshape(shape)) for m in (ht, ppi)]
    assert found[1].bias_se.any()
    np.testing.assert_array_equal(found[0].bias_se, found[1].bias_se)
    np.testing.assert_array_equal(found[0].unreliable, found[1].unreliable)


def test_control_variate_on_importance_samples_takes_the_corrected_ratios_and_their_jackknife(
        world):
    """On an importance sample ht(nDCG) is the Taylor-corrected ratio with the jackknife as its
    variance, and ppi(nDCG)'s control variate takes the same on both sides: at a fixed weight
    lambda an identified topic's value is theta^_y + lambda (f - theta^_f) with both ratios as
    ht corrects them, and with every topic identified its variance is V_y - 2 lambda C +
    lambda^2 V_f from the two estimates' jackknife over the same deletions; labels equal to
    the grades give nDCG itself with variance 0."""
    from irsample.measures.ht.estimator import estimate
    from irsample.measures.ht.inclusion import ht_design
    from irsample.measures.ht.jackknife import jackknife_cross_moments
    from irsample.measures.ppi.estimate import label_contexts

    collection, frame, truth = world
    ctx = EvalContext(collection, importance(0.7).sample(frame, rng=2))
    hy = estimate(ctx, NDCG)
    assert hy.known.all() and hy.replicates is not None and hy.corrected.any()
    labels = moved_grade_labels(collection, frame, 11, 0.3)
    e = ppi_estimate(ctx, labels, NDCG, tuning=0.5)
    hf = estimate(label_contexts(ctx, labels)[0], NDCG)
    moved = e.lam > 0
    assert moved.sum() >= 5
    theta_f = np.where(hf.den > 0, hf.value, e.auto)
    np.testing.assert_allclose(e.value[moved], (hy.value + 0.5 * (e.auto - theta_f))[moved],
                               rtol=1e-12)
    cov, var_f, var_y, _ = jackknife_cross_moments(ctx, ht_design(ctx), hy.replicates,
                                                   hf.replicates)
    want = var_y.sum(axis=1) - cov.sum(axis=1) + 0.25 * var_f.sum(axis=1)
    np.testing.assert_allclose(e.variance[moved], np.maximum(want, 0.0)[moved], rtol=1e-9)
    exact = ppi_estimate(ctx, frame_labels(collection, frame, frame.rel), NDCG)
    have = np.isfinite(truth)
    np.testing.assert_allclose(exact.value[have], truth[have], atol=1e-12)
    np.testing.assert_allclose(exact.variance[have], 0.0, atol=1e-20)


def test_the_weight_is_cross_fitted_on_the_runs_other_topics():
    """``_tuned``: each segment's weight is the grid point of least estimated variance of the
    run's sum over its other topics (``"global"``: every run's, the topic's own left out), so
    a topic's own noisy variance does not choose the weight its interval is read at; a run
    with one topic taken reads that topic's own sum; ties go to the larger weight."""
    from irsample.measures.ppi.control_variate import GRID, _tuned

    rng = np.random.default_rng(3)
    shape = (3, 6)
    v_y, v_f = rng.uniform(1, 2, shape).ravel(), rng.uniform(0.5, 2, shape).ravel()
    cov = rng.uniform(-0.5, 1.5, shape).ravel() * np.sqrt(v_y * v_f) / 2

    def at(lam):
        return None, v_y - 2 * lam * cov + lam * lam * v_f

    use = np.ones(v_y.size, dtype=bool)
    use[2 * 6 + 1:] = False  # run 2 takes one topic here
    one = np.ones(v_y.size)
    lam = _tuned(at, one, use, shape, "run")
    grid_var = np.stack([np.where(use, at(g * one)[1], 0.0).reshape(shape) for g in GRID])
    for r in range(shape[0]):
        for t in range(shape[1]):
            others = [q for q in range(shape[1]) if q != t and use[r * 6 + q]]
            crit = grid_var[:, r, others].sum(axis=1) if others else grid_var[:, r].sum(axis=1)
            best = GRID[len(GRID) - 1 - np.argmin(crit[::-1])]
            assert lam[r, t] == best
    assert len(set(lam[0])) > 1 or len(set(lam[1])) > 1  # the weights differ by topic
    whole = _tuned(at, one, use, shape, "global")
    for t in range(shape[1]):
        crit = grid_var.sum(axis=(1, 2)) - grid_var[:, :, t].sum(axis=1)
        assert np.all(whole[:, t] == GRID[len(GRID) - 1 - np.argmin(crit[::-1])])
    exact = _tuned(lambda lam: (None, (1 - lam) ** 2 * v_y), one, use, shape, "run")
    assert np.all(exact == 1.0)  # labels equal to the truth: the weight 1, exactly
