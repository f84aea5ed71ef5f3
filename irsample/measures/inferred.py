"""Estimators for incomplete judgments: inferred AP (infAP).

Yilmaz & Aslam, "Estimating average precision with incomplete and imperfect judgments",
CIKM 2006 (paper 001 here); the form computed by trec_eval's ``infAP``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from ..model import JUDGED, POOLED
from .base import Measure

INFAP_EPSILON = 1e-5  #: trec_eval's smoothing constant


@njit(cache=True, nogil=True, parallel=True)
def _infap_kernel(offsets, state, grade, level, num_rel, eps):
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
                            (rel_above + eps) / (rel_above + nonrel_above + 2.0 * eps)
                        )
                    rel_above += 1
        if num_rel[s] > 0:
            out[s] = total / num_rel[s]
    return out


@dataclass(frozen=True)
class InfAP(Measure):
    """Inferred AP: (1/R) * sum over judged relevant retrieved documents at rank k of E[prec@k].

    E[prec@1] = 1; for k > 1, E[prec@k] = 1/k + ((k-1)/k) * (|d100|/(k-1)) *
    ((rel + eps)/(rel + nonrel + 2 eps)), where above rank k |d100| counts documents in the pool
    (judged or pooled-but-unjudged), rel/nonrel the judged relevant/non-relevant ones; unpooled
    documents count in k only; R is the number of judged relevant documents; eps = 1e-5.
    With complete judgments infAP equals AP up to the eps terms.
    Yilmaz & Aslam, CIKM 2006; trec_eval ``infAP``.
    """

    family = "infAP"
    trec = "infAP"
    citation = "Yilmaz & Aslam, CIKM 2006; trec_eval infAP"

    def compute(self, ctx):
        return _infap_kernel(
            ctx.offsets, ctx.pos_state, ctx.pos_grade, ctx.rel_level, ctx.num_rel(), INFAP_EPSILON
        )
