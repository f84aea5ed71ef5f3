"""Active judging: inclusion probabilities from automatic labels, for the prediction-powered
estimators (Zrnic & Candes, "Active statistical inference", ICML 2024).

With labels f_d on every pooled document, ppi(M) = ht(M) + lambda (M(f) - ht_f(M))
(``irsample.measures.ppi.estimate``) has, for a total sum_F w_d y_d, the design variance of
sum_S w_d (y_d - lambda f_d) / pi_d; under a fixed-size design of n documents it is smallest
(to first order) for pi_d proportional to w_d sqrt(E[(y_d - lambda f_d)^2]) (Zrnic & Candes
§3: the residual's standard deviation times the document's weight in the estimand). Here:

- uncertainty: for a label that is a probability p_d of relevance (calibrated, e.g. the
  fusion labeller), E[(y_d - p_d)^2] = p_d (1 - p_d), so the residual's sd is
  sqrt(p_d (1 - p_d)); a hard label (a grade) says nothing of its own uncertainty, and every
  document gets the same (p = 1/2);
- influence: AP = Num / R has the linearised influence (u_d - AP r_d) / R, u_d the document's
  weight in the numerator, which depends on where the runs rank it, and r_d = y_d its weight
  in R, the same for every document. The numerator part is the AP prior averaged over the
  pool's runs (:func:`~irsample.design.sampling.importance.ap_prior`, the statAP weight, which
  also tracks nDCG's discount), scaled to mean 1 over the topic's pool; the denominator part
  is 1. So influence_d = prior_d / mean_t(prior) + 1: deep documents keep a weight, since
  every relevant document counts in R (measured: with the prior alone, the ratio estimates of
  AP on TREC-8 at 10% were biased by -0.05, their intervals covering 22%);
- safety: the active probabilities are mixed with uniform, pi_d = (1 - a) pi*_d + a n_t/N_t
  (a = ``mix``, default 0.2), so every document has pi_d >= a n_t/N_t and a badly wrong label
  model costs at most a factor 1/a in any document's weight (Zrnic & Candes mix the same way).

Per topic t, n_t = round(``fraction`` N_t) documents (or a total ``budget`` apportioned to the
topics by pool size) are drawn by randomized systematic PPS
(the fixed-size draw of :mod:`.importance`: exact first-order pi_d, sample size exactly n_t);
pi*_d = min(1, c u_d), u_d = sqrt(p_d (1 - p_d)) influence_d, c solving sum pi* = n_t. The
inclusion probabilities are recorded with the draw (design file rows; merged as prels), so ht
and ppi weigh each judged document by 1/pi_d and stay unbiased whatever the labels. The
labels used by the design must not depend on the draw (fit them before sampling, e.g. the
fusion labeller's runs-only prior, or an external judge).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ...errors import DesignError
from ..frame import Design, Sample, SamplingFrame, generator
from .cells import check_rate, sample_size
from .importance import Importance, _systematic, ap_prior, inclusion_probabilities

LABEL = "active"


@dataclass(frozen=True, eq=False)
class Active(Design):
    """Active judging of ``fraction`` of each topic's pool (module docstring); ``prob`` the
    probability of relevance of every ``tdi`` of the collection (NaN: unknown, taken as 1/2),
    ``mix`` the uniform share."""

    kind = "active"
    syntax = "active(F,mix=A[,budget=B])"
    merge_formats = Importance.merge_formats  # unequal pi: prels (or plain qrels), not strata
    merge_note = Importance.merge_note
    takes_budget = False  # its budget is part of its name: a total apportioned to the topics

    fraction: float
    prob: np.ndarray = field(repr=False)
    mix: float = 0.2
    budget: int | None = None  #: a total size, apportioned to topics by pool size

    @classmethod
    def from_spec(cls, spec: str, budget) -> Active:
        """The design a design file names (``active(0.1,mix=0.2)``): its labels are not in the
        file, only the draw (rows with their pi), so it cannot be drawn again."""
        if budget is not None:
            raise DesignError("active: the budget is written inside the parentheses "
                              "(active(F,mix=A,budget=B)), not after @")
        return recorded(f"active({spec})")

    def __post_init__(self):
        object.__setattr__(self, "fraction", check_rate(self.fraction, "active: fraction"))
        if not 0.0 < self.mix <= 1.0:
            raise DesignError(f"active: the uniform share must be in (0, 1], not {self.mix}")

    @property
    def name(self) -> str:
        tail = "" if self.budget is None else f",budget={self.budget}"
        return f"active({self.fraction:g},mix={self.mix:g}{tail})"

    def sizes(self, size: np.ndarray) -> np.ndarray:
        """n_t per topic: round(fraction N_t), or the ``budget`` apportioned to the pools'
        sizes (largest remainders), so that the total is exactly the budget."""
        if self.budget is None:
            return sample_size(self.fraction, size)
        share = self.budget * size / max(int(size.sum()), 1)
        want = np.floor(share).astype(np.int64)
        extra = int(self.budget - want.sum())
        want[np.argsort(-(share - want), kind="stable")[:extra]] += 1
        return np.minimum(want, size)

    def inclusion(self, frame: SamplingFrame) -> np.ndarray:
        """pi_d of every frame row (module docstring)."""
        p = np.full(len(frame), 0.5)
        inside = frame.tdi >= 0
        given = self.prob[frame.tdi[inside]]
        p[inside] = np.where(np.isfinite(given), np.clip(given, 0.0, 1.0), 0.5)
        size = frame.pool_size()
        prior = ap_prior(frame)
        mean = np.bincount(frame.topic, weights=prior, minlength=len(size)) / np.maximum(size, 1)
        influence = np.where(mean[frame.topic] > 0, prior / mean[frame.topic], 0.0) + 1.0
        weight = np.sqrt(p * (1.0 - p)) * influence
        want = self.sizes(size)
        pi = np.zeros(len(frame))
        order = np.argsort(frame.topic, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(size)])
        for t in np.flatnonzero(size):
            rows = order[bounds[t]:bounds[t + 1]]
            n = int(want[t])
            flat = n / len(rows)
            if np.count_nonzero(weight[rows] > 0) >= n:
                sharp = inclusion_probabilities(weight[rows], n)
            else:  # too few documents with a weight: uniform
                sharp = np.full(len(rows), flat)
            pi[rows] = (1.0 - self.mix) * sharp + self.mix * flat
        return pi

    def select(self, frame: SamplingFrame, *, rng) -> Sample:
        if len(self.prob) != frame.collection.n_tdi:
            raise DesignError("active: no label probabilities for this collection (an active "
                              "design is drawn by `irsample plan --auto-labels`; a design "
                              "file keeps only its draw)")
        pi = frame.memo(self, lambda: self.inclusion(frame))
        rng = generator(rng)
        judged = np.zeros(len(pi), dtype=bool)
        key = rng.random(len(pi))
        u = rng.random(frame.n_topics)
        rows = np.lexsort((key, frame.topic))  # topic blocks, random order inside
        offsets = np.concatenate([[0], np.cumsum(frame.pool_size())]).astype(np.int64)
        _systematic(rows, pi, offsets, u, judged)
        return Sample(judged, np.zeros(len(pi), dtype=np.int64), (LABEL,), pi.copy())


_NAME = re.compile(r"active\(([0-9.eE+-]+),mix=([0-9.eE+-]+)(?:,budget=([0-9]+))?\)")


def recorded(name: str) -> Active:
    """The :class:`Active` design a design file names (``active(0.1,mix=0.2)``): its labels are
    not in the file, only the draw (rows with their pi), so it cannot be drawn again."""
    found = _NAME.fullmatch(str(name).strip())
    if not found:
        raise DesignError(f"not an active design name: {name!r} (expected active(F,mix=A) or "
                          "active(F,mix=A,budget=B))")
    budget = None if found.group(3) is None else int(found.group(3))
    return Active(float(found.group(1)), np.zeros(0), float(found.group(2)), budget)


def active(fraction: float, prob: np.ndarray, *, mix: float = 0.2,
           budget: int | None = None) -> Active:
    """Active judging (see :class:`Active`)."""
    return Active(fraction, np.asarray(prob, dtype=np.float64), mix, budget)
