"""The parts of ppi(M) (``ppi.py``) as difference estimators, with a label weight per stratum.

Per topic, F is the pool, S the judged sample (pi_d, pi_de of ``ht_design.py``), y_d the human
value of d and f_d its label's value (AP, P@k, R: relevant at the relevance level; nDCG: the
grade as gain). A label coefficient c_d = lambda_h(d) in [0, 1] (one weight per stratum h, 0 on
the topics whose labels are constant) scales the labels: l_d = c_d f_d. Every total the measure
is built from is estimated by the labels' value on the whole pool plus the design-weighted
residuals of the sample (the difference estimator; Särndal, Swensson & Wretman 1992 §6.3;
stratified PPI, Fisch et al. 2024):

    T^ = sum_F l_d a_d + sum_S (y_d - l_d) a_d / pi_d,

a_d the document's weight in T (P@k: 1/k in the top k; DCG: 1/log2(r+1) at rank r <= k; R: 1;
the count of grade v of nDCG's ideal: 1{grade = v}). Unbiased for sum_F y_d a_d for any fixed c.

AP's numerator N = sum_k rel_k / k + sum_{j<k} rel_j rel_k / k (ranks of the run) takes the
residual of products, the pair (j, k) with the coefficient (c_j + c_k)/2:

    N^ = sum_k l_k / k + sum_{j<k} (c_j + c_k)/2 f_j f_k / k
         + sum_{k in S} (y_k - l_k) / (k pi_k)
         + sum_{j<k in S} (y_j y_k - (c_j + c_k)/2 f_j f_k) / (k pi_jk),

unbiased for N(y) since E[1{j, k in S} / pi_jk] = 1 (``ppi_kernels.pair_walk``: the mean of
two walks, above = l and below = f, and above = f and below = l). With every c_d = lambda it
is ht's N^ on the humans plus lambda (N(f) - N^ on the labels); the product of residuals
(y_j - l_j)(y_k - l_k) would not be: its cross terms y_j l_k correct nothing.

A ratio M = X / Y (AP = N / R; nDCG = DCG / IDCG, IDCG the ideal DCG of the estimated counts
per grade, each count clipped at 0, linear between integers) is estimated by X^ / Y^ of the two
difference estimates. The ratio's bias is of the order of the squared coefficient of variation
of Y^; the residuals y - l vary less than y where the labels predict, so it shrinks with it.

Variance (Taylor linearisation of X^/Y^): per sampled document the influence
z_d = (u_d - theta^ r_d) / Y^, u_d its numerator influence (linear totals: (y_d - l_d) a_d;
AP: the pair walk's first-order influence of the human part minus that of the label part),
r_d = its residual in Y^ (AP: y_d - l_d; nDCG: IDCG's slope in the count of y_d's grade minus
c_d times that of f_d's grade), with ht_design's cell formula over the sampled documents.

Power tuning (PPI++, Angelopoulos, Duchi & Zrnic 2023, by stratum as in stratified PPI): with
A_d the influence of the humans alone (c = 0) and B_d that of the labels (c = 1, both at a
pilot theta and Y), the variance of a run's mean is sum_t sum_h V_h(A - lambda_h B), a quadratic
in each lambda_h, minimised by lambda_h = sum C_h(A, B) / sum V_h(B) over every run and topic,
clipped to [0, 1]. Exact for the linear totals; for AP's pairs B is the labels' influence at
lambda = 1 (with one weight for every stratum the influence is exactly lambda B).
"""

from __future__ import annotations

import numpy as np

from ..model import JUDGED, UNPOOLED
from .context import safe_divide
from .counts import NumRel
from .design_based import _ideal
from .ht_design import cell_variance, ht_design, topic_total
from .ht_kernels import weighted_prefix
from .ppi_kernels import influence_sums, pair_walk

_NO_CUTOFF = np.iinfo(np.int64).max
#: the largest coefficient of variation of the denominator at which a topic's ratio is taken
CV_MAX = float(__import__("os").environ.get("CVMAX", "0.5"))
MIN_SEEN = int(__import__("os").environ.get("MINSEEN", "0"))
MIN_REL = int(__import__("os").environ.get("MINREL", "0"))


class Parts:
    """The per-document facts of one context, labels and measure that the difference
    estimates need (built once; :meth:`at` evaluates them at a label coefficient)."""

    def __init__(self, ctx, m, grades):
        self.ctx, self.m = ctx, m
        self.d = d = ht_design(ctx)
        j = ctx.judgments
        col = ctx.collection
        self.topic = col.tdi_topic.astype(np.int64)
        self.stratum = np.maximum(j.stratum, 0).astype(np.int64)
        pooled = j.state != UNPOOLED
        judged = j.state == JUDGED
        self.sampled = d.tdi_pi > 0
        self.kind = ("num_rel" if isinstance(m, NumRel) else
                     "nDCG" if m.family == "nDCG" else "AP" if m.family == "AP" else "P")
        if self.kind == "nDCG":
            self.y_tdi = np.where(judged, np.maximum(j.grade, 0), 0).astype(np.float64)
            self.f_tdi = np.where(pooled, np.maximum(grades, 0), 0).astype(np.float64)
        else:
            self.y_tdi = (judged & (j.grade >= ctx.rel_level)).astype(np.float64)
            self.f_tdi = (pooled & (grades >= ctx.rel_level)).astype(np.float64)
        self.inv_pi = safe_divide(1.0, d.tdi_pi)
        tdi = ctx.pos_tdi
        self.y_pos = np.where(d.pos_pi > 0, self.y_tdi[tdi], 0.0)
        self.f_pos = self.f_tdi[tdi]
        self.ones = np.ones(len(tdi))
        k = getattr(m, "k", None)
        self.cutoff = _NO_CUTOFF if k is None else int(k)
        longest = int(ctx.seg_len.max(initial=0))
        if self.kind == "nDCG":
            self.weight = 1.0 / np.log2(np.arange(2, longest + 2, dtype=np.float64))
        elif self.kind == "P":
            self.weight = np.full(int(k), 1.0 / k)
        if self.kind == "nDCG":
            top = int(max(self.y_tdi.max(initial=0), self.f_tdi.max(initial=0),
                          j.stratum_grades.shape[2] - 1))
            self.levels = np.arange(top + 1)
            self.gains = np.tile(self.levels.astype(np.float64), (ctx.n_topics, 1))
            self.y_counts = self._human_counts(top)
        else:
            n_grades = j.stratum_grades.shape[2]
            by_grade = (np.arange(n_grades) >= ctx.rel_level).astype(np.float64)
            self.y_total = topic_total(ctx, d, self.y_tdi, np.tile(by_grade, (ctx.n_topics, 1)))

    def _human_counts(self, top):
        """HT counts of each grade from the humans (sampled documents outside the collection
        included, as ht counts them)."""
        ctx, d = self.ctx, self.d
        n_grades = ctx.judgments.stratum_grades.shape[2]
        counts = np.zeros((ctx.n_topics, top + 1))
        for v in range(1, min(top, n_grades - 1) + 1):
            grade_value = np.zeros((ctx.n_topics, n_grades))
            grade_value[:, v] = 1.0
            counts[:, v] = topic_total(ctx, d, (self.y_tdi == v) * 1.0, grade_value).value
        return counts

    def _topic_sum(self, values):
        return np.bincount(self.topic, weights=values, minlength=self.ctx.n_topics)

    def at(self, c_tdi, ideal_at=None):
        """(X^, Y^ per segment, u per position, r per tdi) at label coefficients ``c_tdi``
        (nDCG: the ideal DCG and its slopes at the counts of ``ideal_at``, default ``c_tdi``)."""
        ctx, d = self.ctx, self.d
        t = ctx.seg_topic
        c_pos = c_tdi[ctx.pos_tdi]
        l_tdi = c_tdi * self.f_tdi
        if self.kind == "num_rel":
            resid = np.where(self.sampled, self.y_tdi - l_tdi, 0.0)
            y = self.y_total.value + self._topic_sum(l_tdi - np.where(self.sampled, l_tdi, 0.0)
                                                     * self.inv_pi)
            return y[t], np.ones(ctx.n_seg), np.zeros(len(ctx.pos_tdi)), -resid
        if self.kind in ("P", "nDCG"):
            x, u = self._linear_numerator(c_pos)
        else:
            x, u = self._ap_numerator(c_pos)
        if self.kind == "P":
            return x, np.ones(ctx.n_seg), u, np.zeros(len(c_tdi))
        if self.kind == "AP":
            y = self.y_total.value + self._topic_sum(l_tdi - np.where(self.sampled, l_tdi, 0.0)
                                                     * self.inv_pi)
            return x, y[t], u, np.where(self.sampled, self.y_tdi - l_tdi, 0.0)
        y, slope = self._ideal(c_tdi if ideal_at is None else ideal_at)
        r = np.where(self.sampled, slope[self.topic, self.y_tdi.astype(np.int64)], 0.0)
        r = r - c_tdi * slope[self.topic, self.f_tdi.astype(np.int64)]
        return x, y[t], u, np.where(self.sampled, r, 0.0)

    def label_influence(self, theta):
        """The labels' census influences: (u per position, r per tdi, theta, Y per segment) of
        the linearised M at the labels' census value ``theta`` (every pooled document labelled,
        pi = 1): AP's pair walk on f, the weights of f for the linear totals, and r = f (AP) or
        the slope of the labels' ideal DCG in f's grade (nDCG); num_rel: z = f."""
        ctx, d = self.ctx, self.d
        n = ctx.n_seg
        if self.kind == "num_rel":
            return np.zeros(len(ctx.pos_tdi)), self.f_tdi, -np.ones(n), np.ones(n)
        if self.kind == "AP":
            _, u = pair_walk(ctx.offsets, self.f_pos, self.f_pos, self.f_pos, self.ones,
                             d.pos_cell, d.pos_g, d.n_cells, self.cutoff)
            return u, self.f_tdi, theta, self.label_den()
        _, u = weighted_prefix(ctx.offsets, self.f_pos, self.ones, self.weight, self.cutoff)
        if self.kind == "P":
            return u, np.zeros(len(self.f_tdi)), np.zeros(n), np.ones(n)
        counts = self.label_counts()
        ideal = _ideal(counts, self.gains, self.cutoff)
        slope = np.zeros_like(counts)
        for v in self.levels[1:]:
            bumped = counts.copy()
            bumped[:, v] += 1.0
            slope[:, v] = _ideal(bumped, self.gains, self.cutoff) - ideal
        r = slope[self.topic, self.f_tdi.astype(np.int64)]
        return u, r, theta, ideal[ctx.seg_topic]

    def label_counts(self):
        grade = self.f_tdi.astype(np.int64)
        counts = np.zeros_like(self.y_counts)
        for v in self.levels[1:]:
            counts[:, v] = self._topic_sum((grade == v) * 1.0)
        return counts

    def control(self, u, r, theta, den):
        """D_h per segment and stratum: sum_{F_h} z_d - sum_{S_h} z_d / pi_d for the fixed
        z_d = (u_d - theta r_d) / Y of :meth:`label_influence` (mean 0 under the design)."""
        ctx, d = self.ctx, self.d
        n_cells = d.n_cells
        pooled_pos = self.f_pos * 0.0 + (ctx.judgments.state[ctx.pos_tdi] != UNPOOLED)
        w_pos = pooled_pos - np.where(d.pos_pi > 0, safe_divide(1.0, d.pos_pi), 0.0)
        seg = np.repeat(np.arange(ctx.n_seg), ctx.seg_len)
        cell = self.stratum[ctx.pos_tdi]
        du = np.bincount(seg * n_cells + cell, weights=w_pos * u,
                         minlength=ctx.n_seg * n_cells).reshape(ctx.n_seg, n_cells)
        pooled = ctx.judgments.state != UNPOOLED
        w_tdi = pooled - np.where(self.sampled, self.inv_pi, 0.0)
        dr = np.bincount(self.topic * n_cells + self.stratum, weights=w_tdi * r,
                         minlength=ctx.n_topics * n_cells).reshape(ctx.n_topics, n_cells)
        out = du - theta[:, None] * dr[ctx.seg_topic]
        return safe_divide(out, np.asarray(den, dtype=np.float64)[:, None])

    def label_den(self):
        """The denominator on the labels alone (R(f); nDCG: the ideal DCG of the labels' counts)
        per segment: the pilot scale of the power tuning (no sampling noise)."""
        t = self.ctx.seg_topic
        if self.kind in ("num_rel", "P"):
            return np.ones(self.ctx.n_seg)
        if self.kind == "AP":
            return self._topic_sum(self.f_tdi)[t]
        return _ideal(self.label_counts(), self.gains, self.cutoff)[t]

    def counts(self, c_tdi):
        """nDCG: the difference estimates of the count of every grade per topic (>= 0)."""
        counts = self.y_counts.copy()
        grade = self.f_tdi.astype(np.int64)
        for v in self.levels[1:]:
            lv = c_tdi * (grade == v)
            counts[:, v] += self._topic_sum(lv - np.where(self.sampled, lv, 0.0) * self.inv_pi)
        return np.maximum(counts, 0.0)

    def _ideal(self, c_tdi):
        counts = self.counts(c_tdi)
        ideal = _ideal(counts, self.gains, self.cutoff)
        slope = np.zeros_like(counts)
        for v in self.levels[1:]:
            bumped = counts.copy()
            bumped[:, v] += 1.0
            slope[:, v] = _ideal(bumped, self.gains, self.cutoff) - ideal
        return ideal, slope

    def _linear_numerator(self, c_pos):
        ctx, d = self.ctx, self.d
        if not hasattr(self, "_human"):
            self._human = weighted_prefix(ctx.offsets, self.y_pos, d.pos_pi, self.weight,
                                          self.cutoff)
        xy, uy = self._human
        lab = c_pos * self.f_pos
        xl, ul = weighted_prefix(ctx.offsets, lab, d.pos_pi, self.weight, self.cutoff)
        census, _ = weighted_prefix(ctx.offsets, lab, self.ones, self.weight, self.cutoff)
        return xy + census - xl, uy - ul

    def _ap_numerator(self, c_pos):
        ctx, d = self.ctx, self.d
        y, f = self.y_pos, self.f_pos
        lab = c_pos * f

        def walk(above, below, single, pi):
            return pair_walk(ctx.offsets, above, below, single, pi, d.pos_cell, d.pos_g,
                             d.n_cells, self.cutoff)

        if not hasattr(self, "_human"):
            self._human = walk(y, y, y, d.pos_pi)
        xy, uy = self._human
        x1, u1 = walk(lab, f, lab, d.pos_pi)
        x2, u2 = walk(f, lab, lab, d.pos_pi)
        c1, _ = walk(lab, f, lab, self.ones)
        c2, _ = walk(f, lab, lab, self.ones)
        return xy + 0.5 * (c1 + c2) - 0.5 * (x1 + x2), uy - 0.5 * (u1 + u2)


def influence_cells(ctx, a, b):
    """Per segment and cell the sums of ``ppi_kernels.influence_sums`` for two influences,
    each given as (u per position, r per tdi, theta per segment, Y per segment)."""
    d = ht_design(ctx)
    unc = np.flatnonzero((d.tdi_pi > 0) & (d.tdi_pi < 1))
    topic = ctx.collection.tdi_topic.astype(np.int64)[unc]
    order = np.argsort(topic, kind="stable")
    sample_tdi = unc[order]
    offsets = np.concatenate([[0], np.cumsum(np.bincount(topic, minlength=ctx.n_topics))])
    local = np.full(ctx.collection.n_tdi, -1, dtype=np.int64)
    local[sample_tdi] = np.arange(len(sample_tdi)) - offsets[topic[order]]

    def f64(v):
        return np.ascontiguousarray(v, dtype=np.float64)

    return influence_sums(ctx.offsets, ctx.seg_topic, ctx.pos_tdi, f64(a[0]), f64(b[0]),
                          offsets.astype(np.int64), sample_tdi, local, d.tdi_pi, d.tdi_cell,
                          f64(a[1]), f64(b[1]), f64(a[2]), f64(b[2]), f64(a[3]), f64(b[3]),
                          d.n_cells)


def variance_of(ctx, sums) -> np.ndarray:
    """The design variance per segment of the first influence of ``influence_cells``."""
    return cell_variance(ht_design(ctx), ctx.seg_topic, sums[..., 0], sums[..., 1],
                         sums[..., 2])


def informed_topics(parts) -> np.ndarray:
    """Per topic: the sampled documents (pi > 0) whose human value or label is positive."""
    seen = parts.sampled & ((parts.y_tdi > 0) | (parts.f_tdi > 0))
    return np.bincount(parts.topic[seen], minlength=parts.ctx.n_topics)


def identified(ctx, y, r) -> np.ndarray:
    """Per segment: whether the denominator Y^ is positive with a coefficient of variation
    sqrt(v(Y^))/Y^ at most :data:`CV_MAX` (``r`` its residual per tdi)."""
    n = ctx.n_seg
    sums = influence_cells(ctx, (np.zeros(len(ctx.pos_tdi)), r, -np.ones(n), np.ones(n)),
                           (np.zeros(len(ctx.pos_tdi)), np.zeros_like(r), np.zeros(n), np.ones(n)))
    v = np.maximum(variance_of(ctx, sums), 0.0)
    return (y > 0) & (v <= (CV_MAX * y) ** 2)


def cell_moments(ctx, sums):
    """Per segment and cell: the covariance C_h(A, B) and the variance V_h(B) of the two
    influences of ``influence_cells`` (ht_design's cell formula, cell by cell)."""
    d = ht_design(ctx)
    t = ctx.seg_topic
    n_cells = d.n_cells
    a, b, cross = sums[..., 0:3], sums[..., 3:6], sums[..., 6]
    cov = np.zeros((ctx.n_seg, n_cells))
    v_b = np.zeros((ctx.n_seg, n_cells))
    for h in range(n_cells):
        only = np.zeros(n_cells)
        only[h] = 1.0

        def v(s0, s1, s2):
            return cell_variance(d, t, s0 * only, s1 * only, s2 * only)

        vab = v(a[..., 0] + b[..., 0], a[..., 1] + b[..., 1],
                a[..., 2] + 2.0 * cross + b[..., 2])
        v_b[:, h] = v(b[..., 0], b[..., 1], b[..., 2])
        cov[:, h] = 0.5 * (vab - v(a[..., 0], a[..., 1], a[..., 2]) - v_b[:, h])
    return cov, v_b


def pooled_weights(ctx, cov, v_b, use, level="stratum"):
    """lambda (module docstring) from per-segment, per-cell C and V(B), pooled over the
    segments in ``use``: per stratum over every run and topic (``"stratum"``), one weight over
    everything (``"global"``), or per topic x stratum over the runs (``"topic"``). A (topic x)
    stratum whose labels move no estimate (sum V_h(B) = 0) takes the next wider weight
    (stratum, global), and 1 where even that is 0. Returns (T, S), clipped to [0, 1]."""
    t = ctx.seg_topic
    cov = np.where(use[:, None], cov, 0.0)
    v_b = np.where(use[:, None], v_b, 0.0)
    n_cells = cov.shape[1]
    total_b = v_b.sum()
    lam = np.full((ctx.n_topics, n_cells), safe_divide(cov.sum(), total_b) if total_b > 0 else 1.0)
    if level == "global":
        return np.clip(lam, 0.0, 1.0)
    cs, vs = cov.sum(axis=0), v_b.sum(axis=0)
    lam = np.where(vs > 0, safe_divide(cs, vs), lam)
    if level == "topic":
        ct = np.stack([np.bincount(t, weights=cov[:, h], minlength=ctx.n_topics)
                       for h in range(n_cells)], axis=1)
        vt = np.stack([np.bincount(t, weights=v_b[:, h], minlength=ctx.n_topics)
                       for h in range(n_cells)], axis=1)
        lam = np.where(vt > 0, safe_divide(ct, vt), lam)
    return np.clip(lam, 0.0, 1.0)


def stratum_weights(ctx, sums, use, level="stratum"):
    """:func:`pooled_weights` of the moments of ``influence_cells`` sums."""
    cov, v_b = cell_moments(ctx, sums)
    return pooled_weights(ctx, cov, v_b, use, level)
