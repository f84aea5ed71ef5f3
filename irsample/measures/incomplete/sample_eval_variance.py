"""Sampling variances of xinfAP and infNDCG under a stratified sample of the pool.

xinfAP's is its ``variance="paper"`` estimator (precisions at different cut-offs independent);
the default jackknife and the covariance-aware linearisation are in ``incomplete/ap_variance.py``.

The stratified analogue of infAP's two-stage variance (Yilmaz, Kanoulas & Aslam, SIGIR 2008,
§3 and appendix; reference-semantics §3.3), derived for the estimators of
``incomplete/sample_eval.py``: each stratum s of the topic's pool (N_s documents) is a simple
random sample of n_s documents.

xinfAP. Since R^_s / R^ * SAP_s / r_s = (N_s/n_s) SAP_s / R^, xinfAP is the ratio of two
stratified expansion estimators, Y^ / R^ with Y^ = sum_s (N_s/n_s) sum over sampled relevant d of
PC_d and R^ = sum_s (N_s/n_s) r_s (PC_d: the estimated precision above d, 0 when d is not in
the top 1000). Two stages, as for infAP:

- choice of the sampled documents: the linearised variance of a ratio estimator (Cochran,
  Sampling Techniques, §6.11) with z_d = rel_d (PC_d - xinfAP) over the sampled documents,
  V1 = (1/R^^2) sum_s N_s^2 (1 - n_s/N_s) S_s^2 / n_s, S_s^2 the sample variance of z in s
  (0 when n_s < 2);
- estimation of each PC_d = 1/k + (1/k) sum_s' d_s' (q_s' + 1e-5)/(m_s' + 3e-5) from the m_s'
  documents sampled among the d_s' above rank k: the hypergeometric variance of each stratum's
  proportion, var(PC_d) = (1/k^2) sum_s' d_s'^2 pi (1 - pi)/m_s' (d_s' - m_s')/(d_s' - 1) with
  pi = q_s'/m_s' (0 when m_s' = 0 or d_s' <= 1), independent across cut-offs:
  V2 = (1/R^^2) sum over sampled relevant retrieved d of (N_s/n_s)^2 var(PC_d).

With one stratum V1 + V2 is infAP's formula (up to the factor n/(n - 1) of a sample variance).

infNDCG. DCG^ = sum_s (d_s/m_s) G_s expands, per stratum, the discounted gains g of the m_s
sampled documents among the d_s retrieved ones (top 1000): a stratified expansion estimator
with var(DCG^) = sum_s d_s^2 (1 - m_s/d_s) S_g,s^2 / m_s, S_g,s^2 the sample variance of g over
those m_s documents (0 when m_s < 2). var(infNDCG) = var(DCG^) / IDCG^2, with the ideal DCG (built
from the rounded R^_g) taken as fixed: its own sampling error is not included.

Why not a bootstrap: these closed forms cost one walk over the rankings (milliseconds for
TREC-8), reduce to the published infAP variance, and are checked for coverage on TREC-8
(benchmarks/ci_coverage.py); a stratified bootstrap would need hundreds of walks per estimate.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ..._threads import parallel_when_large
from ..context import safe_divide
from ..pool_layout import pooled_positions
from . import strata_walk
from .strata_walk import DOCS, RELEVANT, SAMPLED


@parallel_when_large
def _variance_walk(pool_offsets, rank, grade, stratum, gain_table, n_strata, depth):
    """Per segment and stratum: sum PC, sum PC^2, sum var(PC) over relevant retrieved documents,
    sum g, sum g^2 of the discounted gains, d_s and m_s (top ``depth``)."""
    n_seg = pool_offsets.shape[0] - 1
    shape = (n_seg, n_strata)
    pc_sum, pc_sq, pc_var = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    g_sum, g_sq = np.zeros(shape), np.zeros(shape)
    counted = np.zeros((n_seg, 3, n_strata))
    for s in prange(n_seg):
        counts = counted[s]
        first, end = strata_walk.segment(pool_offsets, rank, s, depth)
        for x in range(first, end):
            c = stratum[x]
            rel = grade[x]
            if rel > 0:
                k = rank[x] + 1.0
                pc = strata_walk.sample_eval_precision(counts, k)
                pc_sum[s, c] += pc
                pc_sq[s, c] += pc * pc
                pc_var[s, c] += _proportions_variance(counts) / (k * k)
                g = gain_table[min(rel, gain_table.shape[0] - 1)] / (
                    math.log(k + 1.0) / math.log(2.0)
                )
                g_sum[s, c] += g
                g_sq[s, c] += g * g
            strata_walk.count(counts, c, rel, 1)
    return pc_sum, pc_sq, pc_var, g_sum, g_sq, counted[:, DOCS].copy(), counted[:, SAMPLED].copy()


@njit(cache=True, nogil=True, inline="always")
def _proportions_variance(counts):
    """sum over strata of d^2 pi (1 - pi)/m (d - m)/(d - 1), pi = q/m (0 when m = 0 or d <= 1):
    k^2 var(PC_k) for the counts above rank k."""
    v = 0.0
    for u in range(counts.shape[1]):
        d = counts[DOCS, u]
        m = counts[SAMPLED, u]
        if m > 0 and d > 1:
            pi = counts[RELEVANT, u] / m
            v += d * d * pi * (1.0 - pi) / m * (d - m) / (d - 1.0)
    return v


def variance_walk(ctx, gains: tuple = ()):
    """The walk behind both variances (cached per context and gain map)."""

    def build():
        j = ctx.judgments
        table = strata_walk.gain_table(gains, j.stratum_grades.shape[2])
        pool_offsets, rank, grade, stratum = pooled_positions(ctx)
        return _variance_walk(
            pool_offsets, rank, grade, stratum, table, len(j.stratum_labels),
            strata_walk.SAMPLE_EVAL_DEPTH,
        )

    return ctx.shared(("sample_eval_variance_walk", gains), build)


def _sample_variance(total, squares, n):
    """Sample variance (n - 1 denominator) from sums; 0 where n < 2."""
    spread = np.maximum(squares - safe_divide(total * total, n), 0.0)
    return np.where(n >= 2, safe_divide(spread, n - 1), 0.0)


def xinfap_variance(ctx, value: np.ndarray) -> np.ndarray:
    """Per-segment variance of xinfAP (``value``) per the module docstring."""
    pc_sum, pc_sq, pc_var, *_ = variance_walk(ctx)
    j = ctx.judgments
    size = j.stratum_size[ctx.seg_topic].astype(np.float64)  # N_s
    n = j.stratum_sampled[ctx.seg_topic].astype(np.float64)  # n_s
    r = j.stratum_grades[:, :, 1:].sum(axis=2)[ctx.seg_topic].astype(np.float64)  # r_s
    weight = safe_divide(size, n)
    r_hat = (weight * r).sum(axis=1)
    theta = value[:, None]
    z_sum = pc_sum - theta * r
    z_sq = pc_sq - 2.0 * theta * pc_sum + theta * theta * r
    spread = _sample_variance(z_sum, z_sq, n)
    stage1 = (size * size * (1.0 - safe_divide(n, size)) * safe_divide(spread, n)).sum(axis=1)
    stage2 = (weight * weight * pc_var).sum(axis=1)
    return safe_divide(stage1 + stage2, r_hat * r_hat)


def infndcg_variance(ctx, gains: tuple, ideal_dcg: np.ndarray) -> np.ndarray:
    """Per-segment variance of infNDCG per the module docstring; ``ideal_dcg`` per topic."""
    *_, g_sum, g_sq, docs, sampled = variance_walk(ctx, gains)
    spread = _sample_variance(g_sum, g_sq, sampled)
    fpc = 1.0 - safe_divide(sampled, docs)
    dcg_var = (docs * docs * fpc * safe_divide(spread, sampled)).sum(axis=1)
    ideal = ideal_dcg[ctx.seg_topic]
    return safe_divide(dcg_var, ideal * ideal)
