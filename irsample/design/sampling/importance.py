"""Importance sampling of the pool with the AP prior, for statAP (paper 003).

Aslam, Pavlu & Yilmaz, "A statistical method for system evaluation using incomplete
judgments", SIGIR 2006, sample documents with probability proportional to a prior that puts
weight where average precision does. The **AP prior** of a ranking of length Z gives rank r

    w(r) = (1 / 2Z) * (1 + 1/r + 1/(r+1) + ... + 1/Z) = (1 + H_Z - H_{r-1}) / (2Z),

(H_n the n-th harmonic number; Aslam, Pavlu & Savell, CIKM 2003), which sums to 1 over the
ranking: sum_r (H_Z - H_{r-1}) = sum_i i * (1/i) = Z. A document's weight is the average of its
prior over the pool's runs (rank 0 weight where a run did not retrieve it), each ranking cut at
the pool depth (Z = min(depth, length)); averaged over the runs that rank anything for the
topic, each topic's weights sum to 1. The runs are summed in the order of their names, so that
the weights, and the probabilities, do not depend on the order the run files were given in.

Sampling without replacement with inclusion probabilities pi_i = min(1, c w_i) (the take-all
documents with c w_i >= 1 are judged with certainty; c solves sum pi_i = n by the usual
iteration over take-alls; Särndal, Swensson & Wretman, *Model Assisted Survey Sampling*, §3.6),
drawn by **randomized systematic PPS** (Madow 1949; Goodman & Kish 1950): the rows are put in a
random order, their pi laid end to end on [0, n), and the rows whose interval contains one of
u, u+1, ..., u+n-1 (u ~ U[0,1)) are selected. Each row is then selected with probability exactly
pi_i (its interval, of length pi_i <= 1, holds one of the points with that probability), and the
sample size is exactly n. statAP (:mod:`irsample.measures.incomplete.statap`) needs only these
first-order pi: its estimates are Horvitz-Thompson ratios sum(x/pi) / sum(1/pi).

A floor (``importance(F,floor=A)``, a in [0, 1)): every weight is raised to a times the
topic's uniform weight at least, w'_i = max(w_i, a / N_t), before the probabilities are set,
pi_i = min(1, c w'_i) as above. The weights of a topic then sum to at most 1 + a, so c >= n_t /
(1 + a) and every document's pi is at least a n_t / ((1 + a) N_t): no judged document weighs
more than about N_t / (a n_t) (defensive importance sampling: Hesterberg, "Weighted average
importance sampling and defensive mixture distributions", Technometrics 37, 1995). Only the
documents below the floor gain; the others keep their proportions, and most of the top
documents statAP judges with certainty stay certain (TREC-8 at 20%: 2,822 of 3,134). Why: with
the prior alone the deep documents' pi fall to a few thousandths (TREC-8 at 10%: 0.0027), and
on TREC-8's depth-100 pool a quarter of the design variance of the HT count of relevant
documents sits on 92 relevant documents (2% of R) of which the sample expects to catch one,
over all 50 topics; half on 344, 7.6 expected (``benchmarks/importance_tail.py``). Whether
those few are caught moves the estimate and its variance together, which no estimate of the
variance from the sample can undo, and the intervals of ht and ppi covered 0.91-0.93 with
nothing flagged at 10%; with a = 0.1 0.938-0.967 at 10-20% (two seeds at 20%; TREC-COVID
round 5 0.930-0.968; the recipes' 100 trials), at about statAP's RMS error. A mixture,
w' = (1 - a) w + a / N_t (or pi = (1 - a) pi* + a n_t / N_t, as the active design mixes), lifts
the tail as much but takes a share from every other document: it moved a third of the certain
documents into the draw at 20%, where ppi(nDCG)'s intervals then covered 0.924-0.934 (two seeds)
against statAP's 0.937-0.961. REPRODUCTION.md, "A floor for importance samples". The default,
a = 0, is statAP's design as published.

Sample sizes: ``fraction`` of every topic's pool (n_t = max(1, round(fraction N_t)), one
systematic pass per topic); a per-topic budget n_t = B; a total budget B: one c for all topics
(the weights of every topic sum to 1, so topics get about B/T each, less where their pool is
exhausted) and one systematic pass over all topics, so the total is exactly B. Pool rows with no
prior weight (best rank beyond the pool's runs: in a frame, documents those runs never
retrieved) are outside the design.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ...errors import DesignError
from ..frame import Sample, SamplingFrame, generator
from .budget import budget_suffix
from .cells import FractionDesign, sample_size, spec_number

#: the floor irsample suggests for samples whose intervals are to be read (module docstring),
#: and the ``defensive`` design of the recipes
DEFENSIVE_FLOOR = 0.1
#: a document is sampled thinly when its pi is below this share of its topic's rate n_t / N_t:
#: a / (1 + a) at a = :data:`DEFENSIVE_FLOOR` (1/11), the least the floored design gives
THIN_SHARE = DEFENSIVE_FLOOR / (1.0 + DEFENSIVE_FLOOR)
#: what was measured of such samples (REPRODUCTION.md, "A floor for importance samples"), as
#: the notes of ``sample``, ``eval --ci`` and ``compare`` say it
THIN_EVIDENCE = ("on TREC-8 at 10% the intervals of ht and ppi from statAP's design covered "
                 "0.91-0.93 of the truths")


@njit(cache=True, nogil=True)
def _ap_prior(rank_offsets, rank_tdi, n_topics, runs, depth, n_tdi):
    """Average AP prior of every ``tdi`` over the runs (per topic, over the runs ranking any
    document for it)."""
    weight = np.zeros(n_tdi)
    contributors = np.zeros(n_topics)
    for t in range(n_topics):
        for r in runs:
            s = r * n_topics + t
            a = rank_offsets[s]
            z = min(rank_offsets[s + 1] - a, depth)
            if z == 0:
                continue
            contributors[t] += 1.0
            tail = 0.0  # H_Z - H_{r-1}, accumulated from the bottom of the ranking
            for i in range(z - 1, -1, -1):
                tail += 1.0 / (i + 1.0)
                weight[rank_tdi[a + i]] += (1.0 + tail) / (2.0 * z)
    return weight, contributors


def ap_prior(units) -> np.ndarray:
    """Per row of a pool or frame: its AP-prior weight averaged over the runs (0 for rows of
    documents the runs did not retrieve within the depth)."""
    col = units.collection
    depth = np.iinfo(np.int64).max if math.isinf(units.depth) else int(units.depth)
    # the runs in name order: a document's weight is a sum over them, and floating-point sums
    # depend on the order of their terms (in the last bit), which must not be the files' order
    runs = sorted(units.runs, key=lambda r: col.run_names[r])
    weight, contributors = _ap_prior(
        col.rank_offsets, col.rank_tdi, col.n_topics, np.array(runs, dtype=np.int64),
        depth, col.n_tdi,
    )
    row = np.where(units.tdi >= 0, weight[np.maximum(units.tdi, 0)], 0.0)
    return row / np.maximum(contributors[units.topic], 1.0)


def inclusion_probabilities(weight: np.ndarray, n: int) -> np.ndarray:
    """pi_i = min(1, c w_i) with sum pi = n (0 < n <= number of positive weights)."""
    w = np.asarray(weight, dtype=np.float64)
    if n <= 0:
        return np.zeros_like(w)
    positive = np.count_nonzero(w > 0)
    if n >= positive:
        return (w > 0).astype(np.float64)
    order = np.argsort(-w, kind="stable")
    ws = w[order]
    suffix = np.cumsum(ws[::-1])[::-1]  # suffix[m] = sum of ws[m:]
    for m in range(n):  # m take-alls: the m largest weights
        c = (n - m) / suffix[m]
        if c * ws[m] <= 1.0:
            break
    pi = np.minimum(1.0, c * w)
    pi[order[:m]] = 1.0
    return pi


@njit(cache=True, nogil=True)
def _systematic(order, pi, group_offsets, u, judged):
    """Systematic PPS over ``order`` in groups: rows whose cumulated-pi interval holds a point
    u_g + j are selected (take-alls, pi = 1, are selected outright)."""
    for g in range(group_offsets.shape[0] - 1):
        total = 0.0
        for i in range(group_offsets[g], group_offsets[g + 1]):
            row = order[i]
            p = pi[row]
            if p >= 1.0:
                judged[row] = True
                continue
            if p <= 0.0:
                continue
            if math.floor(total + p - u[g]) > math.floor(total - u[g]):
                judged[row] = True
            total += p


@dataclass(frozen=True)
class Importance(FractionDesign):
    """Sampling proportional to the AP prior averaged over the pool's runs (see the module
    docstring): n_t = max(1, round(fraction N_t)) per topic, or sizes set by a ``budget``; one
    stratum ``prior``; pi_i = min(1, c w_i), w the prior raised to at least ``floor`` times
    the topic's uniform weight. For statAP (prels)."""

    kind = "importance"
    syntax = "importance(F[,floor=A])"
    merge_formats = ("prels", "trec")
    merge_note = ("an importance sample, not simple random samples of strata: sample_eval's "
                  "estimators do not apply; merge it as prels")
    floor: float = 0.0

    def __post_init__(self):
        super().__post_init__()
        if not 0.0 <= self.floor < 1.0:
            raise DesignError(f"importance: the floor must be in [0, 1), not {self.floor}")

    @classmethod
    def from_spec(cls, spec: str, budget) -> Importance:
        """``importance(F)`` or ``importance(F,floor=A)``."""
        fraction, _, rest = spec.partition(",")
        key, _, value = rest.partition("=")
        if rest and key.strip() != "floor":
            raise DesignError(f"importance: expected importance(F) or importance(F,floor=A), "
                              f"not importance({spec})")
        floor = spec_number(value.strip(), "importance: floor") if rest else 0.0
        return cls(spec_number(fraction.strip(), cls.kind), budget, floor)

    @property
    def name(self) -> str:
        floor = f",floor={self.floor:g}" if self.floor else ""
        return f"{self.kind}({self.fraction:g}{floor}){budget_suffix(self.budget)}"

    def select(self, frame: SamplingFrame, *, rng) -> Sample:
        pi, order, offsets, stratum = frame.memo(self, lambda: self._allocate(frame))
        rng = generator(rng)
        judged = np.zeros(len(pi), dtype=bool)
        key = rng.random(len(pi))  # random order within each group: randomized systematic PPS
        u = rng.random(len(offsets) - 1)
        rows = order[np.lexsort((key[order], frame.topic[order]))]  # topic blocks, shuffled
        _systematic(rows, pi, offsets, u, judged)
        return Sample(judged, stratum, ("prior",), pi)

    def _allocate(self, frame):
        weight = ap_prior(frame)
        inside = weight > 0
        topics = frame.topic
        pi = np.zeros(len(weight))
        n_topics = frame.n_topics
        size = np.bincount(topics[inside], minlength=n_topics)
        if self.floor:  # a share of each topic's uniform weight at least (module docstring)
            flat = np.where(inside, 1.0 / np.maximum(size[topics], 1), 0.0)
            weight = np.where(inside, np.maximum(weight, self.floor * flat), 0.0)
        if self.budget is not None and not self.budget.per_topic:
            total = int(size.sum())
            if self.budget.total > total:
                raise DesignError(
                    f"budget of {self.budget.total} judgments is larger than the pool "
                    f"({total} documents)"
                )
            pi[inside] = inclusion_probabilities(weight[inside], self.budget.total)
            offsets = np.array([0, int(inside.sum())], dtype=np.int64)
        else:
            if self.budget is None:
                want = sample_size(self.fraction, size)
            else:
                want = np.where(size > 0, self.budget.total, 0)
                over = np.flatnonzero(want > size)
                if len(over):
                    t = int(over[0])
                    raise DesignError(
                        f"budget of {self.budget.total} judgments is larger than the pool of "
                        f"topic {frame.collection.topics[t]} ({int(size[t])} documents)"
                    )
            for t in np.flatnonzero(size):
                rows = np.flatnonzero(inside & (topics == t))
                pi[rows] = inclusion_probabilities(weight[rows], int(want[t]))
            offsets = np.concatenate([[0], np.cumsum(size)]).astype(np.int64)
        order = np.flatnonzero(inside)
        order = order[np.argsort(topics[order], kind="stable")]
        stratum = np.where(inside, 0, -1).astype(np.int64)
        for shared in (pi, stratum):
            shared.flags.writeable = False
        return pi, order, offsets, stratum


def thinly_sampled(pi: np.ndarray, topic: np.ndarray, rate: np.ndarray) -> np.ndarray:
    """Per document (``pi``: its inclusion probability, 0 or NaN outside the design; ``topic``:
    its topic index; ``rate``: per topic, n_t / N_t): whether 0 < pi < :data:`THIN_SHARE`
    rate, with a relative margin of 1e-9 so that the floored design's least pi, that share
    of the rate exactly where its weights sum to 1 + a, is not (module docstring)."""
    pi = np.nan_to_num(np.asarray(pi, dtype=np.float64), nan=0.0)
    return (pi > 0) & (pi < THIN_SHARE * (1.0 - 1e-9) * rate[topic])


def thin_tail_note(design, sample: Sample, topic: np.ndarray) -> str | None:
    """The note ``irsample sample`` prints for statAP's design without a floor where some
    document is sampled thinly (:func:`thinly_sampled`: pi below 1/11 of its topic's rate
    n_t / N_t; ``topic``: each row's topic): the sample can then barely see the documents that
    carry much of its estimates' variance (module docstring), and the floored design is named.
    None for other designs, or where no pi is that low."""
    if not isinstance(design, Importance) or design.floor:
        return None
    pi = sample.inclusion
    inside = pi > 0
    if not inside.any():
        return None
    n_topics = int(topic.max()) + 1
    rate = (np.bincount(topic[inside], weights=pi[inside], minlength=n_topics)
            / np.maximum(np.bincount(topic[inside], minlength=n_topics), 1))
    low = thinly_sampled(pi, topic, rate)
    if not low.any():
        return None
    floored = Importance(design.fraction, design.budget, DEFENSIVE_FLOOR).name
    return (f"irsample: note: {int(low.sum())} of {int(inside.sum())} pool documents "
            f"({low.sum() / inside.sum():.2g} of them) get an inclusion probability below 1/11 of "
            f"their topic's rate (the smallest {pi[inside].min():.4f}): a few deep relevant "
            f"documents then carry an estimate and its variance together, and {THIN_EVIDENCE}. "
            f"--design '{floored}' keeps every probability at 1/11 of the rate at least "
            "(statAP's estimator reads either)")


def importance(fraction: float, *, budget=None, floor: float = 0.0) -> Importance:
    r"""AP-prior importance sampling of ``fraction`` of each topic's pool (see
    :class:`Importance`).

    n_t = max(1, round(fraction N_t)) documents per topic with inclusion probabilities
    pi_i = min(1, c w_i) proportional to the AP prior w_i averaged over the pool's runs (the
    module docstring; Aslam, Pavlu & Yilmaz, SIGIR 2006): statAP's design.

    Parameters
    ----------
    fraction : float
        The judged fraction, in (0, 1].
    budget : Budget or int, optional
        A budget of judgments that sets the sample sizes instead of ``fraction``.
    floor : float, optional
        a in [0, 1): each weight raised to at least a times the topic's uniform weight,
        w'_i = max(w_i, a / N_t), so that every pi_i >= a n_t / ((1 + a) N_t) (module
        docstring; 0, the default, is statAP's design).

    Returns
    -------
    Importance

    Raises
    ------
    DesignError
        A fraction outside (0, 1], a floor outside [0, 1) or an invalid budget.

    Examples
    --------
    Higher ranks get larger inclusion probabilities; they sum to the sample size, 3:

    >>> from io import BytesIO
    >>> import irsample
    >>> from irsample.design import SamplingFrame, importance
    >>> from irsample.io import load_qrels
    >>> qrels = load_qrels(BytesIO(b"7 0 a 1\n7 0 b 0\n7 0 c 0\n7 0 d 1\n7 0 e 0\n7 0 f 0\n"))
    >>> ranked = BytesIO(b"7 Q0 a 1 6 r\n7 Q0 b 2 5 r\n7 Q0 c 3 4 r\n"
    ...                 b"7 Q0 d 4 3 r\n7 Q0 e 5 2 r\n7 Q0 f 6 1 r\n")
    >>> frame = SamplingFrame.from_qrels(irsample.load(qrels, [ranked])[0], qrels)
    >>> sample = importance(0.5).select(frame, rng=3)
    >>> sample.inclusion.round(3), float(sample.inclusion.sum())
    (array([0.862, 0.612, 0.488, 0.404, 0.342, 0.292]), 3.0)
    """
    return Importance(fraction, budget, floor)
