"""Average precision and its relatives: AP, AP@k, GMAP, bpref.

Notation: ranks k = 1..n, ``rel_k`` = 1 if the document at rank k is relevant, ``rel(k)``
relevant documents in the top k, ``R`` judged relevant documents of the topic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numba import prange

from ..._threads import parallel_when_large
from ...errors import MeasureError
from ..base import DEFAULT_CUTOFFS, Measure
from ..context import safe_divide
from ..pool_layout import pooled_positions

_TREC = "trec_eval (NIST), https://github.com/usnistgov/trec_eval"


@parallel_when_large
def _precision_at_relevant_cumsum(offsets, rel):
    """Running sum over relevant ranks i of rel(i)/i, per segment."""
    out = np.empty(rel.shape[0])
    for s in prange(offsets.shape[0] - 1):
        found = 0
        acc = 0.0
        a = offsets[s]
        for i in range(a, offsets[s + 1]):
            if rel[i]:
                found += 1
                acc += found / (i - a + 1.0)
            out[i] = acc
    return out


def _cum_precision_at_rel(ctx) -> np.ndarray:
    """Running sum over relevant ranks k of rel(k) / k (shared by AP and AP@k)."""
    return ctx.shared(
        ("cum_prec_at_rel", ctx.rel_level),
        lambda: _precision_at_relevant_cumsum(ctx.offsets, ctx.rel()),
    )


@dataclass(frozen=True)
class AP(Measure):
    """Average precision: (1/R) * sum over relevant retrieved ranks i of rel(i)/i; 0 if R = 0.

    ``AP@k`` (trec_eval ``map_cut_k``) sums over ranks i <= k only, still dividing by R.
    Buckley & Voorhees, "Retrieval system evaluation", in Voorhees & Harman (eds.), *TREC:
    Experiment and Evaluation in Information Retrieval*, MIT Press 2005, ch. 3; trec_eval ``map``.
    """

    k: int | None = None
    family = "AP"
    trec = "map"
    trec_extra = ("map_cut",)
    aliases = ("MAP",)
    trec_defaults = DEFAULT_CUTOFFS
    citation = ("Buckley & Voorhees, Retrieval system evaluation, TREC (MIT Press) 2005, ch. 3; "
                "trec_eval map, map_cut")

    @classmethod
    def from_trec(cls, params, name=None):
        if name == "map_cut":
            return super().from_trec(params, name)
        if params is not None:
            raise MeasureError(f"map takes no parameters (got {params!r}); use map_cut")
        return [cls()]

    @property
    def trec_family(self):
        return "map" if self.k is None else "map_cut"

    def compute(self, ctx):
        cum = _cum_precision_at_rel(ctx)
        got = ctx.total(cum) if self.k is None else ctx.at_cutoff(cum, self.k)
        return safe_divide(got, ctx.num_rel())


@dataclass(frozen=True)
class YAAP(Measure):
    """Yet another average precision: log((1 + S) / (1 + R - S)), S = sum over relevant
    retrieved ranks i of (relevant in top i)/i (R times AP); log 1 = 0 when R = 0.

    Monotonic with AP on one topic, but its values average better across topics near 0 and 1.
    Robertson, "On smoothing average precision", ECIR 2012 (LNCS 7224, 158-169); trec_eval's
    ``yaap`` (``m_yaap.c``, added after 10.0's measure table: in no named set).
    """

    family = "yaap"
    trec = "yaap"
    citation = "Robertson, On smoothing average precision, ECIR 2012; trec_eval yaap"

    def compute(self, ctx):
        s = ctx.total(_cum_precision_at_rel(ctx))
        return np.log((1.0 + s) / (1.0 + ctx.num_rel() - s))


@dataclass(frozen=True)
class _GeometricMean(Measure):
    """The per-topic values of measure ``of``, summarised by their geometric mean
    exp(mean(log(max(value, 1e-5)))) instead of the arithmetic one (no ``family``: the registry
    skips this base)."""

    of: ClassVar[type[Measure]]
    summary = "gmean"
    per_topic = False

    def compute(self, ctx):
        return self.of().compute(ctx)


@dataclass(frozen=True)
class GMAP(_GeometricMean):
    """AP summarised by the geometric mean exp(mean(log(max(AP, 1e-5)))) (trec_eval gm_map).

    Robertson, "On GMAP", CIKM 2006; Voorhees, TREC 2004 Robust track overview.
    """

    family = "GMAP"
    trec = "gm_map"
    of = AP
    citation = "Voorhees, TREC 2004 Robust track; Robertson, CIKM 2006"


@parallel_when_large
def _bpref_kernel(pool_offsets, grade, level, num_rel, num_nonrel):
    """Per segment, over its pooled positions (``grade`` < 0: not judged; the others do not
    count): bpref of the class docstring."""
    n_seg = pool_offsets.shape[0] - 1
    out = np.zeros(n_seg)
    for s in prange(n_seg):
        R = num_rel[s]
        if R == 0:
            continue
        denom = min(num_nonrel[s], R)
        nonrel_above = 0
        total = 0.0
        for i in range(pool_offsets[s], pool_offsets[s + 1]):
            if grade[i] >= level:
                if nonrel_above > 0:
                    total += 1.0 - min(nonrel_above, R) / denom
                else:
                    total += 1.0
            elif grade[i] >= 0:
                nonrel_above += 1
        out[s] = total / R
    return out


@dataclass(frozen=True)
class Bpref(Measure):
    """bpref: (1/R) * sum over retrieved relevant r of 1 - min(|n ranked above r|, R) / min(N, R).

    Only judged documents count: n ranges over judged non-relevant documents, unjudged and
    unpooled documents are skipped; a relevant document with no judged non-relevant document
    above it scores 1 (so bpref is defined when N = 0). Buckley & Voorhees, "Retrieval
    evaluation with incomplete information", SIGIR 2004.
    """

    family = "Bpref"
    trec = "bpref"
    citation = "Buckley & Voorhees, SIGIR 2004"

    def compute(self, ctx):
        pool_offsets, _, grade, _ = pooled_positions(ctx)
        return _bpref_kernel(pool_offsets, grade, ctx.rel_level, ctx.num_rel(), ctx.num_nonrel())


@dataclass(frozen=True)
class GMBpref(_GeometricMean):
    """bpref summarised by the geometric mean exp(mean(log(max(bpref, 1e-5))))."""

    family = "GMBpref"
    trec = "gm_bpref"
    of = Bpref
    citation = "Buckley & Voorhees, SIGIR 2004; trec_eval gm_bpref"
