"""Logistic regression with random intercepts (irsample/stats/logistic.py): the posterior mode
of one factor or of several, nested ones included.

- The returned point is the mode of the log posterior: a Newton step from it (its gradient,
  the data's score plus the priors', through its Hessian, built here row by row) moves no
  row's linear predictor by more than 1e-9, with one factor and with two.
- One factor through ``random_intercepts_logit`` is ``random_intercept_logit`` exactly; with
  two, Newton's method gives the linear predictor L-BFGS reaches when run to a tight tolerance.
- A feature the rows leave constant (all judged documents at one rank) leaves the fit that of
  the model without it, the constant's coefficient small rather than wherever rounding drove it.
- With a prior on the slopes (``slope_sd``) the point is that prior's posterior mode, and
  where the rows are separated (none positive past a value of the feature), which leaves the
  flat prior no mode, the fit ends at a finite one, the same from two starting orders of the
  rows to 1e-9, and the slope's size bounded by the prior.
- Nested intercepts (a topic, then the topic's stratum) let one stratum of a group follow its
  own data: a stratum with no positive outcome among hundreds gets a fitted rate far below the
  one a shared group intercept gives it, and a larger prior sd lets it go lower.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from irsample.stats.logistic import random_intercept_logit, random_intercepts_logit


def _data(seed, n=4000, groups=12, strata=2):
    rng = np.random.default_rng(seed)
    x = np.column_stack([np.ones(n), rng.normal(size=n)])
    group = rng.integers(0, groups, n)
    stratum = rng.integers(0, strata, n)
    eta = x @ [-2.0, 0.8] + rng.normal(0, 1.5, groups)[group] + rng.normal(0, 1, groups * strata)[
        group * strata + stratum]
    y = (rng.random(n) < expit(eta)).astype(np.float64)
    return x, y, group, stratum


def _newton_step(x, y, coef, factors, offsets, slope_sd=None):
    """Per row, the change of its linear predictor by the Newton step H^-1 g of the log
    posterior at (coef, offsets), built row by row: each row's design is its features and one
    indicator per factor; ``slope_sd``: the prior of the coefficients but the first."""
    rows = np.hstack([x, *(np.eye(n)[index] for index, n, _ in factors)])
    theta = np.concatenate([coef, *offsets])
    fixed = np.zeros(x.shape[1])
    if slope_sd is not None:
        fixed[1:] = 1.0 / slope_sd ** 2
    precision = np.concatenate([fixed, *(np.full(n, 1.0 / sd ** 2) for _, n, sd in factors)])
    p = expit(rows @ theta)
    gradient = rows.T @ (y - p) - precision * theta
    hessian = (rows * (p * (1 - p))[:, None]).T @ rows + np.diag(precision)
    return rows @ np.linalg.solve(hessian, gradient)


def test_the_fit_is_the_mode_of_the_log_posterior():
    x, y, group, stratum = _data(1)
    for factors in ([(group, 12, 3.0)],
                    [(group, 12, 3.0), (group * 2 + stratum, 24, 1.0)]):
        coef, offsets = random_intercepts_logit(x, y, factors)
        assert [len(g) for g in offsets] == [n for _, n, _ in factors]
        assert np.abs(_newton_step(x, y, coef, factors, offsets)).max() < 1e-9


def test_with_a_prior_on_the_slopes_the_fit_is_its_mode():
    x, y, group, stratum = _data(4)
    for factors in ([(group, 12, 3.0)],
                    [(group, 12, 3.0), (group * 2 + stratum, 24, 1.0)]):
        coef, offsets = random_intercepts_logit(x, y, factors, slope_sd=0.5)
        assert np.abs(_newton_step(x, y, coef, factors, offsets, slope_sd=0.5)).max() < 1e-9
        flat, _ = random_intercepts_logit(x, y, factors)
        assert abs(coef[1]) < abs(flat[1])  # shrunk towards 0 from the flat prior's 0.8 or so


def test_separated_rows_get_a_finite_mode_with_a_prior_on_the_slopes():
    """Every row at rank 5 or better is positive, none past it: the flat prior's fit has no
    mode (its slope runs off to wherever the step limit leaves it); with ``slope_sd`` = 10 the
    fit is the mode, the same whichever order the rows come in."""
    rng = np.random.default_rng(7)
    rank = rng.integers(1, 40, 60).astype(np.float64)
    y = (rank <= 5).astype(np.float64)
    x = np.column_stack([np.ones(60), np.log(rank)])
    group = rng.integers(0, 3, 60)
    flat, _ = random_intercept_logit(x, y, group, 3)
    coef, g = random_intercept_logit(x, y, group, 3, slope_sd=10.0)
    assert abs(flat[1]) > 50 > abs(coef[1])
    factors = [(group, 3, 1.0)]
    assert np.abs(_newton_step(x, y, coef, factors, [g], slope_sd=10.0)).max() < 1e-9
    order = rng.permutation(60)
    again, g2 = random_intercept_logit(x[order], y[order], group[order], 3, slope_sd=10.0)
    assert np.allclose(np.r_[coef, g], np.r_[again, g2], rtol=0, atol=1e-9)


def test_one_factor_is_the_single_intercept_fit():
    x, y, group, _ = _data(2)
    coef, (g,) = random_intercepts_logit(x, y, [(group, 12, 2.0)])
    coef1, g1 = random_intercept_logit(x, y, group, 12, 2.0)
    np.testing.assert_array_equal(coef, coef1)
    np.testing.assert_array_equal(g, g1)


def test_a_nested_intercept_lets_a_stratum_with_no_positives_follow_its_data():
    rng = np.random.default_rng(3)
    n_groups, per = 10, 400
    group = np.repeat(np.arange(n_groups), 2 * per)
    stratum = np.tile(np.repeat([0, 1], per), n_groups)
    rate = np.where(stratum == 0, 0.3, 0.05)
    y = (rng.random(len(group)) < rate).astype(np.float64)
    y[(group == 0) & (stratum == 1)] = 0.0  # group 0's second stratum: none of 400
    x = np.column_stack([np.ones(len(y)), stratum.astype(np.float64)])
    inner = group * 2 + stratum
    empty = (group == 0) & (stratum == 1)

    def fitted(factors):
        coef, offsets = random_intercepts_logit(x, y, factors)
        eta = x @ coef + sum(g[index] for g, (index, _, _) in zip(offsets, factors))
        return expit(eta[empty][0])

    shared = fitted([(group, n_groups, 3.0)])
    nested = fitted([(group, n_groups, 3.0), (inner, 2 * n_groups, 1.0)])
    wider = fitted([(group, n_groups, 3.0), (inner, 2 * n_groups, 2.0)])
    assert shared > 0.02  # the group's intercept is held up by its first stratum
    assert nested < shared / 3
    assert wider < nested


def test_newtons_fit_is_the_one_lbfgs_reaches_at_a_tight_tolerance(monkeypatch):
    import scipy.optimize

    from irsample.stats import logistic

    x, y, group, stratum = _data(4)
    factors = [(group, 12, 3.0), (group * 2 + stratum, 24, 1.0)]

    def predictor():
        coef, offsets = random_intercepts_logit(x, y, factors)
        return x @ coef + sum(g[index] for g, (index, _, _) in zip(offsets, factors))

    newton = predictor()
    monkeypatch.setattr(logistic, "_newton", lambda objective, hessian, start: (
        scipy.optimize.minimize(objective, start, jac=True, method="L-BFGS-B",
                                options={"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-10}).x))
    lbfgs = predictor()
    np.testing.assert_allclose(newton, lbfgs, atol=1e-5)


def test_a_constant_feature_leaves_the_fit_of_the_model_without_it():
    x, y, group, _ = _data(5, n=300, groups=8)
    for level in (2.0, 3.0, 5.0):
        with_constant = np.column_stack([x, np.full(len(y), np.log(level))])
        coef, g = random_intercept_logit(with_constant, y, group, 8)
        coef0, g0 = random_intercept_logit(x, y, group, 8)
        np.testing.assert_allclose(with_constant @ coef + g[group], x @ coef0 + g0[group],
                                   atol=1e-9)
        assert abs(coef[-1]) < 1.0
