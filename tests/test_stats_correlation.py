"""Rank correlations and errors: hand-worked values, scipy as the oracle, tau_AP's tie rule
against brute-force enumeration of the tie-breaks."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.stats

from irsample.stats import kendall_tau, pearson, rms_error, tau_ap

TRUTH = [4.0, 3.0, 2.0, 1.0]  # systems A > B > C > D


def test_tau_ap_hand_examples():
    """A swap at the top costs more than the same swap at the bottom (paper's motivation).

    Estimate B A C D: C(2) = 0 (B above A is wrong), C(3)/2 = 1, C(4)/3 = 1 -> 2/3 * 2 - 1 = 1/3.
    Estimate A B D C: 1 + 1 + 2/3 -> 2/3 * 8/3 - 1 = 7/9. Kendall's tau is 2/3 for both."""
    top_swap = [3.0, 4.0, 2.0, 1.0]
    bottom_swap = [4.0, 3.0, 1.0, 2.0]
    assert tau_ap(TRUTH, top_swap).statistic == pytest.approx(1 / 3)
    assert tau_ap(TRUTH, bottom_swap).statistic == pytest.approx(7 / 9)
    assert kendall_tau(TRUTH, top_swap).statistic == pytest.approx(2 / 3)
    assert kendall_tau(TRUTH, bottom_swap).statistic == pytest.approx(2 / 3)
    assert tau_ap(TRUTH, TRUTH).statistic == pytest.approx(1.0)
    assert tau_ap(TRUTH, TRUTH[::-1]).statistic == pytest.approx(-1.0)
    # asymmetric: the estimate's order decides the weights; symmetric averages both directions
    assert tau_ap(top_swap, TRUTH).statistic == pytest.approx(1 / 3)
    assert tau_ap(TRUTH, bottom_swap, symmetric=True).statistic == pytest.approx(7 / 9)
    skew = [4.0, 1.0, 3.0, 2.0]  # estimate A C D B: 1/1 + 2/2 + 1/3 -> 2/3 * 7/3 - 1 = 5/9
    assert tau_ap(TRUTH, skew).statistic == pytest.approx(5 / 9)
    # the other direction, order A B C D judged by skew: 1/1 + 1/2 + 2/3 -> 2/3 * 13/6 - 1
    assert tau_ap(skew, TRUTH).statistic == pytest.approx(4 / 9)


def _tau_ap_no_ties(truth, order):
    """The paper's formula for an estimate without ties; truth ties count 1/2."""
    n = len(order)
    total = 0.0
    for i in range(1, n):
        j = order[i]
        c = sum(1.0 if truth[k] > truth[j] else 0.5 if truth[k] == truth[j] else 0.0
                for k in order[:i])
        total += c / i
    return 2 * total / (n - 1) - 1


def _brute_force(truth, estimate):
    """Mean of the no-tie formula over every order consistent with the estimate's ties."""
    groups = [
        list(np.flatnonzero(np.asarray(estimate) == v)) for v in sorted(set(estimate), reverse=True)
    ]
    values = [
        _tau_ap_no_ties(truth, [i for g in perms for i in g])
        for perms in itertools.product(*(itertools.permutations(g) for g in groups))
    ]
    return float(np.mean(values))


@pytest.mark.parametrize("seed", range(12))
def test_tau_ap_ties_are_the_expectation_over_tie_breaks(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 8))
    truth = rng.integers(0, 4, n).astype(float)
    estimate = rng.integers(0, 3, n).astype(float)
    assert tau_ap(truth, estimate).statistic == pytest.approx(_brute_force(truth, estimate))


def test_tau_ap_truth_ties_count_half():
    # identical orders with B, C tied in both: B and C each earn 1 from A and 1/2 from each other;
    # whichever is 2nd scores 1/1, the 3rd (1 + 1/2)/2, so 2/2 * (1 + 3/4) - 1 = 0.75
    assert tau_ap([2.0, 1.0, 1.0], [2.0, 1.0, 1.0]).statistic == pytest.approx(0.75)
    # all tied in the estimate: expectation over all orders of a random ranking is 0
    assert tau_ap(TRUTH, [1.0] * 4).statistic == pytest.approx(0.0)


@pytest.mark.parametrize("seed", range(5))
def test_kendall_and_pearson_match_scipy(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 6, 30).astype(float)  # ties on both sides
    y = x + rng.normal(0, 2, 30).round()
    k = kendall_tau(x, y)
    ref = scipy.stats.kendalltau(x, y)
    assert (k.statistic, k.pvalue) == pytest.approx((ref.statistic, ref.pvalue))
    assert k.method == "kendall tau-b" and k.n == 30
    p = pearson(x, y)
    ref = scipy.stats.pearsonr(x, y)
    assert (p.statistic, p.pvalue) == pytest.approx((ref.statistic, ref.pvalue))
    assert float(p) == p.statistic


def test_kendall_tau_b_hand_value():
    # x = 1 2 2 3, y = 1 3 2 4: pairs C = 5, D = 0, tied in x: 1, in y: 0 -> 5 / sqrt(5 * 6)
    assert kendall_tau([1, 2, 2, 3], [1, 3, 2, 4]).statistic == pytest.approx(5 / math.sqrt(30))


def test_rms_error_and_bad_input():
    assert rms_error([0.1, 0.2, 0.3], [0.1, 0.4, 0.3]) == pytest.approx(math.sqrt(0.04 / 3))
    with pytest.raises(ValueError, match="same length"):
        kendall_tau([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="at least 2"):
        tau_ap([1.0], [1.0])
    with pytest.raises(ValueError, match="finite"):
        pearson([1.0, np.nan, 2.0], [1.0, 2.0, 3.0])
