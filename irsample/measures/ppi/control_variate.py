"""ppi(nDCG)'s control variate: ht(nDCG) on the humans with ht on the labels as a control
variate, in the humans' imputation structure. Where ht's interval is its sample's own variance
(the planner's designs) it is ppi(nDCG), on the topics ht identifies (``imputed=False``; the
imputed topics keep ht's imputation: ``ppi/estimate.py``, "ppi(nDCG)'s form"); elsewhere an
option (``kept``) on the topics the difference form (``ppi/difference.py``) leaves to ht. The
table below measured that option, on those topics only.

Setting (``ppi/estimate.py``): theta_t = nDCG of the humans' grades on topic t's pool, f_t =
nDCG(f)_t the labels' census value (known exactly), theta^_y,t = DCG^/IDCG^ of ht(nDCG) on the human
sample and theta^_f,t the same ratio on the same sample with each judged grade replaced by its
label (``label_judgments.labelled_sample``; same design, concavity correction and slopes). ht
(``ht/estimator.py``, "Sparse topics") calls a topic identified (I) when its sample holds a
relevant document (IDCG^ > 0) and imputes the others (M) by the donor-weighted mean
sum_I a_q theta^_y,q (single-hit donors, a_q = w_q / sum w).

Estimator, with one weight lambda per run (0 on topics whose labels are constant):

    identified t:  ppi_t = theta^_y,t + lambda (f_t - theta^_f,t)
    imputed t:     ppi_t = lambda f_t + sum_I a_q (theta^_y,q - lambda theta^_f,q)

i.e. ht's imputation applied to the residual g = theta - lambda f, whose topic-to-topic spread
is small where the labels track the grades, with the labels' exact value added back. The
imputation structure (which topics are imputed, the donors and their weights) is the humans'
on both sides. (A topic the humans identify whose sample holds no labelled-relevant document
has no theta^_f: it takes theta^_f = f_t, no correction, and enters the imputation with
g = theta^_y - lambda f.)

Why this and not ht_y + lambda (f - ht_f) with ht_f = ht(nDCG) run on the labels with its own
imputation (the first form tried). Measured with ``benchmarks/ppi_kept_bias.py`` (Vaswani,
uniform 10%, kappa 0.7 labels, 20 draws, seed 2024), contributions to the bias of a run's mean
by topic kind (k_y, k_f: sampled human-relevant, labelled-relevant documents): on the topics
with k_y = 0 and k_f > 0 (23% of the segments) ht_y - theta = +0.011 but ht_f - f = -0.039:
the humans impute such a topic, the labels estimate it by a ratio of the false-positive labels
the sample happened to hold, and conditionally on the humans having found nothing that ratio
is low. The correction then added lambda 0.039 of bias (+0.045 in all at kappa 0.7; 40 draws:
coverage 0.60, bias +0.060, half-width ratio 0.63). In the humans' structure both sides impute
the same topics from the same donors, so the errors track: that kind's ppi bias is -0.004. The
one-topic fallback matters too: taking theta^_f = 0 where no labelled-relevant document was
sampled added lambda f_t on such donors (fusion labels: +0.05 on the imputed topics).

Why (nearly) unbiased. For fixed lambda, an identified topic's correction f_t - theta^_f,t has
the mean of ht's ratio error on the labels (small, opposite to the humans' where they agree);
the imputation of g rests on ht's Poisson identity (E over the draws of the donor-weighted sum
over single-hit topics equals the sum over the topics with no hit, for any fixed per-topic
quantity, here g_t = theta_t - lambda f_t), with the same approximation 1/R_q ~ pi_d as ht's
(``ht/estimator.py``). Neither is exact: ``tests/test_ppi_control.py`` checks the correction's
mean over repeated draws at a fixed lambda.

Variance (ht's ``impute`` with g in place of theta): an identified topic's own linearised
variance is V_g = V_y - 2 lambda C + lambda^2 V_f (V_y, V_f: ht's linearised variance at the run's
centre, C = rho sqrt(V_y V_f) with rho the correlation of the two linearised influences,
``ap_ratio.strata_moments`` with nDCG's influence z_d = (x_d - theta~ r_d) / IDCG^, r_d the slope
of the ideal DCG in d's grade), grown by (1 + m a_q)^2 for the m imputed topics it stands for;
an imputed topic takes tau_g^2 (1 + m sum a^2), tau_g^2 the donors' spread of g minus their mean
V_g.

Power tuning. lambda is the value of a grid (0, 0.05, ..., 1) with the least estimated variance
of the run's sum over the topics taken here (PPI++'s criterion; ``"global"``: over every run;
``"stratum"`` and ``"topic"`` both tune per run: the imputation pools a run's topics; ties go to
the larger weight), cross-fitted as ppi(AP)'s (``ap_ratio.py``, "Cross-fitted"): each topic's
weight is chosen on the run's other topics. Chosen on a sum that holds the topic's own
estimated variance, the weight goes where that noisy estimate is low, and the interval read at
it understates the variance: with V(lambda) = V_y - 2 lambda C^ + lambda^2 V_f minimised at
C^ / V_f, the variance at the weight chosen exceeds the minimum read by 2 C^ (C^ - C) / V_f,
2 Var(C^) / V_f on average. The topics' samples are independent, so a weight fitted on the
others leaves the topic's variance at it what it is at any fixed weight; the weights of a
run's topics differ by one topic's part of the sum. (A run with one topic taken reads that
topic's own sum.) Fixed tunings use the given weight.

Measured (``irsample simulate model-assisted --qrels irsample/data/C/qrels.gz --runs
irsample/data/C/runs --trials 100 --seed 2024 --param strategies=uniform,2strata --param
percents=10 [--param kept=control]``, C = vaswani, cacm; TREC-8: ``--shared ../shared
--trials 20``), ppi(nDCG) default (ht on these topics) -> ``kept="control"``:

| collection, design, labels | coverage | half-width ratio | bias |
|---|---|---|---|
| Vaswani uniform kappa0.3 | 0.960 -> 0.937 | 0.965 -> 0.737 | +0.020 -> +0.009 |
| Vaswani uniform kappa0.5 | 0.955 -> 0.912 | 0.954 -> 0.590 | +0.017 -> +0.002 |
| Vaswani uniform kappa0.7 | 0.946 -> 0.883 | 0.944 -> 0.435 | +0.016 -> -0.008 |
| Vaswani uniform adversarial | 0.951 -> 0.893 | 0.967 -> 0.756 | +0.026 -> +0.028 |
| Vaswani uniform fusion | 0.961 -> 0.938 | 0.963 -> 0.743 | +0.030 -> +0.015 |
| Vaswani 2strata kappa0.3 | 0.885 -> 0.842 | 0.933 -> 0.854 | +0.030 -> +0.030 |
| Vaswani 2strata kappa0.5 | 0.901 -> 0.851 | 0.919 -> 0.754 | +0.026 -> +0.024 |
| Vaswani 2strata kappa0.7 | 0.928 -> 0.924 | 0.904 -> 0.620 | +0.021 -> +0.013 |
| Vaswani 2strata adversarial | 0.846 -> 0.782 | 0.935 -> 0.847 | +0.034 -> +0.034 |
| Vaswani 2strata fusion | 0.682 -> 0.529 | 0.916 -> 0.816 | +0.045 -> +0.049 |
| CACM uniform kappa0.3 | 0.928 -> 0.887 | 0.978 -> 0.667 | +0.024 -> -0.004 |
| CACM uniform kappa0.5 | 0.925 -> 0.817 | 0.975 -> 0.518 | +0.024 -> -0.025 |
| CACM uniform kappa0.7 | 0.924 -> 0.716 | 0.969 -> 0.375 | +0.020 -> -0.036 |
| CACM uniform adversarial | 0.931 -> 0.905 | 0.978 -> 0.683 | +0.030 -> +0.016 |
| CACM uniform fusion | 0.930 -> 0.913 | 0.971 -> 0.637 | +0.037 -> -0.021 |
| CACM 2strata kappa0.3 | 0.959 -> 0.964 | 0.942 -> 0.793 | +0.024 -> +0.018 |
| CACM 2strata kappa0.5 | 0.964 -> 0.952 | 0.934 -> 0.671 | +0.018 -> +0.004 |
| CACM 2strata kappa0.7 | 0.957 -> 0.827 | 0.915 -> 0.514 | +0.010 -> -0.014 |
| CACM 2strata adversarial | 0.941 -> 0.948 | 0.947 -> 0.804 | +0.027 -> +0.021 |
| CACM 2strata fusion | 0.917 -> 0.786 | 0.929 -> 0.746 | +0.037 -> +0.038 |
| TREC-8 uniform kappa0.3 | 0.848 -> 0.855 | 0.897 -> 0.836 | -0.028 -> -0.026 |
| TREC-8 uniform kappa0.5 | 0.833 -> 0.851 | 0.860 -> 0.761 | -0.027 -> -0.023 |
| TREC-8 uniform kappa0.7 | 0.866 -> 0.889 | 0.827 -> 0.679 | -0.021 -> -0.016 |
| TREC-8 uniform adversarial | 0.871 -> 0.896 | 0.862 -> 0.745 | -0.022 -> -0.016 |
| TREC-8 uniform fusion | 0.896 -> 0.925 | 0.857 -> 0.744 | -0.018 -> -0.013 |
| TREC-8 2strata kappa0.3 | 0.941 -> 0.936 | 0.876 -> 0.862 | -0.005 -> -0.005 |
| TREC-8 2strata kappa0.5 | 0.947 -> 0.946 | 0.845 -> 0.822 | -0.006 -> -0.005 |
| TREC-8 2strata kappa0.7 | 0.948 -> 0.952 | 0.762 -> 0.725 | -0.006 -> -0.004 |
| TREC-8 2strata adversarial | 0.951 -> 0.951 | 0.863 -> 0.836 | -0.005 -> -0.004 |
| TREC-8 2strata fusion | 0.929 -> 0.929 | 0.767 -> 0.753 | +0.003 -> +0.003 |

ht(nDCG)'s own coverage (uniform / 2strata): Vaswani 0.963 / 0.825, CACM 0.952 / 0.932, TREC-8
0.891 / 0.955 (20 draws). (CACM's rows are from the recipe's frame without the 12 topics its
qrels do not judge; counted as all non-relevant before, they gave ht(nDCG) a bias of +0.13.)
ppi(AP) is unchanged. The half-width targets at 10% human judgments (0.8 at kappa 0.5, 0.7 at
kappa 0.7) are met on Vaswani and CACM with both designs and on TREC-8 uniform (0.761 / 0.679),
not on TREC-8 2strata (0.822 / 0.725); the RMS error falls with the labels' quality (Vaswani
uniform kappa 0.7: 0.054 -> 0.028; CACM 0.092 -> 0.053). On TREC-8 coverage rises on uniform
(0.851-0.925 against 0.833-0.896) and moves by at most 0.005 on 2strata. The estimated variance
matches the spread over draws (Vaswani uniform kappa 0.7, 40 draws: 0.000614 stated, 0.000621
observed, per run 0.023-0.029 either way); the coverage lost is bias the narrower interval no
longer hides: at kappa 0.7 on Vaswani uniform -0.010 (standard error 0.024) from the
single-hit topics, whose downward conditional bias (-0.015) ht's imputation offsets and the
residual's imputation does not (``benchmarks/ppi_kept_bias.py``); on CACM the same sign and
more (-0.036 at kappa 0.7, coverage 0.716); with weak or adversarial labels ppi(nDCG)'s other
biases (the difference form's on 2strata) stay whole under a narrower interval. That is why
this is an option and not the default. ``kept="identified"`` (the correction on
identified topics only, ht's imputation kept) narrows less and loses less on Vaswani uniform
(ratio 0.733 / 0.641 at kappa 0.5 / 0.7, coverage 0.935-0.955) but as much elsewhere (Vaswani
2strata 0.572-0.875 against 0.682-0.928; CACM: see REPRODUCTION.md).

Importance samples. There ht(nDCG) takes the Taylor correction with the jackknife of the
corrected ratio as its variance (``ht/ndcg_replicates.py``), and so does the control variate:
theta^_y and theta^_f are the ratios as ht corrects them, and V_y, V_f and C the two estimates'
jackknife over the same deletions (``jackknife.jackknife_cross_moments``, as ppi(AP)'s).
With the plain ratios and their linearised moments ppi(nDCG)'s run means on TREC-COVID round
5's importance samples at 10% and 20% covered 0.862-0.925 with nothing flagged, as ht's plain
ratio did; with these 0.924-0.949 (four label sources, 100 draws; REPRODUCTION.md, "ht(nDCG)
on importance samples: the jackknife of the corrected ratio"). The planner's top-ups and ranks
judged whole beside sampled ones take the same since ht(nDCG) does there (2026-12-06): on DL
2019 passages' planned 5% (synthetic runs, 100 trials, seed 5) ppi(nDCG)'s unflagged run means
covered 0.942-0.962 over the five label sources, 0.904-0.949 with the plain ratios (kappa 0.7
labels 0.904; REPRODUCTION.md, "ht(nDCG) on the planner's designs").

Exactness: labels equal to the grades give theta^_f = theta^_y bit for bit, g = 0 on every
identified topic, V_g = 0 (rho = 1), lambda = 1: ppi_t = f_t = theta_t, variance 0, imputed
topics included. Labels constant over a topic's pool: lambda = 0 there; a run none of whose
topics taken here has varying labels keeps ht(nDCG) bit for bit.
"""

from __future__ import annotations

import numpy as np

from ..ht.estimator import estimate as ht_estimate
from ..ht.ideal_dcg import ideal_linearisation
from ..ht.imputation import impute, linearised_variance, topic_states
from ..ht.inclusion import ht_design
from ..ht.jackknife import jackknife_cross_moments
from ..ht.walks import NO_CUTOFF
from .ap_ratio import strata_moments

#: the pooling of lambda per tuning level of the difference form
POOLING = {"model": "run", "stratum": "run", "topic": "run", "global": "global"}


def control_estimate(ctx, ctx_f, m, hy, auto, kept, useful, tuning, imputed=True, centre=None,
                     label_bias=None):
    """(value, variance, lambda, ht_f, rho) per segment (module docstring), meant for the
    segments ``kept`` (the caller takes them there; the weight is tuned on them); ``useful``
    per segment: whether its topic's labels vary (lambda is 0 elsewhere). Every identified
    topic's residual enters the imputation, taken by the difference form or not.
    ``imputed=False``: the imputed topics keep ht's imputation (the correction on the
    identified topics only; the imputation of theta^_y as ht's, their variance by the same
    formula with lambda = 0 in g). ``centre``: ``(c, mc)`` per segment, the labels' centre
    under the design and its Monte Carlo variance (``ppi/redraw.py``), which the identified
    topics' correction takes in place of the labels' value: lambda (c - theta^_f).
    ``label_bias``: per segment that centre less the labels' value, c - nDCG(f), whose sum over
    the run's identified topics the weight's criterion counts squared (:func:`_tuned`;
    ``tuning="mse"``, ``ppi/estimate.py``)."""
    use = kept & useful
    hf = ht_estimate(ctx_f, m)
    shape = (ctx.n_runs, ctx.n_topics)
    d = ht_design(ctx)
    known, missing = topic_states(ctx, d, hy.den)
    donors = None if hy.donors is None else hy.donors.reshape(shape)
    if hy.replicates is not None and hf.replicates is not None:
        # importance samples: ht's ratios as corrected, their jackknife over the same deletions
        # (module docstring, "Importance samples")
        moments = jackknife_cross_moments(ctx, d, hy.replicates, hf.replicates)[:3]
        own_y, own_f = moments[2].sum(axis=1), np.where(useful, moments[1].sum(axis=1), 0.0)
        cov_h, _ = strata_moments(ctx, ctx_f, hy, hf, own_y, own_f, moments=moments)
        ratio_y, ratio_f = hy.value, hf.value
    else:
        own_y, own_f = _own(hy), np.where(useful, _own(hf), 0.0)
        cutoff = NO_CUTOFF if getattr(m, "k", None) is None else int(m.k)
        r_y, out_y = ndcg_slopes(ctx, cutoff)
        r_f, out_f = ndcg_slopes(ctx_f, cutoff)
        cov_h, _ = strata_moments(ctx, ctx_f, hy, hf, own_y, own_f, den_values=(r_y, r_f),
                                  out=(out_y, out_f))
        ratio_y, ratio_f = hy.plain, hf.plain
    cov = np.where(useful, cov_h.sum(axis=1), 0.0)
    theta_y = np.where(known.ravel(), np.nan_to_num(ratio_y), 0.0)
    # a topic the humans identify but whose sample holds no labelled-relevant document has no
    # label estimate: it takes the labels' value (no correction on it)
    theta_f = np.where(known.ravel(), np.where(hf.den > 0, np.nan_to_num(ratio_f), auto), 0.0)
    one = useful * 1.0
    w = np.where(known, 1.0 if donors is None else donors, 0.0)
    share = (w / np.maximum(w.sum(axis=1, keepdims=True), 1e-300)).ravel()
    n_missing = np.repeat(missing.sum(axis=1), ctx.n_topics).astype(np.float64)
    lift = n_missing * share
    aim, noise = (auto, 0.0) if centre is None else centre

    def at(lam_seg):
        lam_m = lam_seg if imputed else 0.0 * lam_seg
        g = theta_y - lam_m * theta_f
        own_g = np.maximum(own_y - 2.0 * lam_m * cov + lam_m * lam_m * own_f, 0.0)
        filled, var_m = impute(g.reshape(shape), own_g.reshape(shape), known, missing, donors)
        own = np.maximum(own_y - 2.0 * lam_seg * cov + lam_seg * lam_seg * own_f, 0.0)
        both = own_y - (lam_seg + lam_m) * cov + lam_seg * lam_m * own_f
        var_k = np.maximum(own + 2.0 * lift * both + lift * lift * own_g, 0.0)
        var_k = var_k + lam_seg * lam_seg * noise
        value = np.where(known.ravel(), theta_y + lam_seg * (aim - theta_f),
                         filled.ravel() + lam_m * auto)
        return value, np.where(known.ravel(), var_k, var_m.ravel())

    if not isinstance(tuning, str):
        lam = np.full(ctx.n_seg, float(tuning)) * one
    else:
        bias = None if label_bias is None else np.where(use & known.ravel(), label_bias, 0.0)
        lam = _tuned(at, one, use, shape, POOLING.get(tuning, tuning), bias=bias).ravel() * one
    value, var = at(lam)
    moved = np.repeat((np.where(use, lam, 0.0).reshape(shape) > 0).any(axis=1), ctx.n_topics)
    value, var = np.where(moved, value, hy.value), np.where(moved, var, hy.variance_from_sample)
    rho = np.clip(cov / np.sqrt(np.maximum(own_y * own_f, 1e-300)), -1.0, 1.0)
    return value, var, np.where(use, lam, 0.0), hf.value, np.where(use, rho, np.nan)


#: the weights the power tuning of :func:`control_estimate` chooses from
GRID = np.linspace(0.0, 1.0, 21)


def _tuned(at, one, use, shape, pooling, bias=None):
    """lambda per segment, cross-fitted: the grid value with the least estimated variance of
    the sum over the run's segments ``use`` but those of the segment's own topic (``"run"``),
    or of every run's but those of the topic (``"global"``); with ``bias`` (per segment, the
    labels' side's known bias, 0 off ``use``) the least variance plus squared bias,
    lambda^2 (sum b_f)^2, of that sum. Where the sum leaves nothing (a run whose one topic is
    taken here) the topic's own segments count (module docstring, "Power tuning")."""
    per = np.stack([np.where(use, at(lam * one)[1], 0.0).reshape(shape) for lam in GRID])
    taken = use.reshape(shape)

    def pooled(a):  # the pooling's sum of a (runs, topics) array, and that less the topic's own
        if pooling == "global":
            whole = a.sum(axis=(-2, -1), keepdims=True)
            return whole, whole - a.sum(axis=-2, keepdims=True)
        whole = a.sum(axis=-1, keepdims=True)
        return whole, whole - a

    whole, others = pooled(per)
    if bias is not None:
        b_all, b_others = pooled(bias.reshape(shape))
        whole = whole + (GRID[:, None, None] * b_all) ** 2
        others = others + (GRID[:, None, None] * b_others) ** 2
    # no other segment in the pooling: the topic's own sum
    alone = pooled(taken.astype(np.int64))[1] == 0
    criterion = np.broadcast_to(np.where(alone[None], whole, others), per.shape)
    top = len(GRID) - 1  # ties go to the larger weight (true labels: lambda = 1 is exact)
    return GRID[top - np.argmin(criterion[::-1], axis=0)]


def _own(est):
    """Per segment: the linearised variance of an identified topic's ratio at the run's centre
    (``estimator._sparse_aware``'s ``own``)."""
    return linearised_variance(est.var_num, est.cov, est.var_den, np.nan_to_num(est.centre),
                               est.den)


def ndcg_slopes(c, cutoff):
    """Per tdi the slope of ht(nDCG)'s ideal DCG in the document's grade (0 unless judged with a
    positive grade), and the slopes per topic and grade (the sampled documents no run
    retrieved): the denominator's linearisation of ``estimator._ndcg``."""
    *_, slope, tdi_slope = ideal_linearisation(c, ht_design(c), cutoff)
    return tdi_slope, slope
