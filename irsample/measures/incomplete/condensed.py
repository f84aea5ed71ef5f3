"""Any measure on a reduced ranking: condensed(M) and induced(M).

- ``condensed(M)``: M on the ranking with every document that is not judged removed
  (pooled-but-unjudged and unpooled alike): Sakai's condensed lists, "Alternatives to bpref",
  SIGIR 2007. It equals trec_eval's ``-J`` for that measure.
- ``induced(M)``: M on the ranking with only the pooled-but-unjudged documents (qrels value < 0)
  removed; unpooled documents stay, as non-relevant. ``induced(AP)`` is induced AP in the form of
  Yilmaz & Aslam, "Inferring document relevance from incomplete information", Information
  Retrieval 11(5), 2008 (paper 001 §4.3.1; first proposed, removing unpooled documents too, in
  Yilmaz & Aslam, CIKM 2006): with complete judgments of the pool it equals TREC's AP.

Documents are removed after trec_eval's ``-M`` cut-off (as trec_eval applies ``-M`` before
``-J``): ``condensed(P@10)`` with ``max_docs=100`` counts the judged documents among the first 100
retrieved. The relevance level is the evaluation's. R stays the judged R of the whole qrels.

The reduced ranking is built once per evaluation context and shared by every wrapped measure
(``EvalContext.shared``). Estimators (``infAP``, ``xinfAP``, ``statAP``, ``subAP``...) and string
measures cannot be wrapped: estimators read the pool or sample design that the reduction
destroys; wrapping a wrapper is rejected too, since both orders of the two reductions equal
``condensed(M)`` and one measure should have one name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...errors import MeasureError
from ..base import Measure
from ..context import EvalContext
from ..names import parse

_SAKAI = "Sakai, \"Alternatives to bpref\", SIGIR 2007 (condensed lists); trec_eval -J"
_YA = "Yilmaz & Aslam, Information Retrieval 11(5) 2008, §4.3; CIKM 2006 (induced AP)"


def reduced_context(ctx: EvalContext, *, judged_only: bool, drop_pooled_unjudged: bool):
    """``ctx`` with more documents dropped (cached in ``ctx``); ``ctx`` itself if nothing changes.

    The options only add to the outer context's: a context that is already ``judged_only``
    stays so. ``rel_level``, ``max_docs`` and ``compat`` are kept.
    """
    judged_only = judged_only or ctx.judged_only
    drop = (drop_pooled_unjudged or ctx.drop_pooled_unjudged) and not judged_only
    if (judged_only, drop) == (ctx.judged_only, ctx.drop_pooled_unjudged):
        return ctx
    return ctx.shared(
        ("reduced_context", judged_only, drop),
        lambda: EvalContext(
            ctx.collection,
            ctx.judgments,
            rel_level=ctx.rel_level,
            judged_only=judged_only,
            max_docs=ctx.max_docs,
            compat=ctx.compat,
            drop_pooled_unjudged=drop,
        ),
    )


@dataclass(frozen=True)
class _Reduced(Measure):
    """A measure computed on a reduced ranking; subclasses say which documents go."""

    inner: Measure
    judged_only: ClassVar[bool] = False
    drop_pooled_unjudged: ClassVar[bool] = False

    @classmethod
    def from_params(cls, text: str | None) -> dict:
        """``condensed(AP)``: the text in parentheses names exactly one measure, any syntax."""
        if text is None or not text.strip():
            raise MeasureError(f"{cls.family} needs a measure, as in {cls.family}(AP)")
        try:
            found = parse(text)
        except MeasureError as exc:
            raise MeasureError(f"{cls.family}({text}): {exc}") from None
        if len(found) != 1:
            names = ", ".join(m.name for m in found)
            raise MeasureError(
                f"{cls.family}({text}) names {len(found)} measures ({names}); wrap one"
            )
        return {"inner": found[0]}

    def __post_init__(self):
        super().__post_init__()
        inner = self.inner
        if not isinstance(inner, Measure):
            raise MeasureError(f"{self.family}: {inner!r} is not a measure")
        if isinstance(inner, _Reduced):
            same = "induced" if self.family == inner.family == "induced" else "condensed"
            raise MeasureError(
                f"{self.family}({inner.name}): wrappers do not nest; this is "
                f"{same}({inner.inner.name})"
            )
        if inner.value_type == "str":
            raise MeasureError(f"{self.family}({inner.name}): string measures cannot be wrapped")
        if inner.estimator:
            raise MeasureError(
                f"{self.family}({inner.name}): {inner.family} is an estimator; it reads the pool "
                "that the reduction removes"
            )

    @property
    def name(self) -> str:
        return f"{self.family}({self.inner.name})"

    @property
    def summary(self) -> str:
        return self.inner.summary

    @property
    def value_type(self) -> str:
        return self.inner.value_type

    @property
    def per_topic(self) -> bool:
        return self.inner.per_topic

    def compute(self, ctx):
        reduced = reduced_context(
            ctx, judged_only=self.judged_only, drop_pooled_unjudged=self.drop_pooled_unjudged
        )
        return self.inner.compute(reduced)


@dataclass(frozen=True)
class Condensed(_Reduced):
    """condensed(M): M on the condensed list, the ranking with every unjudged document removed.

    With rank'(d) the rank of d among the judged retrieved documents, e.g. condensed(AP) =
    (1/R) * sum over relevant retrieved d of rel(rank'(d)) / rank'(d). Pooled-but-unjudged and
    unpooled documents go alike, so condensed(M) equals trec_eval ``-J`` for M.
    Sakai, "Alternatives to bpref", SIGIR 2007.
    """

    family = "condensed"
    judged_only = True
    citation = _SAKAI


@dataclass(frozen=True)
class Induced(_Reduced):
    """induced(M): M on the ranking with only pooled-but-unjudged (qrels -1) documents removed.

    Unpooled documents stay as non-relevant. induced(AP) = (1/R) * sum over relevant retrieved d
    of rel(rank''(d)) / rank''(d), rank'' counting judged and unpooled documents: the induced AP
    of Yilmaz & Aslam, Information Retrieval 2008 §4.3.1, equal to TREC's AP when the whole pool
    is judged. (Their CIKM 2006 induced AP also removed unpooled documents: condensed(AP).)
    """

    family = "induced"
    drop_pooled_unjudged = True
    citation = _YA
