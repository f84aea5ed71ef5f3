"""Gain tables shared by the gain-based measures (:mod:`.gain`) and the estimators that weigh
documents by gain (sample_eval's infNDCG, ht(nDCG), residual SDCG).

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

import numpy as np
from numba import njit, prange

from ..._threads import parallel_when_large
from ...errors import MeasureError
from ...model import JUDGED
from ..base import format_number


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


def shared_gain_tables(ctx, gains):
    """:func:`gain_tables` of ``gains``, built once per evaluation context."""
    return ctx.shared(("gain_tables", gains), lambda: gain_tables(ctx, gains))


@parallel_when_large
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
        gain_of_level, *_ = shared_gain_tables(ctx, gains)
        return _position_gains(
            ctx.offsets, ctx.seg_topic, ctx.pos_state, ctx.pos_grade, gain_of_level, JUDGED
        )

    return ctx.shared(("position_gains", gains), build)


@parallel_when_large
def cumulative_dcg(offsets, gain):
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
def ideal_dcg_at(ideal_offsets, ideal, k):
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


def rbp_gain_table(ctx, gains: tuple) -> np.ndarray:
    """``table[t, v]``: the gain of level ``v`` in topic ``t``, normalised as trec_eval 10's rbp.

    The trec_eval gain table of the topic (levels 0 to the highest judged level, plus the levels
    named in ``gains``; the gain of a level is the level unless mapped) is rescaled to
    (g - lo) / (hi - lo) when lo < 0 or hi > 1, with lo = min(0, table gains) and
    hi = max(0, table gains): binary gains stay 0/1, levels {0, 1, 2, 4} become level / 4.
    """

    def build():
        gain_of_level, *_ = ctx.shared(("gain_tables", gains), lambda: gain_tables(ctx, gains))
        named = np.array([g for _, g in gains] + [0.0])
        lo = np.minimum(gain_of_level.min(axis=1, initial=0.0), named.min())
        hi = np.maximum(gain_of_level.max(axis=1, initial=0.0), named.max())
        rescale = ((lo < 0) | (hi > 1))[:, None]
        span = np.where(hi > lo, hi - lo, 1.0)[:, None]
        return np.where(rescale, (gain_of_level - lo[:, None]) / span, gain_of_level)

    return ctx.shared(("rbp_gain_table", gains), build)
