"""Agreement between two scorings of the same systems (runs): rank correlations and errors.

Inputs are per-system scores (higher = better, i.e. ranked first), the *truth* first where the
statistic is asymmetric. Results follow ``scipy.stats``: a small frozen dataclass with the
``statistic`` and, where the method has one, the ``pvalue``.

- :func:`kendall_tau`: Kendall's tau-b, (C - D) / sqrt((n0 - n1)(n0 - n2)), n0 = n(n-1)/2, n1 and
  n2 the pairs tied in x and in y (Kendall 1945); ``scipy.stats.kendalltau``.
- :func:`tau_ap`: the AP correlation coefficient of Yilmaz, Aslam & Robertson (SIGIR 2008):
  with the systems in the order of the *estimate*,

      tau_AP = 2 / (n - 1) * sum_{i=2..n} C(i) / (i - 1)  -  1,

  C(i) the number of systems above rank i that the *truth* also ranks above the system at rank i.
  An error near the top costs more than one near the bottom; without ties it is -1 for reversed
  and 1 for equal orders, and it equals tau-a when errors are spread uniformly. The paper assumes
  no ties; here (a definition of this module, linear so it can be computed exactly):

  * a pair tied in the truth counts 1/2 in C(i) (neither right nor wrong, as in tau-a), so with
    ties in the truth the maximum is below 1;
  * ties in the estimate are broken uniformly at random and tau_AP is its *expectation* over the
    tie-breaks, computed exactly: in a tie group holding ranks a+1..a+g, a member j sits at rank
    a+1+m with probability 1/g, with m of the other g-1 members above it (a uniform subset), so
    E[C/(i-1)] = (1/g) sum_m (B_j + m W_j / (g-1)) / (a+m), B_j the credit from the a systems
    above the group and W_j that from the other members (terms with a+m = 0 are rank 1, skipped).

  ``symmetric=True`` averages tau_AP(x, y) and tau_AP(y, x), as the paper suggests when neither
  ranking is the truth.
- :func:`pearson`: Pearson's r and its t-test p-value, ``scipy.stats.pearsonr``.
- :func:`rms_error`: sqrt(mean((estimate - truth)^2)), the scale error rank statistics ignore.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.stats


@dataclass(frozen=True)
class CorrelationResult:
    """A correlation between two scorings of ``n`` systems (``pvalue`` None where the method has
    no test)."""

    statistic: float
    pvalue: float | None
    method: str
    n: int

    def __float__(self) -> float:
        return float(self.statistic)


def _pair(x, y, what: str) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(
            f"{what}: x and y must be 1-d of the same length, got {x.shape}, {y.shape}"
        )
    if len(x) < 2:
        raise ValueError(f"{what}: at least 2 systems are needed, got {len(x)}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError(f"{what}: scores must be finite")
    return x, y


def kendall_tau(x, y) -> CorrelationResult:
    """Kendall's tau-b between two scorings of the same systems (symmetric), with scipy's p-value
    (exact for small n without ties, else the normal approximation)."""
    x, y = _pair(x, y, "kendall_tau")
    res = scipy.stats.kendalltau(x, y, variant="b")
    return CorrelationResult(float(res.statistic), float(res.pvalue), "kendall tau-b", len(x))


def pearson(x, y) -> CorrelationResult:
    """Pearson's linear correlation r with its two-sided p-value (``scipy.stats.pearsonr``)."""
    x, y = _pair(x, y, "pearson")
    res = scipy.stats.pearsonr(x, y)
    return CorrelationResult(float(res.statistic), float(res.pvalue), "pearson r", len(x))


def rms_error(truth, estimate) -> float:
    """Root mean squared error sqrt(mean((estimate - truth)^2))."""
    truth, estimate = _pair(truth, estimate, "rms_error")
    return float(np.sqrt(np.mean((estimate - truth) ** 2)))


def _tau_ap_directed(truth: np.ndarray, estimate: np.ndarray) -> float:
    """tau_AP with ranks from ``estimate`` and right/wrong from ``truth`` (module docstring)."""
    n = len(truth)
    order = np.argsort(-estimate, kind="stable")
    t, e = truth[order], estimate[order]
    # credit[k, j]: what system k above system j earns j's C: 1 if the truth agrees, 1/2 if tied
    credit = (t[:, None] > t[None, :]) + 0.5 * (t[:, None] == t[None, :])
    np.fill_diagonal(credit, 0.0)
    total = 0.0
    start = 0
    while start < n:
        stop = start + 1
        while stop < n and e[stop] == e[start]:
            stop += 1
        g, a = stop - start, start
        m = np.arange(g, dtype=np.float64)
        rank_above = a + m  # systems above a member placed m-th in its group
        ok = rank_above > 0
        s0 = np.sum(1.0 / rank_above[ok])
        s1 = np.sum(m[ok] / rank_above[ok]) / (g - 1) if g > 1 else 0.0
        above = credit[:a, start:stop].sum(axis=0)  # B_j
        within = credit[start:stop, start:stop].sum(axis=0)  # W_j
        total += float(np.sum(above * s0 + within * s1)) / g
        start = stop
    return 2.0 * total / (n - 1) - 1.0


def tau_ap(truth, estimate, *, symmetric: bool = False) -> CorrelationResult:
    """AP correlation tau_AP of ``estimate``'s system ranking against ``truth``'s (Yilmaz, Aslam
    & Robertson, SIGIR 2008); ties as defined in the module docstring. O(n^2)."""
    truth, estimate = _pair(truth, estimate, "tau_ap")
    value = _tau_ap_directed(truth, estimate)
    if symmetric:
        value = 0.5 * (value + _tau_ap_directed(estimate, truth))
    method = "tau_ap (symmetric)" if symmetric else "tau_ap"
    return CorrelationResult(float(value), None, method, len(truth))
