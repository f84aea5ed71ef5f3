"""ppi(M) for nDCG, nDCG@k, P@k and num_rel (``ppi/estimate.py``): the measure's totals as
difference estimators, with one label weight per stratum.

Per topic, F is the pool, S the judged sample (pi_d of ``ht/inclusion.py``), y_d the human value
of d and f_d its label's (P@k, R: relevant at the relevance level; nDCG: the grade, as gain).
A coefficient c_d = lambda_h(d) in [0, 1] (one weight per stratum h; 0 on the topics whose labels
are constant) scales the labels, l_d = c_d f_d, and every total the measure is built from is
the labels' value on the whole pool plus the design-weighted residuals of the sample (the
difference estimator, Särndal, Swensson & Wretman 1992 §6.3; stratified PPI, Fisch et al. 2024):

    T^ = sum_F l_d a_d + sum_S (y_d - l_d) a_d / pi_d,

a_d the document's weight in T: P@k: 1/k in the run's top k; DCG(@k): 1/log2(r+1) at rank
r (<= k); R: 1; the count C_v of grade v: 1{grade = v}. T^ is unbiased for sum_F y_d a_d for
any fixed c. P@k and num_rel are such totals. nDCG = DCG / IDCG is estimated by the ratio

    nDCG^ = DCG^ / IDCG(C^),

IDCG(C) the ideal DCG of counts C_v per grade (each clipped at 0; linear between integers, as
``ideal_dcg.ideal_dcg``). The labels enter both parts as residuals, so the coefficient of
variation of the denominator, which governs the ratio's bias, shrinks where the labels predict
the grades. The estimate is clipped to [0, 1] (the measure's range: a projection that never
moves it away from the truth).

Where the ratio is not identified the topic keeps ht(nDCG) (option: ``ppi/control_variate.py``):
IDCG(C^) <= 0, its coefficient of variation sqrt(v(IDCG^))/IDCG^ above :data:`CV_MAX`, or
fewer than :data:`MIN_REL` sampled documents of positive human grade (with none, every residual
can be 0 and the estimated variance 0 while the labels' value is far off: measured on Vaswani
with the fusion labels, a bias of +0.19 on the topics so taken).

Variance (Taylor linearisation of X^/Y^): per sampled document z_d = (u_d - theta^ r_d) / Y^,
u_d = (y_d - l_d) a_d its numerator residual at its rank, r_d = s(y_d) - c_d s(f_d) with s(v)
the slope of IDCG in the count of grade v; the totals take z_d = u_d (num_rel: y_d - l_d); then
ht_design's cell formula.

Power tuning (PPI++, Angelopoulos, Duchi & Zrnic 2023, per stratum as stratified PPI): with A_d
the influence of the humans alone (c = 0) and B_d that of the labels (c = 1), both at a pilot
theta (ht's) and Y (the larger of ht's and the labels' census value), the variance of the sum
over runs and topics is sum_h [V_h(A) - 2 lambda_h C_h(A, B) + lambda_h^2 V_h(B)], minimised by
lambda_h = sum C_h / sum V_h(B) over every run and topic of identified ratios (``"stratum"``;
``"topic"``: per topic x stratum over the runs; ``"global"``: one weight), clipped to [0, 1].
Exact for the totals; for nDCG the slopes are the pilot's. ``"model"`` (an option, not the
default: ``ppi/anticipated.py``, "Label weights") takes lambda per topic and stratum from the
relevance model with the labels where ht has an anticipated variance, the pooled ``"stratum"``
weight where that model says nothing (a stratum judged whole, a top-up, no model), and 1 on a
topic whose labels equal every judged document's grade (the sample shows no residual: its own
tuning gives 1, and true labels stay exact).
"""

from __future__ import annotations

import numpy as np

from ...model import JUDGED, UNPOOLED
from ..context import safe_divide
from ..ht.ideal_dcg import ideal_and_slopes, ideal_dcg
from ..ht.inclusion import cell_variance, ht_design, topic_total
from ..ht.walks import NO_CUTOFF, weighted_prefix
from ..trec_eval.counts import NumRel
from .anticipated import model_weights
from .influence import N_SUMS, influence_sums

#: the largest coefficient of variation of the denominator at which a topic's ratio is taken
CV_MAX = 0.5
#: the fewest sampled documents of positive human value a topic's ratio is taken with
MIN_REL = 2
LEVELS = ("stratum", "model", "topic", "global")


def difference_estimate(ctx, m, grades, centre, ht_den, useful_t, tuning, agree_t=None):
    """(value, variance, kept, lambda (T, S)) per segment: the estimate of the module docstring;
    ``kept`` marks the segments whose ratio is not identified (the caller keeps ht there).
    ``centre``/``ht_den``: ht's estimate and denominator (the pilot); ``useful_t`` per topic,
    whether the labels vary; ``tuning`` a level of :data:`LEVELS` or a fixed weight
    (``"model"`` only where ht has an anticipated variance); ``agree_t`` per topic, whether the
    labels equal every judged grade (``"model"``: lambda 1 there)."""
    parts = Parts(ctx, m, grades)
    one = useful_t[parts.topic].astype(np.float64)
    useful = useful_t[ctx.seg_topic]
    ratio = parts.kind == "nDCG"
    n_cells = ht_design(ctx).n_cells
    if not isinstance(tuning, str):
        lam_h = np.full((ctx.n_topics, n_cells), float(tuning))
    else:
        a, b, y1, r1, out1 = parts.pilot(one)
        pilot = np.nan_to_num(centre) if ratio else np.ones(ctx.n_seg)
        den = np.maximum(parts.label_den(), np.nan_to_num(ht_den)) if ratio else y1
        use = useful & (identified(ctx, parts, y1, r1, out1) if ratio else True)
        sums = influence_cells(ctx, (*a, pilot, den), (*b, pilot, den), out_a=out1)
        cov, v_b, _ = cell_moments(ctx, sums)
        lam_h = pooled_weights(ctx, cov, v_b, use, "stratum" if tuning == "model" else tuning)
        if tuning == "model":
            chosen = model_weights(ctx, m, grades, use)
            if chosen is not None:
                lam_h = np.where(np.isnan(chosen), lam_h, chosen)
                if agree_t is not None:
                    lam_h = np.where(agree_t[:, None], 1.0, lam_h)
    c = lam_h[parts.topic, parts.stratum] * one
    x, y, u, r, out = parts.at(c)
    theta = np.clip(safe_divide(x, y), 0.0, 1.0) if ratio else x
    zero = np.zeros(ctx.n_seg)
    sums = influence_cells(ctx, (u, r, theta if ratio else np.ones(ctx.n_seg), y),
                           (np.zeros_like(u), np.zeros_like(r), zero, np.ones(ctx.n_seg)),
                           out_a=out)
    var = np.maximum(variance_of(ctx, sums), 0.0)
    kept = ~useful | (~identified(ctx, parts, y, r, out) if ratio else False)
    return theta, var, kept, lam_h


class Parts:
    """The per-document facts of one context, labels and measure that the difference
    estimates need (built once; :meth:`at` evaluates them at a label coefficient)."""

    def __init__(self, ctx, m, grades):
        self.ctx, self.m = ctx, m
        self._human = None
        self.d = d = ht_design(ctx)
        j = ctx.judgments
        col = ctx.collection
        self.topic = col.tdi_topic.astype(np.int64)
        self.stratum = np.maximum(j.stratum, 0).astype(np.int64)
        pooled = j.state != UNPOOLED
        judged = j.state == JUDGED
        self.sampled = d.tdi_pi > 0
        self.kind = "num_rel" if isinstance(m, NumRel) else "nDCG" if m.family == "nDCG" else "P"
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
        self.cutoff = NO_CUTOFF if k is None else int(k)
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

    def outside(self, slope=None):
        """r of a sampled document outside the collection by topic and grade (it has no label:
        its residual is its human value): num_rel -1{g >= rel}, nDCG the ideal's ``slope``;
        None for P@k (such a document is never ranked)."""
        if self.kind == "num_rel":
            n_grades = self.ctx.judgments.stratum_grades.shape[2]
            relevant = (np.arange(n_grades) >= self.ctx.rel_level).astype(np.float64)
            return -np.tile(relevant, (self.ctx.n_topics, 1))
        return slope if self.kind == "nDCG" else None

    def at(self, c_tdi):
        """(X^, Y^ per segment, u per position, r per tdi, r outside the collection per topic
        and grade) at label coefficients ``c_tdi``."""
        ctx = self.ctx
        t = ctx.seg_topic
        c_pos = c_tdi[ctx.pos_tdi]
        l_tdi = c_tdi * self.f_tdi
        if self.kind == "num_rel":
            resid = np.where(self.sampled, self.y_tdi - l_tdi, 0.0)
            y = self.y_total.value + self._topic_sum(l_tdi - np.where(self.sampled, l_tdi, 0.0)
                                                     * self.inv_pi)
            return y[t], np.ones(ctx.n_seg), np.zeros(len(ctx.pos_tdi)), -resid, self.outside()
        x, u = self._linear_numerator(c_pos)
        if self.kind == "P":
            return x, np.ones(ctx.n_seg), u, np.zeros(len(c_tdi)), None
        y, slope = self._ideal(c_tdi)
        r = np.where(self.sampled, slope[self.topic, self.y_tdi.astype(np.int64)], 0.0)
        r = r - c_tdi * slope[self.topic, self.f_tdi.astype(np.int64)]
        return x, y[t], u, np.where(self.sampled, r, 0.0), self.outside(slope)

    def pilot(self, one):
        """The power tuning's two influences at the labels' coefficients ``one`` (1 on the
        topics whose labels vary): A of the humans alone, B of the labels, each (u per position,
        r per tdi), with nDCG's slopes at the counts of ``one``; Y^, r at ``one``; and A's r of
        the sampled documents outside the collection (B's is 0: they have no label)."""
        ctx, d = self.ctx, self.d
        n_pos = len(ctx.pos_tdi)
        l_tdi = np.where(self.sampled, one * self.f_tdi, 0.0)
        if self.kind == "num_rel":
            zero = np.zeros(n_pos)
            a, b = (zero, -np.where(self.sampled, self.y_tdi, 0.0)), (zero, -l_tdi)
            return a, b, np.ones(ctx.n_seg), a[1] - b[1], self.outside()
        _, uy = self._human_numerator()
        _, uf = weighted_prefix(ctx.offsets, ctx.rank, one[ctx.pos_tdi] * self.f_pos, d.pos_pi,
                                self.weight, self.cutoff)
        if self.kind == "P":
            zero = np.zeros(len(self.f_tdi))
            return (uy, zero), (uf, zero), np.ones(ctx.n_seg), zero, None
        ideal, slope = self._ideal(one)
        ry = np.where(self.sampled, slope[self.topic, self.y_tdi.astype(np.int64)], 0.0)
        rf = np.where(self.sampled, one * slope[self.topic, self.f_tdi.astype(np.int64)], 0.0)
        return (uy, ry), (uf, rf), ideal[ctx.seg_topic], ry - rf, self.outside(slope)

    def _human_numerator(self):
        if self._human is None:
            self._human = weighted_prefix(self.ctx.offsets, self.ctx.rank, self.y_pos,
                                          self.d.pos_pi, self.weight, self.cutoff)
        return self._human

    def label_den(self):
        """nDCG: the ideal DCG of the labels' own counts per segment (the pilot scale of the
        power tuning: no sampling noise); 1 for the totals."""
        t = self.ctx.seg_topic
        if self.kind != "nDCG":
            return np.ones(self.ctx.n_seg)
        grade = self.f_tdi.astype(np.int64)
        counts = np.zeros_like(self.y_counts)
        for v in self.levels[1:]:
            counts[:, v] = self._topic_sum((grade == v) * 1.0)
        return ideal_dcg(counts, self.gains, self.cutoff)[t]

    def counts(self, c_tdi):
        """nDCG: the difference estimates of the count of every grade per topic (>= 0)."""
        counts = self.y_counts.copy()
        grade = self.f_tdi.astype(np.int64)
        for v in self.levels[1:]:
            lv = c_tdi * (grade == v)
            counts[:, v] += self._topic_sum(lv - np.where(self.sampled, lv, 0.0) * self.inv_pi)
        return np.maximum(counts, 0.0)

    def _ideal(self, c_tdi):
        return ideal_and_slopes(self.counts(c_tdi), self.gains, self.cutoff)

    def _linear_numerator(self, c_pos):
        ctx, d = self.ctx, self.d
        xy, uy = self._human_numerator()
        lab = c_pos * self.f_pos
        xl, ul = weighted_prefix(ctx.offsets, ctx.rank, lab, d.pos_pi, self.weight, self.cutoff)
        census, _ = weighted_prefix(ctx.offsets, ctx.rank, lab, self.ones, self.weight, self.cutoff)
        return xy + census - xl, uy - ul


def influence_cells(ctx, a, b, out_a=None, out_b=None):
    """Per segment and cell the sums of ``influence.influence_sums`` for two influences,
    each given as (u per position, r per tdi, theta per segment, Y per segment). ``out_a`` /
    ``out_b`` (topics x grades): r of a sampled document outside the collection (one no run
    retrieved: u = 0) of each grade; their z = -theta r / Y enter every cell at the cell's rate
    (:func:`outside_sums`)."""
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

    sums = influence_sums(ctx.offsets, ctx.seg_topic, ctx.pos_tdi, f64(a[0]), f64(b[0]),
                          offsets.astype(np.int64), sample_tdi, local, d.tdi_pi, d.tdi_cell,
                          f64(a[1]), f64(b[1]), f64(a[2]), f64(b[2]), f64(a[3]), f64(b[3]),
                          d.n_cells)
    if out_a is not None or out_b is not None:
        sums += outside_sums(ctx.seg_topic, d, (a[2], a[3], out_a), (b[2], b[3], out_b))
    return sums


def outside_sums(seg_topic, d, a, b):
    """The sums of :func:`influence_cells` over the sampled documents outside the collection,
    one row per entry of ``seg_topic`` (its topic): per cell h and grade g, ``d.outside[t, h,
    g]`` documents at pi = ``d.outside_pi[t, h]``, each x = -theta r_g / (Y pi) for the two
    influences ``(theta, Y, r per topic x grade)`` (r None: 0)."""
    t = seg_topic
    count = d.outside[t]  # (n_seg, S, G)
    pi = d.outside_pi[t]
    part = (pi > 0) & (pi < 1)
    inv = np.where(part, safe_divide(1.0, pi), 0.0)
    w = np.where(part, 1.0 - pi, 0.0)

    def x_of(theta, y, r_out):
        if r_out is None:
            return np.zeros(count.shape)
        scale = np.where(np.asarray(y) > 0, -safe_divide(np.asarray(theta, dtype=np.float64),
                                                          np.asarray(y, dtype=np.float64)), 0.0)
        r = np.zeros((len(t), count.shape[2]))
        width = min(r_out.shape[1], count.shape[2])
        r[:, :width] = r_out[t, :width]
        return scale[:, None, None] * r[:, None, :] * inv[:, :, None]

    xa, xb = x_of(*a), x_of(*b)
    out = np.zeros((len(t), d.n_cells, N_SUMS))
    for k, x in enumerate((xa, xb)):
        out[..., 3 * k] = (count * x).sum(axis=2)
        out[..., 3 * k + 1] = w * out[..., 3 * k]
        out[..., 3 * k + 2] = w * (count * x * x).sum(axis=2)
    out[..., 6] = w * (count * xa * xb).sum(axis=2)
    return out


def variance_of(ctx, sums) -> np.ndarray:
    """The design variance per segment of the first influence of ``influence_cells``."""
    return cell_variance(ht_design(ctx), ctx.seg_topic, sums[..., 0], sums[..., 1],
                         sums[..., 2])


def identified(ctx, parts, y, r, out=None) -> np.ndarray:
    """Per segment: whether the ratio is identified (module docstring): Y^ > 0 with a
    coefficient of variation sqrt(v(Y^))/Y^ at most :data:`CV_MAX` (``r`` its residual per tdi,
    ``out`` per topic and grade for the sampled documents outside the collection; Y^ is the
    topic's, so v(Y^) is summed per topic) and at least :data:`MIN_REL` sampled documents of
    positive human value in the topic."""
    d = parts.d
    unc = (d.tdi_pi > 0) & (d.tdi_pi < 1)
    x = np.where(unc, r * parts.inv_pi, 0.0)
    w = 1.0 - d.tdi_pi
    cell = parts.topic * d.n_cells + d.tdi_cell
    size = ctx.n_topics * d.n_cells

    def by_cell(values):
        return np.bincount(cell[unc], weights=values[unc], minlength=size).reshape(
            ctx.n_topics, d.n_cells)

    sx, swx, swxx = by_cell(x), by_cell(w * x), by_cell(w * x * x)
    if out is not None:  # the documents outside the collection, at their cell's rate
        topics = np.arange(ctx.n_topics)  # one row per topic: Y^ is the topic's
        per = outside_sums(topics, d, (-np.ones(ctx.n_topics), np.ones(ctx.n_topics), out),
                           (np.zeros(ctx.n_topics), np.ones(ctx.n_topics), None))
        sx, swx, swxx = sx + per[..., 0], swx + per[..., 1], swxx + per[..., 2]
    v = np.maximum(cell_variance(d, np.arange(ctx.n_topics), sx, swx, swxx), 0.0)[ctx.seg_topic]
    seen = np.bincount(parts.topic[parts.sampled & (parts.y_tdi > 0)], minlength=ctx.n_topics)
    return (y > 0) & (v <= (CV_MAX * y) ** 2) & (seen[ctx.seg_topic] >= MIN_REL)


def cell_moments(ctx, sums):
    """Per segment and cell: the covariance C_h(A, B), the variance V_h(B) and the variance
    V_h(A) of the two influences of ``influence_cells`` (ht_design's cell formula, cell by
    cell)."""
    d = ht_design(ctx)
    t = ctx.seg_topic
    n_cells = d.n_cells
    a, b, cross = sums[..., 0:3], sums[..., 3:6], sums[..., 6]
    cov = np.zeros((ctx.n_seg, n_cells))
    v_b = np.zeros((ctx.n_seg, n_cells))
    v_a = np.zeros((ctx.n_seg, n_cells))
    for h in range(n_cells):
        only = np.zeros(n_cells)
        only[h] = 1.0

        def v(s0, s1, s2, only=only):
            return cell_variance(d, t, s0 * only, s1 * only, s2 * only)

        vab = v(a[..., 0] + b[..., 0], a[..., 1] + b[..., 1],
                a[..., 2] + 2.0 * cross + b[..., 2])
        v_b[:, h] = v(b[..., 0], b[..., 1], b[..., 2])
        v_a[:, h] = v(a[..., 0], a[..., 1], a[..., 2])
        cov[:, h] = 0.5 * (vab - v_a[:, h] - v_b[:, h])
    return cov, v_b, v_a


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
    if level not in LEVELS:
        raise ValueError(level)
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
