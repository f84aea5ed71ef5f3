"""Precision- and recall-oriented measures of trec_eval.

Notation: ``rel(k)`` = relevant documents in the top ``k`` (a run shorter than ``k`` counts what
it has), ``n`` = documents retrieved, ``R`` = judged relevant documents of the topic.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import prange

from ..._threads import parallel_when_large
from ...errors import MeasureError
from ..base import DEFAULT_CUTOFFS, Measure, format_number, single_value, split_values
from ..context import safe_divide

_TREC = "trec_eval (NIST), https://github.com/usnistgov/trec_eval"


@dataclass(frozen=True)
class _AtCutoff(Measure):
    """A function of rel(k), the relevant documents in the top ``k``, per segment (no
    ``family``: the registry skips this base); ``of_rel_at_k`` gives the function."""

    k: int | None = None
    trec_defaults = DEFAULT_CUTOFFS
    citation = _TREC

    def compute(self, ctx):
        return self.of_rel_at_k(ctx.at_cutoff(ctx.cum_rel(), self.k), ctx)


@dataclass(frozen=True)
class P(_AtCutoff):
    """Precision at k: rel(k) / k — also when the run retrieved fewer than k documents."""

    family = "P"
    trec = "P"
    aliases = ("Precision",)

    def of_rel_at_k(self, rel_k, ctx):
        return rel_k / self.k


@dataclass(frozen=True)
class Recall(_AtCutoff):
    """Recall at k: rel(k) / R, R counting judged relevant documents retrieved or not;
    0 if R = 0."""

    family = "R"
    trec = "recall"
    aliases = ("Recall",)

    def of_rel_at_k(self, rel_k, ctx):
        return safe_divide(rel_k, ctx.num_rel())


@dataclass(frozen=True)
class RelativeP(_AtCutoff):
    """Relative precision at k: rel(k) / min(k, R) (0 when R = 0)."""

    family = "RelativeP"
    trec = "relative_P"

    def of_rel_at_k(self, rel_k, ctx):
        return safe_divide(rel_k, np.minimum(self.k, ctx.num_rel()))


@dataclass(frozen=True)
class Success(_AtCutoff):
    """Success at k: 1 if a relevant document is in the top k, else 0."""

    family = "Success"
    trec = "success"
    trec_defaults = (1, 5, 10)

    def of_rel_at_k(self, rel_k, ctx):
        return (rel_k > 0).astype(np.float64)


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


@parallel_when_large
def _reciprocal_first_rank(offsets, rel):
    """1 / rank of the first relevant position of every segment (0 if none)."""
    out = np.zeros(offsets.shape[0] - 1)
    for s in prange(offsets.shape[0] - 1):
        for i in range(offsets[s], offsets[s + 1]):
            if rel[i]:
                out[s] = 1.0 / (i - offsets[s] + 1)
                break
    return out


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
        return _reciprocal_first_rank(ctx.offsets, ctx.rel())


@dataclass(frozen=True)
class _SetRatio(Measure):
    """Relevant retrieved / a denominator given by ``denominator`` (0 when it is 0); no
    ``family``: the registry skips this base."""

    citation = _TREC

    def compute(self, ctx):
        return safe_divide(ctx.total(ctx.cum_rel()), self.denominator(ctx))


@dataclass(frozen=True)
class SetP(_SetRatio):
    """Set precision: relevant retrieved / n (0 when nothing is retrieved)."""

    family = "SetP"
    trec = "set_P"
    denominator = staticmethod(lambda ctx: ctx.seg_len)


@dataclass(frozen=True)
class SetR(_SetRatio):
    """Set recall: relevant retrieved / R (0 when R = 0)."""

    family = "SetR"
    trec = "set_recall"
    denominator = staticmethod(lambda ctx: ctx.num_rel())


@dataclass(frozen=True)
class SetRelativeP(_SetRatio):
    """Relative set precision: relevant retrieved / min(n, R) (0 when that is 0)."""

    family = "SetRelativeP"
    trec = "set_relative_P"
    denominator = staticmethod(lambda ctx: np.minimum(ctx.seg_len, ctx.num_rel()))


@dataclass(frozen=True)
class SetAP(Measure):
    """Set average precision: a^2 / (n R) = set_P x set_recall, a = relevant retrieved.

    Computed as trec_eval does, a^2 / (n R), so that 4-decimal output rounds the same way.
    """

    family = "SetAP"
    trec = "set_map"
    citation = _TREC

    def compute(self, ctx):
        relret = ctx.total(ctx.cum_rel()).astype(np.float64)
        return safe_divide(relret * relret, ctx.seg_len * ctx.num_rel())


@dataclass(frozen=True)
class SetF(Measure):
    """Set F-measure: (1 + b^2) P R / (b^2 P + R) of set precision P and set recall R.

    van Rijsbergen, Information Retrieval (1979), ch. 7; the parameter ``beta2`` is b^2
    (trec_eval's ``set_F.0.5`` is ``SetF(beta2=0.5)``), default 1.
    """

    beta2: float = 1.0
    family = "SetF"
    trec = "set_F"
    trec_typed = ("set_F",)
    citation = "van Rijsbergen, Information Retrieval (1979); trec_eval"

    @classmethod
    def from_trec(cls, params, name=None):
        if params is None:
            return [cls()]
        return [cls(beta2=single_value(params, float, cls.trec, "value, the weight of recall"))]

    @property
    def canonical_trec_name(self):
        return "set_F" if self.beta2 == 1.0 else f"set_F_{format_number(self.beta2)}"

    def compute(self, ctx):
        relret = ctx.total(ctx.cum_rel())
        p = safe_divide(relret, ctx.seg_len)
        r = safe_divide(relret, ctx.num_rel())
        return safe_divide((self.beta2 + 1.0) * p * r, self.beta2 * p + r)


@dataclass(frozen=True)
class Utility(Measure):
    """Linear utility: c1 * a + c2 * b + c3 * c + c4 * d with a = relevant retrieved,
    b = other retrieved (n - a), c = relevant not retrieved (R - a) and
    d = collection_size + a - n - R; default coefficients (1, -1, 0, 0); averaged over topics.

    Lewis, "The TREC-4 filtering track", TREC-4 (1995); trec_eval ``utility`` (its ``-N`` gives
    the collection size; here ``utility(collection_size=N)``, default 0).
    """

    coefficients: tuple = (1.0, -1.0, 0.0, 0.0)
    collection_size: int = 0
    family = "utility"
    trec = "utility"
    trec_typed = ("utility",)
    citation = "Lewis, TREC-4 filtering track (1995); trec_eval utility"

    def __post_init__(self):
        if len(self.coefficients) != 4:
            raise MeasureError("utility needs exactly four coefficients")

    @classmethod
    def from_trec(cls, params, name=None):
        if params is None:
            return [cls()]
        return [cls(coefficients=tuple(split_values(params, float, cls.trec)))]

    @property
    def canonical_trec_name(self):
        if self.collection_size != 0:  # trec_eval's name has no room for it (its -N)
            return self.name
        if self.coefficients == (1.0, -1.0, 0.0, 0.0):
            return "utility"
        return "utility_" + ",".join(format_number(c) for c in self.coefficients)

    def compute(self, ctx):
        a = ctx.total(ctx.cum_rel()).astype(np.float64)
        n = ctx.seg_len.astype(np.float64)
        R = ctx.num_rel().astype(np.float64)
        c1, c2, c3, c4 = self.coefficients
        return c1 * a + c2 * (n - a) + c3 * (R - a) + c4 * (self.collection_size + a - n - R)

