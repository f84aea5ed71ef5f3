"""Covariance-aware variances of infAP and xinfAP: linearisation and delete-one jackknife.

The paper's variance (Yilmaz, Kanoulas & Aslam, SIGIR 2008, §3 and appendix; reference-semantics
§3.3; ``incomplete/inferred_ap.py`` and ``incomplete/sample_eval_variance.py``) adds the variances
of the precisions PC_k estimated at the sampled relevant documents as if they were independent.
They are not: the documents sampled above a cut-off j are also sampled above every cut-off k below
it, so the estimation errors of PC_j and PC_k share those documents and are strongly positively
correlated; and a sampled relevant document both serves as a cut-off and raises the estimated
precision of every cut-off below it. On TREC-8 the paper's standard errors of the mean are about
half the spread observed over repeated samples (benchmarks/ci_coverage.py). Two estimators
here account for this; the paper's stays available as ``"paper"``.

Setting (both estimators, both measures). Per topic, stratum u of the pool holds N_u documents,
of which an SRS of n_u is judged (W_u = N_u/n_u, f_u = n_u/N_u), r_u judged relevant. infAP is the
one-stratum case (u = the whole pool, relevance = grade >= level, every rank), xinfAP the
stratified one (relevance = grade > 0, the top 1000). At the relevant judged document at rank k
(a cut-off), with d_u, m_u, q_u the pool, judged and relevant judged documents of u above k,

    PC_k = 1/k + (1/k) sum_u d_u (q_u + eps_r)/(m_u + eps_s)   (1/k: no pool document above)

(infAP: eps_s = c eps_r, eps_r = 1e-5; xinfAP: 1e-5/3e-5), and the estimate is the ratio

    theta = Y / R^,   Y = sum over cut-offs k of W_{u(k)} PC_k,   R^ = sum_u W_u r_u,

which is infAP = (1/r) sum_k PC_k with one stratum and xinfAP = sum_u (R^_u / R^) SAP_u / r_u.

``"covariance"``: first-order (Taylor) linearisation of theta in the sample-inclusion indicators,
smoothing ignored (as the paper does). With p^_u = q_u/m_u, p^_u - p_u ~ (1/m_u) sum over judged
e of u above k of (rel_e - p_u), so theta - theta_0 ~ (1/R) sum over judged e of W_e (a_e + g_e),

    a_e = rel_e (PC_e - theta)                    (e as a cut-off; PC_e = 0 if not retrieved)
    W_e g_e = sum over cut-offs k below e of (W_k/k) (d_u/m_u) (rel_e - p^_u)

(u = u(e), the counts at k; e as a document above the cut-offs),

and var(theta) = (V1 + V2 + 2 V12) / R^^2 (stratified SRS, Cochran, Sampling Techniques §5.3 and
§6.11 for the ratio):

- V1 = sum_u N_u^2 (1 - f_u) S_a,u^2 / n_u, S_a,u^2 the sample variance of a over the judged
  documents of u: the paper's first stage (which relevant documents are cut-offs), with the
  ratio's random R^ (a is centred at theta) and the n/(n - 1) of a sample variance;
- V2 = sum_{j, k cut-offs} W_j W_k cov(PC_j, PC_k), the second stage with the covariances: for
  cut-offs j above k the judged documents above j are the part of those above k that lies above
  j, and given the sample sizes they are an SRS of the m_u^(j) inside an SRS of the m_u^(k), so
  cov(p^_u^(j), p^_u^(k)) = (m_u^(j)/m_u^(k)) var(p^_u^(j)) (the extra documents below j are
  independent of those above) and

      cov(PC_j, PC_k) = (1/(j k)) sum_u d_u^(j) d_u^(k) (m_u^(j)/m_u^(k)) var(p^_u^(j)),

  with Cochran's unbiased var(p^) = (1 - m/d) p^ (1 - p^)/(m - 1) (Theorem 3.2; 0 when m < 2);
  j = k gives the paper's terms (up to m - 1 for m). Summed with running sums,
  V2 = sum_k (W_k/k)^2 sum_u d_u^2 var_u + 2 sum_k (W_k/k) sum_u (d_u/m_u) A_u, where A_u
  accumulates (W_j/j) d_u m_u var_u over the cut-offs j above: O(L * strata) per ranking;
- V12 = sum_u W_u (1 - f_u) n_u/(n_u - 1) sum over judged e of u of a_e W_e g_e (the g_e average
  to exactly 0 within a stratum), the covariance of the two stages: a relevant judged document
  is a cut-off and raises the precision estimated below it. By the same running sums,
  sum_e a_e W_e g_e = sum_k (W_k/k) (d_u/m_u) (1 - p^_u) (B_u - theta q_u), B_u the sum of PC over
  the cut-offs of u above k.

V2 is the plug-in of the g-part of the linearisation, sum_u N_u^2 (1 - f_u) S_g,u^2 / n_u, up to
its finite-population factors (the local 1 - m/d per cut-off here, Cochran's m - 1); the smoothing
terms are left out of the derivatives (as in the paper). V is clipped at 0.

``"jackknife"``: the stratified delete-one jackknife (Wolter, Introduction to Variance
Estimation, 2nd ed., §4.5; Rao & Wu 1985 for the finite-population factor)

    v_J = sum_u (1 - f_u) (n_u - 1)/n_u sum over judged i of u of (theta_(i) - mean_u theta_(.))^2,

theta_(i) the estimate with document i unjudged (still in the pool: n_u - 1, W'_u = N_u/(n_u - 1),
r_u - rel_i, and every cut-off below i loses i from m_u and q_u; a stratum with n_u < 2 or
f_u = 1 contributes 0). It needs no linearisation: it follows the smoothing (a cut-off whose only
judged document above is deleted falls back to the smoothed 1/c) and the ratio, which dominate
when a topic has a handful of judged relevant documents. Exact and fast: deleting i changes the
precision of a cut-off k below it by (d_u/k) [(q_u - rel_i + eps_r)/(m_u - 1 + eps_s) -
(q_u + eps_r)/(m_u + eps_s)], which depends on i only through (u, rel_i), so one pass keeps per
(u, rel) the running sum of these changes over the cut-offs (weighted W'_u or W_u(k)), and
theta_(i) = (Y + (W'_u - W_u) SAP_u - [i cut-off] W'_u PC_i + sum over cut-offs below i) /
(R^ + (W'_u - W_u) r_u - W'_u rel_i) costs O(1) per judged retrieved document (the judged
documents the run does not retrieve share theta_(i) by (u, rel)): O(L * strata) per ranking.

Measured. Exact enumeration of all 70 samples of 4 of an 8-document pool
(tests/test_variance_covariance.py): mean estimated / exact variance of infAP 1.19 (jackknife),
0.37 (covariance), 0.22 (paper). TREC-8, 10-30% samples, 100 trials (benchmarks/ci_coverage.py):
predicted / observed standard error of MAP 1.02-1.13 (jackknife; slightly conservative, as the
delete-one jackknife is, Efron & Stein 1981), 0.54-0.82 (covariance), 0.42-0.61 (paper); 95%
intervals around the estimator's mean cover it 0.95-0.96 of the time with the jackknife. So the
default (:data:`~irsample.measures.base.DEFAULT_VARIANCE`) is the jackknife: the linearisation
is right about the covariances but too optimistic at the few judged relevant documents per topic
of these samples, where the smoothing and the ratio make the estimators far from linear.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..._threads import parallel_when_large
from ..pool_layout import pooled_positions
from . import strata_walk
from .strata_walk import DOCS, RELEVANT, SAMPLED


@njit(cache=True, nogil=True)
def _weights(size, sampled, relevant):
    """W_u, W'_u = N_u/(n_u - 1) (0 for n_u < 2) and R^ from one topic's N_u, n_u, r_u."""
    n_strata = size.shape[0]
    w = np.zeros(n_strata)
    w_del = np.zeros(n_strata)
    r_hat = 0.0
    for u in range(n_strata):
        if sampled[u] > 0:
            w[u] = size[u] / sampled[u]
            r_hat += w[u] * relevant[u]
        if sampled[u] > 1:
            w_del[u] = size[u] / (sampled[u] - 1.0)
    return w, w_del, r_hat


@parallel_when_large
def _variance_kernel(pool_offsets, rank, grade, stratum, one_stratum, level, depth, eps,
                     seg_topic, size, sampled, relevant, value, jackknife):
    """Per segment: the jackknife (``jackknife``) or linearised variance of the module
    docstring; ``eps`` = (eps_r, eps_s), ``value`` the estimates (read by the linearisation)."""
    n_seg = pool_offsets.shape[0] - 1
    out = np.zeros(n_seg)
    for s in prange(n_seg):
        t = seg_topic[s]
        stratum_counts = (size[t], sampled[t], relevant[t])
        weights = _weights(*stratum_counts)
        if weights[2] == 0:
            continue  # no judged relevant document: theta and every theta_(i) are 0
        first, end = strata_walk.segment(pool_offsets, rank, s, depth)
        walk = (rank[first:end], grade[first:end], stratum[first:end], one_stratum, level)
        if jackknife:
            out[s] = _jackknife(walk, eps, weights, stratum_counts)
        else:
            out[s] = _linearised(walk, eps, weights, stratum_counts, value[s])
    return out


@njit(cache=True, nogil=True)
def _linearised(walk, eps, weights, stratum_counts, theta):
    """(V1 + V2 + 2 V12) / R^^2 of the module docstring for one ranking, clipped at 0."""
    rank, grade, stratum, one_stratum, level = walk
    eps_rel, eps_sampled = eps
    w, _, r_hat = weights
    size, sampled, relevant = stratum_counts
    n_strata = size.shape[0]
    counts = np.zeros((3, n_strata))
    d, m, q = counts[DOCS], counts[SAMPLED], counts[RELEVANT]
    a_sum = np.zeros(n_strata)  # sum, sum of squares of a_e over the cut-offs of u
    a_sq = np.zeros(n_strata)
    cov_run = np.zeros(n_strata)  # A_u
    pc_run = np.zeros(n_strata)  # B_u
    x = np.zeros(n_strata)  # sum_e a_e W_e g_e
    v2 = 0.0
    for i in range(rank.shape[0]):
        k = rank[i] + 1.0
        c = 0 if one_stratum else stratum[i]
        rel = grade[i] >= level
        if rel:
            pc = strata_walk.stratified_precision(counts, k, eps_rel, eps_sampled)
            wk = w[c]
            diag = 0.0
            cross = 0.0
            for u in range(n_strata):
                if m[u] > 0:
                    ratio = d[u] / m[u]
                    p = q[u] / m[u]
                    cross += ratio * cov_run[u]
                    x[u] += (wk / k) * ratio * (1.0 - p) * (pc_run[u] - theta * q[u])
                    if m[u] > 1:
                        var_p = (1.0 - m[u] / d[u]) * p * (1.0 - p) / (m[u] - 1.0)
                        diag += d[u] * d[u] * var_p
                        cov_run[u] += (wk / k) * d[u] * m[u] * var_p
            v2 += wk * wk * diag / (k * k) + 2.0 * (wk / k) * cross
            a_sum[c] += pc - theta
            a_sq[c] += (pc - theta) * (pc - theta)
            pc_run[c] += pc
        strata_walk.count(counts, c, grade[i], level)
    v1 = 0.0
    v12 = 0.0
    for u in range(n_strata):
        n_u = sampled[u]
        if n_u < 2 or n_u >= size[u]:
            continue
        fpc = 1.0 - n_u / size[u]
        missing = relevant[u] - q[u]  # judged relevant, not retrieved: a = -theta
        s1 = a_sum[u] - missing * theta
        s2 = a_sq[u] + missing * theta * theta
        spread = max(s2 - s1 * s1 / n_u, 0.0) / (n_u - 1.0)
        v1 += size[u] * size[u] * fpc * spread / n_u
        v12 += w[u] * fpc * n_u / (n_u - 1.0) * x[u]
    return max(v1 + v2 + 2.0 * v12, 0.0) / (r_hat * r_hat)


@njit(cache=True, nogil=True)
def _jackknife(walk, eps, weights, stratum_counts):
    """The stratified delete-one jackknife variance of the module docstring for one ranking."""
    rank, grade, stratum, one_stratum, level = walk
    eps_rel, eps_sampled = eps
    w, w_del, r_hat = weights
    size, sampled, relevant = stratum_counts
    n_strata = size.shape[0]
    before = np.zeros(rank.shape[0])  # at judged entries: the running change sum through there
    pcs = np.zeros(rank.shape[0])
    run = np.zeros((n_strata, 2))  # per (u, rel of the deleted document)
    sap = np.zeros(n_strata)
    counts = np.zeros((3, n_strata))
    d, m, q = counts[DOCS], counts[SAMPLED], counts[RELEVANT]
    for i in range(rank.shape[0]):
        k = rank[i] + 1.0
        c = 0 if one_stratum else stratum[i]
        rel = 1 if grade[i] >= level else 0
        if rel:
            pc = strata_walk.stratified_precision(counts, k, eps_rel, eps_sampled)
            pcs[i] = pc
            sap[c] += pc
            for u in range(n_strata):
                if m[u] < 1:
                    continue
                scale = (w_del[u] if u == c else w[c]) * d[u] / k
                base = (q[u] + eps_rel) / (m[u] + eps_sampled)
                if m[u] > q[u]:
                    run[u, 0] += scale * ((q[u] + eps_rel) / (m[u] - 1.0 + eps_sampled) - base)
                if q[u] >= 1:
                    less = (q[u] - 1.0 + eps_rel) / (m[u] - 1.0 + eps_sampled)
                    run[u, 1] += scale * (less - base)
        before[i] = run[c, rel]
        strata_walk.count(counts, c, grade[i], level)
    y = 0.0
    for u in range(n_strata):
        y += w[u] * sap[u]
    theta = y / r_hat
    s1 = np.zeros(n_strata)
    s2 = np.zeros(n_strata)
    for i in range(rank.shape[0]):
        if grade[i] < 0:
            continue  # pooled, not judged
        c = 0 if one_stratum else stratum[i]
        rel = 1 if grade[i] >= level else 0
        step = w_del[c] - w[c]
        r_new = r_hat + step * relevant[c] - w_del[c] * rel
        y_new = y + step * sap[c] - w_del[c] * pcs[i] + (run[c, rel] - before[i])
        delta = (y_new / r_new if r_new != 0 else 0.0) - theta
        s1[c] += delta
        s2[c] += delta * delta
    v = 0.0
    for u in range(n_strata):
        n_u = sampled[u]
        if n_u < 2 or n_u >= size[u]:
            continue
        step = w_del[u] - w[u]
        for rel in range(2):  # judged documents the run does not retrieve (in the top depth)
            unseen = relevant[u] - q[u] if rel else n_u - relevant[u] - (m[u] - q[u])
            if unseen > 0:
                r_new = r_hat + step * relevant[u] - w_del[u] * rel
                delta = ((y + step * sap[u]) / r_new if r_new != 0 else 0.0) - theta
                s1[u] += unseen * delta
                s2[u] += unseen * delta * delta
        spread = max(s2[u] - s1[u] * s1[u] / n_u, 0.0)
        v += (1.0 - n_u / size[u]) * (n_u - 1.0) / n_u * spread
    return v


def ap_variance(ctx, method: str, value: np.ndarray, *, infap_c: float | None = None) -> np.ndarray:
    """Per-segment variance of infAP (``infap_c`` = its smoothing c) or xinfAP (``infap_c=None``)
    by ``method`` ``"covariance"`` or ``"jackknife"`` (module docstring); ``value`` = the
    estimates."""
    j = ctx.judgments
    if infap_c is not None:  # one stratum: the topic's pool; relevance at the context's level
        size = j.stratum_size.sum(axis=1, keepdims=True).astype(np.float64)
        sampled = j.stratum_sampled.sum(axis=1, keepdims=True).astype(np.float64)
        relevant = ctx.num_rel_topic().astype(np.float64)[:, None]
        level, depth = ctx.rel_level, strata_walk.ALL_RANKS
        eps_rel, eps_sampled = strata_walk.INFAP_EPSILON, infap_c * strata_walk.INFAP_EPSILON
    else:
        size = j.stratum_size.astype(np.float64)
        sampled = j.stratum_sampled.astype(np.float64)
        relevant = j.stratum_grades[:, :, 1:].sum(axis=2).astype(np.float64)
        level, depth = 1, strata_walk.SAMPLE_EVAL_DEPTH
        eps_rel, eps_sampled = strata_walk.SMOOTH_REL, strata_walk.SMOOTH_SAMPLED
    pool_offsets, rank, grade, stratum = pooled_positions(ctx)
    args = (
        pool_offsets, rank, grade, stratum, infap_c is not None, level, depth,
        (eps_rel, eps_sampled), ctx.seg_topic, size, sampled, relevant,
    )
    if method not in ("covariance", "jackknife"):
        raise ValueError(f"unknown variance method {method!r}")
    return _variance_kernel(*args, np.asarray(value, dtype=np.float64), method == "jackknife")

