"""Paired tests, bootstrap and KS wrappers, Holm/BH corrections and run-pair classification:
against scipy per pair, hand enumerations and hand-computed adjustments."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from irsample.stats.pairs import (
    CLASSES,
    FALSE_ALARM,
    INVERSION,
    MISS,
    TRUE_NEGATIVE,
    TRUE_POSITIVE,
    PairCounts,
    classify,
    classify_decisions,
    decisions,
    pair_accuracy,
)
from irsample.stats.tests import (
    all_pairs,
    benjamini_hochberg,
    bootstrap_mean,
    holm,
    ks_test,
    paired_randomization,
    paired_t,
    pairwise,
    sign_flips,
)


def scores(seed=1, runs=12, topics=20):
    """Per-topic scores of runs of increasing quality (some pairs significant, some not)."""
    rng = np.random.default_rng(seed)
    topic = rng.random(topics)
    skill = np.linspace(0.0, 0.25, runs)
    noise = rng.normal(0, 0.12, (runs, topics))
    return np.clip(topic[None, :] * 0.6 + skill[:, None] + noise, 0, 1)


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_pairwise_t_equals_scipy_per_pair(alternative):
    x = scores()
    res = pairwise(x, alternative=alternative)
    first, second = all_pairs(len(x))
    assert len(first) == len(x) * (len(x) - 1) // 2
    for k in range(len(first)):
        ref = stats.ttest_rel(x[first[k]], x[second[k]], alternative=alternative)
        assert res.statistic[k] == pytest.approx(ref.statistic, rel=1e-12)
        assert res.pvalue[k] == pytest.approx(ref.pvalue, rel=1e-10, abs=1e-300)
        assert res.estimate[k] == pytest.approx(np.mean(x[first[k]] - x[second[k]]), abs=1e-15)
    assert np.all(res.df == x.shape[1] - 1)


def test_paired_t_scalar_degenerate_and_missing_topics():
    x, y = scores()[:2]
    one = paired_t(x, y)
    ref = stats.ttest_rel(x, y)
    assert isinstance(one.pvalue, float) and one.pvalue == pytest.approx(ref.pvalue, rel=1e-12)
    # identical runs: t = 0/0 (NaN); a constant non-zero difference: t = inf, p = 0 (as scipy)
    same = paired_t(x, x)
    assert np.isnan(same.statistic) and np.isnan(same.pvalue)
    shifted = paired_t(np.arange(5.0), np.arange(5.0) - 2)
    assert shifted.statistic == np.inf and shifted.pvalue == 0.0 and shifted.estimate == 2.0
    # NaN topics are left out pair by pair, as scipy's nan_policy="omit"
    z = scores(seed=2)[:4]
    z[1, [3, 7]] = np.nan
    z[2, 0] = np.nan
    res = pairwise(z)
    for k, (i, j) in enumerate(zip(*all_pairs(4))):
        ref = stats.ttest_rel(z[i], z[j], nan_policy="omit")
        assert res.pvalue[k] == pytest.approx(ref.pvalue, rel=1e-10)
        assert res.n[k] == np.sum(~np.isnan(z[i] - z[j]))


def test_pairwise_t_is_fast_on_trec8_sized_input():
    import time

    x = np.random.default_rng(0).random((129, 50))
    pairwise(x)
    start = time.perf_counter()
    res = pairwise(x)
    assert len(res.pvalue) == 8256
    assert time.perf_counter() - start < 0.5


def test_randomization_exact_by_hand():
    # d = (1, 2, -0.5): the 8 sign flips sum to +-3.5, +-2.5, +-1.5, +-0.5; observed 2.5
    x, y = np.array([1.0, 2.0, 0.0]), np.array([0.0, 0.0, 0.5])
    greater = paired_randomization(x, y, alternative="greater")
    assert greater.pvalue == 2 / 8 and greater.n_resamples == 8
    assert paired_randomization(x, y, alternative="less").pvalue == 7 / 8
    assert paired_randomization(x, y).pvalue == 2 * 2 / 8
    assert paired_randomization(x, y).statistic == pytest.approx(2.5 / 3)
    signs, exact = sign_flips(3)
    assert exact and sorted(map(tuple, signs)) == sorted(itertools.product([-1.0, 1.0], repeat=3))


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_randomization_exact_equals_scipy_permutation_test(alternative):
    x = scores(seed=3, runs=6, topics=9)
    for i, j in [(0, 5), (2, 3), (4, 1)]:
        ours = paired_randomization(x[i], x[j], alternative=alternative)
        ref = stats.permutation_test(
            (x[i], x[j]), lambda a, b, axis: np.mean(a - b, axis=axis), vectorized=True,
            permutation_type="samples", alternative=alternative, n_resamples=9999,
        )
        assert ours.method.endswith("(exact)")
        assert ours.pvalue == pytest.approx(ref.pvalue, abs=1e-15)


def test_randomization_missing_topics_stay_exact_and_pairwise_agrees():
    x = scores(seed=4, runs=5, topics=10)
    x[0, 2] = np.nan
    res = paired_randomization(x[0], x[3])
    kept = ~np.isnan(x[0])
    assert res.pvalue == paired_randomization(x[0][kept], x[3][kept]).pvalue
    assert res.n == 9
    allp = pairwise(x, test="randomization")
    for k, (i, j) in enumerate(zip(*all_pairs(5))):
        assert allp.pvalue[k] == paired_randomization(x[i], x[j]).pvalue


def test_randomization_monte_carlo_seeded_and_close_to_exact():
    x = scores(seed=5, runs=4, topics=12)
    exact = paired_randomization(x[0], x[3], exact=True)
    mc = paired_randomization(x[0], x[3], exact=False, n_resamples=20000, rng=7)
    again = paired_randomization(x[0], x[3], exact=False, n_resamples=20000, rng=7)
    assert mc.pvalue == again.pvalue and mc.n_resamples == 20000
    se = np.sqrt(exact.pvalue * (1 - exact.pvalue) / 20000)
    assert abs(mc.pvalue - exact.pvalue) < 4 * se + 1e-4
    # p is never 0 for a Monte Carlo test: (count + 1) / (B + 1)
    far = paired_randomization(x[0] + 1.0, x[0] - 1.0, exact=False, n_resamples=99, rng=1)
    assert far.pvalue == pytest.approx(2 / 100)
    with pytest.raises(ValueError, match="rng"):
        paired_randomization(x[0], x[3], exact=False)


@pytest.mark.parametrize("method", ["percentile", "BCa"])
def test_bootstrap_mean_is_scipys(method):
    x = scores(seed=6)[0]
    ours = bootstrap_mean(x, method=method, n_resamples=2000, rng=11)
    ref = stats.bootstrap((x,), np.mean, method=method, n_resamples=2000,
                          rng=np.random.default_rng(11))
    assert (ours.low, ours.high) == (ref.confidence_interval.low, ref.confidence_interval.high)
    assert ours.low < ours.estimate < ours.high and ours.estimate == pytest.approx(x.mean())
    assert ours.level == 0.95 and ours.method == f"bootstrap {method}"


def test_ks_test_one_and_two_samples():
    z = np.random.default_rng(8).normal(size=200)
    one = ks_test(z)
    assert one.pvalue == stats.kstest(z, "norm").pvalue and one.n == 200
    two = ks_test(z, z + 0.5)
    assert two.statistic == stats.ks_2samp(z, z + 0.5).statistic
    assert two.method.startswith("two-sample")


def test_holm_and_bh_hand_computed():
    p = np.array([0.01, 0.04, 0.03, 0.005])
    # sorted 0.005, 0.01, 0.03, 0.04 -> 4*0.005, 3*0.01, 2*0.03, max(0.06, 1*0.04)
    np.testing.assert_allclose(holm(p), [0.03, 0.06, 0.06, 0.02])
    # 4*0.005/1, 4*0.01/2, 4*0.03/3, 4*0.04/4 -> running minimum from the top
    np.testing.assert_allclose(benjamini_hochberg(p), [0.02, 0.04, 0.04, 0.02])
    # capped at 1, NaN kept out of m, and along an axis
    np.testing.assert_allclose(holm([0.3, 0.6, np.nan]), [0.6, 0.6, np.nan])
    np.testing.assert_allclose(benjamini_hochberg([0.3, 0.6, np.nan]), [0.6, 0.6, np.nan])
    two = np.stack([p, p[::-1]], axis=1)
    np.testing.assert_allclose(holm(two, axis=0)[:, 1], holm(p[::-1]))
    with pytest.raises(ValueError):
        holm([0.5, 1.5])


def test_classify_hand_examples():
    truth_sig = [True, True, False, True, False, True]
    truth_sign = [1, -1, 1, 1, -1, 1]
    est_sig = [True, True, False, False, True, True]
    est_sign = [1, -1, -1, 1, 1, -1]
    codes = classify(truth_sig, truth_sign, est_sig, est_sign)
    assert codes.tolist() == [TRUE_POSITIVE, TRUE_POSITIVE, TRUE_NEGATIVE, MISS, FALSE_ALARM,
                              INVERSION]
    counts = PairCounts.of(codes)
    assert (counts.true_positive, counts.true_negative, counts.miss, counts.false_alarm,
            counts.inversion) == (2, 1, 1, 1, 1)
    # paper 002: inversions count as both a miss and a false alarm: 3 / (3 + 1 + 1 + 2)
    assert counts.accuracy == pytest.approx(3 / 7)
    assert list(counts.as_dict()) == [*CLASSES, "accuracy"] and counts.total == 6
    assert np.isnan(PairCounts.of([]).accuracy)


def test_decisions_and_accuracy_on_scores():
    x = scores(seed=9)
    truth = decisions(x, alpha=0.05)
    assert truth.significant.any() and not truth.significant.all()
    ref = [stats.ttest_rel(x[i], x[j]).pvalue < 0.05 for i, j in zip(truth.first, truth.second)]
    assert truth.significant.tolist() == ref
    assert np.all(truth.sign == np.sign((x[truth.first] - x[truth.second]).mean(axis=1)))
    assert pair_accuracy(x, x).accuracy == 1.0
    # the t-test is scale-invariant: halved scores make the same decisions
    assert pair_accuracy(x, 0.5 * x).true_positive == truth.significant.sum()
    # negated scores: every significant pair becomes an inversion, the others stay negatives
    codes = classify_decisions(truth, decisions(-x, alpha=0.05))
    assert set(codes[truth.significant]) == {INVERSION}
    assert set(codes[~truth.significant]) == {TRUE_NEGATIVE}
    flipped = PairCounts.of(codes)
    assert flipped.accuracy == pytest.approx(
        flipped.true_negative / (flipped.true_negative + 2 * flipped.inversion))
    with pytest.raises(ValueError, match="different pairs"):
        classify_decisions(truth, decisions(x, pairs=([0], [1])))
