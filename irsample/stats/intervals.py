"""Confidence intervals: the z of a confidence level and the normal-theory interval, with the
result class every interval of the package returns.

``z(level)`` is the standard normal quantile z_{(1 + level)/2} (1.959964 for 0.95), computed by
the standard library's :class:`statistics.NormalDist` (Wichura's AS241 algorithm), so neither
scipy nor anything else is imported for it; :func:`quantile` is Student's t where an interval
has finite degrees of freedom. :func:`normal_interval` is the Wald interval
estimate -/+ z sqrt(variance) (e.g. Cochran, Sampling Techniques, 3rd ed., §2.8). Results are
:class:`Interval` objects, like ``scipy.stats``' confidence intervals: ``low, high = interval``
unpacks them. :func:`share_standard_error` is the Monte Carlo standard error of a coverage or
another share pooled over independent simulation trials.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np


def check_level(level) -> float:
    """``level`` as a float, or ValueError when it is not a confidence level in (0, 1)."""
    if isinstance(level, bool) or not isinstance(level, (int, float, np.floating)) or not (
        0.0 < level < 1.0
    ):
        raise ValueError(f"a confidence level must be a number in (0, 1), not {level!r}")
    return float(level)


#: two numbers within this are equal up to rounding (sums of per-topic values leave ~1e-19)
ROUNDING = 1e-12


def covers(estimate, low, high, truth) -> np.ndarray:
    """Whether [low, high] holds ``truth``, elementwise; an estimate with no variance left (all
    it rests on judged, a zero-width interval) covers when it equals the truth up to rounding
    (:data:`ROUNDING`)."""
    exact = np.isclose(estimate, truth, rtol=0.0, atol=ROUNDING)
    return ((low <= truth) & (truth <= high)) | exact


def z(level: float) -> float:
    """The two-sided normal quantile of confidence ``level``: z with P(|Z| <= z) = level, i.e.
    the (1 + level)/2 quantile of N(0, 1). ``z(0.95)`` = 1.959963984540054."""
    return NormalDist().inv_cdf(0.5 + check_level(level) / 2.0)


@dataclass(frozen=True, eq=False)
class Interval:
    """A confidence interval ``[low, high]`` at confidence ``level`` around ``estimate``, found
    by ``method``; ``standard_error`` where the method has one. Fields may be arrays (one
    interval per element). ``low, high = interval`` unpacks the limits, as with scipy.stats'
    ``ConfidenceInterval``."""

    estimate: float | np.ndarray
    low: float | np.ndarray
    high: float | np.ndarray
    level: float
    method: str
    standard_error: float | np.ndarray | None = None

    def __iter__(self):
        return iter((self.low, self.high))


def quantile(level: float, df=None):
    """The two-sided quantile of confidence ``level``: z(level) where ``df`` is None or
    infinite, Student's t_{(1 + level)/2} on ``df`` degrees of freedom elsewhere (elementwise;
    scipy is imported only then)."""
    centre = z(level)
    if df is None:
        return centre
    df = np.asarray(df, dtype=np.float64)
    finite = np.isfinite(df) & (df > 0)
    if not finite.any():
        return np.full(df.shape, centre)
    from scipy.special import stdtrit

    return np.where(finite, stdtrit(np.where(finite, df, 1.0), 0.5 + check_level(level) / 2.0),
                    centre)


#: the fewest degrees of freedom :func:`satterthwaite` gives (see there)
MIN_DF = 1.0


def satterthwaite(variance, spread) -> np.ndarray:
    """Per row: Satterthwaite's degrees of freedom nu = 2 (sum_q v_q)^2 / sum_q var(v_q) of a
    sum of estimated variances v_q (Biometrics Bulletin 2, 1946; Cochran, *Sampling
    Techniques* §5.4), ``variance`` the v_q and ``spread`` their estimated variances var(v_q)
    (0 where a v_q is taken as known), rows x items; inf where nothing is estimated.

    At least :data:`MIN_DF`: with var(v_q) = 2 v_q^2 / nu_q, nu = (sum v_q)^2 / sum v_q^2 / nu_q
    >= min nu_q, and a variance estimated from a sample has one degree of freedom or more. A
    smaller nu comes from variances of rounding size (labels that agree with every judged
    document leave ppi's v_q at 1e-21, of either sign, so that their sum is nearer 0 than
    their spread): on DL 2019's planned 5% draws nu came out at 1e-17, t's quantile at 1e145
    and the interval at +-1e135. On the collections' draws with a variance of their own, nu
    was 3.5 or more (REPRODUCTION.md, "Degrees of freedom below one")."""
    variance, spread = np.asarray(variance, dtype=np.float64), np.asarray(spread, np.float64)
    total, spread = variance.sum(axis=-1), spread.sum(axis=-1)
    safe = np.where(spread > 0, spread, 1.0)
    return np.where(spread > 0, np.maximum(2.0 * total * total / safe, MIN_DF), np.inf)


def mean_degrees_of_freedom(variance, spread, evaluated) -> np.ndarray:
    """Per run: :func:`satterthwaite`'s nu for the variance of a run's mean over its
    ``evaluated`` topics (runs x topics), from the per-topic ``variance`` and its estimated
    variance ``spread`` (either flat per segment or runs x topics); inf for every run where
    ``spread`` is None (the variance taken as known)."""
    evaluated = np.asarray(evaluated, dtype=bool)
    if spread is None:
        return np.full(evaluated.shape[0], np.inf)
    shape = evaluated.shape
    return satterthwaite(np.where(evaluated, np.reshape(variance, shape), 0.0),
                         np.where(evaluated, np.reshape(spread, shape), 0.0))


def normal_interval(estimate, variance, level: float, *, method: str = "normal",
                    df=None) -> Interval:
    """The normal-theory (Wald) interval estimate -/+ z(level) sqrt(variance), elementwise;
    not clipped to any range. NaN variances give NaN limits; a variance below 0 (the rounding
    of a difference of sums, -3e-14 where the design leaves nothing to chance) counts as 0.
    With ``df`` (elementwise, inf where the variance is taken as known) the t interval
    estimate -/+ t_df sqrt(variance) where df is finite (Satterthwaite's degrees of freedom of
    an estimated variance)."""
    estimate = np.asarray(estimate, dtype=np.float64)
    se = np.sqrt(np.maximum(np.asarray(variance, dtype=np.float64), 0.0))  # NaN stays NaN
    half = quantile(level, df) * se
    return Interval(_out(estimate), _out(estimate - half), _out(estimate + half), float(level),
                    method, _out(se))


def logit_interval(estimate, variance, level: float, *, logit=True, method: str = "normal",
                   df=None) -> Interval:
    """:func:`normal_interval`, but found on the logit scale where ``logit`` (elementwise,
    broadcast) holds and the normal interval lies inside (0, 1):
    expit(logit(theta) -/+ q se / (theta (1 - theta))), q = z(level) or t_df (the delta
    method's standard error of logit(theta); the logit interval of a proportion estimated from
    a complex sample: Lumley, *Complex Surveys*, 2010, ch. 2). Its width is the normal one's to
    first order, but it leans towards 1/2: where a run mean's standard error rises with its
    estimate, as a design-based estimate of AP or nDCG does when the draw finds more relevant
    documents, the normal interval of a low draw is too short above it and misses there
    (REPRODUCTION.md, "Logit-scale intervals"). Where the normal interval reaches past 0 or 1
    the estimate is too close to the bound for the delta method on the logit scale (an AP of
    0.0003 with a standard error of 0.003 would get [0, 1]): the normal interval is kept."""
    estimate = np.asarray(estimate, dtype=np.float64)
    variance = np.maximum(np.asarray(variance, dtype=np.float64), 0.0)  # as normal_interval
    se = np.sqrt(variance)
    half = quantile(level, df) * se
    low, high = estimate - half, estimate + half
    inside = np.broadcast_to(np.asarray(logit, dtype=bool), estimate.shape) & (
        (low > 0.0) & (high < 1.0) & (variance > 0.0))
    theta = np.where(inside, estimate, 0.5)
    centre = np.log(theta / (1.0 - theta))
    spread = np.where(inside, half, 0.0) / (theta * (1.0 - theta))
    low = np.where(inside, _expit(centre - spread), low)
    high = np.where(inside, _expit(centre + spread), high)
    return Interval(_out(estimate), _out(low), _out(high), float(level), method, _out(se))


def run_mean_interval(values, variance, evaluated, level: float, *, spread=None,
                      logit=True) -> Interval:
    """Each run's mean over its ``evaluated`` topics (runs x topics) with the interval
    ``Evaluation.interval`` gives a run mean of a design-based estimator: the mean of ``values``,
    variance sum_t v_t / Q^2 over its Q topics (estimated independently), Student's t on
    :func:`mean_degrees_of_freedom` where ``spread`` (the per-topic variances' estimated
    variance) is given, z where it is None, on the logit scale where ``logit``
    (:func:`logit_interval`). ``values`` and ``variance`` may be flat per segment (run-major).
    For the recipes and benchmarks that rebuild a run mean's interval from per-topic parts."""
    evaluated = np.asarray(evaluated, dtype=bool)
    shape = evaluated.shape
    q = np.maximum(evaluated.sum(axis=1), 1)
    mean = np.where(evaluated, np.reshape(values, shape), 0.0).sum(axis=1) / q
    var = np.where(evaluated, np.reshape(variance, shape), 0.0).sum(axis=1) / (q * q)
    return logit_interval(mean, var, level, logit=logit,
                          df=mean_degrees_of_freedom(variance, spread, evaluated))


def _expit(x):
    return 1.0 / (1.0 + np.exp(-x))


def _out(a):
    """0-d arrays as Python floats (scalar in, scalar out, as scipy.stats does)."""
    return a.item() if a.ndim == 0 else a


def share_standard_error(hits, totals) -> float:
    """Monte Carlo standard error of a share pooled over independent trials, r = sum h_t /
    sum n_t, with ``hits`` h_t and ``totals`` n_t per trial (the trials are the independent
    units: a trial's runs share its draw, and miss together). The linearised variance of a
    ratio of totals over T sampled clusters (Cochran, Sampling Techniques, 3rd ed., §6.4 and
    §9A.2): se^2 = T / (T - 1) sum (h_t - r n_t)^2 / (sum n_t)^2. NaN where fewer than two
    trials count anything: one trial's share is its own r, so the sum is 0 whatever the share
    (3 covered of 6 unflagged means, all in one trial, would read 0.5 +- 0)."""
    h, n = np.asarray(hits, dtype=float), np.asarray(totals, dtype=float)
    total, trials = float(n.sum()), h.size
    if np.count_nonzero(n > 0) < 2 or total <= 0:
        return float("nan")
    r = h.sum() / total
    return float(np.sqrt(trials / (trials - 1) * np.sum((h - r * n) ** 2)) / total)


def trial_shares(trials, shares) -> dict:
    """Shares pooled over independent trials with their Monte Carlo standard errors, from one
    table of per-trial counts: ``trials`` maps a count's name to its values, one per trial (a
    DataFrame, or a group of one), and ``shares`` maps each share's name to the names of its
    (hits, totals) counts. For each: ``name`` = sum h_t / sum n_t (NaN where nothing is
    counted) and ``name_se`` (:func:`share_standard_error`)."""
    out = {}
    for name, (hits, totals) in shares.items():
        h, n = (np.asarray(trials[c], dtype=float) for c in (hits, totals))
        out[name] = float(h.sum() / n.sum()) if n.sum() > 0 else float("nan")
        out[f"{name}_se"] = share_standard_error(h, n)
    return out
