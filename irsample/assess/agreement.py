"""Agreement between assessors: Cohen's kappa (two) and Krippendorff's alpha (any number), with
confidence intervals. Pure functions of the grades (NumPy only).

**Cohen's kappa** (Cohen 1960; weighted: Cohen 1968). For n items graded by two assessors into
categories, p_ij is the share of items graded i by the first and j by the second, p_i. and p_.j
the margins. With disagreement weights w_ij (nominal: 1 if i != j; linear |i - j|; quadratic
(i - j)^2 over the categories' positions), kappa = 1 - sum w_ij p_ij / sum w_ij p_i. p_.j;
unweighted, that is (p_o - p_e) / (1 - p_e), p_o = sum p_ii, p_e = sum p_i. p_.i.

Its *analytic* interval (unweighted only) is kappa +- z se, clipped to [-1, 1], with the
large-sample variance of
Fleiss, Cohen & Everitt (1969, Psychological Bulletin 72(5), eq. 13):

    var = [sum_i p_ii (1 - (p_i. + p_.i)(1 - k))^2
           + (1 - k)^2 sum_{i != j} p_ij (p_.i + p_j.)^2 - (k - p_e (1 - k))^2] / (n (1 - p_e)^2)

**Krippendorff's alpha** (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability").
Units (items) with m_u >= 2 grades are pairable; the coincidence matrix is
o_ck = sum_u (ordered pairs of grades c, k within unit u) / (m_u - 1), n_c = sum_k o_ck,
n = sum_c n_c, and alpha = 1 - (n - 1) sum_ck o_ck d_ck / sum_ck n_c n_k d_ck with the
difference d_ck: nominal [c != k]; interval (c - k)^2; ordinal
(sum_{g between c and k} n_g - (n_c + n_k) / 2)^2.

**Bootstrap** intervals (both): items resampled with replacement (seeded), the statistic
recomputed, the percentile interval of the resamples (resamples where it is undefined, e.g.
all grades equal, are left out). Undefined statistics (no variation) are NaN.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..stats.agreement import kappa_from_counts
from ..stats.intervals import z

WEIGHTS = (None, "linear", "quadratic")
LEVELS = ("nominal", "ordinal", "interval")


@dataclass(frozen=True)
class AgreementResult:
    """An agreement statistic with its interval: ``low``/``high`` at ``level`` by ``method``
    (``bootstrap`` or ``analytic``) over ``n_items`` items."""

    statistic: str
    estimate: float
    low: float
    high: float
    level: float
    method: str
    n_items: int


def _codes(values, categories=None) -> tuple[np.ndarray, np.ndarray]:
    values = np.asarray(values)
    cats = np.unique(values[~np.isnan(values.astype(float))]) if categories is None \
        else np.asarray(sorted(categories))
    return cats, np.searchsorted(cats, values)


def _disagreement(cats: np.ndarray, weights) -> np.ndarray:
    pos = np.arange(len(cats), dtype=float)
    diff = pos[:, None] - pos[None, :]
    if weights is None:
        return (diff != 0).astype(float)
    if weights == "linear":
        return np.abs(diff)
    if weights == "quadratic":
        return diff ** 2
    raise ValueError(f"weights must be one of {WEIGHTS}, not {weights!r}")


def _kappa_from_counts(counts: np.ndarray, w: np.ndarray) -> np.ndarray:
    """kappa of confusion counts (..., K, K) with disagreement weights w (K, K)."""
    n = counts.sum(axis=(-2, -1), keepdims=True)
    p = counts / np.where(n > 0, n, 1)
    expected = p.sum(-1)[..., :, None] * p.sum(-2)[..., None, :]
    de = (w * expected).sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(de > 0, 1.0 - (w * p).sum(axis=(-2, -1)) / np.where(de > 0, de, 1), np.nan)


def _pairs(a, b, categories):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("kappa needs two equally long 1-d arrays of grades")
    cats, codes = _codes(np.concatenate([a, b]), categories)
    return cats, codes[: len(a)], codes[len(a):]


def cohen_kappa(a, b, *, weights=None, categories=None) -> float:
    """Cohen's kappa of grades ``a`` and ``b`` of the same items (see the module docstring)."""
    cats, ca, cb = _pairs(a, b, categories)
    k = len(cats)
    counts = np.bincount(ca * k + cb, minlength=k * k).reshape(k, k).astype(float)
    return float(_kappa_from_counts(counts, _disagreement(cats, weights)))


def kappa_se(a, b, *, categories=None) -> float:
    """Large-sample standard error of unweighted kappa (Fleiss, Cohen & Everitt 1969, as
    :func:`irsample.stats.agreement.kappa_from_counts` computes it); NaN without items or with
    one category."""
    cats, ca, cb = _pairs(a, b, categories)
    k = len(cats)
    found = kappa_from_counts(np.bincount(ca * k + cb, minlength=k * k).reshape(k, k))
    return found.se if found.expected < 1 else float("nan")


def _coincidences(ratings, level):
    """Per pairable unit its coincidence matrix (flattened) and the categories."""
    r = np.asarray(ratings, dtype=float)
    if r.ndim != 2:
        raise ValueError("alpha needs a 2-d array: items x assessors, NaN where not graded")
    cats = np.unique(r[~np.isnan(r)])
    k = len(cats)
    units = []
    for row in r:
        vals = row[~np.isnan(row)]
        m = len(vals)
        if m < 2:
            continue
        c = np.bincount(np.searchsorted(cats, vals), minlength=k).astype(float)
        units.append((np.outer(c, c) - np.diag(c)) / (m - 1))
    flat = np.array(units).reshape(len(units), k * k) if units else np.zeros((0, k * k))
    return cats, flat


def _alpha_from_coincidences(o: np.ndarray, cats: np.ndarray, level: str) -> np.ndarray:
    """alpha of coincidence matrices (..., K, K)."""
    nc = o.sum(-1)
    n = nc.sum(-1)
    if level == "nominal":
        d = (cats[:, None] != cats[None, :]).astype(float)
    elif level == "interval":
        d = (cats[:, None] - cats[None, :]) ** 2
    elif level == "ordinal":
        cum = np.cumsum(nc, axis=-1)  # (..., K)
        lo = np.minimum.outer(np.arange(len(cats)), np.arange(len(cats)))
        hi = np.maximum.outer(np.arange(len(cats)), np.arange(len(cats)))
        between = cum[..., hi] - cum[..., lo] + nc[..., lo]  # sum_{g=lo..hi} n_g
        d = (between - (nc[..., :, None] + nc[..., None, :]) / 2) ** 2
    else:
        raise ValueError(f"level must be one of {LEVELS}, not {level!r}")
    observed = (o * d).sum(axis=(-2, -1))
    expected = (nc[..., :, None] * nc[..., None, :] * d).sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(expected > 0, 1.0 - (n - 1) * observed / np.where(expected > 0,
                                                                          expected, 1), np.nan)


def krippendorff_alpha(ratings, *, level: str = "nominal") -> float:
    """Krippendorff's alpha of ``ratings`` (items x assessors, NaN: not graded)."""
    cats, flat = _coincidences(ratings, level)
    k = len(cats)
    if len(flat) == 0:
        return float("nan")
    return float(_alpha_from_coincidences(flat.sum(0).reshape(k, k), cats, level))


def _percentile(stat: str, estimate: float, draws: np.ndarray, level: float, n: int):
    draws = draws[~np.isnan(draws)]
    if np.isnan(estimate) or len(draws) == 0:
        return AgreementResult(stat, estimate, float("nan"), float("nan"), level, "bootstrap", n)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail])
    return AgreementResult(stat, estimate, float(low), float(high), level, "bootstrap", n)


def _resample_weights(n: int, n_resamples: int, rng) -> np.ndarray:
    gen = np.random.default_rng(rng)
    return gen.multinomial(n, np.full(n, 1.0 / n), size=n_resamples).astype(float)


def kappa_interval(a, b, *, weights=None, level: float = 0.95, method: str = "bootstrap",
                   n_resamples: int = 2000, rng=0, categories=None) -> AgreementResult:
    """Cohen's kappa with a ``bootstrap`` (over items, seeded by ``rng``) or ``analytic``
    (Fleiss, Cohen & Everitt 1969; unweighted only) interval at ``level``."""
    cats, ca, cb = _pairs(a, b, categories)
    n, k = len(ca), len(cats)
    est = cohen_kappa(a, b, weights=weights, categories=categories)
    name = "kappa" if weights is None else f"kappa({weights})"
    if method == "analytic":
        if weights is not None:
            raise ValueError("the analytic interval is for unweighted kappa only")
        half = z(level) * kappa_se(a, b, categories=categories)
        low, high = max(est - half, -1.0), min(est + half, 1.0)  # kappa lies in [-1, 1]
        return AgreementResult(name, est, float(low), float(high), level, "analytic", n)
    if method != "bootstrap":
        raise ValueError(f"method must be 'bootstrap' or 'analytic', not {method!r}")
    if n == 0:
        return _percentile(name, est, np.zeros(0), level, n)
    onehot = np.zeros((n, k * k))
    onehot[np.arange(n), ca * k + cb] = 1.0
    counts = (_resample_weights(n, n_resamples, rng) @ onehot).reshape(-1, k, k)
    draws = _kappa_from_counts(counts, _disagreement(cats, weights))
    return _percentile(name, est, draws, level, n)


def alpha_interval(ratings, *, level_of_measurement: str = "nominal", level: float = 0.95,
                   n_resamples: int = 2000, rng=0) -> AgreementResult:
    """Krippendorff's alpha with a bootstrap interval over items (seeded by ``rng``)."""
    cats, flat = _coincidences(ratings, level_of_measurement)
    k, n = len(cats), len(flat)
    name = f"alpha({level_of_measurement})"
    if n == 0:
        return _percentile(name, float("nan"), np.zeros(0), level, 0)
    est = float(_alpha_from_coincidences(flat.sum(0).reshape(k, k), cats, level_of_measurement))
    o = (_resample_weights(n, n_resamples, rng) @ flat).reshape(-1, k, k)
    draws = _alpha_from_coincidences(o, cats, level_of_measurement)
    return _percentile(name, est, draws, level, n)
