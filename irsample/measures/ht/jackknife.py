"""Stratified delete-one jackknife of ht(AP) = N^/R^ (replicates shared by all runs of a topic),
and the variance of any ratio's replicates (ht(nDCG)'s: ``ht/ndcg_replicates.py``).

Why: the linearised variance of a ratio, evaluated at the sample's own theta^ and R^, is far too
small when a topic's sample holds one or two relevant documents (with one, z_d = 0 exactly). The
jackknife recomputes the ratio without each sampled document: deleting the only relevant one
leaves R^ = 0 (the estimate is then 0), so a topic the sample says little about gets a large
variance, as it should. Where an interval takes this jackknife (no anticipated variance: the
planner's designs, importance samples) the estimate's replicates are those of the ratio as
corrected, Taylor correction included (``ht/corrected_replicates.py``, from these units); the
formulas below read either.

Replicates (Wolter, *Introduction to Variance Estimation*, §4.5; Rao & Shao 1992 for the
stratified, without-replacement form): deleting sampled document d of cell h scales the weights
1/pi of the other n_h - 1 sampled documents of h by s_h = n_h/(n_h - 1); a pair's weight
1/pi_jk scales by the product of its two documents' factors. With N^ = sum_h L_h +
sum_{h <= h'} P_hh' (L: single terms, P: pair terms by the cells of the pair),

    N^_(h)    = N^ + (s-1) L_h + (s-1) sum_{h' != h} P_hh' + (s^2-1) P_hh,
    N^_(-d)   = N^_(h) - s a_d/pi_d - s sum_h' s_h' Q_dh'      (d relevant and ranked),
    R^_(-d)   = R^ + (s-1) R^_h - s/pi_d                     (R^_h: cell h's part of R^),

Q_dh' the pair terms of d with the sampled relevant documents of cell h'. A deleted non-relevant
document leaves N^_(h)/ (R^ + (s-1) R^_h). Variance:
v = sum_h (n_h - 1)/n_h sum_{d in S_h} (1 - pi_d) (theta_(-d) - mean_h)^2, mean_h the plain
mean of the cell's n_h replicates; certain documents are never deleted. For a linear total
(theta_(-d) - mean_h = -s_h (x_d - xbar_h), x = y/pi) this is the cell's design variance
n_h/(n_h - 1) sum_d (1 - pi_d)(x_d - xbar_h)^2 of ``inclusion.cell_variance``; on a stratified
simple random sample pi_d = f_h = n_h/N_h and it is the (1 - f_h) form of Rao & Shao. With
unequal probabilities in a cell (importance samples) each deletion keeps its own 1 - pi_d
(as the design variance does; Berger & Skinner, JRSS B 67, 2005, weight the jackknife's terms
the same way): the cell's mean pi in place of it gave the deep documents, which carry the
deviations and have pi near 0, the (1 - pi) of the shallow ones, and TREC-8's importance 20%
and 30% ht(nDCG) intervals covered 0.880 and 0.905, their variance 0.73 of the spread over
draws (``benchmarks/ht_coverage.py --designs importance``, 100 trials, seed 12). The
replicates of every run are kept per deleted unit of the topic (its sampled relevant documents
in a fixed order, then one per cell for the non-relevant ones), so differences of runs get their
jackknife from the same deletions.

Degrees of freedom (differences, :func:`jackknife_pair_variance`). A variance estimated from a
handful of sampled relevant documents is itself uncertain, and the statistic D / sqrt(v) then
has heavier tails than a normal one. With e_d = (1 - pi_d)(theta_(-d) - mean_h)^2, cell h's
term is v_h = c_h sum_d e_d (c_h = (n_h - 1)/n_h) and, the e_d of a cell taken as exchangeable,
var(v_h) is estimated by c_h^2 n_h/(n_h - 1) sum_d (e_d - ebar_h)^2 (for normal deviations this
gives v_h's chi-squared n_h - 1 degrees of freedom, up to (n_h - 1)/n_h; for one large deviation
among n_h, about 2). Satterthwaite's approximation (Biometrics Bulletin 2, 1946; Cochran §5.4
for a stratified sample) gives the sum over cells and topics nu = 2 (sum v_h)^2 / sum var(v_h),
and the difference's interval a t quantile on nu degrees of freedom
(``irsample/comparison.py``). A run's mean (:func:`jackknife_variance` with ``spread``,
``Estimate.variance_spread``) takes the same t where its variance is this jackknife (the
planner's designs, importance samples; not the anticipated variance of a stratified simple
random sample, taken as known), an identified topic's var(v) scaled as the imputation scales
v, an imputed topic's between-topic term counted as known (``Evaluation.summary_df``).
Measured (``irsample simulate ci-coverage``, planned designs, 100 trials, seed 2525): TREC-8's
ht(AP) run means covered 0.941 / 0.945 / 0.946 / 0.931 (5 / 10 / 20 / 30%) with z and 0.947 /
0.950 / 0.951 / 0.938 with the t, same draws; REPRODUCTION.md, "The jackknife's degrees of
freedom for run means". With the corrected ratio's replicates (``ht/corrected_replicates.py``)
0.954 / 0.966 / 0.962 / 0.947 unflagged ("The jackknife of ht(AP) as corrected").

Two relevances of one sample (:func:`jackknife_cross_moments`: ppi(AP)'s human grades and
automatic labels, ``ppi/ap_ratio.py``). Deleting a sampled document deletes it from both
estimates; the deleted units are the documents relevant on either side, each with its
replicate on the side where it is relevant and its cell's non-relevant deletion on the other,
and the cell's covariance is the formula above with (a_(-d) - mean_a)(b_(-d) - mean_b) in place
of the square.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import prange

from ..._threads import parallel_when_large
from ...model import JUDGED
from ..context import safe_divide
from .walks import within


@parallel_when_large
def _replicates(offsets, pos_rank, seg_topic, pos_rel, pos_pi, pos_cell, pos_g, pos_tdi, n_cells,
                cutoff, rel_offsets, rel_tdi, rel_pi, rel_cell, local, cell_n, cell_r, r_hat):
    """Per segment: theta_(-d) for every sampled relevant document d of its topic (CSR by
    ``rel_offsets`` of the topic, written at ``rep_offsets``) and theta_(h) for a deleted
    non-relevant document of each cell (``base[s, h]``)."""
    n_seg = offsets.shape[0] - 1
    rep_offsets = np.zeros(n_seg + 1, dtype=np.int64)
    for s in range(n_seg):
        t = seg_topic[s]
        rep_offsets[s + 1] = rep_offsets[s] + rel_offsets[t + 1] - rel_offsets[t]
    rep = np.zeros(rep_offsets[-1])
    base = np.zeros((n_seg, n_cells))
    for s in prange(n_seg):
        t = seg_topic[s]
        a = offsets[s]
        n = within(offsets, pos_rank, s, cutoff)
        m = 0
        for i in range(n):
            if pos_rel[a + i] != 0 and pos_pi[a + i] > 0.0:
                m += 1
        rank = np.empty(m)
        pi = np.empty(m)
        cell = np.empty(m, dtype=np.int64)  # n_cells: certain
        g = np.empty(m)
        unit = np.empty(m, dtype=np.int64)
        m = 0
        for i in range(n):
            if pos_rel[a + i] != 0 and pos_pi[a + i] > 0.0:
                rank[m] = pos_rank[a + i]
                pi[m] = pos_pi[a + i]
                cell[m] = pos_cell[a + i] if pos_pi[a + i] < 1.0 else n_cells
                g[m] = pos_g[a + i]
                unit[m] = local[pos_tdi[a + i]]
                m += 1
        h1 = n_cells + 1
        single = np.zeros(h1)
        pair = np.zeros((h1, h1))
        q = np.zeros((m, h1))
        for x in range(m):
            single[cell[x]] += 1.0 / (rank[x] * pi[x])
            for y in range(x):
                w = 1.0 / (rank[x] * pi[x] * pi[y])
                if cell[x] == cell[y] and cell[x] < n_cells:
                    gg = g[x] * g[y]
                    w = w / gg if gg > 0.0 else 0.0
                lo, hi = min(cell[x], cell[y]), max(cell[x], cell[y])
                pair[lo, hi] += w
                q[x, cell[y]] += w
                q[y, cell[x]] += w
        num = 0.0
        for h in range(h1):
            num += single[h]
            for k in range(h, h1):
                num += pair[h, k]
        rh = r_hat[t]
        start = rep_offsets[s]
        for h in range(n_cells):
            nh = cell_n[t, h]
            if nh < 2:
                continue
            f = nh / (nh - 1.0)
            num_h = num + (f - 1.0) * single[h] + (f * f - 1.0) * pair[h, h]
            for k in range(h1):
                if k != h:
                    num_h += (f - 1.0) * pair[min(h, k), max(h, k)]
            den_h = rh + (f - 1.0) * cell_r[t, h]
            base[s, h] = num_h / den_h if den_h > 0 else 0.0
            # sampled relevant documents of the cell not ranked here (within the cut-off)
            for j in range(rel_offsets[t], rel_offsets[t + 1]):
                if rel_cell[j] == h and rel_pi[j] < 1.0:
                    den = den_h - f / rel_pi[j]
                    rep[start + j - rel_offsets[t]] = num_h / den if den > 1e-12 else 0.0
            for x in range(m):
                if cell[x] != h or unit[x] < 0:
                    continue
                cut = f / (rank[x] * pi[x])
                for k in range(h1):
                    cut += f * (f if k == h else 1.0) * q[x, k]
                den = den_h - f / pi[x]
                rep[start + unit[x]] = (num_h - cut) / den if den > 1e-12 else 0.0
    return rep_offsets, rep, base


def ap_replicates(ctx, design, cutoff: int):
    """Jackknife replicates of ht(AP) (module docstring): ``(rep_offsets, rep, base, units)``
    with ``units`` the topic's sampled relevant documents (CSR: ``offsets, cell, pi, key``;
    ``key`` the document's tdi, or -1 - k for the topic's k-th one outside the collection)."""
    j = ctx.judgments
    col = ctx.collection
    tdi = np.flatnonzero((j.state == JUDGED) & (j.grade >= ctx.rel_level) & (design.tdi_pi > 0))
    # sampled relevant documents outside the collection: one unit each, at the cell's rate
    out = design.outside.copy()
    out[:, :, :ctx.rel_level] = 0.0
    offsets, topic, cell, pi, key, _ = deletion_units(ctx, design, tdi, out)
    tdi = np.where(key >= 0, key, -1)
    local = np.full(col.n_tdi, -1, dtype=np.int64)
    inside = tdi >= 0
    local[tdi[inside]] = (np.arange(len(tdi)) - offsets[topic])[inside]
    uncertain = pi < 1.0
    cell_r = np.zeros((ctx.n_topics, design.n_cells))
    np.add.at(cell_r, (topic[uncertain], cell[uncertain]), 1.0 / pi[uncertain])
    r_hat = np.bincount(topic, weights=1.0 / pi, minlength=ctx.n_topics)
    at = design.sampled
    rep_offsets, rep, base = _replicates(
        at.offsets, at.rank, ctx.seg_topic, at.rel(ctx), at.pi, at.cell, at.g, at.tdi,
        design.n_cells, cutoff, offsets, tdi, pi, cell, local,
        design.cell_n.astype(np.float64), cell_r, r_hat,
    )
    return rep_offsets, rep, base, (offsets, cell, pi, key)


def deletion_units(ctx, design, tdi: np.ndarray, out: np.ndarray):
    """The deletion units of one relevance, per topic (CSR ``offsets``): its sampled documents
    ``tdi`` (ascending), then one per document sampled outside the collection, ``out[t, h, g]``
    of them in cell h with grade g, at the cell's rate. A document outside the collection has no
    tdi: it is its topic's k-th such unit, ``key`` -1 - k (they follow the topic's others, in
    the same (cell, grade, copy) order for any relevance of the sample). Returns ``(offsets,
    topic, cell, pi, key, grade)``, ``key`` the tdi elsewhere."""
    j = ctx.judgments
    n_grades = j.stratum_grades.shape[2]
    topic = ctx.collection.tdi_topic[tdi].astype(np.int64)
    cell, pi = design.tdi_cell[tdi].astype(np.int64), design.tdi_pi[tdi]
    grade = np.minimum(j.grade[tdi], n_grades - 1).astype(np.int64)
    count = np.rint(out).astype(np.int64)
    ot, oc, og = np.nonzero(count)
    reps = count[ot, oc, og]
    topic = np.concatenate([topic, np.repeat(ot, reps)])
    cell = np.concatenate([cell, np.repeat(oc, reps)]).astype(np.int64)
    pi = np.concatenate([pi, np.repeat(design.outside_pi[ot, oc], reps)])
    grade = np.concatenate([grade, np.repeat(og, reps)])
    key = np.concatenate([tdi, np.full(int(reps.sum()), -1)]).astype(np.int64)
    order = np.argsort(topic, kind="stable")
    topic, cell, pi, grade, key = (a[order] for a in (topic, cell, pi, grade, key))
    offsets = np.concatenate([[0], np.cumsum(np.bincount(topic, minlength=ctx.n_topics))])
    outside = np.flatnonzero(key < 0)
    first = offsets[:-1] + np.bincount(topic[key >= 0], minlength=ctx.n_topics)
    key[outside] = -1 - (outside - first[topic[outside]])
    return offsets.astype(np.int64), topic, cell, pi, key, grade


def jackknife_variance(ctx, design, replicates, *, spread: bool = False):
    """Per segment: sum over cells of (n_h - 1)/n_h sum_d (1 - pi_d)(theta_(-d) - mean_h)^2;
    with ``spread`` also the estimated variance of that estimate (module docstring, "Degrees
    of freedom"), the two as a pair."""
    out = _jackknife(ctx, design, replicates, np.arange(ctx.n_runs), spread_variance=spread)
    return tuple(x.ravel() for x in out) if spread else out.ravel()


def jackknife_pair_variance(ctx, design, replicates, first, second):
    """(pairs, T) twice: the jackknife variance of theta_a - theta_b per topic, from the
    differences of the two runs' replicates over the same deletions, and the estimated variance
    of that variance estimate (module docstring, "Degrees of freedom")."""
    return _jackknife(ctx, design, replicates, first, second, spread_variance=True)


def scaled_spread(variance, own, own_variance) -> np.ndarray:
    """The estimated variance of each variance in ``variance``, which is ``own`` (estimated with
    variance ``own_variance``) scaled: a v has variance a^2 var(v) (the imputation scales an
    identified topic's variance, ``ht/imputation.py``); 0 where ``own`` is 0."""
    scale = safe_divide(variance, own)
    return own_variance * scale * scale


def _jackknife(ctx, design, replicates, first, second=None, spread_variance=False):
    """(len(first), T): per topic the jackknife variance of theta_first (minus theta_second);
    with ``spread_variance`` also the estimated variance of each topic's variance estimate."""
    rep_offsets, rep, base, (offsets, cell, pi, _) = replicates
    n_runs, n_topics, n_cells = ctx.n_runs, ctx.n_topics, design.n_cells
    out = np.zeros((len(first), n_topics))
    out_var = np.zeros((len(first), n_topics)) if spread_variance else None
    n = design.cell_n.astype(np.float64)
    for t in range(n_topics):
        segs = np.arange(n_runs) * n_topics + t
        # (R, u): every run of the topic has the topic's u units, so one gather takes them all
        u = rep_offsets[segs[0] + 1] - rep_offsets[segs[0]] if len(segs) else 0
        units = rep[rep_offsets[segs][:, None] + np.arange(u)]
        cells = cell[offsets[t]:offsets[t + 1]]
        unit_pi = pi[offsets[t]:offsets[t + 1]]
        for h in range(n_cells):
            nh = n[t, h]
            if nh < 2:
                continue
            cols = (cells == h) & (unit_pi < 1.0)  # certain documents are never deleted
            mine, b = units[first][:, cols], base[segs[first], h]
            if second is not None:
                mine, b = mine - units[second][:, cols], b - base[segs[second], h]
            others = nh - mine.shape[1]
            omega, omega_o, omega_o2 = deletion_weights(design, t, h, unit_pi[cols])
            mean = (mine.sum(axis=1) + others * b) / nh
            square, square_b = (mine - mean[:, None]) ** 2, (b - mean) ** 2
            spread = square @ omega + omega_o * square_b
            scale = (nh - 1.0) / nh
            out[:, t] += scale * spread
            if spread_variance:  # the terms a_d = (1 - pi_d) e_d taken as exchangeable
                mean_term = spread / nh
                scatter = (((square * omega - mean_term[:, None]) ** 2).sum(axis=1)
                           + omega_o2 * square_b * square_b - 2.0 * omega_o * square_b * mean_term
                           + others * mean_term * mean_term)
                out_var[:, t] += scale * scale * nh / (nh - 1.0) * scatter
    return (out, out_var) if spread_variance else out


def deletion_weights(design, t: int, h: int, unit_pi: np.ndarray):
    """Cell h of topic t: each deleted unit's weight 1 - pi_d (module docstring), and the sum
    of 1 - pi and of (1 - pi)^2 over its other sampled documents (those of grade 0, which
    share one replicate), from the cell's sums less the units'."""
    omega = 1.0 - unit_pi
    return (omega, max(float(design.cell_w[t, h] - omega.sum()), 0.0),
            max(float(design.cell_w2[t, h] - (omega * omega).sum()), 0.0))


def jackknife_cross_moments(ctx, design, replicates_a, replicates_b):
    """(n_seg, cells) three times: per segment and cell the jackknife covariance of two ht(AP)
    estimates of the same sample (a document deleted from both at once), and each one's
    jackknife variance, then the :class:`CombinedSpread` of the same deletions:
    ``(cov, var_b, var_a, spread)``. ``replicates_b`` are :func:`ap_replicates`
    of another relevance of the same sampled documents (ppi(AP)'s labels,
    ``ppi/ap_ratio.py``): a document relevant on one side only is, on the other, one of its
    cell's non-relevant deletions. The formula is :func:`jackknife_variance`'s with the
    product of the two deviations in place of the square; ``var_a`` summed over cells is
    :func:`jackknife_variance` of ``replicates_a``."""
    ro_a, rep_a, base_a, (off_a, cell_a, pi_a, key_a) = replicates_a
    ro_b, rep_b, base_b, (off_b, cell_b, pi_b, key_b) = replicates_b
    n_runs, n_topics, n_cells = ctx.n_runs, ctx.n_topics, design.n_cells
    shape = (n_runs, n_topics, n_cells)
    sums = np.zeros((*shape, 9))  # CombinedSpread's
    scales, count = np.zeros(shape), np.ones(shape)
    n = design.cell_n.astype(np.float64)
    for t in range(n_topics):
        segs = np.arange(n_runs) * n_topics + t
        sides = []
        for ro, rep, base, off, cell, pi, key in (
                (ro_a, rep_a, base_a, off_a, cell_a, pi_a, key_a),
                (ro_b, rep_b, base_b, off_b, cell_b, pi_b, key_b)):
            lo, hi = off[t], off[t + 1]
            u = ro[segs[0] + 1] - ro[segs[0]] if len(segs) else 0
            keep = np.flatnonzero(pi[lo:hi] < 1.0)  # certain documents are never deleted
            keep = keep[np.argsort(key[lo:hi][keep], kind="stable")]  # by key, to search
            sides.append((rep[ro[segs][:, None] + np.arange(u)][:, keep], base[segs],
                          key[lo:hi][keep], cell[lo:hi][keep], pi[lo:hi][keep]))
        union, first = np.unique(np.concatenate([sides[0][2], sides[1][2]]), return_index=True)
        union_cell = np.concatenate([sides[0][3], sides[1][3]])[first]
        union_pi = np.concatenate([sides[0][4], sides[1][4]])[first]
        columns = []
        for units, base, key, _, _ in sides:  # every deleted unit, on this side
            at = np.minimum(np.searchsorted(key, union), len(key) - 1)
            mine = key[at] == union if len(key) else np.zeros(len(union), dtype=bool)
            col = base[:, union_cell]
            col[:, mine] = units[:, at[mine]]
            columns.append(col)
        for h in range(n_cells):
            nh = n[t, h]
            if nh < 2:
                continue
            inside = union_cell == h
            a, b = columns[0][:, inside], columns[1][:, inside]
            ba, bb = sides[0][1][:, h], sides[1][1][:, h]
            others = nh - a.shape[1]
            ma, mb = (a.sum(axis=1) + others * ba) / nh, (b.sum(axis=1) + others * bb) / nh
            # deviations of every deletion, the cell's non-relevant one counted ``others`` times
            da = np.concatenate([a - ma[:, None], (ba - ma)[:, None]], axis=1)
            db = np.concatenate([b - mb[:, None], (bb - mb)[:, None]], axis=1)
            omega, omega_o, omega_o2 = deletion_weights(design, t, h, union_pi[inside])
            times = np.append(omega, omega_o)  # each deletion's weight 1 - pi, then its square
            times2 = np.append(omega * omega, omega_o2)
            p, r, q = da * da, da * db, db * db
            for k, x in enumerate((p, r, q, p * p, r * r, q * q, p * r, p * q, r * q)):
                sums[:, t, h, k] = x @ (times if k < 3 else times2)
            scales[:, t, h] = (nh - 1.0) / nh
            count[:, t, h] = nh
    flat = (n_runs * n_topics, n_cells)
    spread = CombinedSpread(sums.reshape(*flat, 9), scales.reshape(flat), count.reshape(flat))
    cov, var_b, var_a = (spread.scale * spread.sums[:, :, k] for k in (1, 2, 0))
    return cov, var_b, var_a, spread


@dataclass(frozen=True)
class CombinedSpread:
    """The estimated variance of the jackknife variance of u theta_a - w theta_b, for any
    weights u, w per segment and cell (ppi(AP)'s degrees of freedom, ``ppi/ap_ratio.py``). Per
    segment and cell, over the cell's n_h deletions d, with the deviations da_d, db_d of the two
    replicates from their cell means, ``sums`` holds the sums of o p, o r, o s and of o^2 pp,
    o^2 rr, o^2 ss, o^2 pr, o^2 ps, o^2 rs for p = da^2, r = da db, s = db^2 and o = 1 - pi_d
    (so that c_h sum o p, c_h sum o r, c_h sum o s are the jackknife's V(a), C(a, b), V(b),
    c_h = (n_h - 1)/n_h the ``scale``). The combination's weighted squared deviation is
    e_d = o (u^2 p - 2 u w r + w^2 s), and as for a pair's difference
    (:func:`jackknife_pair_variance`) var(v_h) = c_h^2 n_h/(n_h - 1) sum_d (e_d - ebar)^2 =
    c_h^2 n_h/(n_h - 1) (sum e_d^2 - (sum e_d)^2 / n_h), both sums polynomials in u and w."""

    sums: np.ndarray  #: (segments, cells, 9)
    scale: np.ndarray  #: (segments, cells): c_h, 0 for a cell not sampled twice
    count: np.ndarray  #: (segments, cells): n_h (1 for a cell not sampled twice)

    def __call__(self, u, w) -> np.ndarray:
        """Per segment: the sum over cells of var(v_h) at weights ``u`` and ``w`` (each
        broadcast to segments x cells)."""
        u, w = np.asarray(u, dtype=np.float64), np.asarray(w, dtype=np.float64)
        p, r, s, pp, rr, ss, pr, ps, rs = np.moveaxis(self.sums, -1, 0)
        uu, uw, ww = u * u, u * w, w * w
        total = uu * p - 2.0 * uw * r + ww * s
        square = (uu * uu * pp + 4.0 * uw * uw * rr + ww * ww * ss - 4.0 * uu * uw * pr
                  + 2.0 * uu * ww * ps - 4.0 * uw * ww * rs)
        scatter = np.maximum(square - total * total / self.count, 0.0)
        factor = safe_divide(self.count, self.count - 1.0)
        return (self.scale * self.scale * factor * scatter).sum(axis=1)
