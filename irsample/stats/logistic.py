"""Logistic regression with a random intercept per group, fitted by its posterior mode.

    logit p_i = x_i . beta + g_{group(i)},   g ~ N(0, sd^2),

maximising sum_i [y_i eta_i - log(1 + e^eta_i)] - sum_g g^2 / (2 sd^2) (a flat prior on beta)
with L-BFGS (``scipy.optimize.minimize``) and the exact gradient. Groups with few rows are
shrunk towards 0. Used by the judging planner's relevance model and by the design-based
estimators' anticipated variance (``irsample.measures.ht.anticipated``). :func:`curvature`
gives the posterior's curvature at the mode, for the delta-method variance of what the fit
predicts (the reliability rule reads the fitted relevant count's).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.optimize
from scipy.special import expit

#: the prior standard deviation of the group intercepts (the fit's and its curvature's)
GROUP_SD = 1.0


def random_intercept_logit(x: np.ndarray, y: np.ndarray, group: np.ndarray, n_groups: int,
                           group_sd: float = GROUP_SD) -> tuple[np.ndarray, np.ndarray]:
    """(beta, g): the posterior mode for rows ``x`` (n, k), outcomes ``y`` in {0, 1} and
    ``group`` indices below ``n_groups``."""
    k = x.shape[1]
    penalty = 1.0 / group_sd ** 2

    def objective(theta):
        coef, g = theta[:k], theta[k:]
        eta = x @ coef + g[group]
        p = expit(eta)
        # -log L = sum log(1 + e^eta) - y eta, computed stably
        nll = float(np.sum(np.logaddexp(0.0, eta) - y * eta)) + 0.5 * penalty * float(g @ g)
        resid = p - y
        grad = np.concatenate([x.T @ resid, np.bincount(group, weights=resid,
                                                         minlength=n_groups) + penalty * g])
        return nll, grad

    start = np.zeros(k + n_groups)
    rate = min(max(float(np.mean(y)), 1e-3), 1 - 1e-3)
    start[0] = np.log(rate / (1 - rate))
    res = scipy.optimize.minimize(objective, start, jac=True, method="L-BFGS-B",
                                  options={"maxiter": 500})
    return res.x[:k], res.x[k:]


@dataclass(frozen=True)
class Curvature:
    """The Hessian H of the negative log posterior at the mode, in the blocks of the fixed
    effects (``fixed``: sum w x x', k x k, w = p (1 - p)), fixed by group (``cross``: sum over a
    group's rows of w x, n_groups x k) and the groups (``group``: sum w + 1 / sd^2, a diagonal);
    H^-1 is the Laplace approximation to the posterior covariance of (beta, g)."""

    fixed: np.ndarray
    cross: np.ndarray
    group: np.ndarray

    def variance(self, fixed_grad: np.ndarray, group_grad: np.ndarray) -> np.ndarray:
        """Per row of the gradients of a function of (beta, g) (``fixed_grad`` (rows, k),
        ``group_grad`` (rows, n_groups)): its delta-method variance a' H^-1 a, through the
        Schur complement of the diagonal block D (``group``): with S = A - C' D^-1 C and
        u = a_fixed - C' D^-1 a_group, a' H^-1 a = u' S^-1 u + a_group' D^-1 a_group, so no
        (k + n_groups)-square matrix is formed."""
        scaled = group_grad / self.group
        schur = self.fixed - self.cross.T @ (self.cross / self.group[:, None])
        u = fixed_grad - scaled @ self.cross
        inner = np.einsum("ri,ri->r", u, np.linalg.lstsq(schur, u.T, rcond=None)[0].T)
        return np.einsum("ri,ri->r", group_grad, scaled) + inner


def curvature(x: np.ndarray, p: np.ndarray, group: np.ndarray, n_groups: int,
              group_sd: float = GROUP_SD) -> Curvature:
    """:class:`Curvature` of :func:`random_intercept_logit`'s posterior at the fitted
    probabilities ``p`` of its rows ``x`` (n, k) in ``group``."""
    w = p * (1.0 - p)
    weighted = x * w[:, None]
    cross = np.stack([np.bincount(group, weights=weighted[:, i], minlength=n_groups)
                      for i in range(x.shape[1])], axis=1)
    return Curvature(weighted.T @ x, cross,
                     np.bincount(group, weights=w, minlength=n_groups) + 1.0 / group_sd ** 2)
