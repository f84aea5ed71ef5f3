"""Paired significance tests, bootstrap intervals, Kolmogorov-Smirnov and multiple-comparison
corrections, vectorised over many run pairs at once.

Two runs are compared over the n topics both were evaluated on through the per-topic
differences d_q = x_q - y_q (Smucker, Allan & Carterette, "A comparison of statistical
significance tests for information retrieval evaluation", CIKM 2007; Sakai, *Statistical
Reform in Information Retrieval?*, SIGIR Forum 2014):

- paired t-test (Student 1908): t = dbar / (s_d / sqrt(n)), s_d^2 = sum_q (d_q - dbar)^2 / (n-1),
  n - 1 degrees of freedom; two-sided p = 2 P(T_{n-1} >= |t|). Equals ``scipy.stats.ttest_rel``
  (t = +-inf when every d_q equals a non-zero dbar, NaN when all d_q are 0).
- paired randomization (sign-flip) test (Fisher 1935): under H0 each d_q is symmetric about 0,
  so all 2^n sign assignments of the d_q are equally likely; the statistic is dbar and p the
  share of sign assignments whose mean is at least as extreme. Exact (all 2^n) when
  2^n <= ``n_resamples``; otherwise ``n_resamples`` seeded Monte Carlo assignments, with
  p = (count + 1) / (B + 1) (Phipson & Smyth, "Permutation p-values should never be zero",
  2010). Conventions are ``scipy.stats.permutation_test``'s (``permutation_type="samples"``):
  two-sided p = 2 min(p_less, p_greater) clipped to 1, ties within 100 machine epsilons.

Missing values: a topic where either value is NaN is left out of that pair (per pair n); in
the sign-flip test it enters as d_q = 0, which no sign flip changes, so exact p-values stay exact.
:func:`pairwise` runs a test over all pairs i < j of the rows of ``values[run, topic]`` (TREC-8:
129 runs, 8,256 pairs; the t-test's moments in one compiled pass over the pairs, ~1 ms), the
randomization test in chunks of pairs with one set of sign flips for every pair.

Also: bootstrap confidence intervals of a mean (percentile, basic or BCa; Efron & Tibshirani,
*An Introduction to the Bootstrap*, 1993, ch. 13-14, via ``scipy.stats.bootstrap``), the
Kolmogorov-Smirnov test (``scipy.stats.kstest``), Holm's step-down adjustment (Holm, Scand. J.
Statist. 1979) and Benjamini-Hochberg's (JRSS B 1995, ``scipy.stats.false_discovery_control``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit
from scipy import special, stats

from .intervals import Interval
from .random import generator

ALTERNATIVES = ("two-sided", "less", "greater")
_TIE = 100 * np.finfo(np.float64).eps  #: scipy.stats.permutation_test's relative tie tolerance
_MAX_EXACT = 24  #: 2^24 sign assignments: the largest exact enumeration allowed
_CHUNK = 1 << 22  #: floats per block of pairs (x resamples for the randomization test)


@dataclass(frozen=True, eq=False)
class TestResult:
    """A test's ``statistic`` and ``pvalue`` (arrays when vectorised); ``estimate`` is the mean
    difference for paired tests, ``n`` the number of pairs of observations used, ``df`` the
    degrees of freedom (t-test), ``n_resamples`` the sign assignments (2^n when exact)."""

    statistic: float | np.ndarray
    pvalue: float | np.ndarray
    method: str
    alternative: str = "two-sided"
    estimate: float | np.ndarray | None = None
    n: int | np.ndarray | None = None
    df: float | np.ndarray | None = None
    n_resamples: int | None = None


@dataclass(frozen=True, eq=False)
class PairwiseResult(TestResult):
    """A test of every pair ``(first[k], second[k])`` of rows; ``estimate`` is row first minus
    row second's mean difference."""

    first: np.ndarray | None = None
    second: np.ndarray | None = None


def _check_alternative(alternative: str) -> None:
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, not {alternative!r}")


def _out(a):
    """0-d arrays as Python floats/ints (scalar in, scalar out, as scipy.stats does)."""
    a = np.asarray(a)
    return a.item() if a.ndim == 0 else a


def _differences(x, y, axis: int) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    return np.moveaxis(x - y, axis, -1)


def all_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(first, second): every pair i < j of ``n`` items, row-major (0-1, 0-2, ..., 1-2, ...)."""
    return np.triu_indices(n, 1)


# ---- paired t-test ----------------------------------------------------------------------------
def _t_from_differences(d: np.ndarray, alternative: str):
    """(t, p, mean, n, df) of paired t-tests on the last axis of ``d`` (NaN: left out)."""
    valid = ~np.isnan(d)
    n = valid.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(valid, d, 0.0).sum(axis=-1) / n
        dev = np.where(valid, d - mean[..., None], 0.0)
        var = (dev * dev).sum(axis=-1) / (n - 1)
    return _t_test(mean, var, n, alternative)


@njit(cache=True, nogil=True)
def _pair_moments(values, first, second):
    """Per pair k: mean and sample variance (two passes) of values[first[k]] -
    values[second[k]] over the topics where both are not NaN, and their number."""
    n_pairs, n_topics = first.shape[0], values.shape[1]
    mean = np.empty(n_pairs)
    var = np.empty(n_pairs)
    count = np.zeros(n_pairs, dtype=np.int64)
    for k in range(n_pairs):
        x, y = values[first[k]], values[second[k]]
        total = 0.0
        n = 0
        for q in range(n_topics):
            d = x[q] - y[q]
            if not np.isnan(d):
                total += d
                n += 1
        m = total / n if n > 0 else np.nan
        squares = 0.0
        for q in range(n_topics):
            d = x[q] - y[q]
            if not np.isnan(d):
                squares += (d - m) * (d - m)
        mean[k] = m
        var[k] = squares / (n - 1) if n > 1 else np.nan
        count[k] = n
    return mean, var, count


def _t_test(mean, var, n, alternative: str):
    """(t, p, mean, n, df) from the mean and sample variance of n differences."""
    with np.errstate(invalid="ignore", divide="ignore"):
        t = mean / np.sqrt(var / n)
    df = np.where(n > 1, n - 1.0, np.nan)
    if alternative == "two-sided":
        p = 2.0 * special.stdtr(df, -np.abs(t))
    elif alternative == "less":
        p = special.stdtr(df, t)
    else:
        p = special.stdtr(df, -t)
    return t, np.minimum(p, 1.0), mean, n, df


def paired_t(x, y, *, axis: int = -1, alternative: str = "two-sided") -> TestResult:
    """Paired t-test of ``x`` against ``y`` along ``axis`` (see the module docstring).

    ``alternative``: ``two-sided``, ``less`` (mean of x - y < 0) or ``greater``. Vectorised over
    the other axes; topics where x or y is NaN are left out of that comparison.
    """
    _check_alternative(alternative)
    t, p, mean, n, df = _t_from_differences(_differences(x, y, axis), alternative)
    return TestResult(_out(t), _out(p), "paired t-test", alternative, _out(mean), _out(n), _out(df))


# ---- paired randomization (sign-flip) test ---------------------------------------------------
def sign_flips(n: int, *, n_resamples: int = 9999, exact: bool | None = None, rng=None):
    """(signs, exact): a (B, n) matrix of +-1 sign assignments, all 2^n of them when exact
    (default: when 2^n <= ``n_resamples``), else ``n_resamples`` rows drawn with ``rng``."""
    if exact is None:
        exact = n <= _MAX_EXACT and 2**n <= n_resamples
    if exact:
        if n > _MAX_EXACT:
            raise ValueError(
                f"exact enumeration of 2^{n} sign flips is too large (n <= {_MAX_EXACT})")
        bits = (np.arange(2**n, dtype=np.int64)[:, None] >> np.arange(n)) & 1
        return (1.0 - 2.0 * bits), True
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, not {n_resamples!r}")
    draws = generator(rng).integers(0, 2, size=(n_resamples, n), dtype=np.int8)
    return (1.0 - 2.0 * draws), False


def _flip_from_differences(d: np.ndarray, signs: np.ndarray, exact: bool, alternative: str):
    """(mean, p, n) of sign-flip tests of the rows of 2-D ``d`` with the given sign matrix."""
    valid = ~np.isnan(d)
    n = valid.sum(axis=-1)
    d0 = np.where(valid, d, 0.0)
    observed = d0.sum(axis=-1)
    null = d0 @ signs.T  # (rows, B) sums under each sign assignment
    gamma = _TIE * np.abs(observed)[:, None]
    adjust = 0 if exact else 1
    resamples = signs.shape[0]
    below = np.count_nonzero(null <= observed[:, None] + gamma, axis=1)
    above = np.count_nonzero(null >= observed[:, None] - gamma, axis=1)
    less = (below + adjust) / (resamples + adjust)
    greater = (above + adjust) / (resamples + adjust)
    p = {"less": less, "greater": greater}.get(alternative)
    if p is None:
        p = np.minimum(less, greater) * 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = observed / n
    return mean, np.where(n > 0, np.clip(p, 0.0, 1.0), np.nan), n


def paired_randomization(
    x, y, *, axis: int = -1, alternative: str = "two-sided", n_resamples: int = 9999,
    exact: bool | None = None, rng=None,
) -> TestResult:
    """Paired randomization (sign-flip) test of the mean difference of ``x`` and ``y`` along
    ``axis`` (see the module docstring). ``rng`` (Generator, int or SeedSequence) is required
    unless the test is exact; all rows share one set of sign flips."""
    _check_alternative(alternative)
    d = _differences(x, y, axis)
    shape = d.shape[:-1]
    d2 = d.reshape(-1, d.shape[-1])
    signs, exact = sign_flips(d2.shape[1], n_resamples=n_resamples, exact=exact, rng=rng)
    mean, p, n = _by_blocks(
        len(d2), len(signs),
        lambda rows: _flip_from_differences(d2[rows], signs, exact, alternative),
    )
    method = "paired randomization test (" + ("exact" if exact else "Monte Carlo") + ")"
    return TestResult(
        _out(mean.reshape(shape)), _out(p.reshape(shape)), method, alternative,
        _out(mean.reshape(shape)), _out(n.reshape(shape)), None, len(signs),
    )


# ---- all pairs -------------------------------------------------------------------------------
def pairwise(
    values, *, test: str = "t", pairs: tuple | None = None, alternative: str = "two-sided",
    n_resamples: int = 9999, exact: bool | None = None, rng=None,
) -> PairwiseResult:
    """Test every pair of rows of ``values[run, topic]``: ``test`` is ``"t"`` (paired t-test)
    or ``"randomization"`` (sign flips; ``n_resamples``, ``exact``, ``rng`` as in
    :func:`paired_randomization`). ``pairs`` = (first, second) index arrays, default
    :func:`all_pairs`. Differences are row first minus row second."""
    _check_alternative(alternative)
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2:
        raise ValueError(f"values must be a (runs, topics) array, not of shape {values.shape}")
    first, second = all_pairs(len(values)) if pairs is None else (np.asarray(p) for p in pairs)
    first, second = np.asarray(first, dtype=np.int64), np.asarray(second, dtype=np.int64)
    if first.shape != second.shape or first.ndim != 1:
        raise ValueError("pairs must be two index arrays of the same length")
    n_topics = values.shape[1]
    if test == "t":
        if len(first) and (first.min() < 0 or max(first.max(), second.max()) >= len(values)
                           or second.min() < 0):
            raise IndexError("pairs index rows outside values")
        mean, var, n = _pair_moments(np.ascontiguousarray(values), first, second)
        t, p, mean, n, df = _t_test(mean, var, n, alternative)
        return PairwiseResult(t, p, "paired t-test", alternative, mean, n, df, None, first, second)
    if test == "randomization":
        signs, exact = sign_flips(n_topics, n_resamples=n_resamples, exact=exact, rng=rng)

        def one(a):
            d = values[first[a]] - values[second[a]]
            return _flip_from_differences(d, signs, exact, alternative)

        mean, p, n = _by_blocks(len(first), len(signs), one)
        method = "paired randomization test (" + ("exact" if exact else "Monte Carlo") + ")"
        return PairwiseResult(
            mean, p, method, alternative, mean, n, None, len(signs), first, second)
    raise ValueError(f"test must be 't' or 'randomization', not {test!r}")


def _by_blocks(n_rows: int, width: int, one):
    """``one(rows)`` over blocks of rows (a slice each) of about ``_CHUNK`` / ``width`` rows,
    its output arrays concatenated: bounded memory for many pairs x topics x resamples."""
    step = max(1, _CHUNK // max(1, width))
    parts = [one(slice(a, a + step)) for a in range(0, n_rows, step)]
    if not parts:
        parts = [one(slice(0, 0))]
    return tuple(np.concatenate(cols) for cols in zip(*parts))


# ---- bootstrap, Kolmogorov-Smirnov ------------------------------------------------------------
def bootstrap_mean(
    x, *, level: float = 0.95, method: str = "BCa", n_resamples: int = 9999, axis: int = -1, rng,
) -> Interval:
    """Bootstrap confidence interval of the mean of ``x`` along ``axis``: ``method`` is
    ``percentile`` (quantiles of the resampled means), ``basic`` or ``BCa`` (bias-corrected and
    accelerated; Efron & Tibshirani 1993, §14.3), by ``scipy.stats.bootstrap`` with the seeded
    ``rng``. ``standard_error`` is the standard deviation of the resampled means."""
    x = np.asarray(x, dtype=np.float64)
    res = stats.bootstrap(
        (x,), np.mean, n_resamples=n_resamples, axis=axis, confidence_level=level,
        method=method, vectorized=True, rng=generator(rng),
    )
    ci = res.confidence_interval
    return Interval(
        _out(np.mean(x, axis=axis)), _out(ci.low), _out(ci.high), level, f"bootstrap {method}",
        _out(res.standard_error),
    )


def ks_test(x, cdf="norm", *, args: tuple = (), alternative: str = "two-sided",
            method: str = "auto") -> TestResult:
    """Kolmogorov-Smirnov test of the sample ``x`` against a distribution (``cdf``: a
    scipy.stats name such as ``"norm"`` with ``args``, or a callable CDF) or, when ``cdf`` is
    a second sample, the two-sample test (``scipy.stats.kstest``). The statistic is
    D = sup |F_n - F|."""
    _check_alternative(alternative)
    x = np.asarray(x, dtype=np.float64)
    res = stats.kstest(x, cdf, args=args, alternative=alternative, method=method)
    two = not isinstance(cdf, str) and not callable(cdf)
    return TestResult(
        _out(res.statistic), _out(res.pvalue),
        "two-sample Kolmogorov-Smirnov" if two else "one-sample Kolmogorov-Smirnov",
        alternative, None, len(x),
    )


# ---- multiple comparisons --------------------------------------------------------------------
def holm(pvalues, *, axis: int = -1) -> np.ndarray:
    """Holm's step-down adjusted p-values: for p_(1) <= ... <= p_(m),
    p~_(k) = max_{i <= k} min(1, (m - i + 1) p_(i)); rejecting p~ <= alpha controls the
    family-wise error rate at alpha (Holm 1979). NaN p-values stay NaN and do not count in m."""
    p = np.moveaxis(np.asarray(pvalues, dtype=np.float64), axis, -1)
    _check_pvalues(p)
    order = np.argsort(p, axis=-1, kind="stable")  # NaN last
    ps = np.take_along_axis(p, order, axis=-1)
    m = np.sum(~np.isnan(p), axis=-1, keepdims=True)
    k = np.arange(1, p.shape[-1] + 1)
    adjusted = np.fmax.accumulate(np.minimum(1.0, (m - k + 1) * ps), axis=-1)
    adjusted = np.where(np.isnan(ps), np.nan, adjusted)
    out = np.empty_like(p)
    np.put_along_axis(out, order, adjusted, axis=-1)
    return np.moveaxis(out, -1, axis)


def benjamini_hochberg(pvalues, *, axis: int = -1) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values, p~_(k) = min_{i >= k} min(1, m p_(i) / i);
    rejecting p~ <= q controls the false discovery rate at q for independent (or positively
    dependent) tests (Benjamini & Hochberg 1995; ``scipy.stats.false_discovery_control``).
    NaN p-values stay NaN and do not count in m."""
    p = np.moveaxis(np.asarray(pvalues, dtype=np.float64), axis, -1)
    _check_pvalues(p)
    nan = np.isnan(p)
    if not nan.any():
        out = stats.false_discovery_control(p, axis=-1, method="bh") if p.size else p.copy()
        return np.moveaxis(np.asarray(out, dtype=np.float64), -1, axis)
    out = np.full_like(p, np.nan)
    width = p.shape[-1]
    flat, flat_nan, flat_out = p.reshape(-1, width), nan.reshape(-1, width), out.reshape(-1, width)
    for row in range(len(flat)):
        keep = ~flat_nan[row]
        if keep.any():
            flat_out[row, keep] = stats.false_discovery_control(flat[row, keep], method="bh")
    return np.moveaxis(out, -1, axis)


def _check_pvalues(p: np.ndarray) -> None:
    if np.any((p < 0) | (p > 1)):
        raise ValueError("p-values must lie in [0, 1] (or be NaN)")
