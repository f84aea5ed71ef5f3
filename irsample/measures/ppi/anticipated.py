r"""The variance reduction of ppi's difference form, anticipated by a relevance model that reads
the automatic labels (nDCG, nDCG@k and P@k on stratified simple random samples).

Why. On these samples ppi's interval is ht's anticipated variance (``ht/anticipated.py``) times
ppi's variance reduction R = V(ppi) / V(ht) for the run. R was the sample's ratio of the two
variance estimates over the run's topics, and that ratio is a ratio of two quantities of one
draw that rise and fall together: at high lambda it read, on average over the draws, less than
the ratio of their averages (TREC-COVID round 5, uniform 30%, kappa 0.7 labels, 100 draws:
0.22 against 0.28, where the draws' own variances put it at 0.31), and the intervals covered
0.888 (their variance 0.75 of the estimates' observed variance;
``benchmarks/ppi_variance_anatomy.py`` measures it).

What. The difference form's total on a topic is sum_F c_d f_d a_d + sum_S (y_d - c_d f_d)
a_d / pi_d (``ppi/difference.py``), so its linearised variable is that of ht with every
document's grade x_d replaced by the residual: z_d = (w_d (g(x_d) - c_d g(f_d)) - theta
(b(x_d) - c_d b(f_d))) / Y, f_d the label's grade, c_d the stratum's lambda, g the gain and b
the ideal DCG's slope (P@k: g relevance, b = 0, theta = 0, Y = 1). Its design variance is
Cochran's cell formula, and with the unjudged grades drawn from a model, E z_d and Var z_d per
document give its anticipated variance exactly as ht's (Isaki & Fuller 1982;
``ht/anticipated.py``): the label's part is known, so it shifts each document's moments,
E[(G - c g)^2] = E G^2 - 2 c g E G + c^2 g^2, and leaves Var z_d to the model. The model must
know the labels, since the residual's variance is that of the grade given the label: it is
ht's relevance model (logistic in consensus, best rank and stratum, random topic intercept) with
one indicator per label grade added, and the relevant documents' grade shares taken per label
grade (``ht/anticipated.fit_model``).

R is then the model's: per run, sum A_ppi / sum A_ht over its topics where lambda > 0, A_ppi
this anticipated variance and A_ht ht's, the relevance model without the labels at ht's centre
(the variance ht's interval is built from, before its floor and imputation), capped at 1. Both
are of the design, not of the draw, so R no longer falls with the draw's estimate; ht's
interval variance times R carries ht's floor (``ht/estimator.floor_factor``: the model knows
no run's success beyond the documents' consensus) into ppi's. On those draws the
intervals cover 0.927 at 30% judged, 0.917 at 20% (was 0.901) and 0.933 at 10% (was 0.934);
on other draws and cells the model's R is nearer the observed reduction in four of seven, but
on uniform samples still 3-23% short of it (REPRODUCTION.md, "ppi's variance reduction from
the model"), most of it on one sparse topic whose relevant documents the model expected twice
over; with the model's topic intercepts at a prior sd of 3 (``ht/anticipated.py``, "Topic
intercepts") the 30% draws cover 0.946 (``benchmarks/ppi_topic_errors.py``).

Label weights (:func:`model_weights`). The same model chooses lambda: the residual's
anticipated variance is a quadratic in each stratum's coefficient (its moments above are
quadratic in c_d, and a stratified design's variance is a sum over its cells), so per topic
and stratum, A(lambda_th) = a + b lambda_th + c lambda_th^2 summed over the topic's runs, read
off at lambda = 0, 1/2 and 1, is least at lambda_th = -b / 2c, clipped to [0, 1] (PPI++'s
power tuning, Angelopoulos, Duchi & Zrnic 2023, with the model's variances in place of the
sample's). The sample's pooled weight (``ppi/difference.py``) is one per stratum for every
topic, 0.93 on TREC-COVID round 5's uniform 30% samples with kappa 0.7 labels, where the
model's weights per topic span 0.87-0.98 (0.20-0.92 on its 2strata 20% samples; 10th-90th
percentile of the topics' medians over 100 draws). An option (``tuning="model"``), not the
default: on the recipe's grid draws of TREC-COVID uniform 30% (100, seed 5) it narrowed
ppi(nDCG)'s intervals by 5-13%, but its unflagged coverage fell to 0.921 and
0.922 with the kappa 0.7 and adversarial labels (0.931 and 0.936 with the pooled weight): the
model's variance at its own minimum is the one it understates where it is off. Measured:
REPRODUCTION.md, "ppi's label weight per topic, from the model".
"""

from __future__ import annotations

import numpy as np

from ..context import safe_divide
from ..ht.anticipated import (
    certain_docs,
    document_moments,
    fit_model,
    frame_positions,
    grade_probabilities,
    moments_of,
    ratio_probabilities,
    ratio_variance,
)
from ..ht.anticipated_terms import anticipated_terms
from ..ht.inclusion import ht_design
from ..trec_eval.average_precision import AP
from ..trec_eval.gain import NDCG
from ..trec_eval.precision import P


def model_reduction(ctx, m, grades: np.ndarray, lam_h: np.ndarray, moved: np.ndarray):
    """Per run: R = sum A_ppi / sum A_ht over the segments ``moved`` (lambda > 0) of ``m``
    (nDCG, nDCG@k or P@k; module docstring), the labels' grades ``grades`` per tdi weighted by
    ``lam_h`` per topic and stratum; NaN for a run where A_ht is 0 on all of them or none is
    moved; None where ht has no anticipated variance."""
    d = ht_design(ctx)
    plain = ratio_probabilities(ctx, d)
    informed = None if plain is None else label_model(ctx, d, grades)
    if informed is None:
        return None
    label, probs = informed
    ppi = residual_variance(ctx, d, m, probs, label, lam_h)
    ht = residual_variance(ctx, d, m, plain, label, np.zeros_like(lam_h))
    shape = (ctx.n_runs, ctx.n_topics)
    on = moved.reshape(shape)
    num = np.where(on, ppi.reshape(shape), 0.0).sum(axis=1)
    den = np.where(on, ht.reshape(shape), 0.0).sum(axis=1)
    return np.where(den > 0, safe_divide(num, den), np.nan)


def segment_reduction(ctx, m, grades: np.ndarray, lam: np.ndarray) -> np.ndarray | None:
    """Per segment: A(lambda) / A(0), the label-informed model's anticipated variance of the
    residual at the segment's weight ``lam`` over ht's (:func:`residual_variance`, the labels'
    weight the same in every cell), for one topic's interval on a planner's top-up, where ppi's
    variance is the sample's and one topic's falls short (``ht/topic_own.py``). A is a
    quadratic in lambda (its moments are), read off at lambda = 0, 1/2 and 1. NaN where A(0)
    is 0 (a topic judged whole); None where the model is not fitted. The run's weight is
    ppi's (one a run for AP and nDCG, P@k's strata weights averaged by their sample sizes).
    None too for num_rel (a topic's total, whose own variance stays the sample's)."""
    if not isinstance(m, (AP, NDCG, P)):
        return None
    d = ht_design(ctx)
    informed = None if grade_probabilities(ctx, d) is None else label_model(ctx, d, grades)
    if informed is None:
        return None
    label, probs = informed
    a, at_half, at_one = (
        residual_variance(ctx, d, m, probs, label, np.full((ctx.n_topics, d.n_cells), x))
        for x in (0.0, 0.5, 1.0))
    b, c = quadratic_terms(a, at_half, at_one)
    value = np.maximum(a + b * lam + c * lam * lam, 0.0)
    return np.where(a > 0, safe_divide(value, a), np.nan)


def quadratic_terms(a, at_half, at_one):
    """``(b, c)`` of A(lambda) = a + b lambda + c lambda^2 through its values ``a``,
    ``at_half`` and ``at_one`` at lambda = 0, 1/2 and 1 (the anticipated variance of the
    residual is quadratic in the labels' weight: module docstring, "Label weights")."""
    c = 2.0 * (at_one - 2.0 * at_half + a)
    return at_one - a - c, c


def label_model(ctx, d, grades: np.ndarray):
    """``(label, probs)`` per document of ``frame_positions(ctx).docs``: the labels' grades
    ``grades`` (per tdi) clipped to the judgments' grades, and the grade probabilities of ht's
    relevance model with the labels added (``ht/anticipated.fit_model``; fitted once per
    context and labels); None where that model is not fitted."""
    n_grades = ctx.judgments.stratum_grades.shape[2]
    label = np.clip(grades[frame_positions(ctx).docs], 0, n_grades - 1)
    informed = ctx.shared_for("ppi_label_model", grades, lambda: fit_model(ctx, d, label))
    return None if informed is None else (label, informed[0])


def model_weights(ctx, m, grades: np.ndarray, use: np.ndarray) -> np.ndarray | None:
    """lambda per topic and stratum (T, S) minimising the label-informed model's anticipated
    variance of the residual (:func:`residual_variance`) summed over the topic's segments in
    ``use`` (module docstring, "Label weights"); NaN where the stratum's weight moves no
    anticipated variance (a stratum judged whole, or no segment in ``use``); None where the
    model is not fitted."""
    d = ht_design(ctx)
    informed = None if ratio_probabilities(ctx, d) is None else label_model(ctx, d, grades)
    if informed is None:
        return None
    label, probs = informed
    zero = np.zeros((ctx.n_topics, d.n_cells))

    def summed(lam_h):
        v = residual_variance(ctx, d, m, probs, label, lam_h)
        return np.bincount(ctx.seg_topic, weights=np.where(use, v, 0.0), minlength=ctx.n_topics)

    a = summed(zero)
    lam = np.full_like(zero, np.nan)
    for h in range(d.n_cells):
        half, one = zero.copy(), zero.copy()
        half[:, h], one[:, h] = 0.5, 1.0
        at_half, at_one = summed(half), summed(one)
        b, c = quadratic_terms(a, at_half, at_one)
        moves = c > 1e-12 * (np.abs(a) + np.abs(at_one))  # else rounding: lambda moves nothing
        lam[:, h] = np.where(moves, np.clip(safe_divide(-b, 2.0 * c), 0.0, 1.0), np.nan)
    return lam


def residual_variance(ctx, d, m, probs, label, lam_h) -> np.ndarray:
    """Per segment: the anticipated variance of the residual's z_d (module docstring) under
    ``probs``, the labels' grades ``label`` per frame document scaled by ``lam_h``."""
    fp = frame_positions(ctx)
    _, weight, gain, slope, centre, y = anticipated_terms(ctx, d, m, probs)
    if not lam_h.any():
        return ratio_variance(ctx, d, probs, weight, gain, slope, centre, y)
    m_g, m_gg, m_s, m_ss, m_gs = document_moments(ctx, d, probs, gain, slope)
    c = lam_h[fp.topic, fp.stratum] * ~certain_docs(ctx, d)  # no part of the draw: 0
    g = c * gain[fp.topic, label]
    b = c * slope[fp.topic, label]
    shifted = (m_g - g, m_gg - 2.0 * g * m_g + g * g, m_s - b, m_ss - 2.0 * b * m_s + b * b,
               m_gs - b * m_g - g * m_s + g * b)
    return moments_of(ctx, d, weight, y, shifted).variance(centre)
