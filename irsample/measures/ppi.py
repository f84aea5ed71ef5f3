"""Prediction-powered estimators: automatic labels on every pooled document, corrected by a
probability sample of human judgments (reference-semantics §3.6, last bullet).

Setting. Per topic, the frame F is the pool (every document in the judgments, judged or not);
a stratified simple random sample S of it is judged (n_h of the N_h documents of stratum h,
pi_d = n_h/N_h; pi_de = n_h(n_h - 1)/(N_h(N_h - 1)) within a stratum, pi_d pi_e across); an
automatic label f_d (``irsample.io.labels``) is known for every d in F (0 where missing). y_d is
the human judgment: relevance 1[grade >= level] for AP, P@k and num_rel, the gain (the grade)
for nDCG. Documents outside F count as non-relevant, as everywhere in irsample: the truth is the
measure on the complete judgments restricted to F.

Linear totals (PPI; Angelopoulos, Bates, Fannjiang, Jordan & Zrnic, Science 2023): for
T = sum_F w_d y_d (P@k: w = 1/k in the run's top k; DCG@k: w = 1/log2(rank + 1); R: w = 1)

    T^(lambda) = lambda sum_F w_d f_d + sum_S w_d (y_d - lambda f_d) / pi_d,

unbiased for any fixed f and lambda, since E[sum_S z_d/pi_d] = sum_F z_d (Horvitz-Thompson).
lambda = 0 is the HT estimator; lambda = 1 is PPI; PPI++ (Angelopoulos, Duchi & Zrnic 2023)
picks lambda in [0, 1] to minimise the estimated variance. Under stratified SRS

    var T^ = sum_h N_h^2 (1 - n_h/N_h) S_h^2(z) / n_h,   z_d = w_d (y_d - lambda f_d),

S_h^2 the sample variance of z over the n_h sampled documents of h (Cochran §5.3).

AP. AP = Num / R with Num = sum_{j <= k} y_j y_k / k over the run's ranks (j = k: y_k/k) and
R = sum_F y_d. Num is quadratic in y, so the correction must estimate the *difference of the
products*: writing Num = Pred(f) + [Num(y) - Pred(f)] with Pred(f) = sum_{j<=k} f_j f_k / k
computed over all of F,

    Num^(lambda) = lambda Pred(f) + sum_{k in S} (y_k - lambda f_k)/(k pi_k)
                   + sum_{j < k, both in S} (y_j y_k - lambda f_j f_k) / (k pi_jk),

unbiased for fixed f, lambda because E[1{j,k in S}/pi_jk] = 1 for every pair. The product of
residuals (y_j - f_j)(y_k - f_k) would estimate sum y_j y_k - y_j f_k - f_j y_k + f_j f_k, not
Num - Pred: the cross terms y_j f_k need y on unsampled documents, so it is not a correction of
Pred at all. R^(lambda) = lambda sum_F f + sum_S (y - lambda f)/pi, and AP^ = Num^/R^, a ratio
(bias O(1/n), as statAP). nDCG^ = DCG^/IDCG^ with IDCG^ = sum_{g >= 1} D_k(C^_g), C^_g the PPI
estimate of the number of documents of grade >= g and D_k(x) the discounts summed to min(x, k),
interpolated linearly between integers (D(x) = sum_{i <= floor x} 1/log2(i + 1) + frac(x) /
log2(floor x + 2)): with gains = grades the ideal DCG telescopes to sum_g D(C_g).

Variance (a ratio theta = A/B, Cochran §6.11): the stratified formula above applied to the
linearised influences a_d = (u_d - theta b_d)/B of the sampled documents, u_d of the numerator,
b_d of the denominator (AP: b_d = y_d - lambda f_d; nDCG: b_d = sum_g D'_k(C_g)(1[y_d >= g] -
lambda f_{d,>=g}), D' taken at the lambda = 1 counts). For AP's quadratic numerator, the
Hoeffding projection gives u_d = (y_d - lambda f_d)/k_d + sum_{e != d} (y_d y_e - lambda f_d f_e)
/ max(k_d, k_e) over the retrieved e, whose sum over e is itself estimated PPI-style, f over F
plus y - lambda f over S weighted 1/pi_e. u and b are affine in lambda (u = u0 + lambda u1), so
one walk stores their moments per stratum and the variance is a quadratic form in lambda.
Labels equal to the truth give u = b = 0 at lambda = 1: the estimate is the full-judgment
measure with variance 0. Labels all 0 leave every lambda with the HT estimate and variance.

Power tuning (PPI++). For a linear total, var(lambda) = V00 + 2 lambda V01 + lambda^2 V11 in the
stratified estimates of the influences' (co)variances, minimised by lambda = -V01/V11 (clipped
to [0, 1]; the labels are used fully, lambda = 1, where they are constant on the sample). One
lambda per run (``tuning="run"``, the default) sums V01 and V11 over its topics: it minimises the
variance of the run's mean over topics, and pooling the topics keeps the selection noise small
(PPI++ §3: choosing lambda on the sample costs O(1/n)). ``"topic"`` tunes each (run, topic);
a number fixes lambda. For the ratios (AP, nDCG) numerator and denominator share lambda, and a
denominator whose labels do not track the sample is dangerous: R^ = lambda sum_F f + sum_S (y -
lambda f)/pi can come close to 0 where the labels call many non-relevant documents relevant
(a topic with few relevant documents), and AP^ = Num^/R^ then explodes. So each topic first gets
the PPI++ weight of its own denominator total, lambda_t = cov^(y, f)/var^(f) of its HT parts
(clipped to [0, 1]; near 0 where the labels do not track the judged documents, and then the
estimator stays close to HT, which degrades gracefully: AP^ = 0 when no relevant document is
sampled); the run's lambda minimises the linearised variance of the ratio at that topic's
estimate, and the topic uses min(lambda_run, lambda_t). R^ is also bounded below by the
relevant documents the sample has seen (a bound that can only cut the error). Because the
run's lambda is chosen at a different linearisation point than HT's, the estimated variance is
not guaranteed below HT's for the ratios: with ``guard`` (the default) a run whose estimated
variance of the mean exceeds HT's falls back to HT (lambda = 0) on all its topics, a choice
between two estimators by their estimated variances over all topics of the run.

Documents of a stratum with n_h = 1 have no sampled pairs (pi_jj' = 0): their pair terms are
left out (the estimate is then biased; designs here sample at least 2 where they can). Judged
documents no run retrieved and that have no ``tdi`` count in R^ through the stratum counts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import MeasureError
from ..io.labels import AutoLabels
from ..model import JUDGED, UNPOOLED
from .context import safe_divide
from .ppi_kernels import ap_walk, linear_walk

TUNINGS = ("run", "topic")
KINDS = ("AP", "nDCG", "P", "num_rel")


@dataclass(frozen=True, eq=False)
class DesignArrays:
    """A stratified SRS read from judgments: per ``tdi`` frame membership, sampled, pi and
    stratum; per topic x stratum N_h, n_h, the within-stratum pair factor
    c = pi_d pi_e / pi_de = n_h (N_h - 1) / (N_h (n_h - 1)) (0 when n_h < 2), and the sampled
    documents without a ``tdi`` by grade (``extra[t, h, g]``)."""

    in_frame: np.ndarray
    sampled: np.ndarray
    pi: np.ndarray
    stratum: np.ndarray
    size: np.ndarray
    taken: np.ndarray
    same: np.ndarray
    extra: np.ndarray
    topic: np.ndarray  #: topic of every tdi


def design_arrays(collection, judgments) -> DesignArrays:
    """The design of ``judgments`` (strata and counts as :class:`~irsample.model.Judgments`
    records them; plain qrels with -1 entries are one uniform stratum)."""
    topic = collection.tdi_topic.astype(np.int64)
    in_frame = judgments.state != UNPOOLED
    sampled = judgments.state == JUDGED
    size = judgments.stratum_size.astype(np.float64)
    taken = judgments.stratum_sampled.astype(np.float64)
    n_strata = size.shape[1]
    stratum = np.where(in_frame, judgments.stratum, 0).astype(np.int64)
    rate = safe_divide(taken, size)
    pi = np.where(in_frame, rate[topic, stratum], 0.0)
    same = np.where(taken >= 2, safe_divide(taken * (size - 1.0), size * (taken - 1.0)), 0.0)
    cell = topic * n_strata + stratum
    grades = judgments.stratum_grades.astype(np.float64).copy()  # (T, H, G), g >= 1 used
    n_grades = grades.shape[2]
    g = np.clip(judgments.grade, 0, n_grades - 1)
    have = np.bincount(cell[sampled] * n_grades + g[sampled],
                       minlength=size.size * n_grades).reshape(grades.shape)
    extra = grades - have
    extra[:, :, 0] = taken - have.sum(axis=2)  # sampled without a tdi, any grade
    extra[:, :, 0] -= extra[:, :, 1:].sum(axis=2)
    return DesignArrays(in_frame, sampled, pi, stratum, size, taken, same,
                        np.maximum(extra, 0.0), topic)


@dataclass(frozen=True, eq=False)
class PPIEstimate:
    """Per segment (run x topic): the PPI estimate, its variance and lambda; the HT estimate
    (lambda = 0) with its variance; the uncorrected auto-only value (labels as judgments)."""

    value: np.ndarray
    variance: np.ndarray
    lam: np.ndarray
    ht: np.ndarray
    ht_variance: np.ndarray
    auto: np.ndarray


def _topic_sum(values, topic, n_topics, mask):
    return np.bincount(topic[mask], weights=values[mask], minlength=n_topics)


def _cell_moments(design, r0, r1, n_topics, extra_r0=None):
    """Per topic x stratum: sums of r0, r1, r0^2, r0 r1, r1^2 over sampled documents."""
    n_strata = design.size.shape[1]
    cell = design.topic * n_strata + design.stratum
    m = design.sampled
    out = np.zeros((n_topics * n_strata, 5))
    for j, v in enumerate((r0, r1, r0 * r0, r0 * r1, r1 * r1)):
        out[:, j] = np.bincount(cell[m], weights=v[m], minlength=n_topics * n_strata)
    out = out.reshape(n_topics, n_strata, 5)
    if extra_r0 is not None:  # sampled documents without tdi: r0 = value, r1 = 0
        total, square = extra_r0
        out[:, :, 0] += total
        out[:, :, 2] += square
    return out


def _stratified(size, taken, spread_sum):
    """sum_h N_h^2 (1 - n_h/N_h) / n_h * (a per-stratum sample (co)variance)."""
    unsampled = 1.0 - safe_divide(taken, size)
    return (size * size * unsampled * safe_divide(spread_sum, taken)).sum(axis=-1)


def _variance(lam, lam_b, theta, den, moments, rmom, size, taken, ratio):
    """Per segment, the stratified variance of the influences a_d = (u_d(lam) - theta
    b_d(lam_b)) / den (module docstring); ``lam``, ``theta``, ``den`` per segment."""
    L, B = lam[:, None], np.broadcast_to(np.asarray(lam_b, dtype=np.float64), lam.shape)[:, None]
    M, R = moments, rmom
    sa = M[..., 0] + L * M[..., 1]
    sa2 = M[..., 2] + 2 * L * M[..., 3] + L * L * M[..., 4]
    if ratio:
        th = theta[:, None]
        sa = sa - th * (R[..., 0] + B * R[..., 1])
        sa2 = (sa2 - 2 * th * (M[..., 5] + B * M[..., 6] + L * M[..., 7] + L * B * M[..., 8])
               + th * th * (R[..., 2] + 2 * B * R[..., 3] + B * B * R[..., 4]))
        sa, sa2 = safe_divide(sa, den[:, None]), safe_divide(sa2, (den * den)[:, None])
    spread = np.maximum(sa2 - safe_divide(sa * sa, taken), 0.0)
    return _stratified(size, taken, np.where(taken >= 2, safe_divide(spread, taken - 1.0), 0.0))


def _spread(cross, a, b, n):
    """Per stratum sample covariance from sums (0 where n < 2)."""
    return np.where(n >= 2, safe_divide(cross - safe_divide(a * b, n), n - 1.0), 0.0)


def _ratio(num, den, lam, lam_b, moments, rmom, size, taken, live, n_runs, n_topics,
           correct=True):
    """theta = X^/Y^ per segment with the second-order bias correction, its variance evaluated
    at the run's mean theta~ over its identified topics, and unidentified topics (Y^ = 0)
    imputed (module docstring, "Ratios")."""
    L = lam[:, None]
    B = np.broadcast_to(np.asarray(lam_b, dtype=np.float64), lam.shape)[:, None]
    M, R = moments, rmom
    su, sb = M[..., 0] + L * M[..., 1], R[..., 0] + B * R[..., 1]
    suu = M[..., 2] + 2 * L * M[..., 3] + L * L * M[..., 4]
    sbb = R[..., 2] + 2 * B * R[..., 3] + B * B * R[..., 4]
    sub = M[..., 5] + B * M[..., 6] + L * M[..., 7] + L * B * M[..., 8]
    v_x = _stratified(size, taken, np.maximum(_spread(suu, su, su, taken), 0.0))
    v_y = _stratified(size, taken, np.maximum(_spread(sbb, sb, sb, taken), 0.0))
    c_xy = _stratified(size, taken, _spread(sub, su, sb, taken))
    known = den > 0
    d2 = den * den
    plain = safe_divide(num, den)
    value = np.where(known, plain - (safe_divide(plain * v_y - c_xy, d2) if correct else 0.0), 0.0)
    ok = (known & live).reshape(n_runs, n_topics)
    vals = value.reshape(n_runs, n_topics)
    count = ok.sum(axis=1)
    centre = safe_divide(np.where(ok, vals, 0.0).sum(axis=1), count)
    spread = safe_divide(np.where(ok, (vals - centre[:, None]) ** 2, 0.0).sum(axis=1), count - 1)
    c = np.repeat(centre, n_topics)
    var = np.where(known, safe_divide(v_x - 2 * c * c_xy + c * c * v_y, d2), 0.0)
    # HT (lambda = 0) saw no relevant document: unidentified, imputed; with labels (lambda > 0)
    # R^ = 0 means labels and sample agree on no relevant document: 0 stands
    fill = live & ~known & (B[:, 0] == 0) & correct
    value = np.where(fill, c, value)
    var = np.where(fill, np.repeat(spread * (1 + safe_divide(1.0, count)), n_topics), var)
    return value, np.maximum(var, 0.0)


def _tuning_terms(theta, den, moments, rmom, size, taken):
    """Per segment, V_11 = var(sum_S a1/pi) and V_01 = cov(sum_S a0/pi, sum_S a1/pi) for the
    influences a(lambda) = a0 + lambda a1 = (u0 - theta r0 + lambda (u1 - theta r1)) / den at a
    fixed ``theta`` and ``den`` (stratified estimates; linear measures: theta = 0, den = 1).
    The variance is minimised by lambda = -V_01 / V_11."""
    M, R = moments, rmom
    th, d2 = theta[:, None], (den * den)[:, None]
    s0 = safe_divide(M[..., 0] - th * R[..., 0], den[:, None])
    s1 = safe_divide(M[..., 1] - th * R[..., 1], den[:, None])
    s11 = safe_divide(M[..., 4] - 2 * th * M[..., 8] + th * th * R[..., 4], d2)
    s01 = safe_divide(M[..., 3] - th * (M[..., 6] + M[..., 7]) + th * th * R[..., 3], d2)
    return (_stratified(size, taken, np.maximum(_spread(s11, s1, s1, taken), 0.0)),
            _stratified(size, taken, _spread(s01, s0, s1, taken)))


def _denominator_lambda(rmom, size, taken):
    """Per topic, the PPI++ weight of the denominator's total (R, or the ideal DCG's counts):
    lambda_t = cov^(y-part, f-part) / var^(f-part) of its HT estimates, clipped to [0, 1]."""
    var_f = _stratified(size, taken, np.maximum(_spread(rmom[..., 4], rmom[..., 1], rmom[..., 1],
                                                        taken), 0.0))
    cov = -_stratified(size, taken, _spread(rmom[..., 3], rmom[..., 0], rmom[..., 1], taken))
    return np.where(var_f > 0, np.clip(safe_divide(cov, var_f), 0.0, 1.0), 1.0)


def _fixed(tuning) -> bool:
    return isinstance(tuning, (int, float)) and not isinstance(tuning, bool)


def discount_sum(x, k=None):
    """D_k(x): 1/log2(i + 1) summed over i <= min(x, k), linear between integers."""
    x = np.maximum(np.asarray(x, dtype=np.float64), 0.0)
    if k is not None:
        x = np.minimum(x, k)
    top = int(np.ceil(x.max(initial=0.0))) + 2
    cum = np.concatenate([[0.0], np.cumsum(1.0 / np.log2(np.arange(2, top + 2)))])
    whole = np.floor(x).astype(np.int64)
    return cum[whole] + (x - whole) / np.log2(whole + 2.0)


def discount_slope(x, k=None):
    """D'_k(x) = 1/log2(floor(x) + 2) below k, 0 at or beyond k."""
    x = np.maximum(np.asarray(x, dtype=np.float64), 0.0)
    slope = 1.0 / np.log2(np.floor(x) + 2.0)
    return slope if k is None else np.where(x < k, slope, 0.0)


def ppi_estimate(ctx, labels: AutoLabels, kind: str, k: int | None = None, *,
                 tuning: str | float = "run", design: DesignArrays | None = None,
                 guard: bool = True) -> PPIEstimate:
    """PPI estimates of ``kind`` (one of :data:`KINDS`; ``k`` its cut-off) for every segment
    of the :class:`~irsample.measures.context.EvalContext` ``ctx`` (module docstring).
    ``tuning``: ``"run"``, ``"topic"`` or a fixed lambda in [0, 1]. ``guard`` (with a tuned
    lambda): a run whose estimated variance of the mean over topics exceeds HT's takes HT
    (lambda = 0) on all its topics, so its interval is never wider than HT's."""
    if kind not in KINDS:
        raise MeasureError(f"no PPI estimator for {kind!r} (estimators for {', '.join(KINDS)})")
    collection, judgments = ctx.collection, ctx.judgments
    if len(labels.value) != collection.n_tdi:
        raise MeasureError("automatic labels were read for another collection")
    d = design or design_arrays(collection, judgments)
    n_topics, n_strata = collection.n_topics, d.size.shape[1]
    level = ctx.rel_level
    grade = judgments.grade
    pi_safe = np.where(d.sampled, d.pi, 1.0)
    inv = np.where(d.sampled, 1.0 / pi_safe, 0.0)
    frame = d.in_frame
    args = (ctx.offsets, ctx.seg_topic, ctx.pos_tdi)
    design_args = (frame, d.sampled, pi_safe, d.stratum)
    weight = safe_divide(d.size, d.taken)  # N_h / n_h for the documents without a tdi

    if kind in ("AP", "P", "num_rel"):
        y = np.where(d.sampled, grade >= level, 0).astype(np.float64)
        f = np.where(frame, labels.relevance(level), 0.0)
        r0, r1 = y, -f
        if d.extra.shape[2] > level:
            ex = d.extra[:, :, level:].sum(axis=2)
        else:
            ex = np.zeros(d.size.shape)
        extra = (ex, ex)
        r_ht = _topic_sum(y * inv, d.topic, n_topics, d.sampled) + (weight * ex).sum(axis=1)
        seen = _topic_sum(y, d.topic, n_topics, d.sampled) + ex.sum(axis=1)
        f_all = _topic_sum(f, d.topic, n_topics, frame)
        r_slope = f_all - _topic_sum(f * inv, d.topic, n_topics, d.sampled)
    else:  # nDCG: gains = grades; b_d = sum_g D'(C_g) (1[y >= g] - lambda f_>=g)
        top = max(int(grade.max(initial=0)), labels.max_grade(), 1)
        y = np.where(d.sampled, np.maximum(grade, 0), 0).astype(np.float64)
        f = np.where(frame, labels.gain(), 0.0)
        ge_y = [np.where(d.sampled, grade >= g, 0).astype(np.float64) for g in range(1, top + 1)]
        ge_f = [np.where(frame, labels.at_least(g), 0.0) for g in range(1, top + 1)]
        ex_ge = [d.extra[:, :, g:].sum(axis=2) if d.extra.shape[2] > g else np.zeros(d.size.shape)
                 for g in range(1, top + 1)]
        c0 = np.stack([_topic_sum(a * inv, d.topic, n_topics, d.sampled) + (weight * e).sum(axis=1)
                       for a, e in zip(ge_y, ex_ge)], axis=1)  # (T, G)
        seen = np.stack([_topic_sum(a, d.topic, n_topics, d.sampled) + e.sum(axis=1)
                         for a, e in zip(ge_y, ex_ge)], axis=1)
        c1 = np.stack([_topic_sum(b, d.topic, n_topics, frame)
                       - _topic_sum(b * inv, d.topic, n_topics, d.sampled) for b in ge_f], axis=1)
        slope = discount_slope(c0, k)  # (T, G) at the HT counts: HT's own linearisation
        per_doc = slope[d.topic]
        r0 = sum(per_doc[:, j] * ge_y[j] for j in range(top))
        r1 = -sum(per_doc[:, j] * ge_f[j] for j in range(top))
        ex = sum(slope[:, None, j] * ex_ge[j] for j in range(top))
        ex_sq = sum(sum(slope[:, None, i] * slope[:, None, j] * ex_ge[max(i, j)]
                        for j in range(top)) for i in range(top))
        extra = (ex, ex_sq)

    rmom = _cell_moments(d, r0, r1, n_topics, extra)
    seg_rmom = rmom[ctx.seg_topic]
    if kind == "AP":
        known, ht_y, ht_f, moments = ap_walk(*args, y, f, *design_args, d.same, r0, r1, n_strata)
    elif kind == "P":
        if k is None:
            raise MeasureError("ppi(P) needs a cut-off, e.g. ppi(P@10)")
        known, ht_y, ht_f, moments = linear_walk(*args, y, f, *design_args, r0, r1, n_strata, k, 0)
    elif kind == "nDCG":
        cut = np.iinfo(np.int64).max if k is None else k
        known, ht_y, ht_f, moments = linear_walk(*args, y, f, *design_args, r0, r1, n_strata,
                                                 cut, 1)
    else:  # num_rel: the influences are b itself
        known = f_all[ctx.seg_topic]
        ht_y, ht_f = r_ht[ctx.seg_topic], (f_all - r_slope)[ctx.seg_topic]
        moments = np.zeros((ctx.n_seg, n_strata, 9))
        moments[:, :, [0, 1, 2, 3, 4]] = seg_rmom

    ratio = kind in ("AP", "nDCG")
    seg = ctx.seg_topic
    size, taken = d.size[seg], d.taken[seg]

    def denominator(lam_b):  # per segment
        if kind == "AP":  # R >= the relevant documents seen: a bound that only cuts the error
            return np.maximum(r_ht[seg] + lam_b * r_slope[seg], seen[seg])
        if kind == "nDCG":
            counts = np.maximum(c0[seg] + lam_b[:, None] * c1[seg], seen[seg])
            return discount_sum(counts, k).sum(axis=1)
        return np.ones(ctx.n_seg)

    live = (d.taken.sum(axis=1) > 0)[seg] & (ctx.seg_len > 0)  # judged topic, answered

    def estimate(lam, lam_b):
        num = ht_y + lam * (known - ht_f)
        if not ratio:
            return num, _variance(lam, lam_b, zeros, ones, moments, seg_rmom, size, taken, False)
        den = denominator(lam_b)
        return _ratio(num, den, lam, lam_b, moments, seg_rmom, size, taken, live, ctx.n_runs,
                      n_topics, correct=kind == "AP")

    zeros, ones = np.zeros(ctx.n_seg), np.ones(ctx.n_seg)
    ht, ht_var = estimate(zeros, zeros)
    if ratio:  # at most the topic's denominator weight: R^ stays away from a noisy 0
        cap = _denominator_lambda(rmom, d.size, d.taken)[seg]
        theta, _ = estimate(cap, cap)
        den = denominator(cap)
    else:
        cap, theta, den = ones, zeros, ones
    v11, v01 = _tuning_terms(theta, den, moments, seg_rmom, size, taken)
    lam = np.minimum(_choose(v11, -v01, tuning, ctx.n_runs, n_topics), cap)
    if _fixed(tuning):
        lam = np.full(ctx.n_seg, float(tuning))
    value, var = estimate(lam, lam)
    if guard and not _fixed(tuning):
        worse = (var.reshape(ctx.n_runs, n_topics).sum(axis=1)
                 > ht_var.reshape(ctx.n_runs, n_topics).sum(axis=1))
        worse = np.repeat(worse, n_topics)
        value, var, lam = (np.where(worse, ht, value), np.where(worse, ht_var, var),
                           np.where(worse, 0.0, lam))
    if kind == "AP":
        auto_den = f_all
    elif kind == "nDCG":
        auto_den = discount_sum(c1 + _frame_totals_minus(c1, ge_f, inv, d, n_topics), k).sum(axis=1)
    else:
        auto_den = np.ones(n_topics)
    auto = safe_divide(known, auto_den[seg]) if ratio else known
    return PPIEstimate(value, var, lam, ht, ht_var, auto)


def _frame_totals_minus(c1, ge_f, inv, d, n_topics):
    """sum_S f_>=g / pi per topic and grade: C_f,g = c1 + this is sum_F f_>=g."""
    return np.stack([_topic_sum(b * inv, d.topic, n_topics, d.sampled) for b in ge_f], axis=1)


def _choose(v_ff, v_yf, tuning, n_runs, n_topics) -> np.ndarray:
    """lambda per segment: V_yf / V_ff clipped to [0, 1], summed over a run's topics
    (``"run"``) or per segment (``"topic"``); or the fixed number ``tuning``."""
    n_seg = v_ff.shape[0]
    if isinstance(tuning, (int, float)) and not isinstance(tuning, bool):
        if not 0.0 <= tuning <= 1.0:
            raise MeasureError(f"lambda must be in [0, 1], not {tuning}")
        return np.full(n_seg, float(tuning))
    if tuning == "topic":
        num, den = v_yf, v_ff
    elif tuning == "run":
        num = np.repeat(v_yf.reshape(n_runs, n_topics).sum(axis=1), n_topics)
        den = np.repeat(v_ff.reshape(n_runs, n_topics).sum(axis=1), n_topics)
    else:
        raise MeasureError(f"tuning must be one of {TUNINGS} or a number in [0, 1], not {tuning!r}")
    # f constant on the sample: lambda does not change the variance; use the labels fully
    return np.where(den > 0, np.clip(safe_divide(num, den), 0.0, 1.0), 1.0)
