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
A pass walks the rankings of its topics; the passes are as many as the most units of any topic.

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

from ...model import JUDGED
from ..context import safe_divide
from .inclusion import cell_variance
from .walks import ap_walk, cell_sums


class _Cells(NamedTuple):
    """What :func:`~.inclusion.cell_variance` reads of a design: per topic and cell the
    sampled documents with pi < 1 and their sum of 1 - pi."""

    cell_n: np.ndarray
    cell_w: np.ndarray


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
    for k in range(max((len(p) for p in plan), default=0)):
        deleted = [(t, *plan[t][k]) for t in range(ctx.n_topics) if k < len(plan[t])]
        yield (deleted, *deletion_pass(ctx, design, replicates, cutoff, tdi_rel, deleted))


def deletion_pass(ctx, design, replicates, cutoff: int, tdi_rel: np.ndarray, deleted):
    """Per segment, the plain ratio and the corrected one on the sample less one unit of some
    topics (module docstring): ``deleted`` holds ``(topic, relevant, which, cell, pi_d)``, with
    ``which`` the unit's index among the topic's units of ``replicates`` where ``relevant``
    (the cell's non-relevant deletion otherwise); each topic at most once. With nothing deleted
    it gives the estimate itself; otherwise 0 on the topics nothing is deleted from."""
    _, _, _, (offsets, _, _, key) = replicates
    at = design.sampled
    j = ctx.judgments
    n_cells = design.n_cells
    doc_topic = ctx.collection.tdi_topic[at.docs].astype(np.int64)
    doc_rel = (j.state[at.docs] == JUDGED) & (j.grade[at.docs] >= ctx.rel_level)
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
                gone.append(np.searchsorted(at.docs, tdi))
            else:  # a sampled relevant document outside the collection
                out_rel[t, h] -= 1.0
    open_doc = (at.doc_pi > 0.0) & (at.doc_pi < 1.0)
    doc_pi = np.where(open_doc, at.doc_pi * scale[doc_topic, at.doc_cell], at.doc_pi)
    doc_pi[np.asarray(gone, dtype=np.int64)] = 0.0
    out_pi = np.where(design.outside_pi < 1.0, design.outside_pi * scale, design.outside_pi)
    # walk only the rankings of the topics this pass deletes from (all of them with nothing
    # deleted): later passes hold the few topics with the most units
    topics = np.unique([t for t, *_ in deleted]) if deleted else np.arange(ctx.n_topics)
    segs = (np.arange(ctx.n_runs)[:, None] * ctx.n_topics + topics[None, :]).ravel()
    segs.sort()
    lengths = at.offsets[segs + 1] - at.offsets[segs]
    offsets_in = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    idx = np.repeat(at.offsets[segs] - offsets_in[:-1], lengths) + np.arange(offsets_in[-1])
    pos_pi, pos_cell, tdi = doc_pi[at.doc[idx]], at.cell[idx], at.tdi[idx]
    num, _, influence = ap_walk(offsets_in, at.rank[idx], ctx.seg_topic[segs], at.rel(ctx)[idx],
                                pos_pi, pos_cell, at.g[idx], n_cells, cutoff)
    sx, swx, swxx, swxy = cell_sums(offsets_in, influence, pos_pi, pos_cell, tdi, tdi_rel,
                                    n_cells)
    # R^ and its cell sums, as ``inclusion.topic_total`` forms them, on the reduced sample
    y = np.where(doc_rel & (doc_pi > 0.0), safe_divide(1.0, doc_pi), 0.0)
    y_out = out_rel * safe_divide(1.0, out_pi)
    r_hat = np.bincount(doc_topic, weights=y, minlength=ctx.n_topics) + y_out.sum(axis=1)
    flat = doc_topic * n_cells + at.doc_cell
    part = doc_rel & (doc_pi > 0.0) & (doc_pi < 1.0)
    part_out = out_pi < 1.0

    def by_cell(weights, outside):
        inside = np.bincount(flat[part], weights=weights[part], minlength=n.size)
        return inside.reshape(n.shape) + np.where(part_out, outside, 0.0)

    sy = by_cell(y, y_out)
    swy = by_cell((1.0 - doc_pi) * y, (1.0 - out_pi) * y_out)
    swyy = by_cell((1.0 - doc_pi) * y * y, (1.0 - out_pi) * y_out * safe_divide(1.0, out_pi))
    cells = _Cells(n, w)
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
