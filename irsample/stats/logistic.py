"""Logistic regression with random intercepts, fitted by its posterior mode.

    logit p_i = x_i . beta + g_{group(i)},   g ~ N(0, sd^2),

maximising sum_i [y_i eta_i - log(1 + e^eta_i)] - sum_g g^2 / (2 sd^2) (a flat prior on beta,
or, with ``slope_sd``, a N(0, slope_sd^2) prior on every coefficient but the first, the
intercept) by Newton's method on the exact gradient and Hessian. Groups with few rows are
shrunk towards 0. :func:`random_intercepts_logit` takes several factors, each with its own prior
sd (a topic, and a topic's stratum nested in it). Used by the judging planner's relevance model
(with ``slope_sd``) and by the design-based estimators' anticipated variance
(``irsample.measures.ht.anticipated``). :func:`curvature` gives the one-factor posterior's
curvature at the mode, for the delta-method variance of what the fit predicts (the
reliability rule reads the fitted relevant count's).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# scipy (0.5 s of CPU to import) is imported by the fits, not here:
# `irsample measures` and every command that only names these estimators import this module

#: the prior standard deviation of the group intercepts (the fit's and its curvature's)
GROUP_SD = 1.0


def random_intercept_logit(x: np.ndarray, y: np.ndarray, group: np.ndarray, n_groups: int,
                           group_sd: float = GROUP_SD, slope_sd: float | None = None
                           ) -> tuple[np.ndarray, np.ndarray]:
    """(beta, g): the posterior mode for rows ``x`` (n, k), outcomes ``y`` in {0, 1} and
    ``group`` indices below ``n_groups``; ``slope_sd``: as :func:`random_intercepts_logit`'s."""
    coef, (g,) = random_intercepts_logit(x, y, [(group, n_groups, group_sd)], slope_sd)
    return coef, g


def random_intercepts_logit(x: np.ndarray, y: np.ndarray,
                            factors: list[tuple[np.ndarray, int, float]],
                            slope_sd: float | None = None
                            ) -> tuple[np.ndarray, list[np.ndarray]]:
    """(beta, [g_1, ...]): the posterior mode of the model with one random intercept per level
    of each factor, logit p_i = x_i . beta + sum_f g_f[index_f(i)], g_f ~ N(0, sd_f^2)
    independently; ``factors`` lists (index per row, number of levels, sd_f). Nested factors
    (a topic and a topic's stratum, say) give a level of the inner one its own deviation from
    the outer one's, shrunk towards it by sd_f. Newton's method on the dense Hessian
    (:func:`_hessian`; k + sum of the levels square), which reaches the mode in a few steps:
    L-BFGS took hundreds of evaluations (a TREC-COVID 2strata 20% sample, two factors: 154
    parameters, 233 evaluations; 0.95 s a fit, Newton's 0.23 s, the fitted probabilities within
    5e-7 of L-BFGS run to a tight tolerance) and, with one factor at its default tolerance,
    stopped short of the mode (fitted probabilities up to 1.8e-3 from it on samples of TREC-8
    and TREC-COVID: ``benchmarks/relevance_fit.py``, REPRODUCTION.md "Trials over workers, and
    the relevance fit's mode").

    ``slope_sd``: a N(0, slope_sd^2) prior on ``x``'s coefficients but the first (the
    intercept, which stays flat). Without it, where the judged rows are separated (a rank below
    which none is relevant, say) the posterior has no mode and the iterates run to
    :func:`_newton`'s step limit, where the machine's BLAS kernels set the parameters' last bits
    (:func:`_newton`); with it, every fit whose rows hold both outcomes has one mode."""
    from scipy.special import expit

    k = x.shape[1]
    sizes = [n for _, n, _ in factors]
    starts = np.cumsum([k, *sizes])
    slopes = None if slope_sd is None else np.r_[0.0, np.full(k - 1, 1.0 / slope_sd ** 2)]
    penalty = np.concatenate([np.full(n, 1.0 / sd ** 2) for _, n, sd in factors])

    def predictor(theta):
        return x @ theta[:k] + sum(theta[a:a + n][index]
                                   for a, (index, n, _) in zip(starts, factors))

    def objective(theta):
        g = theta[k:]
        eta = predictor(theta)
        p = expit(eta)
        # -log L = sum log(1 + e^eta) - y eta, computed stably
        nll = float(np.sum(np.logaddexp(0.0, eta) - y * eta)) + 0.5 * float(g @ (penalty * g))
        resid = p - y
        grad = np.concatenate([x.T @ resid, *(np.bincount(index, weights=resid, minlength=n)
                                              for index, n, _ in factors)])
        grad[k:] += penalty * g
        if slopes is not None:
            beta = theta[:k]
            nll += 0.5 * float(beta @ (slopes * beta))
            grad[:k] += slopes * beta
        return nll, grad

    def hessian(theta):
        h = _hessian(x, expit(predictor(theta)), factors)
        if slopes is not None:
            h[np.arange(k), np.arange(k)] += slopes
        return h

    start = np.zeros(k + sum(sizes))
    rate = min(max(float(np.mean(y)), 1e-3), 1 - 1e-3)
    start[0] = np.log(rate / (1 - rate))
    theta = _newton(objective, hessian, start)
    return theta[:k], [theta[a:a + n] for a, n in zip(starts, sizes)]


def _hessian(x, p, factors) -> np.ndarray:
    """The Hessian of the negative log posterior of :func:`random_intercepts_logit` at the
    rows' probabilities ``p``: sum_i w_i u_i u_i' (w = p (1 - p), u_i the row's features and
    one indicator per factor) plus the priors' precisions on the levels' diagonal."""
    w = p * (1.0 - p)
    weighted = x * w[:, None]
    k = x.shape[1]
    sizes = [n for _, n, _ in factors]
    offsets = np.cumsum([k, *sizes])
    h = np.zeros((offsets[-1], offsets[-1]))
    h[:k, :k] = weighted.T @ x
    for (index, n, sd), a in zip(factors, offsets):
        cross, diagonal = _group_blocks(weighted, w, index, n, sd)
        h[a:a + n, :k], h[:k, a:a + n] = cross, cross.T
        h[a:a + n, a:a + n] = np.diag(diagonal)
        for (other, m, _), b in zip(factors, offsets):
            if b > a:  # two factors' levels meet where rows hold both
                joint = np.bincount(index * m + other, weights=w, minlength=n * m).reshape(n, m)
                h[a:a + n, b:b + m], h[b:b + m, a:a + n] = joint, joint.T
    return h


def _group_blocks(weighted, w, group, n_groups, group_sd) -> tuple[np.ndarray, np.ndarray]:
    """One factor's blocks of the Hessian at row weights ``w`` (``weighted`` = x w): the sum of
    w x over each level's rows (n_groups, k) and the diagonal sum w + 1 / sd^2 (n_groups)."""
    cross = np.stack([np.bincount(group, weights=weighted[:, i], minlength=n_groups)
                      for i in range(weighted.shape[1])], axis=1)
    return cross, np.bincount(group, weights=w, minlength=n_groups) + 1.0 / group_sd ** 2


def _newton(objective, hessian, theta, max_steps: int = 50, tol: float = 1e-10) -> np.ndarray:
    """Newton's method for a smooth convex ``objective`` (value, gradient) with its
    ``hessian``, halving a step until the objective does not rise; stops when the step's
    largest component is below ``tol``. Where the judged rows are separated (a rank below which
    none is relevant, say) no mode exists, and the iterates run to ``max_steps`` with fitted
    probabilities near 0 and 1 on those rows, as L-BFGS's ran to its own stopping rule; seen on
    the small synthetic pools of ``tests/test_planner_shared.py``, never in two ci-coverage
    trials of CACM and Vaswani (every fit there converged in 6-12 steps). A prior on the
    slopes (``slope_sd`` of :func:`random_intercepts_logit`) gives such fits a mode."""
    value, grad = objective(theta)
    for _ in range(max_steps):
        step = _solve(hessian(theta), grad)
        scale = 1.0
        while True:
            trial = theta - scale * step
            new_value, new_grad = objective(trial)
            if new_value <= value or scale < 1e-6:
                break
            scale /= 2.0
        theta, value, grad = trial, new_value, new_grad
        if np.abs(scale * step).max() < tol:
            break
    return theta


def _solve(h: np.ndarray, g: np.ndarray) -> np.ndarray:
    """H^-1 g by Cholesky's factor (H is positive definite wherever the judged rows vary every
    feature), else by least squares: a feature the judged rows leave constant (all at one rank,
    say) makes H singular. Where Cholesky's factor succeeds on a rounding-sized pivot instead,
    the step along the direction the data leave free is small, as the gradient along it is
    (``tests/test_stats_logistic.py``).
    Cholesky's took 0.27 ms against the least squares' SVD's 3.4 ms at 96 parameters (one BLAS
    thread), and the SVD had been most of a fit's time."""
    import scipy.linalg

    try:
        return scipy.linalg.cho_solve(scipy.linalg.cho_factor(h), g)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(h, g, rcond=None)[0]


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
    return Curvature(weighted.T @ x, *_group_blocks(weighted, w, group, n_groups, group_sd))
