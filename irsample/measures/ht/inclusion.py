"""Inclusion probabilities and design variances read from :class:`~irsample.model.Judgments`.

The frame of a topic is its pool: every document in the judgments (judged or pooled-unjudged);
documents outside it count as non-relevant (reference-semantics §3.6). A judged document d has a
first-order inclusion probability pi_d:

- ``judgments.inclusion[d]`` when the judgments carry probabilities (design samples, prels);
- otherwise n_h / N_h of its stratum h (``stratum_sampled / stratum_size``): a stratified simple
  random sample (stratified qrels; complete qrels give pi = 1). Plain qrels with -1 entries
  state no design: they are refused (``Judgments.require_probabilities``) unless the user
  assumes a uniform one, which makes them one stratum per topic.

Second order, within a cell (topic x stratum) of n' sampled documents with pi < 1, Brewer's
approximation (Brewer & Donadio 2003; Särndal, Swensson & Wretman §3.6 for the pi_de of
high-entropy designs) in product form: pi_de = pi_d pi_e g_d g_e with
g_d^2 = (n' - 1) / (n' - pi_d). For a simple random sample (pi = n/N) this is exact:
g^2 = (n - 1) N / (n (N - 1)). For randomised systematic PPS (``importance``), whose exact pi_de
have no closed form, it is the standard approximation for that design. Documents with pi = 1 are
certain (pi_de = pi_e); different cells are independent (pi_de = pi_d pi_e). A cell with n' = 1
has pi_de = 0 for its pairs: their terms cannot be estimated and are left out (g = 0).

Variance of a linear estimate sum_S x_d (x_d = y_d / pi_d) per cell, from the sample:
v_h = n'/(n' - 1) sum_{S_h} (1 - pi_d)(x_d - xbar_h)^2 (Hájek's approximation for fixed-size
designs; for SRS it is exactly N^2 (1 - f) s^2 / n), 0 for n' < 2 and for certain documents;
summed over cells. Covariances of two totals by the same bilinear form.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np

from ...errors import MeasureError
from ...model import JUDGED
from ..context import safe_divide
from .walks import gather_design, sampled_positions


@dataclass(frozen=True, eq=False)
class SampledPositions:
    """The ranked positions whose document is sampled (pi > 0), segment by segment in rank
    order, with their design facts: the estimators' walks read these alone (``walks.py``),
    since every other position has pi = 0 and adds nothing to any sum. A position's facts are
    its document's (``doc``: its index among the sampled documents ``docs``), looked up in the
    small per-document tables rather than in arrays over every document of the collection."""

    offsets: np.ndarray  #: (n_seg + 1,) CSR over segments
    index: np.ndarray  #: position among all ranked positions of the context
    rank: np.ndarray  #: 1-based rank in its ranking
    doc: np.ndarray  #: the position's document among ``docs``
    docs: np.ndarray  #: the sampled documents (tdi, ascending)
    doc_pi: np.ndarray
    doc_cell: np.ndarray
    doc_g: np.ndarray
    n_positions: int  #: ranked positions of the context, sampled or not

    @cached_property
    def tdi(self) -> np.ndarray:
        return self.docs[self.doc]

    @cached_property
    def pi(self) -> np.ndarray:
        return self.doc_pi[self.doc]

    @cached_property
    def cell(self) -> np.ndarray:
        return self.doc_cell[self.doc]

    @cached_property
    def g(self) -> np.ndarray:
        return self.doc_g[self.doc]

    def rel(self, ctx) -> np.ndarray:
        """``ctx.rel()`` at these positions (int64), cached per context."""
        def build():
            j = ctx.judgments
            rel = (j.state[self.docs] == JUDGED) & (j.grade[self.docs] >= ctx.rel_level)
            return rel.astype(np.int64)[self.doc]

        return ctx.shared(("ht_sampled_rel", ctx.rel_level), build)

    def by_grade(self, ctx, table: np.ndarray) -> np.ndarray:
        """``table[topic, grade]`` of each position's judged document (0 where not judged)."""
        j = ctx.judgments
        topic = ctx.collection.tdi_topic[self.docs]
        value = np.where(j.state[self.docs] == JUDGED,
                         table[topic, np.maximum(j.grade[self.docs], 0)], 0.0)
        return value[self.doc]

    def scatter(self, values: np.ndarray) -> np.ndarray:
        """``values`` at these positions as an array over every ranked position (0 elsewhere)."""
        out = np.zeros(self.n_positions)
        out[self.index] = values
        return out


@dataclass(frozen=True, eq=False)
class HTDesign:
    """Per-document and per-cell design facts of one evaluation context; per position, the
    sampled positions (``sampled``), and on demand every position (``pos_pi``, ``pos_cell``,
    ``pos_g``; 0 where not sampled)."""

    n_cells: int  #: strata per topic
    tdi_pi: np.ndarray  #: (n_tdi,) pi of judged documents, 0 elsewhere
    tdi_cell: np.ndarray  #: (n_tdi,) stratum of the document (0 outside every stratum)
    tdi_g: np.ndarray  #: (n_tdi,) pair factor g
    cell_n: np.ndarray  #: (T, S) sampled documents with pi < 1 (n')
    cell_w: np.ndarray  #: (T, S) sum of (1 - pi) over them
    cell_w2: np.ndarray  #: (T, S) sum of (1 - pi)^2 over them (``jackknife.py``)
    outside: np.ndarray  #: (T, S, G) sampled documents outside the collection, by grade
    outside_pi: np.ndarray  #: (T, S) their pi (the cell's rate)
    sampled: SampledPositions
    pos_tdi: np.ndarray  #: the context's ranked documents (for the per-position arrays)

    @property
    def sampled_tdi(self) -> np.ndarray:
        """The sampled documents (pi > 0), in tdi order."""
        return self.sampled.docs

    @cached_property
    def _positions(self):
        return gather_design(self.pos_tdi, self.tdi_pi, self.tdi_cell, self.tdi_g)

    @property
    def pos_pi(self) -> np.ndarray:
        return self._positions[0]

    @property
    def pos_cell(self) -> np.ndarray:
        return self._positions[1]

    @property
    def pos_g(self) -> np.ndarray:
        return self._positions[2]


def ht_design(ctx) -> HTDesign:
    """The :class:`HTDesign` of a context (cached)."""
    return ctx.shared("ht_design", lambda: _build(ctx))


def stratum_rates(judgments) -> np.ndarray:
    """(T, S): each stratum's sampling rate n_h / N_h (0 where it is empty): the pi of its
    documents in a stratified simple random sample."""
    return safe_divide(judgments.stratum_sampled.astype(np.float64),
                       judgments.stratum_size.astype(np.float64))


def open_cells(judgments, design: HTDesign) -> tuple[np.ndarray, np.ndarray]:
    """(T, S) each: the documents of a cell not judged with certainty (pi = 1: a planner's
    pilot or earlier batch; ``sequential.py``, ``sampling/allocated.py``) and how many of
    them the sample judged, N'_h and n'_h. Given the certain ones, a design that tops up each
    cell by a simple random sample of its other documents is a stratified SRS of them at the
    rate n'_h / N'_h (without certain documents: N_h, n_h and the stratum's rate)."""
    certain = judgments.stratum_sampled - design.cell_n
    return ((judgments.stratum_size - certain).astype(np.float64),
            design.cell_n.astype(np.float64))


def _build(ctx) -> HTDesign:
    j = ctx.judgments
    if j.stratum is None:
        raise MeasureError("ht(...) needs judgments built by Judgments.from_qrels/from_arrays")
    j.require_probabilities("a design-based estimator (ht(M), ppi(M), auto(M))")
    col = ctx.collection
    n_topics, n_cells = ctx.n_topics, len(j.stratum_labels)
    cells = n_topics * n_cells
    judged = np.flatnonzero(j.state == JUDGED)  # work on the judged documents only
    topic = np.searchsorted(col.topic_doc_offsets, judged, side="right") - 1
    cell = np.maximum(j.stratum[judged], 0).astype(np.int64)
    flat = topic * n_cells + cell
    sampled = j.stratum_sampled.astype(np.float64)
    rate = stratum_rates(j)
    pi = j.judged_inclusion(col.tdi_topic)[judged]
    certain = pi >= 1.0

    def count(mask, weights=None):
        w = None if weights is None else weights[mask]
        return np.bincount(flat[mask], weights=w, minlength=cells).reshape(n_topics, n_cells)

    in_collection = count(np.ones(len(judged), bool))
    # sampled documents no run retrieved (not in the collection): counted at the cell's rate
    outside_n = np.maximum(sampled - in_collection, 0)
    outside_pi = np.where(outside_n > 0, rate, 0.0)
    n_prime = sampled - count(certain) - np.where(outside_pi >= 1.0, outside_n, 0)
    n_doc = n_prime.ravel()[flat]
    g2 = safe_divide(np.maximum(n_doc - 1, 0), n_doc - pi)
    g = np.where(certain, 1.0, np.sqrt(np.maximum(g2, 0.0)))
    w = count(~certain, 1.0 - pi) + np.where(outside_pi < 1.0, outside_n * (1.0 - outside_pi), 0.0)
    w2 = count(~certain, (1.0 - pi) ** 2) + np.where(outside_pi < 1.0,
                                                  outside_n * (1.0 - outside_pi) ** 2, 0.0)
    grades = j.stratum_grades.astype(np.float64)  # (T, S, G): entries with rel = g, g >= 1
    n_grades = grades.shape[2]
    grade = j.grade[judged]
    pos = grade > 0
    rel_in = np.bincount(flat[pos] * n_grades + np.minimum(grade[pos], n_grades - 1),
                         minlength=cells * n_grades).reshape(n_topics, n_cells, n_grades)
    outside = np.maximum(grades - rel_in, 0.0)
    tdi_pi = np.zeros(col.n_tdi)
    tdi_pi[judged] = pi
    tdi_cell = np.zeros(col.n_tdi, dtype=np.int64)
    tdi_cell[judged] = cell
    tdi_g = np.ones(col.n_tdi)
    tdi_g[judged] = g
    positive = pi > 0
    docs = judged[positive]
    local = np.full(col.n_tdi, -1, dtype=np.int32)
    local[docs] = np.arange(len(docs), dtype=np.int32)
    offsets, index, rank, doc = sampled_positions(ctx.offsets, ctx.pos_tdi, local)
    at = SampledPositions(offsets, index, rank, doc, docs, pi[positive], cell[positive],
                          g[positive], len(ctx.pos_tdi))
    return HTDesign(
        n_cells, tdi_pi, tdi_cell, tdi_g, np.maximum(n_prime, 0), w, w2, outside, outside_pi, at,
        ctx.pos_tdi,
    )


@dataclass(frozen=True)
class TopicTotal:
    """A topic-level total Y = sum over the frame of y_d, estimated from the sample: ``value``
    (T,) the HT estimate; per cell (T, S) the sums over sampled documents with pi < 1 of
    x = y/pi: ``sx``, ``swx`` = sum (1-pi) x, ``swxx`` = sum (1-pi) x^2."""

    value: np.ndarray
    sx: np.ndarray
    swx: np.ndarray
    swxx: np.ndarray


def topic_total(
    ctx, design: HTDesign, tdi_value: np.ndarray, grade_value: np.ndarray
) -> TopicTotal:
    """The total of ``tdi_value`` (per document; ``grade_value[t, g]`` the same value by topic and
    grade, for sampled documents outside the collection)."""
    n_topics, n_cells = ctx.n_topics, design.n_cells
    # the sampled documents alone (in tdi order, as a mask over every document would take them)
    sampled = design.sampled_tdi
    pi = design.tdi_pi[sampled]
    topic = ctx.collection.tdi_topic[sampled]
    flat = topic.astype(np.int64) * n_cells + design.tdi_cell[sampled]
    x = tdi_value[sampled] / pi
    value = np.bincount(topic, weights=x, minlength=n_topics)
    unc = pi < 1.0
    w = 1.0 - pi

    def by_cell(weights):
        return np.bincount(flat[unc], weights=weights[unc], minlength=n_topics * n_cells).reshape(
            n_topics, n_cells
        )

    sx, swx, swxx = by_cell(x), by_cell(w * x), by_cell(w * x * x)
    # documents outside the collection: per grade, count * value / rate
    per = np.einsum("tsg,tg->ts", design.outside, grade_value)
    per_sq = np.einsum("tsg,tg->ts", design.outside, grade_value * grade_value)
    inv = safe_divide(1.0, design.outside_pi)
    value = value + (per * inv).sum(axis=1)
    part = design.outside_pi < 1.0
    wo = np.where(part, 1.0 - design.outside_pi, 0.0)
    sx = sx + np.where(part, per * inv, 0.0)
    swx = swx + wo * per * inv
    swxx = swxx + wo * per_sq * inv * inv
    return TopicTotal(value, sx, swx, swxx)


class Cells(NamedTuple):
    """What :func:`cell_variance` reads of a design: per row (a topic, or a replicate's reduced
    sample: ``corrected_replicates.py``, ``ndcg_replicates.py``) and cell the sampled documents
    with pi < 1 and their sum of 1 - pi."""

    cell_n: np.ndarray
    cell_w: np.ndarray


def cell_variance(design: HTDesign | Cells, seg_topic, sx, swx, swxx) -> np.ndarray:
    """sum over cells of n'/(n'-1) [swxx - 2 xbar swx + xbar^2 w], xbar = sx/n' (module docstring);
    arrays (n_seg, S) already combined (e.g. z = x - theta y)."""
    n = design.cell_n[seg_topic].astype(np.float64)
    w = design.cell_w[seg_topic]
    mean = safe_divide(sx, n)
    spread = swxx - 2.0 * mean * swx + mean * mean * w
    factor = np.where(n >= 2, safe_divide(n, n - 1.0), 0.0)
    return (factor * spread).sum(axis=1)


def total_variance(design: HTDesign, total: TopicTotal) -> np.ndarray:
    """Per topic: the design variance of a :class:`TopicTotal`'s estimate (:func:`cell_variance`
    over the topic's cells)."""
    return cell_variance(design, np.arange(len(total.value)), total.sx, total.swx, total.swxx)
