"""Agreement statistics of the assessment app against values computed by hand, against the
published example of Krippendorff (2011), and against the ``krippendorff`` package."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irsample.assess.agreement import (
    alpha_interval,
    cohen_kappa,
    kappa_interval,
    kappa_se,
    krippendorff_alpha,
)

# confusion [[20, 5], [10, 15]]: p_o = 0.7, p_e = 0.5*0.6 + 0.5*0.4 = 0.5, kappa = 0.2/0.5
A = [0] * 25 + [1] * 25
B = [0] * 20 + [1] * 5 + [0] * 10 + [1] * 15

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the example with 4
# observers, 12 units and missing values: alpha = 0.743 (nominal), 0.815 (ordinal),
# 0.849 (interval)
N = np.nan
EXAMPLE = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
]).T  # items x observers


def test_kappa_by_hand():
    assert cohen_kappa(A, B) == pytest.approx(0.4)
    # items (0,0) (1,2) (2,2) (2,1): p_o = 0.5, p_e = 0.375 -> 0.2; linear weights: observed
    # disagreement 0.5, expected 0.875 -> 3/7; quadratic: 0.5 and 1.375 -> 7/11
    a, b = [0, 1, 2, 2], [0, 2, 2, 1]
    assert cohen_kappa(a, b) == pytest.approx(0.2)
    assert cohen_kappa(a, b, weights="linear") == pytest.approx(3 / 7)
    assert cohen_kappa(a, b, weights="quadratic") == pytest.approx(7 / 11)
    assert cohen_kappa([1, 1, 1], [1, 1, 1]) != cohen_kappa([1, 1, 1], [1, 1, 1])  # NaN
    assert cohen_kappa([0, 1, 0, 1], [1, 0, 1, 0]) == pytest.approx(-1.0)


def test_kappa_standard_error_by_hand():
    # Fleiss, Cohen & Everitt (1969) with p = [[.4, .1], [.2, .3]], k = 0.4, p_e = 0.5:
    # diagonal .4(1 - 1.1 x .6)^2 + .3(1 - .9 x .6)^2 = .10972; off-diagonal
    # .36 (.1 x 1.1^2 + .2 x .9^2) = .10188; minus (.4 - .5 x .6)^2 = .01; over 50 x .25
    assert kappa_se(A, B) == pytest.approx(np.sqrt((0.10972 + 0.10188 - 0.01) / 12.5))
    r = kappa_interval(A, B, method="analytic", level=0.95)
    assert (r.low, r.high) == pytest.approx((0.4 - 1.959964 * 0.126996, 0.4 + 1.959964 * 0.126996),
                                            abs=1e-5)
    near_one = kappa_interval([0] * 9 + [1] * 10, [0] * 10 + [1] * 9, method="analytic")
    assert near_one.high == 1.0 and near_one.low < near_one.estimate < 1.0  # clipped at 1
    assert r.method == "analytic" and r.n_items == 50


def test_alpha_matches_krippendorffs_published_example():
    assert krippendorff_alpha(EXAMPLE, level="nominal") == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(EXAMPLE, level="ordinal") == pytest.approx(0.815, abs=5e-4)
    assert krippendorff_alpha(EXAMPLE, level="interval") == pytest.approx(0.849, abs=5e-4)


def test_bootstrap_intervals_are_seeded_and_near_the_analytic_one():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, 400)
    b = np.where(rng.random(400) < 0.6, a, rng.integers(0, 3, 400))
    one, two = kappa_interval(a, b, rng=3), kappa_interval(a, b, rng=3)
    assert one == two and one.method == "bootstrap" and one.low < one.estimate < one.high
    analytic = kappa_interval(a, b, method="analytic")
    assert (one.high - one.low) == pytest.approx(analytic.high - analytic.low, rel=0.15)
    alpha = alpha_interval(np.column_stack([a, b]).astype(float), rng=3)
    assert alpha == alpha_interval(np.column_stack([a, b]).astype(float), rng=3)
    assert alpha.low < alpha.estimate < alpha.high and alpha.n_items == 400


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 5), st.integers(2, 30), st.integers(2, 4), st.integers(0, 2**31))
def test_alpha_equals_the_krippendorff_package(coders, units, values, seed):
    krippendorff = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(seed)
    data = rng.integers(1, values + 1, (coders, units)).astype(float)
    data[rng.random(data.shape) < 0.25] = np.nan
    if len(np.unique(data[~np.isnan(data)])) < 2 or (np.sum(~np.isnan(data), 0) >= 2).sum() == 0:
        return
    for level in ("nominal", "ordinal", "interval"):
        ours = krippendorff_alpha(data.T, level=level)
        with np.errstate(all="ignore"):
            theirs = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        if np.isnan(theirs):
            assert np.isnan(ours)
        else:
            assert ours == pytest.approx(theirs, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=40))
def test_kappa_is_symmetric_and_one_for_identical_grades(pairs):
    a, b = np.array(pairs).T
    k = cohen_kappa(a, b)
    assert k == pytest.approx(cohen_kappa(b, a), nan_ok=True)
    if len(np.unique(a)) > 1:
        assert cohen_kappa(a, a) == pytest.approx(1.0)
    # two coders, no missing values: N = 2n values, each unit adds both ordered pairs, so
    # alpha (nominal) = 1 - (N - 1) 2 #disagreements / (N^2 - sum_c n_c^2)
    counts = np.bincount(np.concatenate([a, b]))
    n_values = 2 * len(a)
    expected = n_values ** 2 - np.sum(counts ** 2)
    alpha = krippendorff_alpha(np.column_stack([a, b]), level="nominal")
    if expected == 0:
        assert np.isnan(alpha)
    else:
        assert alpha == pytest.approx(1 - (n_values - 1) * 2 * np.sum(a != b) / expected)
