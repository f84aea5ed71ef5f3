"""Logistic regression with a random intercept (and optionally a random slope) per group,
fitted by its posterior mode.

    logit p_i = x_i . beta + g_{group(i)} [+ b_{group(i)} z_i],   g ~ N(0, sd^2), b ~ N(0, sd_b^2),

maximising sum_i [y_i eta_i - log(1 + e^eta_i)] - sum_g g^2 / (2 sd^2) [- sum_g b^2 / (2 sd_b^2)]
(a flat prior on beta) with L-BFGS (``scipy.optimize.minimize``) and the exact gradient. Groups
with few rows are shrunk towards 0. Used by the judging planner's relevance model (intercept)
and by the design-based estimators' anticipated variance (``irsample.measures.ht.anticipated``:
intercept and slope in log best rank).
"""

from __future__ import annotations

import numpy as np
import scipy.optimize
from scipy.special import expit


def random_intercept_logit(x: np.ndarray, y: np.ndarray, group: np.ndarray, n_groups: int,
                           group_sd: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(beta, g): the posterior mode for rows ``x`` (n, k), outcomes ``y`` in {0, 1} and
    ``group`` indices below ``n_groups``."""
    coef, g, _ = _posterior_mode(x, y, group, n_groups, group_sd, None, 1.0)
    return coef, g


def random_slope_logit(x: np.ndarray, y: np.ndarray, group: np.ndarray, n_groups: int,
                       slope: int, group_sd: float = 1.0, slope_sd: float = 1.0,
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(beta, g, b): as :func:`random_intercept_logit` with a random slope per group in the
    column ``slope`` of ``x``, logit p_i = x_i . beta + g_group(i) + b_group(i) x_i[slope],
    b ~ N(0, slope_sd^2) (the penalty adds sum_g b_g^2 / (2 slope_sd^2))."""
    return _posterior_mode(x, y, group, n_groups, group_sd, slope, slope_sd)


def _posterior_mode(x, y, group, n_groups, group_sd, slope, slope_sd):
    k = x.shape[1]
    pg, pb = 1.0 / group_sd ** 2, 1.0 / slope_sd ** 2
    z = x[:, slope] if slope is not None else None
    n_slopes = n_groups if slope is not None else 0

    def objective(theta):
        coef, g, b = theta[:k], theta[k:k + n_groups], theta[k + n_groups:]
        eta = x @ coef + g[group]
        if z is not None:
            eta = eta + b[group] * z
        p = expit(eta)
        # -log L = sum log(1 + e^eta) - y eta, computed stably
        nll = (float(np.sum(np.logaddexp(0.0, eta) - y * eta)) + 0.5 * pg * float(g @ g)
               + 0.5 * pb * float(b @ b))
        resid = p - y
        parts = [x.T @ resid, np.bincount(group, weights=resid, minlength=n_groups) + pg * g]
        if z is not None:
            parts.append(np.bincount(group, weights=resid * z, minlength=n_groups) + pb * b)
        return nll, np.concatenate(parts)

    start = np.zeros(k + n_groups + n_slopes)
    rate = min(max(float(np.mean(y)), 1e-3), 1 - 1e-3)
    start[0] = np.log(rate / (1 - rate))
    res = scipy.optimize.minimize(objective, start, jac=True, method="L-BFGS-B",
                                  options={"maxiter": 500})
    return res.x[:k], res.x[k:k + n_groups], res.x[k + n_groups:]
