"""Counting measures and the run id (trec_eval's ``runid``, ``num_*``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..base import Measure

_TREC = "trec_eval (NIST), https://github.com/usnistgov/trec_eval"


@dataclass(frozen=True)
class RunId(Measure):
    """The run's tag (the tag field of the run file's last line); printed on the summary only."""

    family = "runid"
    trec = "runid"
    summary = "none"
    value_type = "str"
    per_topic = False
    citation = _TREC

    def compute(self, ctx):
        return np.zeros(ctx.n_seg)


@dataclass(frozen=True)
class _Count(Measure):
    """A count per topic, summed over topics on the summary line (no ``family``: not a
    measure of its own, so the registry skips it)."""

    summary = "sum"
    value_type = "int"
    citation = _TREC


@dataclass(frozen=True)
class NumQ(_Count):
    """Number of topics evaluated: 1 per topic, summed."""

    family = "NumQ"
    trec = "num_q"
    aliases = ("num_q",)
    per_topic = False

    def compute(self, ctx):
        return np.ones(ctx.n_seg)


@dataclass(frozen=True)
class NumRet(_Count):
    """Number of documents retrieved, n (after ``-M`` and ``-J``); summed over topics."""

    family = "NumRet"
    trec = "num_ret"
    aliases = ("num_ret",)

    def compute(self, ctx):
        return ctx.seg_len.astype(np.float64)


@dataclass(frozen=True)
class NumRel(_Count):
    """Number of judged relevant documents of the topic, R, retrieved or not; summed."""

    family = "NumRel"
    trec = "num_rel"
    aliases = ("num_rel",)

    def compute(self, ctx):
        return ctx.num_rel().astype(np.float64)


@dataclass(frozen=True)
class NumRelRet(_Count):
    """Number of relevant documents retrieved; summed over topics."""

    family = "NumRelRet"
    trec = "num_rel_ret"
    aliases = ("num_rel_ret",)

    def compute(self, ctx):
        return ctx.total(ctx.cum_rel()).astype(np.float64)


@dataclass(frozen=True)
class NumNonrelJudgedRet(_Count):
    """Number of retrieved documents judged non-relevant (0 <= grade < level); summed."""

    family = "NumNonrelJudgedRet"
    trec = "num_nonrel_judged_ret"
    aliases = ("num_nonrel_judged_ret",)

    def compute(self, ctx):
        judged = ctx.total(ctx.cum_judged)
        return (judged - ctx.total(ctx.cum_rel())).astype(np.float64)
