"""Jackknife replicates of ht(nDCG) as estimated, Taylor correction included: its interval's
variance wherever the anticipated variance does not apply (importance samples, unequal
probabilities within a cell; the planner's top-ups and ranks judged whole beside sampled ones;
``ht/estimator.py``, "nDCG's ratio bias"), and a floor under the anticipated variance where it
does (``ht/estimator.py``, "Anticipated variance").

Why. On an importance sample the deep documents carry small probabilities, so IDCG^ varies much
more than a run's DCG^ and the ratio's second-order bias is upward; the Taylor correction
theta^_bc = theta^ - (theta^ v(Y^) - c(X^, Y^)) / Y^^2 removes it, but its v and c are the
sample's own moments and move with the draw, which the plain ratio's linearised variance does
not carry (TREC-COVID round 5, importance 5-20%: with the correction and that variance the
variance was 0.77-0.91 of the spread over draws; REPRODUCTION.md, "Run means on importance
samples, measured"). As for ht(AP) (``ht/corrected_replicates.py``) the interval takes the
stratified delete-one jackknife of the estimator itself (``ht/jackknife.py``: Wolter §4.5; Rao
& Shao 1992).

Replicates. Deleting sampled document d of cell h scales the weights 1/pi of the cell's other
sampled documents by s = n_h / (n_h - 1) (pi -> pi / s, certain documents untouched), and the
estimator is recomputed on that sample; everything it reads is a sum over the topic's sampled
documents of positive grade, by cell and grade, so each replicate follows in closed form from
the topic's sums (a document of grade 0 adds to no sum but its cell's count n and its sum w of
1 - pi):

- the grade counts C_v' = C_v + (s - 1) C_hv - s [v_d = v] / pi_d, the ideal DCG of C' less
  its concavity bias (``ideal_dcg.concavity_bias``, with v(S^_k) on the reduced sample), and
  the slopes sigma_v' of the ideal DCG in C' (the denominator's linearised variable);
- a run's DCG^' = DCG^ + (s - 1) DCG^_h - s t_d / pi_d, t_d the document's gain times its
  discount in the run (0 where the run does not rank it within the cut-off);
- per cell the sums of ``inclusion.cell_variance`` on the reduced sample: with x = t / pi,
  y = sigma / pi and the reduced cell's n' = n_h - 1 and w' = n_h - 1 - (n_h - w_h - pi_d) / s,
  sum' x' = s (sum x - x_d), sum' (1 - pi') x' = sum' x' - sum' t, sum' (1 - pi') x' y' =
  s^2 sum' t sigma / pi^2 - s sum' t sigma / pi, and the same for y and y^2, grade by grade;
  then v(Y^)' and c(X^, Y^)', and the replicate is theta' less its correction where the
  estimate corrects the segment (the plain theta' elsewhere), 0 where Y^' = 0.

Two documents of a cell deleted at once (:func:`ndcg_second_order`) follow the same way, their
sums taken together and s = n_h / (n_h - 2): the delete-two replicates whose differences
measure the jackknife's second-order excess, taken from it where it floors the anticipated
variance.

A deleted document of grade 0 (one replicate per cell, as in ``ht/jackknife.py``) leaves every
sum but the cell's scaled. The units are the topic's sampled documents of positive grade in
tdi order, then one per document sampled outside the collection (no run ranks it), with the
structure of ``jackknife.ap_replicates``' so that ``jackknife.jackknife_variance`` and
``jackknife.jackknife_pair_variance`` read them alike. The closed form is checked against the
estimator recomputed on each reduced sample (``tests/test_ndcg_replicates.py``)."""

from __future__ import annotations

import numpy as np

from ...model import JUDGED
from ..context import safe_divide
from .ideal_dcg import concavity_curve, grade_gains, ideal_and_slopes, level_steps
from .inclusion import Cells, cell_variance
from .jackknife import deletion_units, deletion_weights

#: :meth:`_Topic.without`'s codes: one of the cell's documents of grade 0, and no document
GRADE_0, NOTHING = -1, -2


def ndcg_replicates(ctx, design, term: np.ndarray, cutoff: int, corrected: np.ndarray) -> tuple:
    """``(rep_offsets, rep, base, units)`` as :func:`~.jackknife.ap_replicates` gives them, of
    ht(nDCG) (module docstring): ``term`` per sampled position the gain times the discount
    (``walks.weighted_prefix``), ``corrected`` per segment whether the estimate takes the
    Taylor correction."""
    units = _units(ctx, design)
    offsets, cell, pi, key, _ = units
    n_runs, n_topics = ctx.n_runs, ctx.n_topics
    counts = offsets[1:] - offsets[:-1]
    rep_offsets = np.concatenate([[0], np.cumsum(np.tile(counts, n_runs))]).astype(np.int64)
    rep = np.zeros(rep_offsets[-1])
    base = np.zeros((ctx.n_seg, design.n_cells))
    fixed = corrected.reshape(n_runs, n_topics)
    for t, topic in _each_topic(ctx, design, units, term, cutoff):
        lo, hi = offsets[t], offsets[t + 1]
        segs = np.arange(n_runs) * n_topics + t
        for h in range(design.n_cells):
            if design.cell_n[t, h] < 2:
                continue
            mine = np.flatnonzero((cell[lo:hi] == h) & (pi[lo:hi] < 1.0))
            value = topic.replicates(h, mine, fixed[:, t])  # (runs, units + 1)
            base[segs, h] = value[:, -1]
            rep[rep_offsets[segs][:, None] + mine[None, :]] = value[:, :-1]
    return rep_offsets, rep, base, (offsets, cell, pi, key)


def ndcg_second_order(ctx, design, term: np.ndarray, cutoff: int,
                      corrected: np.ndarray) -> np.ndarray:
    """Per segment the delete-one jackknife's second-order excess, to be taken from
    :func:`~.jackknife.jackknife_variance` of :func:`ndcg_replicates` (same arguments):
    S = sum over cells h of sum over pairs i < j of its sampled documents of
    (1 - pi_i)(1 - pi_j) D_ij^2, D_ij = theta - theta_(-i) - theta_(-j) + theta_(-ij), the
    delete-two replicate theta_(-ij) with the cell's other probabilities divided by
    n_h / (n_h - 2) (:meth:`_Topic.without`; pairs among documents of grade 0, and of one with
    a unit, share a difference and are counted by multiplicity). Efron & Stein (Ann. Statist.
    9, 1981): a delete-one jackknife counts the statistic's second-order terms about twice, so
    its variance runs high where the ideal DCG's curvature in the sampled counts weighs; the
    squared finite-population factor is the one measured to take that excess away
    (``benchmarks/ndcg_jackknife_excess.py``, REPRODUCTION.md "nDCG's jackknife less its
    second-order terms"). Pairs across cells are left out (the sum only smaller); cells of
    fewer than three sampled documents add nothing."""
    units = _units(ctx, design)
    offsets, cell, pi, _, _ = units
    n_runs, n_topics = ctx.n_runs, ctx.n_topics
    fixed = corrected.reshape(n_runs, n_topics)
    out = np.zeros((n_runs, n_topics))
    for t, topic in _each_topic(ctx, design, units, term, cutoff):
        lo, hi = offsets[t], offsets[t + 1]
        for h in range(design.n_cells):
            if design.cell_n[t, h] < 3:
                continue
            mine = np.flatnonzero((cell[lo:hi] == h) & (pi[lo:hi] < 1.0))
            out[:, t] += _pair_sum(design, t, h, topic, mine, pi[lo:hi][mine], fixed[:, t])
    return out.ravel()


def _pair_sum(design, t, h, topic, mine, unit_pi, fixed, chunk: int = 512) -> np.ndarray:
    """(runs,): cell h's sum over pairs of (1 - pi_i)(1 - pi_j) D_ij^2
    (:func:`ndcg_second_order`), the pairs in chunks of ``chunk`` replicates."""
    u = len(mine)
    omega, omega_o, omega_o2 = deletion_weights(design, t, h, unit_pi)
    singles = np.full((u + 2, 2), NOTHING)
    singles[:u, 0], singles[u, 0] = mine, GRADE_0
    one = topic.without(h, singles, fixed)  # (R, u + 2): each unit, grade 0, then theta
    theta = one[:, -1]
    i, j = np.triu_indices(u, 1)
    a = np.concatenate([i, np.arange(u), [u]])  # columns of ``one``; u is grade 0
    b = np.concatenate([j, np.full(u, u), [u]])
    weight = np.concatenate([omega[i] * omega[j], omega * omega_o,
                             [(omega_o * omega_o - omega_o2) / 2.0]])
    keep = np.flatnonzero(weight > 0)
    code = np.append(mine, GRADE_0)
    total = np.zeros(len(theta))
    for start in range(0, len(keep), chunk):
        rows = keep[start:start + chunk]
        both = topic.without(h, np.stack([code[a[rows]], code[b[rows]]], axis=1), fixed)
        diff = theta[:, None] - one[:, a[rows]] - one[:, b[rows]] + both
        total += (diff * diff) @ weight[rows]
    return total


def _each_topic(ctx, design, units, term, cutoff):
    """Per topic t, ``(t, _Topic)``: its sums over the units of :func:`_units`."""
    offsets, cell, pi, key, grade = units
    gains = grade_gains(ctx)
    terms = _terms_by_unit(ctx, design, term, offsets, key)
    for t in range(ctx.n_topics):
        lo, hi = offsets[t], offsets[t + 1]
        yield t, _Topic(design, t, cell[lo:hi], pi[lo:hi], grade[lo:hi], terms[t], gains[t],
                        gains.shape[1], cutoff)


def _units(ctx, design):
    """Per topic (CSR ``offsets``): the sampled documents of positive grade, then those sampled
    outside the collection, one each (``jackknife.deletion_units``): ``(offsets, cell, pi,
    key, grade)``."""
    j = ctx.judgments
    tdi = design.sampled_tdi[(j.state[design.sampled_tdi] == JUDGED)
                             & (j.grade[design.sampled_tdi] > 0)]
    out = design.outside.copy()
    out[:, :, 0] = 0.0
    out[design.outside_pi <= 0.0] = 0.0  # no rate, no estimate: counted nowhere
    offsets, _, cell, pi, key, grade = deletion_units(ctx, design, tdi, out)
    return offsets, cell, pi, key, grade


def _terms_by_unit(ctx, design, term, offsets, key) -> list:
    """Per topic, (runs, units): each unit's gain times discount in each run (0 where the run
    does not rank it within the cut-off, and for units outside the collection)."""
    at = design.sampled
    local = np.full(ctx.collection.n_tdi, -1, dtype=np.int64)
    inside = key >= 0
    topic_of = np.repeat(np.arange(ctx.n_topics), offsets[1:] - offsets[:-1])
    local[key[inside]] = (np.arange(len(key)) - offsets[topic_of])[inside]
    seg = np.repeat(np.arange(ctx.n_seg), np.diff(at.offsets))
    unit = local[at.tdi]
    keep = (unit >= 0) & (term != 0.0)
    seg, unit, value = seg[keep], unit[keep], term[keep]
    run, topic = seg // ctx.n_topics, seg % ctx.n_topics
    out = [np.zeros((ctx.n_runs, offsets[t + 1] - offsets[t])) for t in range(ctx.n_topics)]
    for t in np.unique(topic):
        mine = topic == t
        out[t][run[mine], unit[mine]] = value[mine]
    return out


class _Topic:
    """One topic's sums by cell and grade over its sampled documents of positive grade with
    pi < 1, and its runs' sums of the gain-discount terms: what every replicate starts from."""

    def __init__(self, design, t, cell, pi, grade, terms, gains, n_grades, cutoff):
        self.cell, self.pi, self.grade, self.terms = cell, pi, grade, terms
        self.gains, self.cutoff = gains, cutoff
        self.n = design.cell_n[t].astype(np.float64)
        self.w = design.cell_w[t].astype(np.float64)
        n_cells = len(self.n)
        unc = pi < 1.0
        one_hot = np.zeros((len(pi), n_grades))
        one_hot[np.arange(len(pi)), grade] = 1.0
        self.one_hot = one_hot
        by_cell = np.zeros((len(pi), n_cells))
        by_cell[np.arange(len(pi)), cell] = unc
        inv = 1.0 / pi
        # (S, G): count, sum 1/pi and sum 1/pi^2 of the uncertain documents
        self.n0 = by_cell.T @ one_hot
        self.n1 = by_cell.T @ (one_hot * inv[:, None])
        self.n2 = by_cell.T @ (one_hot * (inv * inv)[:, None])
        self.counts = (one_hot * inv[:, None]).sum(axis=0)  # C_v, certain documents included
        # (R, S): sum t and sum t / pi over uncertain documents; (R, S, G) sum t / pi, t / pi^2
        self.p0 = terms @ by_cell
        self.p1 = (terms * inv) @ by_cell
        self.q1 = np.einsum("ru,us,ug->rsg", terms * inv, by_cell, one_hot)
        self.q2 = np.einsum("ru,us,ug->rsg", terms * inv * inv, by_cell, one_hot)
        self.num = terms @ inv  # DCG^ of every run

    def replicates(self, h: int, mine: np.ndarray, corrected: np.ndarray) -> np.ndarray:
        """(runs, len(mine) + 1): the replicates without each unit ``mine`` of cell h, then
        without one of its documents of grade 0."""
        slots = np.full((len(mine) + 1, 2), NOTHING)
        slots[:-1, 0] = mine
        slots[-1, 0] = GRADE_0
        return self.without(h, slots, corrected)

    def without(self, h: int, slots: np.ndarray, corrected: np.ndarray) -> np.ndarray:
        """(runs, k): the estimate on the sample less, per row of ``slots`` (k, 2), the units
        it names of cell h (an index of the topic's units, ``GRADE_0`` for one of the cell's
        documents of grade 0 at the cell's mean pi, ``NOTHING``); a row of two ``NOTHING``
        is the estimate itself. The cell's other probabilities below 1 are divided by
        s = n_h / (n_h - deleted) (module docstring)."""
        n_h = self.n[h]
        k = len(slots)
        drop = (slots != NOTHING).sum(axis=1).astype(np.float64)
        s = n_h / (n_h - drop)
        pi_d, hot, inv_d, inv2_d, t_d, x_d, hot_slots, x_slots, x2_slots = self._deleted(h, slots)
        # reduced cells (k, S) and sums by cell and grade (k, S, G)
        n = np.tile(self.n, (k, 1))
        w = np.tile(self.w, (k, 1))
        n[:, h] = n_h - drop
        w[:, h] = n_h - drop - (n_h - self.w[h] - pi_d) / s
        n0, n1, n2 = (np.tile(a, (k, 1, 1)) for a in (self.n0, self.n1, self.n2))
        n0[:, h] -= hot
        n1[:, h] = s[:, None] * (self.n1[h] - inv_d)
        n2[:, h] = (s * s)[:, None] * (self.n2[h] - inv2_d)
        counts = self.counts[None, :] - self.n1[h][None, :] + n1[:, h]
        ideal, slope = ideal_and_slopes(counts, np.tile(self.gains, (k, 1)), self.cutoff)
        den = ideal - self._concavity(counts, n, w, n0, n1, n2)
        var_y = cell_variance(Cells(n, w), np.arange(k), *_y_sums(slope, n0, n1, n2))
        # the runs' sums (R, k, S), cell h reduced
        sx = np.repeat(self.p1[:, None, :], k, axis=1)
        st = np.repeat(self.p0[:, None, :], k, axis=1)
        sx[:, :, h] = s[None, :] * (self.p1[:, h][:, None] - x_d)
        st[:, :, h] = self.p0[:, h][:, None] - t_d
        # sum (1 - pi) x y by cell (R, k, S): the cells' sums by grade times the slopes, cell h
        # from its reduced sums
        swxy = np.matmul(self.q2 - self.q1, slope.T).transpose(0, 2, 1)
        at_slope = (hot_slots * slope[:, None, :]).sum(axis=2)  # (k, 2): each slot's slope
        swxy[:, :, h] = ((s * s)[None, :] * (self.q2[:, h] @ slope.T - (x2_slots * at_slope).sum(2))
                         - s[None, :] * (self.q1[:, h] @ slope.T - (x_slots * at_slope).sum(2)))
        sy, swy, _ = _y_sums(slope, n0, n1, n2)
        cov = _cell_covariance(n, w, sx, sx - st, sy, swy, swxy)
        num = self.num[:, None] + (s[None, :] - 1.0) * self.p1[:, h][:, None] - s[None, :] * x_d
        some = den > 1e-12
        theta = np.where(some[None, :], safe_divide(num, den[None, :]), 0.0)
        fixed = theta - safe_divide(theta * var_y[None, :] - cov, (den * den)[None, :])
        return np.where(some[None, :] & corrected[:, None], fixed, theta)

    def _deleted(self, h: int, slots: np.ndarray) -> tuple:
        """The deleted documents' sums per row of ``slots`` (:meth:`without`): of pi (k,), by
        grade of 1, 1/pi and 1/pi^2 (k, G), per run of t and t/pi (R, k); then per slot each
        one's grade (k, 2, G) and, per run, its t/pi and t/pi^2 (R, k, 2)."""
        n_units, n_grades = self.one_hot.shape
        pi = np.concatenate([self.pi, [1.0 - self.w[h] / self.n[h], 0.0]])  # grade 0: mean pi
        inv = np.concatenate([1.0 / self.pi, [0.0, 0.0]])
        hot = np.vstack([self.one_hot, np.zeros((2, n_grades))])
        terms = np.hstack([self.terms, np.zeros((self.terms.shape[0], 2))])
        at = np.where(slots == GRADE_0, n_units, np.where(slots == NOTHING, n_units + 1, slots))
        x = terms * inv[None, :]
        return (pi[at].sum(axis=1), hot[at].sum(axis=1), (hot * inv[:, None])[at].sum(axis=1),
                (hot * (inv * inv)[:, None])[at].sum(axis=1), terms[:, at].sum(axis=2),
                x[:, at].sum(axis=2), hot[at], x[:, at], (x * inv[None, :])[:, at])

    def _concavity(self, counts, n, w, n0, n1, n2) -> np.ndarray:
        """Per replicate: ``ideal_dcg.concavity_bias`` on the reduced sample."""
        (step,), (position,) = level_steps(self.gains[None, :])
        bias = np.zeros(len(counts))
        for k in np.flatnonzero(step > 0):
            member = ((position <= k) & (self.gains > 0)).astype(np.float64)
            sigma = np.tile(member, (len(counts), 1))
            var = cell_variance(Cells(n, w), np.arange(len(counts)), *_y_sums(sigma, n0, n1, n2))
            bias += 0.5 * step[k] * concavity_curve(counts @ member, self.cutoff) * var
        return bias


def _y_sums(sigma, n0, n1, n2):
    """(k, S) each: sum y, sum (1 - pi) y and sum (1 - pi) y^2 over a cell's documents, y =
    sigma_v / pi for a document of grade v, from the sums by grade (k, S, G) of 1, 1/pi and
    1/pi^2."""
    sy = np.einsum("ksg,kg->ks", n1, sigma)
    return sy, sy - np.einsum("ksg,kg->ks", n0, sigma), np.einsum(
        "ksg,kg->ks", n2 - n1, sigma * sigma)


def _cell_covariance(n, w, sx, swx, sy, swy, swxy) -> np.ndarray:
    """(R, k): the design covariance of X^ and Y^ by the bilinear form of
    ``inclusion.cell_variance``: sum over cells of n/(n - 1) [sum (1 - pi) x y - xbar sum
    (1 - pi) y - ybar sum (1 - pi) x + xbar ybar w]; x sums (R, k, S), y sums (k, S)."""
    xbar = safe_divide(sx, n[None])
    ybar = safe_divide(sy, n)[None]
    factor = np.where(n >= 2, safe_divide(n, n - 1.0), 0.0)[None]
    return (factor * (swxy - xbar * swy[None] - ybar * swx + xbar * ybar * w[None])).sum(axis=2)
