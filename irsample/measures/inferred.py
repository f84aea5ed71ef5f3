"""Estimators for incomplete judgments: inferred AP (infAP).

Yilmaz & Aslam, "Estimating average precision with incomplete and imperfect judgments",
CIKM 2006 (paper 001 here); the form computed by trec_eval's ``infAP``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from ..errors import MeasureError
from ..model import JUDGED, POOLED
from .base import Measure

INFAP_EPSILON = 1e-5  #: trec_eval's smoothing constant


@njit(cache=True, nogil=True, parallel=True)
def _infap_kernel(offsets, state, grade, level, num_rel, eps, c):
    n_seg = offsets.shape[0] - 1
    out = np.zeros(n_seg)
    for s in prange(n_seg):
        rel_above = 0
        nonrel_above = 0
        pooled_unjudged_above = 0
        total = 0.0
        a = offsets[s]
        for j in range(offsets[s + 1] - a):
            st = state[a + j]
            if st == POOLED:
                pooled_unjudged_above += 1
            elif st == JUDGED:
                if grade[a + j] < level:
                    nonrel_above += 1
                else:
                    if j == 0:
                        total += 1.0
                    else:
                        fj = float(j)
                        pooled = rel_above + nonrel_above + pooled_unjudged_above
                        total += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (pooled / fj) * (
                            (rel_above + eps) / (rel_above + nonrel_above + c * eps)
                        )
                    rel_above += 1
        if num_rel[s] > 0:
            out[s] = total / num_rel[s]
    return out


@dataclass(frozen=True)
class InfAP(Measure):
    """Inferred AP: (1/R) * sum over judged relevant retrieved documents at rank k of E[prec@k].

    E[prec@1] = 1; for k > 1, E[prec@k] = 1/k + ((k-1)/k) * (|d100|/(k-1)) *
    ((rel + eps)/(rel + nonrel + c eps)), where above rank k |d100| counts documents in the pool
    (judged or pooled-but-unjudged), rel/nonrel the judged relevant/non-relevant ones; unpooled
    documents count in k only; R is the number of judged relevant documents; eps = 1e-5.
    With complete judgments infAP equals AP up to the eps terms.

    ``c`` is the smoothing parameter of Yilmaz & Aslam, Information Retrieval 2008 (paper 001
    §4.5.4): with no judged document above k the precision above k is taken as 1/c. The default
    c = 2 (Lidstone smoothing) is trec_eval's form and prints as trec_eval's ``infAP``; the
    paper finds c = 1.5 nearly unbiased on TREC-7/8 (c = 1 overestimates, c >= 2 underestimates).
    Yilmaz & Aslam, CIKM 2006; trec_eval ``infAP``.
    """

    family = "infAP"
    trec = "infAP"
    estimator = True
    citation = "Yilmaz & Aslam, CIKM 2006; Information Retrieval 2008 (smoothing c); trec_eval infAP"

    c: float = 2.0

    def __post_init__(self):
        super().__post_init__()
        if not (isinstance(self.c, (int, float)) and self.c > 0):
            raise MeasureError(f"infAP: smoothing c must be a positive number, got {self.c!r}")
        object.__setattr__(self, "c", float(self.c))

    @property
    def trec_family(self):
        return self.trec if self.c == 2.0 else None

    def compute(self, ctx):
        return _infap_kernel(
            ctx.offsets, ctx.pos_state, ctx.pos_grade, ctx.rel_level, ctx.num_rel(),
            INFAP_EPSILON, self.c,
        )
