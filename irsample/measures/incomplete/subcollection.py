"""Subcollection AP (subAP): the expected AP over random p-subcollections.

Yilmaz & Aslam, "Inferring document relevance from incomplete information", Information
Retrieval 11(5), 2008, §4.4.1 (paper 001 here); Yilmaz & Aslam, CIKM 2006; reference-semantics
§3.4. If the judged documents are a random fraction p of the pool, keeping each unpooled document
with probability p too forms a random p-subcollection of the whole collection; subAP is the
expectation, over those subcollections, of AP computed on the documents in it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from ..._threads import parallel_when_large
from ...errors import MeasureError
from ...model import JUDGED, UNPOOLED
from ..base import Measure

#: relative weight below which the rest of a binomial tail is dropped (bounded, see below)
TAIL = 1e-17


@njit(cache=True, nogil=True)
def expected_precision(r, n, nd, p):
    """E[r / (r + n + X)] for X ~ Binomial(nd, p): sum_i C(nd,i) p^i (1-p)^(nd-i) r/(r+n+i).

    Computed without overflow or cancellation for any nd: weights w_i proportional to the pmf
    start at 1 at the mode m = floor((nd+1) p) and follow the ratio recurrence
    w_{i+1}/w_i = (nd-i)/(i+1) * p/(1-p) outward in both directions; the result is
    sum w_i f(i) / sum w_i (all terms positive). Since the pmf is log-concave, the ratio q < 1
    only falls moving away from the mode, so the unsummed tail after weight w is at most
    w / (1 - q); a direction stops once that is below ``TAIL`` times the summed weight
    (0 <= f <= 1, so the error is below 1e-17 relative). About 10 standard deviations of
    terms: some 300 for nd = 1000, p = 0.5.
    """
    if nd == 0 or p <= 0.0:
        return r / (r + n)
    if p >= 1.0:
        return r / (r + n + nd)
    odds = p / (1.0 - p)
    mode = min(int((nd + 1) * p), nd)
    weight_sum = 1.0
    total = r / (r + n + mode)
    w = 1.0
    i = mode
    while i < nd:  # upward: ratio < 1 from the mode on
        q = (nd - i) / (i + 1.0) * odds
        w *= q
        i += 1
        weight_sum += w
        total += w * r / (r + n + i)
        if q < 1.0 and w < TAIL * weight_sum * (1.0 - q):
            break
    w = 1.0
    i = mode
    while i > 0:  # downward: ratio <= 1 from the mode on (= 1 at a double mode)
        q = i / ((nd - i + 1.0) * odds)
        w *= q
        i -= 1
        weight_sum += w
        total += w * r / (r + n + i)
        if q < 1.0 and w < TAIL * weight_sum * (1.0 - q):
            break
    return total / weight_sum


@parallel_when_large
def _subap_kernel(offsets, state, grade, level, num_rel, p_seg):
    n_seg = offsets.shape[0] - 1
    out = np.zeros(n_seg)
    for s in prange(n_seg):
        if num_rel[s] == 0:
            continue
        rel = 0
        nonrel = 0
        unpooled = 0
        total = 0.0
        for i in range(offsets[s], offsets[s + 1]):
            st = state[i]
            if st == UNPOOLED:
                unpooled += 1
            elif st == JUDGED:
                if grade[i] >= level:
                    rel += 1  # the relevant document itself counts in r
                    total += expected_precision(rel, nonrel, unpooled, p_seg[s])
                else:
                    nonrel += 1
        out[s] = total / num_rel[s]
    return out


def pool_fraction(judgments, n_topics: int) -> np.ndarray:
    """Per topic, judged / (judged + pooled-but-unjudged) qrels entries (1 without entries)."""
    entries = judgments.stratum_size.sum(axis=1)
    judged = judgments.stratum_sampled.sum(axis=1)
    out = np.ones(n_topics)
    np.divide(judged, entries, out=out, where=entries > 0)
    return out


@dataclass(frozen=True)
class SubAP(Measure):
    """Subcollection AP: (1/R) * sum over judged relevant retrieved documents of E[prec].

    For the relevant document at rank k, with r judged relevant (the document itself included),
    n judged non-relevant and nd unpooled documents at or above rank k, and p the sampled
    fraction: E[prec] = sum_{i=0..nd} C(nd,i) p^i (1-p)^(nd-i) * r / (r + n + i), the expected
    precision at the document when each unpooled document is kept with probability p and the
    pooled-but-unjudged (qrels -1) documents are left out. R is the judged R.

    ``p`` is given (``subAP(p=0.3)``) or, by default, per topic the judged fraction of the pool:
    judged / (judged + pooled-unjudged) qrels entries of the topic. With p = 1 and no -1 entries
    subAP is AP; with nothing unpooled it is condensed(AP) for any p.
    Yilmaz & Aslam, Information Retrieval 2008 §4.4.1; CIKM 2006.
    """

    p: float | None = None
    family = "subAP"
    estimator = True
    citation = "Yilmaz & Aslam, Information Retrieval 11(5) 2008, §4.4; CIKM 2006"

    def __post_init__(self):
        super().__post_init__()
        if self.p is None:
            return
        if isinstance(self.p, bool) or not isinstance(self.p, (int, float)) or not 0 <= self.p <= 1:
            raise MeasureError(f"subAP: p must be a number in [0, 1], got {self.p!r}")
        object.__setattr__(self, "p", float(self.p))

    def compute(self, ctx):
        if self.p is None:
            p_seg = pool_fraction(ctx.judgments, ctx.n_topics)[ctx.seg_topic]
        else:
            p_seg = np.full(ctx.n_seg, self.p)
        return _subap_kernel(
            ctx.offsets, ctx.pos_state, ctx.pos_grade, ctx.rel_level, ctx.num_rel(), p_seg
        )
