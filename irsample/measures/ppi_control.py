"""ppi(nDCG) on the topics the difference form leaves to ht (``ppi_difference.py``): ht(nDCG)
on the humans with the same estimator on the labels as a control variate.

Estimator (PPI's correction, Angelopoulos et al. 2023, with ht(nDCG) as the base estimator on
both sides, as ``ppi_ap.py`` does for AP). On a topic t the difference form does not take:

    ppi_t = ht_y,t + lambda (nDCG(f)_t - ht_f,t),

ht_y = ht(nDCG) on the human judgments (``design_based.py``), ht_f = the very same estimator
(design, concavity correction, imputation of a topic whose sample holds no relevant document
from the single-hit donors) on the same sample with each judged grade replaced by its label
(``ppi_judgments.labelled_sample``), nDCG(f) the labels' census value (known exactly).
lambda in [0, 1] is one weight per run (``"stratum"``, the default tuning of the other forms,
pools per run here: a per-stratum weight needs the strata's steps of ``ppi_ap.py``),
per segment (``"topic"``) or one over everything (``"global"``), by PPI++:
lambda = sum C / sum V_f over the run's segments so taken.

Variance: V_y - 2 lambda C + lambda^2 V_f, V_y and V_f the two estimators' own variances
(ht's linearised variance, with imputation's topic-to-topic term on imputed topics), C = rho
sqrt(V_y V_f) per stratum with rho the correlation of the two linearised influences
(``ppi_ap.strata_moments``; nDCG's influence z_d = (x_d - theta~ r_d) / IDCG^, r_d the slope of
the ideal DCG in d's grade); where a segment has no linearised variance (an imputed topic) it
takes its run's pooled correlation.

Why the correction is (nearly) unbiased, and what is not. ht_f is ht(nDCG) run on a fixed
function of the labelled pool, so E[ht_f] - nDCG(f) is ht(nDCG)'s own bias on the labels'
"truth": small since its imputation from single-hit donors (the Poisson identity of
``design_based.py``). The two sides may impute different topics (a topic with labelled-relevant
but no human-relevant sampled documents is imputed by ht_y and estimated by ht_f's ratio): each
side is its own consistent estimator of its own truth, so the correction's mean is ht's bias on
the labels, not a mismatch term. What is not covered by that argument is the selection: the
topics taken here are those the difference form rejects, chosen by the same sample (fewer than
two human-relevant sampled documents or an unstable ideal DCG), and conditionally on that choice
neither ht_y nor ht_f is unbiased; the correction removes lambda times ht_f's conditional bias,
which helps where the labels' errors on such topics track the humans'. Measured below.

Exactness: labels equal to the grades give ht_f = ht_y bit for bit, rho = 1, lambda = 1, so
ppi_t = nDCG(f)_t = nDCG(y)_t with variance 0; labels constant over a topic's pool are not
taken here (the caller keeps ht).
"""

from __future__ import annotations

import numpy as np

from ..model import JUDGED
from .design_based import _census, impute
from .design_based import estimate as ht_estimate
from .ht_design import ht_design
from .ht_ideal import grade_counts, ideal_and_slopes
from .ppi_ap import strata_moments

_NO_CUTOFF = np.iinfo(np.int64).max
#: the pooling of lambda per tuning level of the difference form
POOLING = {"stratum": "run", "topic": "run", "global": "global"}


def control_estimate(ctx, ctx_f, m, hy, auto, use, tuning):
    """(value, variance, lambda, ht_f, rho) per segment on the segments ``use``; ht_y elsewhere
    (module docstring)."""
    hf = ht_estimate(ctx_f, m)
    shape = (ctx.n_runs, ctx.n_topics)
    d = ht_design(ctx)
    present = (ctx.judgments.has_topic[ctx.seg_topic] & (ctx.seg_len > 0)).reshape(shape)
    known = present & (hy.den > 0).reshape(shape)
    missing = present & ~known & ~_census(ctx, d)[ctx.seg_topic].reshape(shape)
    donors = None if hy.donors is None else hy.donors.reshape(shape)
    own_y, own_f = _own(hy), np.where(use, _own(hf), 0.0)
    cutoff = _NO_CUTOFF if getattr(m, "k", None) is None else int(m.k)
    r_y, out_y = ndcg_slopes(ctx, cutoff)
    r_f, out_f = ndcg_slopes(ctx_f, cutoff)
    cov_h, _ = strata_moments(ctx, ctx_f, hy, hf, own_y, own_f, den_values=(r_y, r_f),
                              out=(out_y, out_f))
    cov = np.where(use, cov_h.sum(axis=1), 0.0)
    theta_y = np.where(known.ravel(), np.nan_to_num(hy.plain), 0.0)
    # a topic the humans identify but whose sample holds no labelled-relevant document has no
    # label estimate: it takes the labels' value (no correction on it)
    theta_f = np.where(known.ravel(), np.where(hf.den > 0, np.nan_to_num(hf.plain), auto), 0.0)
    one = use * 1.0
    w = np.where(known, 1.0 if donors is None else donors, 0.0)
    share = (w / np.maximum(w.sum(axis=1, keepdims=True), 1e-300)).ravel()
    n_missing = np.repeat(missing.sum(axis=1), ctx.n_topics).astype(np.float64)
    lift = n_missing * share

    def at(lam_seg):
        lam_m = lam_seg * IMPUTE_LABELS
        g = theta_y - lam_m * theta_f
        own_g = np.maximum(own_y - 2.0 * lam_m * cov + lam_m * lam_m * own_f, 0.0)
        imputed, var_m = impute(g.reshape(shape), own_g.reshape(shape), known, missing, donors)
        own = np.maximum(own_y - 2.0 * lam_seg * cov + lam_seg * lam_seg * own_f, 0.0)
        both = own_y - (lam_seg + lam_m) * cov + lam_seg * lam_m * own_f
        var_k = np.maximum(own + 2.0 * lift * both + lift * lift * own_g, 0.0)
        value = np.where(known.ravel(), theta_y + lam_seg * (auto - theta_f),
                         imputed.ravel() + lam_m * auto)
        return value, np.where(known.ravel(), var_k, var_m.ravel())

    if not isinstance(tuning, str):
        lam_run = np.full(ctx.n_runs, float(tuning))
    else:
        lam_run = _tuned(at, one, use, shape, POOLING.get(tuning, tuning))
    lam = np.repeat(lam_run, ctx.n_topics) * one
    value, var = at(lam)
    moved = np.repeat((lam.reshape(shape) > 0).any(axis=1), ctx.n_topics)
    value, var = np.where(moved, value, hy.value), np.where(moved, var, hy.variance)
    rho = np.clip(cov / np.sqrt(np.maximum(own_y * own_f, 1e-300)), -1.0, 1.0)
    return value, var, lam, hf.value, np.where(use, rho, np.nan)


#: 1: the imputed topics take the labels too (the residual theta - lambda f imputed); 0: ht's
IMPUTE_LABELS = 1.0
#: the weights the power tuning of :func:`control_estimate` chooses from
GRID = np.linspace(0.0, 1.0, 21)


def _tuned(at, one, use, shape, pooling):
    """lambda per run: the grid value with the least estimated variance of the sum over the
    run's segments ``use`` (``"run"``), or of every run's (``"global"``)."""
    totals = []
    for lam in GRID:
        _, var = at(lam * one)
        totals.append(np.where(use, var, 0.0).reshape(shape).sum(axis=1))
    totals = np.stack(totals, axis=1)  # (runs, grid)
    if pooling == "global":
        return np.full(shape[0], GRID[int(np.argmin(totals.sum(axis=0)))])
    return GRID[np.argmin(totals, axis=1)]


def _own(est):
    """Per segment: the linearised variance of an identified topic's ratio at the run's centre
    (``design_based._sparse_aware``'s ``own``)."""
    c = np.nan_to_num(est.centre)
    y = np.asarray(est.den, dtype=np.float64)
    v = np.maximum(est.var_num - 2.0 * c * est.cov + c * c * est.var_den, 0.0)
    return np.where(y > 0, v / np.where(y > 0, y * y, 1.0), 0.0)


def ndcg_slopes(c, cutoff):
    """Per tdi the slope of ht(nDCG)'s ideal DCG in the document's grade (0 unless judged with a
    positive grade), and the slopes per topic and grade (the sampled documents no run
    retrieved): the denominator's linearisation in ``design_based._ndcg``."""
    d = ht_design(c)
    j = c.judgments
    counts, _, gains = grade_counts(c, d)
    _, slope = ideal_and_slopes(counts, gains, cutoff)
    sampled = (j.state == JUDGED) & (j.grade > 0)
    grade = np.clip(j.grade, 0, counts.shape[1] - 1)
    tdi_slope = np.where(sampled, slope[c.collection.tdi_topic, grade], 0.0)
    return tdi_slope, slope
