"""Precision- and recall-oriented measures of trec_eval.

Notation: ``rel(k)`` = relevant documents in the top ``k`` (a run shorter than ``k`` counts what
it has), ``n`` = documents retrieved, ``R`` = judged relevant documents of the topic.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import DEFAULT_CUTOFFS, Measure
from .context import safe_divide

_TREC = "trec_eval (NIST), https://github.com/usnistgov/trec_eval"


@dataclass(frozen=True)
class P(Measure):
    """Precision at k: rel(k) / k — also when the run retrieved fewer than k documents."""

    k: int | None = None
    family = "P"
    trec = "P"
    aliases = ("Precision",)
    trec_defaults = DEFAULT_CUTOFFS
    citation = _TREC

    def compute(self, ctx):
        return ctx.at_cutoff(ctx.cum_rel(), self.k) / self.k


@dataclass(frozen=True)
class Recall(Measure):
    """Recall at k: rel(k) / R (0 when R = 0)."""

    k: int | None = None
    family = "R"
    trec = "recall"
    aliases = ("Recall",)
    trec_defaults = DEFAULT_CUTOFFS
    citation = _TREC

    def compute(self, ctx):
        return safe_divide(ctx.at_cutoff(ctx.cum_rel(), self.k), ctx.num_rel())


@dataclass(frozen=True)
class RelativeP(Measure):
    """Relative precision at k: rel(k) / min(k, R) (0 when R = 0)."""

    k: int | None = None
    family = "RelativeP"
    trec = "relative_P"
    trec_defaults = DEFAULT_CUTOFFS
    citation = _TREC

    def compute(self, ctx):
        return safe_divide(
            ctx.at_cutoff(ctx.cum_rel(), self.k), np.minimum(self.k, ctx.num_rel())
        )


@dataclass(frozen=True)
class Success(Measure):
    """Success at k: 1 if a relevant document is in the top k, else 0."""

    k: int | None = None
    family = "Success"
    trec = "success"
    trec_defaults = (1, 5, 10)
    citation = _TREC

    def compute(self, ctx):
        return (ctx.at_cutoff(ctx.cum_rel(), self.k) > 0).astype(np.float64)


@dataclass(frozen=True)
class Rprec(Measure):
    """R-precision: rel(R) / R, counting only the first min(n, R) documents (0 when R = 0)."""

    family = "Rprec"
    trec = "Rprec"
    aliases = ("R-prec",)
    citation = _TREC

    def compute(self, ctx):
        R = ctx.num_rel()
        return safe_divide(ctx.at_cutoff(ctx.cum_rel(), R), R)


@dataclass(frozen=True)
class RR(Measure):
    """Reciprocal rank: 1 / rank of the first relevant document, 0 if none is retrieved.

    Voorhees, "The TREC-8 Question Answering Track Report", TREC 1999.
    """

    family = "RR"
    trec = "recip_rank"
    aliases = ("MRR", "recip_rank")
    citation = "Voorhees, TREC-8 QA track report (1999); trec_eval"

    def compute(self, ctx):
        rel = ctx.rel()
        first = (ctx.cum_rel() == 1) & (rel == 1)
        out = np.zeros(ctx.n_seg)
        out[ctx.seg_of_position[first]] = 1.0 / ctx.rank[first]
        return out


@dataclass(frozen=True)
class SetP(Measure):
    """Set precision: relevant retrieved / n (0 when nothing is retrieved)."""

    family = "SetP"
    trec = "set_P"
    citation = _TREC

    def compute(self, ctx):
        return safe_divide(ctx.total(ctx.cum_rel()), ctx.seg_len)


@dataclass(frozen=True)
class SetR(Measure):
    """Set recall: relevant retrieved / R (0 when R = 0)."""

    family = "SetR"
    trec = "set_recall"
    citation = _TREC

    def compute(self, ctx):
        return safe_divide(ctx.total(ctx.cum_rel()), ctx.num_rel())


@dataclass(frozen=True)
class SetRelativeP(Measure):
    """Relative set precision: relevant retrieved / min(n, R) (0 when that is 0)."""

    family = "SetRelativeP"
    trec = "set_relative_P"
    citation = _TREC

    def compute(self, ctx):
        return safe_divide(ctx.total(ctx.cum_rel()), np.minimum(ctx.seg_len, ctx.num_rel()))


@dataclass(frozen=True)
class SetAP(Measure):
    """Set average precision: set_P x set_recall (the AP of an unranked set)."""

    family = "SetAP"
    trec = "set_map"
    citation = _TREC

    def compute(self, ctx):
        relret = ctx.total(ctx.cum_rel())
        return safe_divide(relret, ctx.seg_len) * safe_divide(relret, ctx.num_rel())


@dataclass(frozen=True)
class SetF(Measure):
    """Set F-measure: (1 + b^2) P R / (b^2 P + R) of set precision P and set recall R.

    van Rijsbergen, Information Retrieval (1979), ch. 7; ``beta`` defaults to 1.
    """

    beta: float = 1.0
    family = "SetF"
    trec = "set_F"
    citation = "van Rijsbergen, Information Retrieval (1979); trec_eval"

    @classmethod
    def from_trec(cls, params):
        if params is None:
            return [cls()]
        return [cls(beta=float(params))]

    @property
    def trec_name(self):
        return "set_F" if self.beta == 1.0 else f"set_F_{_num(self.beta)}"

    def compute(self, ctx):
        relret = ctx.total(ctx.cum_rel())
        p = safe_divide(relret, ctx.seg_len)
        r = safe_divide(relret, ctx.num_rel())
        b2 = self.beta * self.beta
        return safe_divide((b2 + 1.0) * p * r, b2 * p + r)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)
