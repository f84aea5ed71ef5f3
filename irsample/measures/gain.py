"""Gain-based measures: nDCG (Järvelin & Kekäläinen 2002) and trec_eval's relatives.

Gains: a judged document of level ``v`` has gain ``gain(v)`` = ``v`` unless a ``gains`` parameter
maps the level (trec_eval ``ndcg.1=3,2=9``); unjudged and unpooled documents have gain 0. The
*ideal* ranking of a topic lists the gains of all its judged documents (retrieved or not),
highest first, stopping at the first level whose gain is <= 0. Discount: log2(rank + 1).
trec_eval orders the gain table with a comparator that truncates gain differences to integers
(gains less than 1 apart compare equal) and glibc's stable merge sort; :func:`gain_tables`
reproduces that order so that exotic gain maps give trec_eval's numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from ..errors import MeasureError
from ..model import JUDGED
from .base import DEFAULT_CUTOFFS, Measure, format_number
from .context import safe_divide
from .kernels import segment_cumsum

_JK = "Järvelin & Kekäläinen, Cumulated gain-based evaluation of IR techniques, TOIS 2002"


def _merge_sort(items: list, cmp) -> list:
    """Top-down merge sort taking from the left run while ``cmp(left, right) <= 0`` (glibc)."""
    if len(items) <= 1:
        return list(items)
    half = len(items) // 2
    left, right = _merge_sort(items[:half], cmp), _merge_sort(items[half:], cmp)
    out, i, j = [], 0, 0
    while i < len(left) and j < len(right):
        if cmp(left[i], right[j]) <= 0:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]


def gain_tables(ctx, gains: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-topic gain tables as trec_eval builds them.

    Returns ``(gain_of_level, ideal_offsets, ideal, top_gain)``: ``gain_of_level[t, v]`` is the
    gain of level ``v`` in topic ``t``; ``ideal[ideal_offsets[t]:ideal_offsets[t+1]]`` the ideal
    gain sequence of topic ``t``; ``top_gain[t]`` the gain of the table's top entry (it starts
    trec_eval's ideal walks even when no document has that level).
    """
    judg = ctx.judgments
    judg.check_grade_levels("nDCG's gain tables")
    n_levels = int(judg.judged_grades.max()) + 1 if len(judg.judged_grades) else 1
    counts = np.zeros((ctx.n_topics, n_levels), dtype=np.int64)
    np.add.at(counts, (ctx.grade_topic, judg.judged_grades), 1)
    params = [(int(level), float(g)) for level, g in gains]
    gain_of_level = np.zeros((ctx.n_topics, n_levels))
    top_gain = np.zeros(ctx.n_topics)
    ideal_parts = []
    for t in range(ctx.n_topics):
        present = np.flatnonzero(counts[t])
        num_levels = int(present[-1]) + 1 if len(present) else 0
        entries = [[level, g, 0] for level, g in params]
        listed = {level for level, _ in params}
        for v in range(num_levels):
            if v in listed:
                next(e for e in entries if e[0] == v)[2] = counts[t, v]
            else:
                entries.append([v, float(v), counts[t, v]])
        entries = _merge_sort(entries, lambda a, b: int(a[1] - b[1]))
        for level, g, _ in entries:
            if 0 <= level < n_levels:
                gain_of_level[t, level] = g
        seq: list[float] = []
        # trec_eval tests the top entry's gain before looking at its count: a top gain <= 0
        # (possible when the truncating comparator ranks a 0 gain above 0.5) means no ideal
        top = entries[-1][1] if entries else 0.0
        for _level, g, count in reversed(entries if top > 0 else []):
            if count == 0:
                continue
            if g <= 0:
                break
            seq.extend([g] * count)
        ideal_parts.append(np.asarray(seq, dtype=np.float64))
        top_gain[t] = entries[-1][1] if entries else 0.0
    lengths = np.array([len(p) for p in ideal_parts], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    ideal = np.concatenate(ideal_parts) if ideal_parts else np.zeros(0)
    return gain_of_level, offsets, ideal, top_gain


def _tables(ctx, gains):
    return ctx.shared(("gain_tables", gains), lambda: gain_tables(ctx, gains))


@njit(cache=True, nogil=True, parallel=True)
def _position_gains(offsets, seg_topic, state, grade, gain_of_level, judged_state):
    out = np.zeros(grade.shape[0])
    for s in prange(offsets.shape[0] - 1):
        t = seg_topic[s]
        for i in range(offsets[s], offsets[s + 1]):
            if state[i] == judged_state:
                out[i] = gain_of_level[t, grade[i]]
    return out


def position_gains(ctx, gains: tuple) -> np.ndarray:
    """Gain of the document at every ranked position (0 unless judged)."""

    def build():
        gain_of_level, *_ = _tables(ctx, gains)
        return _position_gains(
            ctx.offsets, ctx.seg_topic, ctx.pos_state, ctx.pos_grade, gain_of_level, JUDGED
        )

    return ctx.shared(("position_gains", gains), build)


@njit(cache=True, nogil=True, parallel=True)
def _cumulative_dcg(offsets, gain):
    """Running DCG: sum of gain_i / log2(i + 1) through each rank, per segment."""
    out = np.empty_like(gain)
    for s in prange(offsets.shape[0] - 1):
        acc = 0.0
        for i in range(offsets[s], offsets[s + 1]):
            g = gain[i]
            if g != 0:
                acc += g / math.log2(i - offsets[s] + 2.0)
            out[i] = acc
    return out


@njit(cache=True, nogil=True)
def _ideal_dcg_at(ideal_offsets, ideal, k):
    """IDCG of every topic through rank ``k`` (``k <= 0``: the whole ideal ranking)."""
    n_topics = ideal_offsets.shape[0] - 1
    out = np.zeros(n_topics)
    for t in range(n_topics):
        total = 0.0
        a = ideal_offsets[t]
        b = ideal_offsets[t + 1]
        if k > 0:
            b = min(b, a + k)
        for i in range(a, b):
            total += ideal[i] / math.log2(i - a + 2.0)
        out[t] = total
    return out


def parse_gains(text: str) -> tuple:
    pairs = []
    for part in text.split(","):
        if part.count("=") != 1:
            raise MeasureError(f"malformed gain parameters {text!r} (expected level=gain,...)")
        level, gain = part.split("=")
        try:
            pairs.append((int(level), float(gain)))
        except ValueError:
            raise MeasureError(f"malformed gain parameters {text!r}") from None
    return tuple(pairs)


def gains_text(gains: tuple) -> str:
    return ",".join(f"{level}={format_number(g)}" for level, g in gains)



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
    def trec_name(self):
        base = self.trec_family
        return base if not self.gains else f"{base}_{gains_text(self.gains)}"


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
    def trec_name(self):
        if self.k is not None:
            return f"ndcg_cut_{self.k}" if not self.gains else self.name
        return super().trec_name

    def compute(self, ctx):
        _, ideal_offsets, ideal, _ = _tables(ctx, self.gains)
        dcg = ctx.shared(
            ("cum_dcg", self.gains),
            lambda: _cumulative_dcg(ctx.offsets, position_gains(ctx, self.gains)),
        )
        k = 0 if self.k is None else self.k
        idcg = _ideal_dcg_at(ideal_offsets, ideal, k)[ctx.seg_topic]
        got = ctx.total(dcg) if self.k is None else ctx.at_cutoff(dcg, self.k)
        return safe_divide(got, idcg)


@njit(cache=True, nogil=True)
def _ndcg_rel_kernel(offsets, seg_topic, gain, ideal_offsets, ideal):
    n_seg = offsets.shape[0] - 1
    out = np.zeros(n_seg)
    for s in range(n_seg):
        t = seg_topic[s]
        a = ideal_offsets[t]
        m = ideal_offsets[t + 1] - a
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
    citation = "trec_eval ndcg_rel; " + _JK

    def compute(self, ctx):
        _, ideal_offsets, ideal, _ = _tables(ctx, self.gains)
        return _ndcg_rel_kernel(
            ctx.offsets, ctx.seg_topic, position_gains(ctx, self.gains), ideal_offsets, ideal
        )


@njit(cache=True, nogil=True)
def _rndcg_kernel(offsets, seg_topic, gain, ideal_offsets, ideal, top_gain, num_rel):
    n_seg = offsets.shape[0] - 1
    out = np.zeros(n_seg)
    for s in range(n_seg):
        if num_rel[s] == 0:
            continue
        t = seg_topic[s]
        a = ideal_offsets[t]
        m = ideal_offsets[t + 1] - a
        n = offsets[s + 1] - offsets[s]
        ig = top_gain[t]
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
    citation = "trec_eval Rndcg; " + _JK

    def compute(self, ctx):
        _, ideal_offsets, ideal, top_gain = _tables(ctx, self.gains)
        return _rndcg_kernel(
            ctx.offsets, ctx.seg_topic, position_gains(ctx, self.gains),
            ideal_offsets, ideal, top_gain, ctx.num_rel(),
        )


@njit(cache=True, nogil=True)
def _g_kernel(offsets, seg_topic, gain, ideal_offsets, ideal):
    n_seg = offsets.shape[0] - 1
    out = np.zeros(n_seg)
    for s in range(n_seg):
        t = seg_topic[s]
        a = ideal_offsets[t]
        m = ideal_offsets[t + 1] - a
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
    citation = "trec_eval G"

    def compute(self, ctx):
        _, ideal_offsets, ideal, _ = _tables(ctx, self.gains)
        return _g_kernel(
            ctx.offsets, ctx.seg_topic, position_gains(ctx, self.gains), ideal_offsets, ideal
        )


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
