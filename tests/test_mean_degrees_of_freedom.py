"""Degrees of freedom of a run mean's interval where its variance is the sample's jackknife
(``ht/jackknife.py``, "Degrees of freedom"; ``Evaluation.summary_df``).

- ht(AP) and ht(nDCG) on an importance sample (the sample's own variance, the jackknife of the
  corrected ratio): each topic's estimated variance of its jackknife variance, scaled as the
  imputation scales the variance, 0 on imputed topics; none on a uniform sample (anticipated
  variance).
- ``evaluate_collection``: ``summary_df`` is Satterthwaite's nu over the evaluated topics, the
  run mean's interval the t's on it, the per-topic intervals normal, and a measure without a
  spread (ht(P@10)) keeps df = inf and the normal interval.
- ppi(AP): at a fixed weight and with every topic identified, the spread is the jackknife's of
  theta_y - lambda theta_f (``CombinedSpread``); with constant labels it is ht(AP)'s bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

from irsample.design import importance, uniform
from irsample.evaluation import evaluate_collection
from irsample.measures import EvalContext, parse
from irsample.measures.ht.estimator import estimate
from irsample.measures.ht.inclusion import ht_design
from irsample.measures.ht.jackknife import (
    jackknife_cross_moments,
    jackknife_variance,
    scaled_spread,
)
from irsample.measures.ppi.estimate import label_contexts, ppi_estimate
from irsample.stats.intervals import run_mean_interval, satterthwaite

from .synthetic import frame_labels, moved_grade_labels
from .test_ppi_control import _world

AP = parse("AP")[0]


@pytest.fixture(scope="module")
def world():
    return _world((1, 1, 2))


def _weighted(world, rate=0.08, seed=1):
    collection, frame, _ = world
    return EvalContext(collection, importance(rate).sample(frame, rng=seed))


def test_ht_ap_spread_on_the_samples_own_variance(world):
    collection, frame, _ = world
    ctx = _weighted(world)
    e = estimate(ctx, AP)
    assert not e.anticipated and e.variance_spread is not None
    own, own_spread = jackknife_variance(ctx, ht_design(ctx), e.replicates, spread=True)
    known = e.known
    np.testing.assert_array_equal(
        e.variance_spread, np.where(known, scaled_spread(e.variance, own, own_spread), 0.0))
    assert (e.variance_spread[known] > 0).any() and (e.variance_spread[~known] == 0).all()
    assert (~known & (e.variance > 0)).any()  # imputed topics: a variance, counted as known
    nd = estimate(ctx, parse("nDCG")[0])
    own, own_spread = jackknife_variance(ctx, ht_design(ctx), nd.replicates, spread=True)
    np.testing.assert_array_equal(
        nd.variance_spread, np.where(nd.known, scaled_spread(nd.variance, own, own_spread), 0.0))
    assert (nd.variance_spread[nd.known] > 0).any()
    anticipated = estimate(EvalContext(collection, uniform(0.3).sample(frame, rng=1)), AP)
    assert anticipated.anticipated and anticipated.variance_spread is None


def test_evaluation_takes_the_t_on_satterthwaites_nu(world):
    collection, _, _ = world
    ctx = _weighted(world)
    measures = [parse(m)[0] for m in ("ht(AP)", "ht(nDCG)")]
    ev = evaluate_collection(collection, ctx.judgments, measures, ci=0.95)
    shape = (collection.n_runs, collection.n_topics)
    for j, inner in enumerate(("AP", "nDCG")):
        e = estimate(ctx, parse(inner)[0])
        var = np.where(ev.evaluated, e.variance.reshape(shape), 0.0)
        spread = np.where(ev.evaluated, e.variance_spread.reshape(shape), 0.0)
        nu = ev.summary_df[:, j]
        np.testing.assert_allclose(nu, 2 * var.sum(axis=1) ** 2 / spread.sum(axis=1))
        np.testing.assert_array_equal(nu, satterthwaite(var, spread))
        assert np.all(np.isfinite(nu) & (nu >= 1))
    p10 = evaluate_collection(collection, ctx.judgments, [parse("ht(P@10)")[0]], ci=0.95)
    assert np.isinf(p10.summary_df).all()
    interval = ev.interval()
    se = np.sqrt(ev.summary_variance)
    theta = ev.summary
    # run means of ratios: the quantile on the logit scale where the normal interval lies
    # inside (0, 1), the normal interval elsewhere (stats.intervals.logit_interval)
    half = stats.t.ppf(0.975, ev.summary_df) * se
    inside = (theta - half > 0) & (theta + half < 1)
    assert inside.any() and not inside.all()
    for limit, sign in ((interval.high, 1), (interval.low, -1)):
        on_logit = special.expit(special.logit(theta) + sign * half / (theta * (1 - theta)))
        np.testing.assert_allclose(limit, np.where(inside, on_logit, theta + sign * half))
    assert "Satterthwaite" in interval.method and "logit" in interval.method
    topics = ev.interval(summary=False)  # per topic: z on the topic's own variance
    np.testing.assert_allclose((topics.high - ev.values)[ev.evaluated],
                               (stats.norm.ppf(0.975) * np.sqrt(ev.topic_variance))[ev.evaluated])


def test_run_mean_interval_is_the_printed_one(world):
    """The recipes' and benchmarks' rebuild of a run mean's interval from per-topic parts
    (``stats.intervals.run_mean_interval``) equals ``Evaluation.interval``: t on the jackknife's
    degrees of freedom (ht(AP) and ht(nDCG) on an importance sample) and z (both on a uniform
    sample), on the logit scale."""
    collection, frame, _ = world
    for ctx in (_weighted(world), EvalContext(collection, uniform(0.3).sample(frame, rng=1))):
        measures = [parse(m)[0] for m in ("ht(AP)", "ht(nDCG)")]
        ev = evaluate_collection(collection, ctx.judgments, measures, ci=0.95)
        printed = ev.interval()
        for j, inner in enumerate(("AP", "nDCG")):
            e = estimate(ctx, parse(inner)[0])
            rebuilt = run_mean_interval(e.value, e.variance, ev.evaluated, 0.95,
                                        spread=e.variance_spread)
            for got, want in ((rebuilt.estimate, ev.summary), (rebuilt.low, printed.low),
                              (rebuilt.high, printed.high)):
                np.testing.assert_allclose(got, want[:, j], rtol=1e-12, atol=1e-15)


def test_ppi_ap_spread_is_the_combinations_jackknife(world):
    collection, frame, _ = world
    ctx = _weighted(world, rate=0.7, seed=2)  # every topic identified: no imputation scaling
    hy = estimate(ctx, AP)
    assert hy.known.all()
    labels = moved_grade_labels(collection, frame, 3, 0.3)
    e = ppi_estimate(ctx, labels, AP, tuning=0.5)
    hf = estimate(label_contexts(ctx, labels)[0], AP)
    spread = jackknife_cross_moments(ctx, ht_design(ctx), hy.replicates, hf.replicates)[3]
    moved = e.lam > 0
    assert moved.sum() >= 5
    want = spread(1.0, 0.5)
    np.testing.assert_allclose(e.variance_spread[moved], want[moved], rtol=1e-10)
    assert not np.allclose(e.variance_spread[moved], hy.variance_spread[moved])
    constant = ppi_estimate(ctx, frame_labels(collection, frame, np.ones(len(frame))), AP)
    np.testing.assert_array_equal(constant.variance_spread, hy.variance_spread)
    ev = evaluate_collection(collection, ctx.judgments, [parse("ppi(AP)")[0]], ci=0.95,
                             auto_labels=labels)
    assert np.isfinite(ev.summary_df).all()


def test_satterthwaite_is_at_least_the_fewest_degrees_of_freedom_of_its_parts():
    """nu = (sum v_q)^2 / sum (v_q^2 / nu_q) >= min nu_q >= 1 for variances v_q >= 0 with
    var(v_q) = 2 v_q^2 / nu_q; variances of rounding size and of either sign, whose sum is nearer
    0 than their spread, would give nu near 0 and a t quantile without bound: nu is 1 there."""
    rng = np.random.default_rng(7)
    for _ in range(200):
        k = int(rng.integers(1, 12))
        v, nu_q = rng.exponential(size=k) * 10.0 ** rng.integers(-8, 2), 1.0 + rng.exponential(
            3.0, size=k)
        nu = satterthwaite(v[None], (2.0 * v * v / nu_q)[None])[0]
        assert nu >= nu_q.min() * (1 - 1e-12)
    rounding = np.array([[3e-21, -2.9e-21, 1e-22]])
    assert satterthwaite(rounding, np.array([[1e-41, 1e-41, 1e-43]]))[0] == 1.0
    interval = run_mean_interval(np.array([[0.3, 0.2, 0.25]]), rounding,
                                 np.ones((1, 3), dtype=bool), 0.95,
                                 spread=np.array([[1e-41, 1e-41, 1e-43]]))
    assert abs(interval.high[0] - interval.low[0]) < 1e-9


def test_ppi_ap_with_labels_equal_to_truth_has_an_interval_of_rounding_width(world):
    """Labels that agree with every judged document on a sample with the jackknife's variance:
    ppi(AP) is the full judgments' AP, its variance of rounding size, and the run mean's
    interval as narrow (on DL 2019's planned draws it was +-1e135 before nu's floor)."""
    collection, frame, truth = world
    widths = []
    for seed in range(1, 6):
        ctx = _weighted(world, seed=seed)
        labels = frame_labels(collection, frame, frame.rel)
        ev = evaluate_collection(collection, ctx.judgments, parse("ppi(AP)"), ci=0.95,
                                 auto_labels=labels)
        low, high = ev.interval()
        assert np.all(ev.summary_df[:, 0] >= 1.0)
        widths.append(np.abs(high[:, 0] - low[:, 0]))
    assert np.max(widths) < 1e-9
