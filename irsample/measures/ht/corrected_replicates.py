"""Jackknife replicates of ht(AP) as estimated, Taylor correction included, where its interval
takes the jackknife (the planner's designs, importance samples; ``ht/estimator.py``).

Why. ht(AP) is theta^_bc = theta^ - (theta^ v(R^) - c(N^, R^)) / R^^2 (Cochran §6.8), and
:func:`~.jackknife.ap_replicates` recomputes the plain ratio N^/R^ without each sampled
document, not the correction, whose v and c are the sample's own moments and move with the
draw. On TREC-8's planned samples the correction adds 9-19% to a topic's variance of the
difference of two runs (tie-preserving twins, 100 trials), which the plain ratios' jackknife
does not carry: on the depth-20 pool the corrected difference's spread was 1.083 of its
standard error and ``compare`` rejected 0.064-0.077 of the twins at 0.05 (REPRODUCTION.md,
"compare on TREC-8's depth-20 planned cells: the Taylor correction's own variance").

Replicates. Deleting sampled document d of cell h scales the weights 1/pi of the cell's other
sampled documents by s_h = n_h / (n_h - 1), as the stratified jackknife does (Wolter §4.5; the
pair factors g kept, as in ``ht/jackknife.py``), i.e. pi -> pi / s_h, with the cell's n'_h - 1
documents and sum of 1 - pi in its variance. On that sample the estimator is recomputed with
its own kernels: ``walks.ap_walk`` gives N^_(-d) and the influences u of the other documents,
``walks.cell_sums`` and ``inclusion.cell_variance`` give v(R^)_(-d) and c(N^, R^)_(-d), and the
replicate is

    theta_(-d) - (theta_(-d) v(R^)_(-d) - c(N^, R^)_(-d)) / R^_(-d)^2

with theta_(-d) = N^_(-d) / R^_(-d) (0 where R^_(-d) = 0, as the plain replicates), the plain
replicate of ``ht/jackknife.py`` to rounding. Topics are independent, so each pass deletes one
unit of every topic at once: first the topic's sampled relevant documents in ``ap_replicates``'
order, then a non-relevant document of each cell sampled twice or more (one replicate serves
them all: a non-relevant document enters neither N^ nor R^, only its cell's count and weights).
A pass walks the rankings of its topics at the positions of their sampled relevant documents
alone (no other adds a term to any sum it takes: :class:`_Facts`); the passes are as many as the
most units of any topic.

Measured on the twins of ``benchmarks/compare_twin_anatomy.py`` (TREC-8, planned 10%, 100
trials, seed 2525, identified topics): the corrected difference's spread over its standard
error 1.083 -> 0.987 on the depth-20 pool and 1.041 -> 0.974 on the depth-100 pool, normal-test
rejections 0.075 -> 0.053 and 0.068 -> 0.054. Holding the other documents' influences fixed
(the cell sums less the deleted document's terms alone) was tried first: 1.097 and 1.010, no
better than the plain ratios' jackknife on the shallow pool.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..context import safe_divide
from .inclusion import Cells, cell_variance
from .walks import ap_walk, cell_sums


def corrected_replicates(ctx, design, replicates, cutoff: int, tdi_rel: np.ndarray) -> tuple:
    """``replicates`` (:func:`~.jackknife.ap_replicates`) with the replicates of the corrected
    ratio in place of the plain ones (module docstring); the deleted units unchanged, so every
    consumer of ``ap_replicates`` reads them alike. ``tdi_rel``: 1 for a judged relevant
    document (``estimator.tdi_relevant``)."""
    rep_offsets, rep, base, units = replicates
    rep_c, base_c = np.zeros_like(rep), np.zeros_like(base)
    n_runs, n_topics = ctx.n_runs, ctx.n_topics
    for deleted, _, corrected in passes(ctx, design, replicates, cutoff, tdi_rel):
        for t, relevant, which, _, _ in deleted:
            segs = np.arange(n_runs) * n_topics + t
            if relevant:
                rep_c[rep_offsets[segs] + which] = corrected[segs]
            else:
                base_c[segs, which] = corrected[segs]
    return rep_offsets, rep_c, base_c, units


class _Facts(NamedTuple):
    """What every pass reads unchanged: the sampled judged relevant documents, grouped by
    topic (CSR ``doc_offsets``), and the positions where runs ranked them, segment by segment
    in rank order. The walks and the cell sums read no other document: a non-relevant one adds
    nothing to ``walks.ap_walk``'s and ``walks.cell_sums``' sums, nor to R^'s, so the sums are
    the same, term by term and in the same order."""

    offsets: np.ndarray  #: (n_seg + 1,) CSR of the positions over segments
    rank: np.ndarray
    doc: np.ndarray  #: the position's document among the relevant ones below
    cell: np.ndarray
    g: np.ndarray
    tdi: np.ndarray
    doc_offsets: np.ndarray  #: (T + 1,) CSR of the relevant documents over topics
    doc_tdi: np.ndarray  #: ascending
    doc_pi: np.ndarray
    doc_topic: np.ndarray
    doc_cell: np.ndarray


def pass_facts(ctx, design, tdi_rel: np.ndarray) -> _Facts:
    """:class:`_Facts` of ``design`` (once per estimate, for all its passes); ``tdi_rel`` as
    :func:`corrected_replicates` takes it."""
    at = design.sampled
    relevant = np.flatnonzero(tdi_rel[at.docs] != 0)
    local = np.full(len(at.docs), -1, dtype=np.int64)
    local[relevant] = np.arange(len(relevant))
    keep = local[at.doc] >= 0
    seg = np.repeat(np.arange(ctx.n_seg), np.diff(at.offsets))
    counts = np.bincount(seg[keep], minlength=ctx.n_seg)
    doc_topic = ctx.collection.tdi_topic[at.docs[relevant]].astype(np.int64)
    return _Facts(
        offsets=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        rank=at.rank[keep], doc=local[at.doc[keep]], cell=at.cell[keep], g=at.g[keep],
        tdi=at.tdi[keep],
        doc_offsets=np.searchsorted(doc_topic, np.arange(ctx.n_topics + 1)).astype(np.int64),
        doc_tdi=at.docs[relevant], doc_pi=at.doc_pi[relevant], doc_topic=doc_topic,
        doc_cell=at.doc_cell[relevant].astype(np.int64))


def _ranges(offsets: np.ndarray, which: np.ndarray) -> np.ndarray:
    """The indices offsets[k] .. offsets[k + 1] - 1 of every k in ``which``, in order."""
    lengths = offsets[which + 1] - offsets[which]
    starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    return np.repeat(offsets[which] - starts[:-1], lengths) + np.arange(starts[-1])


def passes(ctx, design, replicates, cutoff: int, tdi_rel: np.ndarray):
    """Yield ``(deleted, theta, corrected)`` for each pass (module docstring): the units
    deleted (as :func:`deletion_pass` takes them) and, per segment, the plain and the corrected
    ratio without them."""
    offsets, cell, pi, _ = replicates[3]
    n = design.cell_n.astype(np.float64)
    plan = []  # per topic: (relevant, unit index or cell, cell, pi of the deleted document)
    for t in range(ctx.n_topics):
        mine = [(True, k - offsets[t], cell[k], pi[k]) for k in range(offsets[t], offsets[t + 1])
                if pi[k] < 1.0 and n[t, cell[k]] >= 2]  # a cell sampled once has no replicate
        mine += [(False, h, h, 1.0 - design.cell_w[t, h] / n[t, h])
                 for h in np.flatnonzero(n[t] >= 2)]
        plan.append(mine)
    facts = pass_facts(ctx, design, tdi_rel)
    for k in range(max((len(p) for p in plan), default=0)):
        deleted = [(t, *plan[t][k]) for t in range(ctx.n_topics) if k < len(plan[t])]
        yield (deleted, *deletion_pass(ctx, design, replicates, cutoff, tdi_rel, deleted, facts))


def deletion_pass(ctx, design, replicates, cutoff: int, tdi_rel: np.ndarray, deleted,
                  facts: _Facts | None = None):
    """Per segment, the plain ratio and the corrected one on the sample less one unit of some
    topics (module docstring): ``deleted`` holds ``(topic, relevant, which, cell, pi_d)``, with
    ``which`` the unit's index among the topic's units of ``replicates`` where ``relevant``
    (the cell's non-relevant deletion otherwise); each topic at most once. With nothing deleted
    it gives the estimate itself; otherwise 0 on the topics nothing is deleted from. ``facts``:
    :func:`pass_facts` of the design, if at hand."""
    _, _, _, (offsets, _, _, key) = replicates
    f = pass_facts(ctx, design, tdi_rel) if facts is None else facts
    n_cells = design.n_cells
    n = design.cell_n.astype(np.float64)
    w = design.cell_w.copy()
    scale = np.ones_like(n)  # per cell: 1 / s_h where a unit is deleted
    out_rel = design.outside[:, :, ctx.rel_level:].sum(axis=2).astype(np.float64)
    gone = []
    for t, relevant, which, h, pi_d in deleted:
        s = n[t, h] / (n[t, h] - 1.0)
        scale[t, h] = 1.0 / s
        w[t, h] = n[t, h] - 1.0 - (n[t, h] - w[t, h] - pi_d) / s
        n[t, h] -= 1.0
        if relevant:
            tdi = key[offsets[t] + which]
            if tdi >= 0:
                gone.append(np.searchsorted(f.doc_tdi, tdi))
            else:  # a sampled relevant document outside the collection
                out_rel[t, h] -= 1.0
    # only the topics this pass deletes from (all of them with nothing deleted): later passes
    # hold the few topics with the most units
    topics = np.unique([t for t, *_ in deleted]) if deleted else np.arange(ctx.n_topics)
    mine = _ranges(f.doc_offsets, topics)
    pi_0, topic, cell = f.doc_pi[mine], f.doc_topic[mine], f.doc_cell[mine]
    doc_pi = f.doc_pi.copy()
    doc_pi[mine] = np.where((pi_0 > 0.0) & (pi_0 < 1.0), pi_0 * scale[topic, cell], pi_0)
    doc_pi[np.asarray(gone, dtype=np.int64)] = 0.0
    out_pi = np.where(design.outside_pi < 1.0, design.outside_pi * scale, design.outside_pi)
    segs = (np.arange(ctx.n_runs)[:, None] * ctx.n_topics + topics[None, :]).ravel()
    segs.sort()
    idx = _ranges(f.offsets, segs)
    offsets_in = np.concatenate([[0], np.cumsum(f.offsets[segs + 1] - f.offsets[segs])])
    pos_pi, pos_cell, tdi = doc_pi[f.doc[idx]], f.cell[idx], f.tdi[idx]
    num, _, influence = ap_walk(offsets_in, f.rank[idx], ctx.seg_topic[segs],
                                np.ones(len(idx), dtype=np.int64), pos_pi, pos_cell, f.g[idx],
                                n_cells, cutoff)
    sx, swx, swxx, swxy = cell_sums(offsets_in, influence, pos_pi, pos_cell, tdi, tdi_rel,
                                    n_cells)
    # R^ and its cell sums, as ``inclusion.topic_total`` forms them, on the reduced sample
    pi = doc_pi[mine]
    y = np.where(pi > 0.0, safe_divide(1.0, pi), 0.0)
    y_out = out_rel * safe_divide(1.0, out_pi)
    r_hat = np.bincount(topic, weights=y, minlength=ctx.n_topics) + y_out.sum(axis=1)
    flat = topic * n_cells + cell
    part = (pi > 0.0) & (pi < 1.0)
    part_out = out_pi < 1.0

    def by_cell(weights, outside):
        inside = np.bincount(flat[part], weights=weights[part], minlength=n.size)
        return inside.reshape(n.shape) + np.where(part_out, outside, 0.0)

    sy = by_cell(y, y_out)
    swy = by_cell((1.0 - pi) * y, (1.0 - out_pi) * y_out)
    swyy = by_cell((1.0 - pi) * y * y, (1.0 - out_pi) * y_out * safe_divide(1.0, out_pi))
    cells = Cells(n, w)
    t = ctx.seg_topic[segs]
    var_x = cell_variance(cells, t, sx, swx, swxx)
    var_y = cell_variance(cells, t, sy[t], swy[t], swyy[t])
    var_sum = cell_variance(cells, t, sx + sy[t], swx + swy[t], swxx + 2.0 * swxy + swyy[t])
    cov = 0.5 * (var_sum - var_x - var_y)
    den = r_hat[t]
    some = den > 1e-12
    theta, corrected = np.zeros(ctx.n_seg), np.zeros(ctx.n_seg)
    theta[segs] = np.where(some, safe_divide(num, den), 0.0)
    corrected[segs] = np.where(
        some, theta[segs] - safe_divide(theta[segs] * var_y - cov, den * den), 0.0)
    return theta, corrected
