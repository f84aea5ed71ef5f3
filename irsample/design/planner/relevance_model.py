"""A model of which pool documents are relevant, from the runs and a few judgments: the
planner's picture of the population it designs a sample for (:mod:`irsample.design.planner.plan`).

Per pool row d of topic t, the probability of relevance (grade >= ``rel_level``) is a logistic
regression on where the runs put the document,

    logit p_d = a + b log(N_t q_d) + c log(best_rank_d) + g_t,

with q_d the document's AP prior averaged over the pool's runs (:func:`~.importance.ap_prior`;
N_t q_d = 1 for a document as likely as the pool's average), its best rank, and a topic offset
g_t ~ N(0, ``topic_sd``^2) (a random intercept, shrunk towards 0 for topics with few
judgments). The fit maximises the penalised log-likelihood of the judged rows: the
posterior mode under a flat prior on a and a weak N(0, :data:`SLOPE_SD`^2) one on b and c
(:mod:`irsample.stats.logistic`). Without the slopes' prior a pilot whose judged rows are
separated (none relevant below some rank, say: 7 of the 17 fits of the synthetic pool of
``tests/test_planner_shared.py``, pilots of 12-20 judged rows with 2-6 relevant) has no mode:
Newton's iterates ran to their step limit with parameters of 120-500, where the machine's BLAS
kernels set the last bits, and two of that test's twelve planned draws came out a document or
two apart on an AMD EPYC machine. With it every such fit ends with parameters of at most 11,
and on real pools it moves the fitted probabilities little (10 uniform samples a rate of 5-30%
of each depth-100 pool: at most 3.5e-3 on CACM, 1.8e-3 on Vaswani, 4.3e-5 on TREC-8, 2.0e-5 on
TREC-COVID round 5; REPRODUCTION.md, "A weak prior on the relevance model's slopes"). Graded
collections: the gain of a relevant document is modelled by the judged relevant documents'
mean grade and mean squared grade (one pair for the collection).

Judged rows keep what they are (p = 1 or 0, gain known): the model only fills in the rest.
Without both relevant and non-relevant judgments it falls back on a prior that makes the
expected number of relevant documents per topic ``prior_fraction`` of the pool, tilted by the
same features with b = 1 and c = 0 (the AP prior's own shape: the runs' consensus), so the
planner can still size a pilot.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from ...errors import DesignError
from ...stats.logistic import random_intercept_logit
from ..sampling.importance import ap_prior

#: prior standard deviation of the relevance model's slopes b and c (the intercept's is flat)
SLOPE_SD = 10.0


@dataclass(frozen=True, eq=False)
class RelevanceModel:
    """Per row of a pool: ``mean`` = E[x_d] and ``second`` = E[x_d^2] of the relevance
    variable x_d (0/1 for relevance, the grade for gains), ``prob`` = P(relevant)."""

    prob: np.ndarray
    mean: np.ndarray
    second: np.ndarray
    coefficients: tuple[float, float, float]  #: (a, b, c); nan without judgments
    judged: int  #: judged rows the fit used
    relevant: int  #: of which relevant

    def expected_relevant(self, topic: np.ndarray, n_topics: int) -> np.ndarray:
        """E[R_t]: the expected number of relevant pool documents per topic."""
        return np.bincount(topic, weights=self.prob, minlength=n_topics)


def features(units) -> np.ndarray:
    """Per row: [1, log(N_t q_d), log(best_rank_d)] (q_d floored at 1e-6 / N_t); computed once
    per pool (they depend on its runs alone, and a simulation plans every draw on one pool)."""
    memo = getattr(units, "memo", None)  # pools and frames keep it; other row sets do not
    return _features(units) if memo is None else memo("relevance features",
                                                      lambda: _features(units))


def _features(units) -> np.ndarray:
    size = np.bincount(units.topic, minlength=units.collection.n_topics)[units.topic]
    q = np.maximum(ap_prior(units) * size, 1e-6)
    rank = np.where(np.isfinite(units.best_rank), units.best_rank, 1e6)
    out = np.column_stack([np.ones(len(q)), np.log(q), np.log(rank)])
    out.flags.writeable = False  # shared by every fit on the pool
    return out


def fit_relevance(units, judged: np.ndarray, grade: np.ndarray, *, rel_level: int = 1,
                  topic_sd: float = 1.0, prior_fraction: float = 0.05,
                  gains: bool = False) -> RelevanceModel:
    """The model above for the rows of ``units`` (a Pool or SamplingFrame), from the rows
    ``judged`` (bool mask) with grades ``grade`` (read only where judged).

    ``gains``: the relevance variable is the grade (for DCG-type measures) rather than 0/1.
    """
    judged = np.asarray(judged, dtype=bool)
    grade = np.asarray(grade)
    if judged.shape != (len(units.topic),):
        raise DesignError(f"judged mask of {judged.shape} for {len(units.topic)} pool rows")
    x = features(units)
    n_topics = units.collection.n_topics
    relevant = judged & (grade >= rel_level)
    if relevant.any() and (judged & ~relevant).any():
        coef, offsets = random_intercept_logit(x[judged], relevant[judged].astype(np.float64),
                                               units.topic[judged], n_topics, topic_sd,
                                               slope_sd=SLOPE_SD)
        prob = expit(x @ coef + offsets[units.topic])
    else:  # nothing to learn from: the prior, scaled to prior_fraction of each pool
        coef = np.array([np.nan, np.nan, np.nan])
        tilt = np.exp(x[:, 1])
        share = tilt / np.bincount(units.topic, weights=tilt, minlength=n_topics)[units.topic]
        size = np.bincount(units.topic, minlength=n_topics)[units.topic]
        prob = np.minimum(1.0, share * size * prior_fraction)
    prob = np.where(judged, relevant.astype(np.float64), prob)
    if gains:
        g = grade[relevant].astype(np.float64)
        g1, g2 = (float(g.mean()), float((g * g).mean())) if len(g) else (1.0, 1.0)
        mean = np.where(judged, np.where(relevant, grade, 0.0), prob * g1)
        second = np.where(judged, mean * mean, prob * g2)
    else:
        mean, second = prob, prob.copy()
    return RelevanceModel(prob, mean.astype(np.float64), second.astype(np.float64),
                          tuple(float(v) for v in coef), int(judged.sum()), int(relevant.sum()))
