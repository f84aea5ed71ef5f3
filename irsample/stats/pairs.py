"""Classification of run pairs by their significance decisions against a gold standard.

Voorhees, "The effect of sampling strategy on inferred measures", SIGIR 2014 (paper 002 here,
after Bompada et al., SIGIR 2007): the gold standard is the set of significantly different run
pairs under the complete judgments (paired t-test, alpha = 0.05); a test collection built from
fewer judgments is judged by how well the same test on its scores reproduces that set. Each
pair falls in one of five classes:

- true positive: significantly different in both, in the same direction;
- true negative: not significantly different in either;
- miss: significantly different in the gold standard only;
- false alarm: significantly different in the estimate only;
- inversion: significantly different in both, in opposite directions.

Accuracy is "the number of correct classifications over the sum of correct and incorrect
classifications where inversions are counted as both a false alarm and a miss":

    accuracy = (TP + TN) / (TP + TN + miss + false alarm + 2 inversion).

A pair is significant when its p-value is below alpha (p < alpha); its direction is the sign
of the mean difference first - second.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .tests import all_pairs, pairwise

TRUE_POSITIVE, TRUE_NEGATIVE, MISS, FALSE_ALARM, INVERSION = range(5)
CLASSES = ("true_positive", "true_negative", "miss", "false_alarm", "inversion")


@dataclass(frozen=True, eq=False)
class PairDecisions:
    """Per pair ``(first[k], second[k])``: its p-value, whether it is significant at ``alpha``
    and the sign (-1, 0, +1) of the mean difference first - second."""

    first: np.ndarray
    second: np.ndarray
    pvalue: np.ndarray
    significant: np.ndarray
    sign: np.ndarray
    alpha: float
    method: str

    def __len__(self) -> int:
        return len(self.first)


def decisions(
    values, *, alpha: float = 0.05, test: str = "t", pairs: tuple | None = None, **options
) -> PairDecisions:
    """Significance decisions for every pair of rows of ``values[run, topic]`` (default all
    pairs i < j): ``test`` and ``options`` as in :func:`irsample.stats.tests.pairwise`. A pair
    whose p-value is NaN (e.g. identical runs) is not significant."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), not {alpha!r}")
    res = pairwise(values, test=test, pairs=pairs, **options)
    with np.errstate(invalid="ignore"):
        significant = np.asarray(res.pvalue < alpha)
    sign = np.sign(np.nan_to_num(np.asarray(res.estimate, dtype=np.float64))).astype(np.int8)
    return PairDecisions(res.first, res.second, res.pvalue, significant, sign, alpha, res.method)


def classify(truth_significant, truth_sign, estimate_significant, estimate_sign) -> np.ndarray:
    """Class code of every pair (``TRUE_POSITIVE`` ... ``INVERSION``; names in ``CLASSES``)
    from the gold standard's and the estimate's significance flags and directions."""
    ts = np.asarray(truth_significant, dtype=bool)
    es = np.asarray(estimate_significant, dtype=bool)
    same = np.sign(np.asarray(truth_sign)) == np.sign(np.asarray(estimate_sign))
    codes = np.full(np.broadcast(ts, es).shape, TRUE_NEGATIVE, dtype=np.int8)
    codes[ts & ~es] = MISS
    codes[~ts & es] = FALSE_ALARM
    both = ts & es
    codes[both & same] = TRUE_POSITIVE
    codes[both & ~same] = INVERSION
    return codes


def classify_decisions(truth: PairDecisions, estimate: PairDecisions) -> np.ndarray:
    """:func:`classify` of two decision sets over the same pairs."""
    if not (np.array_equal(truth.first, estimate.first)
            and np.array_equal(truth.second, estimate.second)):
        raise ValueError("the two decision sets are over different pairs")
    return classify(truth.significant, truth.sign, estimate.significant, estimate.sign)


@dataclass(frozen=True)
class PairCounts:
    """Pairs per class, with Voorhees's accuracy (see the module docstring)."""

    true_positive: int
    true_negative: int
    miss: int
    false_alarm: int
    inversion: int

    @classmethod
    def of(cls, codes) -> PairCounts:
        counts = np.bincount(np.asarray(codes, dtype=np.int64).ravel(), minlength=len(CLASSES))
        return cls(*(int(c) for c in counts[: len(CLASSES)]))

    @property
    def total(self) -> int:
        return (self.true_positive + self.true_negative + self.miss + self.false_alarm
                + self.inversion)

    @property
    def accuracy(self) -> float:
        """(TP + TN) / (TP + TN + miss + false alarm + 2 inversion); NaN without pairs."""
        correct = self.true_positive + self.true_negative
        wrong = self.miss + self.false_alarm + 2 * self.inversion
        return correct / (correct + wrong) if correct + wrong else float("nan")

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in CLASSES} | {"accuracy": self.accuracy}


def pair_accuracy(truth_values, estimate_values, *, alpha: float = 0.05, test: str = "t",
                  **options) -> PairCounts:
    """Classify every pair of runs (rows of both ``[run, topic]`` arrays) and count the
    classes: the estimate's significant pairs against the truth's (paper 002's measure)."""
    truth_values = np.asarray(truth_values, dtype=np.float64)
    estimate_values = np.asarray(estimate_values, dtype=np.float64)
    if truth_values.shape != estimate_values.shape:
        raise ValueError(f"shapes differ: {truth_values.shape} and {estimate_values.shape}")
    pairs = all_pairs(len(truth_values))
    truth = decisions(truth_values, alpha=alpha, test=test, pairs=pairs, **options)
    estimate = decisions(estimate_values, alpha=alpha, test=test, pairs=pairs, **options)
    return PairCounts.of(classify_decisions(truth, estimate))
