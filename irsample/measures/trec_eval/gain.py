"""Gain-based measures: nDCG (Järvelin & Kekäläinen 2002) and trec_eval's relatives.

Gains: a judged document of level ``v`` has gain ``gain(v)`` = ``v`` unless a ``gains`` parameter
maps the level (trec_eval ``ndcg.1=3,2=9``); unjudged and unpooled documents have gain 0. The
*ideal* ranking of a topic lists the gains of all its judged documents (retrieved or not),
highest first, stopping at the first level whose gain is <= 0. Discount: log2(rank + 1).
trec_eval orders the gain table with a comparator that truncates gain differences to integers
(gains less than 1 apart compare equal) and glibc's stable merge sort; the tables
(:mod:`.gain_tables`) reproduce that order so that exotic gain maps give trec_eval's numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ...errors import MeasureError
from ..base import DEFAULT_CUTOFFS, Measure
from ..context import safe_divide
from ..kernels import segment_cumsum
from .gain_tables import (
    cumulative_dcg,
    gains_text,
    ideal_dcg_at,
    parse_gains,
    position_gains,
    shared_gain_tables,
)

_JK = "Järvelin & Kekäläinen, Cumulated gain-based evaluation of IR techniques, TOIS 2002"


@dataclass(frozen=True)
class _GainMeasure(Measure):
    """Shared parameter handling of the gain family (not registered itself)."""

    gains: tuple = ()

    def __post_init__(self):
        super().__post_init__()
        for level, _ in self.gains:
            if level < 0:
                raise MeasureError(f"{self.family}: gain levels must be >= 0, got {level}")

    @classmethod
    def from_trec(cls, params, name=None):
        return [cls(gains=parse_gains(params))] if params else [cls()]

    @property
    def canonical_trec_name(self):
        base = self.trec_family
        return base if not self.gains else f"{base}_{gains_text(self.gains)}"

    def walk_ideal(self, ctx, kernel, *extra):
        """``kernel(offsets, seg_topic, gain per position, ideal_offsets, ideal, *extra)``: the
        walk of a measure that compares each ranking with its topic's ideal ranking."""
        _, ideal_offsets, ideal, _ = shared_gain_tables(ctx, self.gains)
        return kernel(ctx.offsets, ctx.seg_topic, position_gains(ctx, self.gains),
                      ideal_offsets, ideal, *extra)


@dataclass(frozen=True)
class NDCG(_GainMeasure):
    """nDCG: DCG / IDCG with DCG = sum over ranks i of gain_i / log2(i + 1).

    Without a cut-off (trec_eval ``ndcg``) DCG runs over the whole ranking and IDCG over the whole
    ideal ranking; ``nDCG@k`` (trec_eval ``ndcg_cut_k``) truncates both at rank k. 0 when IDCG
    is 0. Not affected by the relevance level. Järvelin & Kekäläinen, TOIS 2002.
    """

    k: int | None = None
    family = "nDCG"
    trec = "ndcg"
    trec_typed = ("ndcg",)
    trec_extra = ("ndcg_cut",)
    aliases = ("NDCG",)
    trec_defaults = DEFAULT_CUTOFFS
    citation = _JK

    @classmethod
    def from_trec(cls, params, name=None):
        if name == "ndcg_cut":
            return Measure.from_trec.__func__(cls, params, name)
        return super().from_trec(params, name)

    @property
    def trec_family(self):
        if self.k is None:
            return "ndcg"
        return "ndcg_cut" if not self.gains else None

    @property
    def canonical_trec_name(self):
        if self.k is not None:
            return f"ndcg_cut_{self.k}" if not self.gains else self.name
        return super().canonical_trec_name

    def compute(self, ctx):
        _, ideal_offsets, ideal, _ = shared_gain_tables(ctx, self.gains)
        dcg = ctx.shared(
            ("cum_dcg", self.gains),
            lambda: cumulative_dcg(ctx.offsets, position_gains(ctx, self.gains)),
        )
        k = 0 if self.k is None else self.k
        idcg = ideal_dcg_at(ideal_offsets, ideal, k)[ctx.seg_topic]
        got = ctx.total(dcg) if self.k is None else ctx.at_cutoff(dcg, self.k)
        return safe_divide(got, idcg)


@njit(inline="always")
def ideal_span(ideal_offsets, topic):
    """Start and length of ``topic``'s ideal ranking in the ideal-gains array (see
    :func:`~irsample.measures.trec_eval.gain_tables.gain_tables`)."""
    a = ideal_offsets[topic]
    return a, ideal_offsets[topic + 1] - a


@njit(cache=True, nogil=True)
def _ndcg_rel_kernel(offsets, seg_topic, gain, ideal_offsets, ideal):
    n_seg = offsets.shape[0] - 1
    out = np.zeros(n_seg)
    for s in range(n_seg):
        a, m = ideal_span(ideal_offsets, seg_topic[s])
        dcg = 0.0
        idcg = 0.0
        total = 0.0
        rel_ret = 0
        n = offsets[s + 1] - offsets[s]
        if m == 0:
            continue  # no ideal ranking: 0 (trec_eval divides by zero)
        for i in range(n):
            g = gain[offsets[s] + i]
            disc = math.log2(i + 2.0)
            if g != 0:
                dcg += g / disc
            if i < m:
                idcg += ideal[a + i] / disc
            if g > 0:
                total += dcg / idcg
                rel_ret += 1
        for i in range(n, m):
            idcg += ideal[a + i] / math.log2(i + 2.0)
        if idcg > 0:
            total += (m - rel_ret) * dcg / idcg
        out[s] = total / m if total > 0 else 0.0
    return out


@dataclass(frozen=True)
class NDCGRel(_GainMeasure):
    """nDCG averaged over relevant documents (trec_eval ``ndcg_rel``).

    With m = length of the ideal ranking: (1/m) * [sum over retrieved ranks i with positive gain
    of DCG(i)/IDCG(min(i, m)) + (m - r+) * DCG(n)/IDCG(m)], r+ = retrieved documents with
    positive gain; 0 when the ideal ranking is empty. trec_eval, after Järvelin & Kekäläinen (2002).
    """

    family = "nDCG_rel"
    trec = "ndcg_rel"
    trec_typed = ("ndcg_rel",)
    citation = "trec_eval ndcg_rel; " + _JK

    def compute(self, ctx):
        return self.walk_ideal(ctx, _ndcg_rel_kernel)


@njit(cache=True, nogil=True)
def _rndcg_kernel(offsets, seg_topic, gain, ideal_offsets, ideal, top_gain, num_rel):
    n_seg = offsets.shape[0] - 1
    out = np.zeros(n_seg)
    for s in range(n_seg):
        if num_rel[s] == 0:
            continue
        a, m = ideal_span(ideal_offsets, seg_topic[s])
        n = offsets[s + 1] - offsets[s]
        ig = top_gain[seg_topic[s]]
        old = ig
        dcg = 0.0
        idcg = 0.0
        total = 0.0
        samples = 0
        i = 0
        while i < n and ig > 0:
            g = gain[offsets[s] + i]
            ig = ideal[a + i] if i < m else 0.0
            if old != ig:
                if idcg > 0:
                    total += dcg / idcg
                    samples += 1
                old = ig
            if g != 0:
                dcg += g / math.log2(i + 2.0)
            if ig > 0:
                idcg += ig / math.log2(i + 2.0)
            i += 1
        if i < n:
            while i < n:
                g = gain[offsets[s] + i]
                if g != 0:
                    dcg += g / math.log2(i + 2.0)
                i += 1
            if idcg > 0:
                total += dcg / idcg
                samples += 1
        while ig > 0:
            ig = ideal[a + i] if i < m else 0.0
            if old != ig:
                if idcg > 0:
                    total += dcg / idcg
                    samples += 1
                old = ig
            if ig > 0:
                idcg += ig / math.log2(i + 2.0)
            i += 1
        out[s] = total / samples if samples > 0 else 0.0
    return out


@dataclass(frozen=True)
class RNDCG(_GainMeasure):
    """nDCG sampled where the ideal gain changes, averaged (trec_eval ``Rndcg``).

    DCG/IDCG is taken at every rank where the ideal ranking moves to a lower gain level
    (including its end) and the samples are averaged; 0 when R = 0, and 0 when no sample is
    taken (no positive ideal gain; trec_eval divides 0 by 0 there). trec_eval, after
    Järvelin & Kekäläinen (2002).
    """

    family = "RnDCG"
    trec = "Rndcg"
    trec_typed = ("Rndcg",)
    citation = "trec_eval Rndcg; " + _JK

    def compute(self, ctx):
        top_gain = shared_gain_tables(ctx, self.gains)[3]
        return self.walk_ideal(ctx, _rndcg_kernel, top_gain, ctx.num_rel())


@njit(cache=True, nogil=True)
def _g_kernel(offsets, seg_topic, gain, ideal_offsets, ideal):
    n_seg = offsets.shape[0] - 1
    out = np.zeros(n_seg)
    for s in range(n_seg):
        a, m = ideal_span(ideal_offsets, seg_topic[s])
        ideal_sum = 0.0
        for i in range(m):
            ideal_sum += ideal[a + i]
        if ideal_sum <= 0:
            continue
        sum_ret = 0.0
        sum_ideal_step = 0.0
        total = 0.0
        for i in range(offsets[s + 1] - offsets[s]):
            g = gain[offsets[s] + i]
            sum_ret += g
            ig = ideal[a + i] if i < m else 0.0
            sum_ideal_step += ig if ig >= 1.0 else 1.0
            if g != 0:
                total += g / math.log2(2.0 + sum_ideal_step - sum_ret)
        out[s] = total / ideal_sum
    return out


@dataclass(frozen=True)
class G(_GainMeasure):
    """Normalised cumulative gain with a gain-dependent discount (trec_eval ``G``).

    For the document at rank i with gain g_i: g_i / log2(2 + S_i - C_i), where C_i is the
    retrieved gain through i and S_i the sum through i of max(ideal gain, 1) (1 past the ideal
    ranking); the total is divided by the sum of the ideal gains. trec_eval ``G``.
    """

    family = "G"
    trec = "G"
    trec_typed = ("G",)
    citation = "trec_eval G"

    def compute(self, ctx):
        return self.walk_ideal(ctx, _g_kernel)


@dataclass(frozen=True)
class DCG(_GainMeasure):
    """DCG over the whole ranking: sum over ranks i of gain_i / log2(i + 1), nDCG's numerator.

    The gains as for nDCG (negative ones too); no normalisation, so the value grows with the
    ranking and the topic. trec_eval 10 ``dcg``; Järvelin & Kekäläinen, TOIS 2002.
    """

    family = "DCG"
    trec = "dcg"
    trec_typed = ("dcg",)
    citation = _JK + "; trec_eval 10 dcg"

    def compute(self, ctx):
        dcg = ctx.shared(
            ("cum_dcg", self.gains),
            lambda: cumulative_dcg(ctx.offsets, position_gains(ctx, self.gains)),
        )
        return ctx.total(dcg)


@dataclass(frozen=True)
class IdealDCG(_GainMeasure):
    """IDCG: the DCG of the topic's ideal ranking (its judged documents' gains, highest first,
    down to the first level of gain <= 0), nDCG's denominator, whatever the run retrieved; a
    topic the run lacks gets it too under -c, as trec_eval 10 evaluates it as an empty ranking.
    trec_eval 10 ``ideal_dcg``; Järvelin & Kekäläinen, TOIS 2002.
    """

    family = "IDCG"
    trec = "ideal_dcg"
    trec_typed = ("ideal_dcg",)
    aliases = ("IdealDCG",)
    citation = _JK + "; trec_eval 10 ideal_dcg"

    def compute(self, ctx):
        _, ideal_offsets, ideal, _ = shared_gain_tables(ctx, self.gains)
        return ideal_dcg_at(ideal_offsets, ideal, 0)[ctx.seg_topic]


@dataclass(frozen=True)
class BinG(Measure):
    """Binary G: (1/R) * sum over retrieved relevant documents of 1 / log2(2 + nonrel above).

    "nonrel above" counts every non-relevant document above it, judged or not. trec_eval ``binG``.
    """

    family = "binG"
    trec = "binG"
    citation = "trec_eval binG"

    def compute(self, ctx):
        rel = ctx.rel().astype(bool)
        nonrel_above = ctx.rank - ctx.cum_rel()
        terms = np.zeros(len(rel))
        terms[rel] = 1.0 / np.log2(2.0 + nonrel_above[rel])
        return safe_divide(ctx.total(segment_cumsum(ctx.offsets, terms)), ctx.num_rel())
