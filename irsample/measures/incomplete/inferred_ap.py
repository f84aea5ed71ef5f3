"""Estimators for incomplete judgments: inferred AP (infAP).

Yilmaz & Aslam, "Estimating average precision with incomplete and imperfect judgments",
CIKM 2006 (paper 001 here); the form computed by trec_eval's ``infAP``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from ..._threads import parallel_when_large
from ...errors import MeasureError
from ..base import DEFAULT_VARIANCE, Measure
from ..context import safe_divide
from ..pool_layout import pooled_positions
from . import strata_walk
from .ap_variance import ap_variance
from .strata_walk import DOCS, INFAP_EPSILON, RELEVANT, SAMPLED


@parallel_when_large
def _infap_kernel(pool_offsets, rank, grade, level, num_rel, eps, c):
    """Per segment: (1/R) sum over the judged relevant documents of infap_precision."""
    n_seg = pool_offsets.shape[0] - 1
    out = np.zeros(n_seg)
    for s in prange(n_seg):
        counts = np.zeros((3, 1))
        total = 0.0
        first, end = strata_walk.segment(pool_offsets, rank, s, strata_walk.ALL_RANKS)
        for x in range(first, end):
            if grade[x] >= level:
                total += strata_walk.infap_precision(rank[x], counts, eps, c)
            strata_walk.count(counts, 0, grade[x], level)
        if num_rel[s] > 0:
            out[s] = total / num_rel[s]
    return out


@parallel_when_large
def _infap_variance_kernel(pool_offsets, rank, grade, level, num_rel, eps, c, fraction, value):
    """Per segment: stage 1 + stage 2 of the two-stage variance of infAP (see InfAP)."""
    n_seg = pool_offsets.shape[0] - 1
    out = np.zeros(n_seg)
    for s in prange(n_seg):
        counts = np.zeros((3, 1))
        sum_sq = 0.0
        stage2 = 0.0
        first, end = strata_walk.segment(pool_offsets, rank, s, strata_walk.ALL_RANKS)
        for x in range(first, end):
            if grade[x] >= level:
                pc = strata_walk.infap_precision(rank[x], counts, eps, c)
                sum_sq += pc * pc
                stage2 += _precision_variance(rank[x] + 1.0, counts)
            strata_walk.count(counts, 0, grade[x], level)
        r = num_rel[s]  # no cut-off when r = 0: the variance stays 0
        if r > 0:
            spread = max(sum_sq / r - value[s] * value[s], 0.0)
            out[s] = (1.0 - fraction[s]) * spread / r + stage2 / (r * r)
    return out


@njit(cache=True, nogil=True, inline="always")
def _precision_variance(k, counts):
    """var(PC_k) = (N/k)^2 pi (1 - pi)/n (N - n)/(N - 1), N pooled and n judged documents above
    rank k, pi = rel/n (0 at k = 1, for n = 0 or N <= 1)."""
    pooled = counts[DOCS, 0]
    sampled = counts[SAMPLED, 0]
    if k == 1.0 or sampled == 0 or pooled <= 1:
        return 0.0
    pi = counts[RELEVANT, 0] / sampled
    return (pooled / k) ** 2 * pi * (1.0 - pi) / sampled * (pooled - sampled) / (pooled - 1.0)


@dataclass(frozen=True)
class InfAP(Measure):
    """Inferred AP: (1/R) * sum over judged relevant retrieved documents at rank k of E[prec@k].

    E[prec@1] = 1; for k > 1, E[prec@k] = 1/k + ((k-1)/k) * (|d100|/(k-1)) *
    ((rel + eps)/(rel + nonrel + c eps)), where above rank k |d100| counts documents in the pool
    (judged or pooled-but-unjudged), rel/nonrel the judged relevant/non-relevant ones; unpooled
    documents count in k only; R is the number of judged relevant documents; eps = 1e-5.
    With complete judgments infAP equals AP up to the eps terms.

    Variance (Yilmaz, Kanoulas & Aslam, SIGIR 2008, §3 and appendix; reference-semantics §3.3),
    for a uniform sample of the fraction p of the topic's pool (p = judged / all qrels entries),
    r judged relevant documents and PC_k the estimated precision above (0 when not retrieved):
    var = (1 - p) s^2 / r + (1/r^2) sum_k var(PC_k), s^2 = sum_k (PC_k - infAP)^2 / r, where
    var(PC_k) = (N/k)^2 pi (1 - pi)/n (N - n)/(N - 1) with N pooled and n judged documents
    above k and pi = rel_above / n (0 at k = 1, for n = 0 or N <= 1). The first term is the
    choice of relevant documents as cut-offs, the second the estimation of each precision from
    the documents sampled above it (taken as independent across cut-offs). Complete judgments
    give 0. This is ``variance="paper"``; as the precisions at different cut-offs share the
    documents sampled above them, it gives about half the observed standard error on TREC-8.
    The default ``"jackknife"`` (stratified delete-one jackknife) and ``"covariance"``
    (linearisation with the covariances of the precisions and of the two stages) are in
    ``incomplete/ap_variance.py``.

    ``c`` is the smoothing parameter of Yilmaz & Aslam, Information Retrieval 2008 (paper 001
    §4.5.4): with no judged document above k the precision above k is taken as 1/c. The default
    c = 2 (Lidstone smoothing) is trec_eval's form and prints as trec_eval's ``infAP``; the
    paper finds c = 1.5 nearly unbiased on TREC-7/8 (c = 1 overestimates, c >= 2 underestimates).
    Yilmaz & Aslam, CIKM 2006; trec_eval ``infAP``.
    """

    ratio = True  #: a ratio of estimates: its weak topics matter (measures/reliability/)
    family = "infAP"
    trec = "infAP"
    estimator = True
    citation = (
        "Yilmaz & Aslam, CIKM 2006; Information Retrieval 2008 (smoothing c); trec_eval infAP"
    )

    c: float = 2.0

    def __post_init__(self):
        super().__post_init__()
        if not (isinstance(self.c, (int, float)) and self.c > 0):
            raise MeasureError(f"infAP: smoothing c must be a positive number, got {self.c!r}")
        object.__setattr__(self, "c", float(self.c))

    @property
    def trec_family(self):
        return self.trec if self.c == 2.0 else None

    variance_method = "jackknife, covariance or paper's two-stage (incomplete/ap_variance.py)"

    def compute(self, ctx):
        return ctx.shared(("infAP", self.c), lambda: _infap_kernel(
            *pooled_positions(ctx)[:3], ctx.rel_level, ctx.num_rel(), INFAP_EPSILON,
            self.c,
        ))

    def variance(self, ctx, method=DEFAULT_VARIANCE):
        if method != "paper":
            return ap_variance(ctx, method, self.compute(ctx), infap_c=self.c)
        j = ctx.judgments
        fraction = safe_divide(j.stratum_sampled.sum(axis=1), j.stratum_size.sum(axis=1))
        return _infap_variance_kernel(
            *pooled_positions(ctx)[:3], ctx.rel_level, ctx.num_rel(), INFAP_EPSILON,
            self.c,
            fraction[ctx.seg_topic], self.compute(ctx),
        )
