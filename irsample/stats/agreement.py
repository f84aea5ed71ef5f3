"""Agreement between two labellings of the same items: Cohen's kappa with its interval, and the
confusion by grade with intervals per row.

Cohen's kappa (Cohen 1960): kappa = (p_o - p_e) / (1 - p_e), with p_o the observed agreement
sum_i p_ii and p_e = sum_i p_i. p_.i the agreement expected from the two marginals. Its
large-sample variance is Fleiss, Cohen & Everitt's (Psychological Bulletin 72(5), 1969, eq. 13):

    var = [ sum_i p_ii (1 - (p_i. + p_.i)(1 - kappa))^2
            + (1 - kappa)^2 sum_{i != j} p_ij (p_.i + p_j.)^2
            - (kappa - p_e (1 - kappa))^2 ] / (n (1 - p_e)^2),

and the interval is kappa +- z sqrt(var). The confusion matrix counts[t, l] counts items of
reference grade t given label l; each row's share of labels that agree (l = t) gets a Wilson
score interval (Wilson 1927). Pure numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .intervals import z as normal_quantile


@dataclass(frozen=True)
class Kappa:
    kappa: float
    se: float
    low: float
    high: float
    observed: float  #: p_o
    expected: float  #: p_e
    n: int


def confusion(reference, labels, grades=None) -> tuple[np.ndarray, np.ndarray]:
    """The grades (sorted union, or ``grades``) and counts[i, j] of items with reference grade
    ``grades[i]`` and label ``grades[j]``."""
    reference = np.asarray(reference).astype(np.int64)
    labels = np.asarray(labels).astype(np.int64)
    if reference.shape != labels.shape:
        raise ValueError(f"{reference.shape} reference grades for {labels.shape} labels")
    if grades is None:
        grades = np.union1d(reference, labels)
    grades = np.asarray(grades, dtype=np.int64)
    k = len(grades)
    r = np.searchsorted(grades, reference)
    c = np.searchsorted(grades, labels)
    for idx, v in ((r, reference), (c, labels)):
        bad = (idx >= k) | (grades[np.minimum(idx, k - 1)] != v)
        if bad.any():
            raise ValueError(f"grade {int(v[bad][0])} not among {list(grades)}")
    counts = np.bincount(r * k + c, minlength=k * k).reshape(k, k)
    return grades, counts


def cohen_kappa(reference, labels, *, level: float = 0.95) -> Kappa:
    """Cohen's kappa of ``labels`` against ``reference`` (grades) with its interval."""
    _, counts = confusion(reference, labels)
    return kappa_from_counts(counts, level=level)


def kappa_from_counts(counts, *, level: float = 0.95) -> Kappa:
    counts = np.asarray(counts, dtype=np.float64)
    n = counts.sum()
    if n == 0:
        nan = float("nan")
        return Kappa(nan, nan, nan, nan, nan, nan, 0)
    p = counts / n
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    po = float(np.trace(p))
    pe = float(rows @ cols)
    if pe >= 1.0:  # one category only: agreement is perfect and uninformative
        return Kappa(1.0 if po == 1.0 else 0.0, 0.0, float("nan"), float("nan"), po, pe, int(n))
    kappa = (po - pe) / (1.0 - pe)
    diag = np.diag(p)
    a = float(np.sum(diag * (1.0 - (rows + cols) * (1.0 - kappa)) ** 2))
    off = p.copy()
    np.fill_diagonal(off, 0.0)
    b = (1.0 - kappa) ** 2 * float(np.sum(off * (cols[:, None] + rows[None, :]) ** 2))
    c = (kappa - pe * (1.0 - kappa)) ** 2
    var = max(a + b - c, 0.0) / (n * (1.0 - pe) ** 2)
    se = float(np.sqrt(var))
    z = normal_quantile(level)
    return Kappa(float(kappa), se, float(kappa - z * se), float(kappa + z * se), po, pe, int(n))


def wilson(successes, trials, *, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of a proportion (NaN for 0 trials)."""
    x = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    z = normal_quantile(level)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = x / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return np.where(n > 0, centre - half, np.nan), np.where(n > 0, centre + half, np.nan)


def confusion_by_grade(reference, labels, *, level: float = 0.95):
    """Per reference grade: the grades, counts matrix, and the share of items whose label
    equals the grade with its Wilson interval (arrays over grades)."""
    grades, counts = confusion(reference, labels)
    total = counts.sum(axis=1)
    agree = np.diag(counts)
    low, high = wilson(agree, total, level=level)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(total > 0, agree / np.maximum(total, 1), np.nan)
    return grades, counts, share, low, high
