"""Prediction-powered estimators: automatic labels on every pooled document, corrected by a
probability sample of human judgments (reference-semantics §3.6, last bullet).

Setting. Per topic the frame F is the pool; a probability sample S of it is judged (any design
``ht/inclusion.py`` reads: strata, inclusion probabilities); an automatic label f_d
(``irsample.io.labels``, turned into a grade by ``label_judgments.label_grades``) is known for
every d in F. M is AP, nDCG, nDCG@k, P@k or num_rel; M(y) is its value on the human grades of
F (the truth), M(f) its value with the labels in their place (``auto(M)``).

One estimator per measure:

- P@k, num_rel, and nDCG, nDCG@k on stratified simple random samples (``ppi/difference.py``):
  every total the measure is built from (DCG, the count of each grade behind the ideal DCG,
  P@k's count, R) is the labels' value on the pool plus the design-weighted residuals
  y_d - lambda_h f_d of the sample, with one lambda per stratum h (stratified PPI; per topic
  and stratum from the relevance model with ``tuning="model"``), and nDCG = DCG^ / IDCG(C^).
- nDCG, nDCG@k where ht's interval is the sample's own variance (importance samples, the
  planner's designs; ``ppi/control_variate.py``): on the topics ht identifies, ht(nDCG) on the
  humans plus lambda (nDCG(f) - ht_f(nDCG)), the labels' census value minus the same estimator
  on the sample's labels, one lambda per run; the topics ht imputes keep ht's imputation
  (``form``; "ppi(nDCG)'s form" below).
- AP (``ppi/ap_ratio.py``): the ratio correction below, with one lambda per run (or per run and
  stratum).

Why not one form for all (Vaswani, depth-100 pool, 20 trials, seed 2024, 10% human judgments,
uniform design; ``irsample simulate model-assisted``): the ratio correction of nDCG carries the
ratio bias of ht(nDCG) run on the labels into the estimate (coverage 0.12-0.62 over the five
label sources, bias +0.056 to +0.088) where the difference form covers 0.60-0.81 (bias +0.046
to +0.067); for AP the difference form's denominator R^ is unstable at 1.6 sampled relevant
documents per topic (coverage 0.80-0.93, bias -0.020 to -0.004, half-width ratio 0.74-0.84)
where the ratio correction covers 0.91-0.96 (half-width ratio 0.58-0.89). A third form,
ht(M) plus lambda_h times the labels' linearised influences (census minus HT; mean 0 exactly),
kept ht's bias but narrowed AP's interval little (ratio 0.92-0.96) and is not exact for true
labels.

What limits ppi(nDCG)'s interval (measured, seed 2024, 10% uniform, kappa 0.7 labels): the topics
the difference form leaves to ht (ratio not identified: fewer than 2 sampled relevant documents
or a denominator CV above 0.5). On Vaswani they are 69% of the segments and hold 67% of ht's
variance (10 draws); on the segments it takes, the half-width ratio is 0.21. TREC-8 (3 draws):
21% of the segments, 32% of ht's variance, ratio 0.60 on the rest, lambda 0.68; per-topic weights
gave 0.762 against 0.770 per stratum (8 draws) with lower coverage (0.87 against 0.93). Tried on
those topics and not kept: the difference form without the 2-relevant rule (Vaswani, 40 draws;
ratio / coverage / bias: 0.63 / 0.77 / +0.042 at kappa 0.7 but 0.69 / 0.14 / +0.106 with the
fusion labels, ht 0.82 / +0.060); ht(nDCG) + lambda (nDCG(f) - ht_f), ht_f = ht(nDCG) on the
labels with its own imputation (0.63 / 0.60 / +0.060 at kappa 0.7: the two sides impute
different topics, ``ppi/control_variate.py``).

Offered as an option, ``kept="control"`` (``ppi/control_variate.py``, formula, reasoning and the
full table there): on those topics ht(nDCG) with the same estimator on the labels as control variate
in the humans' imputation structure (identified t: theta^_y + lambda (f_t - theta^_f); imputed
t: lambda f_t plus ht's donor mean of theta^_y - lambda theta^_f), one lambda per run;
``kept="identified"`` corrects the identified topics only. It meets the half-width targets
(Vaswani uniform 10%, 100 draws: ratio 0.590 / 0.435 at kappa 0.5 / 0.7, was 0.954 / 0.944; RMS
0.054 -> 0.028 at kappa 0.7) but is not the default, because its coverage falls below the
default's and ht's in some cells (Vaswani uniform 0.883-0.938 against 0.946-0.961, ht 0.963;
CACM uniform kappa 0.7 0.716 against 0.924): the interval narrows while ppi(nDCG)'s bias
elsewhere (the difference form's on 2strata) or the single-hit topics' stays.

ppi(nDCG)'s form. The difference form's ratio DCG^/IDCG(C^) carries a second-order bias that
ht(nDCG) removes from its own (the ideal DCG's concavity) and the residual counts do not, and
on the planner's designs it showed: with the fusion labels on TREC-8 at 10% ppi(nDCG) sat
+0.66 of its spread above the truth and its unflagged intervals covered 0.861 (at 20%: 0.885),
and with the kappa 0.7 labels on TREC-COVID at 5% -0.29 below it (the graded counts, whose
deep documents carry inclusion probabilities near 0, have standard deviations of 35-90
documents a topic over the draws, and their clipping at 0 and the concavity pull the ideal DCG
both ways; removing the concavity bias moved that cell from -0.29 to -0.84 and its coverage
from 0.931 to 0.792: tried, measured, not kept). The
control variate inherits ht(nDCG)'s corrections on both sides, so its bias is ht's less lambda
times the labels' (``benchmarks/ppi_variance_anatomy.py --measure nDCG``, 100 draws, seed 2525:
TREC-8 planned 10%, fusion, +0.40 of its spread, covering 0.946 against 0.859). Where ht
imputes a topic, correcting the imputation too (``kept="control"``'s form) cost the sparse
collections coverage (all their means flagged; CACM planned 10%, kappa 0.7: 0.715, Vaswani
fusion 0.795) and moved TREC-8 and TREC-COVID by at most 0.001: so the imputed topics keep
ht's. Measured: REPRODUCTION.md, "ppi(nDCG) on the planner's designs: the control variate".
On stratified simple random samples, where ppi's interval is ht's anticipated one times ppi's
variance reduction (``_steadier``), the difference form held and the control variate did not
everywhere (on every topic, TREC-COVID uniform 10%, kappa 0.3 and fusion labels: 0.906 and
0.919 unflagged against 0.958 and 0.957). Hence ``form="auto"``: the control variate where
ht(nDCG)'s interval is its sample's variance (the same switch as ppi(AP)'s jackknife
correlation, ``ap_ratio.py``), the difference form elsewhere.

AP estimator (``ppi/ap_ratio.py``, derivation there): ht(AP) on the humans plus, stratum by stratum,
lambda_h times the step D_h by which sampling stratum h moves the same estimator on the labels
(sum_h D_h = AP(f) - ht_f(AP), the labels' census value minus ht on the sample's labels; its
pairs take the residual of products y_j y_k - lambda f_j f_k over pi_jk).

Exact cases (by construction, not by tolerance). Labels equal to the human grades: ht_f equals
ht_y bit for bit (AP), every residual is 0 (the others), so ppi(M) = M(y), lambda = 1, variance
0; except where the difference form leaves a topic to ht (``ppi/difference.py``: fewer than
``MIN_REL`` sampled documents of positive grade), which keeps ht(nDCG)'s value and variance
whatever the labels. Labels constant over a topic's pool carry no information: lambda = 0 there
and ppi(M) = ht(M) with ht's variance, bit for bit. (The difference form with lambda = 0 on a
topic whose labels vary would be DCG^/IDCG(C^) of the humans alone, without ht(nDCG)'s concavity
correction and sparse-topic rules; measured at uniform 10% on Vaswani, kappa 0.5 labels, five
draws, it differs from ht(nDCG) on 43% of the segments by 0.063 on average (mean -0.035): so the
constant-label case keeps ht by this rule, not by the formula.) One exception, so that true
labels stay exact on a topic where the truth itself is constant (no relevant document in its
pool): when the labels vary somewhere in the pool, a topic whose constant labels match every
judged document takes the labels' value with variance 0 (PPI with lambda = 1 and a sample
without residuals).

The labels' bias on the planner's designs. The correction lambda (M(f) - ht_f) carries
-lambda times ht's ratio bias on the labels, which on a thin planned sample can exceed the
humans' (labels that call more documents relevant than the assessors). The labels are known
on the whole pool, so that bias can be computed by drawing the design again on them
(``ppi/redraw.py``); ``centre="design"`` centres the correction on ht_f's mean over those
draws, so that ppi's bias is ht's. An option, not the default: it loses the exactness of
labels equal to the truth, and neither form's bias can be told from the sample (measured
there).

The labels' bias in the weight (``tuning="mse"``, an option). The power tuning chooses lambda
for the least variance, and the larger lambda, the more of the labels' bias -lambda b_f the
estimate carries. Where b_f is computed (the same redraws), the weight can minimise the
estimated variance plus the squared bias of the run's sum, lambda^2 (sum_t b_f,t)^2, the humans'
bias b_y taken as ht's (the rule reads it): for AP the closed form sum C / (sum V_f + (sum
b_f)^2) over the run's other topics (``ap_ratio.choose``), for nDCG's control variate the grid
point of least variance plus squared bias over the same topics (``control_variate._tuned``). The
weight is never above the default's, and equal to it where the labels' ratio is unbiased under
the design; labels equal to the truth keep a lambda below 1 where ht's ratio is biased (their
bias is then (1 - lambda) b_y, smaller than ht's). Measured, not the default: on DL 2019
passages at planned 5% (synthetic runs, 100 draws) it lifted ppi(nDCG)'s unflagged coverage with
the kappa 0.7 labels from 0.877 to 0.900 (lambda 0.93 -> 0.79, RMS error unchanged), still
short; on TREC-8 planned 10% it moved the run means by at most 0.25 of a half-width (two draws),
at 20 times the default's cost a draw (REPRODUCTION.md, "ppi's weight with the labels' bias,
measured").

AP's variance and power tuning: ``ppi/ap_ratio.py`` (one lambda per run by default). For
every measure, a run whose estimated variance would exceed ht's keeps ht (lambda = 0): the run's
variance is never above ht's (its interval, on the logit scale for AP and nDCG, moves with its
centre too: at equal variances it can be wider by rounding's order, 1e-5 of the width).

Variance. Each form's variance is estimated from the sample and, like ht's own, rises and falls
with the estimate (a sample that catches a top-ranked relevant document gets both a high
estimate and a large variance). Where ht(M) has an anticipated variance (``ht/anticipated.py``:
stratified samples), PPI's variance is moved to that scale: on the segments where lambda > 0,
ht's anticipated variance times PPI's variance reduction, a ratio of two variances of the same
sample (steadier than either); segments with lambda = 0 take ht's anticipated variance itself.
AP's ratio form, whose variance follows ht(AP)'s segment by segment, takes the reduction per
segment (v_ppi / v_ht,sample) where PPI's sample variance is at most ht's; where it is above
(the labels add variance to the segment) it adds the difference to ht's anticipated variance,
A_ht + (v_ppi - v_ht,sample), as the ratio is unbounded as ht's sample variance nears 0
(factors of 213-309 on a TREC-COVID uniform 20% sample, which sent whole runs back to ht); and
where both sample variances are 0 (nothing relevant sampled where the model anticipates some)
it takes the run's reduction, sum v_ppi / sum v_ht,sample over its other segments, where it had
taken 0 and so dropped ht's anticipated variance (REPRODUCTION.md, "ppi(AP)'s variance segment
by segment"); the difference form (nDCG, P@k) one reduction per run, the
relevance model's (``ppi/anticipated.py``): the model is ht's with the labels added, and R =
sum A_ppi / sum A_ht over the run's segments with lambda > 0, the anticipated variances of
ppi's residual and of ht. Per segment, the sample's ratio to ht(nDCG)'s variance is inflated
where that is near 0 (TREC-COVID 10%, 100 trials: ppi(nDCG) covered up to 0.988 per segment,
0.924-0.975 with the run's ratio of sums R = sum v_ppi / sum v_ht,sample), while for AP the
run's ratio narrowed too much (ppi(AP) uniform 0.903-0.929 with R, 0.937-0.956 per segment);
and that ratio of sums, two estimates of one draw that rise and fall together, fell short as
the judged share grew (TREC-COVID uniform, kappa 0.7 labels, 100 draws: 0.934 covered at 10%,
0.888 at 30%; with the model's R 0.933 and 0.927). The rule above then compares
the run's variance with ht's anticipated one. Measured: REPRODUCTION.md, "Anticipated
variance".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import MeasureError
from ...io.labels import AutoLabels
from ..context import safe_divide
from ..ht.estimator import estimate as ht_estimate
from ..ht.inclusion import ht_design
from ..names import parse_one
from .anticipated import model_reduction
from .ap_ratio import TUNINGS, fixed_tuning, ratio_form
from .control_variate import control_estimate
from .difference import LEVELS, difference_estimate
from .label_judgments import (
    agreeing_topics,
    informative_topics,
    label_grades,
    labelled_census,
    labelled_sample,
)
from .redraw import corrected_value, label_centre

#: the sample's variance reduction below which the difference form's is taken as exact
#: (``_steadier``): rounding in residuals that are 0
EXACT = 1e-9
#: (``_steadier``): a segment's variance below it is rounding (of a residual that is 0)
ROUNDING_VARIANCE = 1e-15
#: what ppi(nDCG)'s topics outside the difference form take (``ppi_estimate``)
KEPT = ("ht", "control", "identified")
#: ppi(nDCG)'s forms: ``"auto"`` (the default: the control variate where ht's interval is its
#: sample's own variance, the difference form on stratified simple random samples), ht(nDCG)
#: with the labels' ht(nDCG) as control variate on the topics ht identifies, or the difference
#: form with ``KEPT`` on the topics it leaves (module docstring, "ppi(nDCG)'s form")
FORMS = ("auto", "control", "difference")
#: what the correction lambda (centre - ht_f) centres the labels' estimate on: ``"census"``
#: (the default) M(f), the labels' value on the pool; ``"design"`` ht_f's mean over the
#: design's own draws where ht's interval is its sample's variance and the judgments state the
#: design whole (M(f) elsewhere): an option, not the default (``ppi/redraw.py``, "Why an
#: option and not the default")
CENTRES = ("census", "design")
#: the tuning that counts the labels' side's bias beside the variance: one weight per run
#: minimising the estimated variance plus lambda^2 (sum b_f)^2, b_f = c - M(f) per topic
#: computed by redrawing the design on the labels (``ppi/redraw.py``), where ht's interval is
#: its sample's variance and the judgments state the design whole (the default tuning
#: elsewhere): an option (module docstring, "The labels' bias in the weight")
MSE = "mse"


@dataclass(frozen=True, eq=False)
class PPIEstimate:
    """Per segment (run x topic): the PPI estimate, its variance and lambda; ht(M) (lambda = 0)
    with its variance; ``auto`` = M(f), the labels alone (uncorrected); ``ht_f`` = ht(M) on the
    labels; ``rho`` the correlation of ht_y and ht_f."""

    value: np.ndarray
    variance: np.ndarray
    lam: np.ndarray
    ht: np.ndarray
    ht_variance: np.ndarray
    auto: np.ndarray
    ht_f: np.ndarray
    rho: np.ndarray
    #: the label weights per stratum: (T, S) per topic x stratum (difference form); AP:
    #: (n_seg, S) per segment x stratum
    lam_h: np.ndarray | None = None
    #: per segment, the estimated variance of ``variance`` where it is the sample's jackknife
    #: (AP on the planner's designs: ``ap_ratio.py``, "Degrees of freedom"); None where the
    #: variance is taken as known
    variance_spread: np.ndarray | None = None
    #: per segment: whether ``value`` is ht(M)'s own estimate (ppi kept ht there: the topics
    #: the difference form leaves to ht, a run the control variate does not move, a run whose
    #: variance would exceed ht's), so that its bias is ht's too (``PPI.estimated_bias``)
    as_ht: np.ndarray | None = None


def ppi_estimate(ctx, labels: AutoLabels, target, *, tuning: str | float | None = None,
                 kept: str = "ht", form: str = "auto", centre: str = "census") -> PPIEstimate:
    """ppi(M) for every segment of ``ctx`` (module docstring); ``target`` a measure or its name
    (AP, nDCG, nDCG@k, P@k, num_rel). ``tuning``: AP ``"run"`` (default), ``"stratum"``,
    ``"topic"``, ``"global"``; the others ``"stratum"`` (default), ``"model"`` (per topic and
    stratum from the label-informed model; ``"stratum"`` where ht has no anticipated variance),
    ``"topic"``, ``"global"``;
    or a fixed lambda in [0, 1]. ``form`` (nDCG, nDCG@k): ``"control"`` ht(nDCG) with the
    labels' ht(nDCG) as control variate on every topic ht identifies (ht's imputation on the
    others), ``"difference"`` the difference form, ``"auto"`` (default) the first where ht's
    interval is its sample's variance (the planner's designs), the second on stratified simple
    random samples (module docstring, "ppi(nDCG)'s form"). ``kept`` (the difference form):
    what the topics it leaves to ht take: ``"ht"`` ht(nDCG) alone (default), ``"control"``
    ht(nDCG) with ht on the labels as control variate, imputed topics included,
    ``"identified"`` the same on the topics ht identifies only (``ppi/control_variate.py``).
    ``centre`` (AP, and nDCG's control variate): one of :data:`CENTRES`. ``tuning="mse"``
    (AP, and nDCG's control variate, where ht's interval is its sample's variance): one weight
    per run that counts the labels' side's bias under the design (:data:`MSE`); the default
    tuning elsewhere."""
    m = parse_one(target)
    if kept not in KEPT:
        raise MeasureError(f"kept must be one of {KEPT}, not {kept!r}")
    if form not in FORMS:
        raise MeasureError(f"form must be one of {FORMS}, not {form!r}")
    if centre not in CENTRES:
        raise MeasureError(f"centre must be one of {CENTRES}, not {centre!r}")
    collection, judgments = ctx.collection, ctx.judgments
    if len(labels.value) != collection.n_tdi:
        raise MeasureError("automatic labels were read for another collection")
    levels = TUNINGS if m.family == "AP" else LEVELS
    mse = isinstance(tuning, str) and tuning == MSE
    tuning = levels[0] if tuning is None or mse else tuning
    if fixed_tuning(tuning):
        if not 0.0 <= tuning <= 1.0:
            raise MeasureError(f"lambda must be in [0, 1], not {tuning}")
    elif tuning not in levels:
        raise MeasureError(f"tuning of ppi({m.name}) must be one of {(*levels, MSE)} or a "
                           f"number in [0, 1], not {tuning!r}")
    ctx_f, census, grades = label_contexts(ctx, labels)
    hy = ht_estimate(ctx, m)
    auto = np.nan_to_num(census.shared(("ppi_auto", m), lambda: m.compute(census)))
    topic = collection.tdi_topic.astype(np.int64)
    useful_t = informative_topics(grades, judgments, topic, ctx.n_topics)
    agree_t = agreeing_topics(grades, judgments, topic, ctx.n_topics)
    # a topic whose labels are constant but match every judged document: the sample shows no
    # residual, and the labels are used as they are (PPI's lambda = 1 with a zero residual)
    sure = (~useful_t & useful_t.any() & agree_t)[ctx.seg_topic]
    spread = reduction = None
    as_ht = np.zeros(ctx.n_seg, dtype=bool)
    redraw = centre == "design" and not hy.anticipated
    weigh_bias = mse and centre == "census" and not hy.anticipated

    def label_side():
        """(the labels' centre to take, the labels' bias to weigh), each None if not asked."""
        if not (redraw or weigh_bias):
            return None, None
        aim = label_centre(ctx, m, grades, corrected_value(m, auto))
        if aim is None or redraw:
            return aim, None
        return None, aim[0] - auto

    if m.family == "AP":
        aim, label_bias = label_side()
        value, var, lam, ht_f, rho, lam_h, spread = ratio_form(
            ctx, ctx_f, m, hy, auto, useful_t[ctx.seg_topic], tuning, grades, centre=aim,
            label_bias=label_bias)
    elif m.family == "nDCG" and (form == "control" or (form == "auto" and not hy.anticipated)):
        aim, label_bias = label_side()
        value, var, lam, ht_f, rho = control_estimate(
            ctx, ctx_f, m, hy, auto, np.ones(ctx.n_seg, dtype=bool), useful_t[ctx.seg_topic],
            tuning, imputed=False, centre=aim, label_bias=label_bias)
        lam_h = None
        # a run with no lambda > 0 is not moved: ht's value (``control_estimate``)
        as_ht = ~np.repeat((lam.reshape(ctx.n_runs, ctx.n_topics) > 0).any(axis=1),
                           ctx.n_topics)
    else:
        if tuning == "model" and not hy.anticipated:  # the model's weights need its variance
            tuning = "stratum"
        value, var, to_ht, lam_h = difference_estimate(ctx, m, grades, hy.value, hy.den,
                                                       useful_t, tuning, agree_t)
        n = ht_design(ctx).cell_n[ctx.seg_topic].astype(np.float64)
        lam_seg = lam_h[ctx.seg_topic]
        lam = np.where(n.sum(axis=1) > 0, safe_divide((n * lam_seg).sum(axis=1), n.sum(axis=1)),
                       lam_seg.mean(axis=1))
        ht_f = rho = np.full(ctx.n_seg, np.nan)
        if kept != "ht" and m.family == "nDCG":  # the segments left to ht: ``kept``'s form
            cv, cv_var, cv_lam, ht_f, rho = control_estimate(
                ctx, ctx_f, m, hy, auto, to_ht, useful_t[ctx.seg_topic], tuning,
                imputed=kept == "control")
        else:
            cv, cv_var, cv_lam = hy.value, hy.variance_from_sample, np.zeros(ctx.n_seg)
            as_ht = to_ht
        if hy.anticipated:  # the difference form's variance reduction, from the model
            reduction = model_reduction(ctx, m, grades, lam_h, (lam != 0) & ~to_ht)
        lam = np.where(to_ht, cv_lam, lam)
        value, var = np.where(to_ht, cv, value), np.where(to_ht, cv_var, var)
    var, no_gain = _steadier(var, lam, hy, ctx, per_segment=m.family == "AP",
                             reduction=reduction)
    if not fixed_tuning(tuning):  # a run whose variance would exceed ht's keeps ht
        worse = _wider(var, hy.variance, ctx)
        worse |= np.repeat(no_gain, ctx.n_topics)
        value, var = np.where(worse, hy.value, value), np.where(worse, hy.variance, var)
        if spread is not None:
            spread = np.where(worse, hy.variance_spread, spread)
        lam = np.where(worse, 0.0, lam)
        as_ht = as_ht | worse
        if m.family == "AP":  # per segment and stratum
            lam_h = np.where(worse[:, None], 0.0, lam_h)
    value = np.where(sure, auto, value)
    var = np.where(sure, 0.0, var)
    if spread is not None:
        spread = np.where(sure, 0.0, spread)
    return PPIEstimate(value, var, np.where(sure, 1.0, lam), hy.value, hy.variance, auto, ht_f,
                       rho, lam_h, spread, as_ht & ~sure)


def label_contexts(ctx, labels):
    """``(ctx_f, census, grades)``: the labelled sample's and the labels' census contexts, and
    the label grades per tdi (cached on ``ctx`` per labels, so that every measure of one
    evaluation shares them). The labelled sample has ``ctx``'s design, so it takes ``ctx``'s
    design facts rather than rebuilding them."""
    def build():
        collection, judgments = ctx.collection, ctx.judgments
        grades = label_grades(labels, judgments, collection.tdi_topic.astype(np.int64),
                              ctx.rel_level)
        labelled = labelled_sample(collection, judgments, grades)
        ctx_f = ctx.on(labelled)
        if labelled.max_grade == judgments.max_grade:  # same per-grade tables: same design
            ctx_f.replace_shared("ht_design", ht_design(ctx))
        census = ctx.on(labelled_census(collection, judgments, grades))
        return ctx_f, census, grades

    return ctx.shared_for("ppi_labels", labels, build)


def _steadier(var, lam, hy, ctx, *, per_segment: bool,
              reduction=None) -> tuple[np.ndarray, np.ndarray]:
    """PPI's variance per segment on ht's anticipated scale (module docstring, "Variance"):
    ht's anticipated variance where PPI is ht (lambda 0); elsewhere ht's anticipated variance
    times PPI's variance reduction: per segment (``per_segment``: AP's ratio form, whose
    variance has ht(AP)'s structure segment by segment), A_y v_ppi / v_y where PPI's variance
    v_ppi is at most ht's sample variance v_y (beyond rounding), A_y + (v_ppi - v_y) where it is
    above (the labels add variance there; the ratio, over a v_y near 0, is unbounded), and
    where both are 0 (the sample shows no spread on the segment, the model may) A_y times the
    run's ratio sum v_ppi / sum v_y over its segments with lambda > 0 and v_y > 0 (1 where there
    are none): labels equal to the truth keep their variance of 0, labels that move nothing
    keep ht's; otherwise the run's ratio of sums R = sum var_ppi / sum v_ht,sample over its
    segments with lambda > 0 and a positive sample variance (1 where none has a sample variance
    but PPI has one, 0 where PPI's variance is 0: exact), which the difference form replaces by
    its ``reduction`` per run, anticipated by the relevance model (``ppi/anticipated.py``),
    where that is defined (some segment of the run in the difference form) and R exceeds
    :data:`EXACT` (below it PPI's own variance is rounding: true labels keep their variance of
    0), capped at 1. PPI's own variance where ht has no anticipated variance. Also per
    run: whether the model's reduction is 1 (it anticipates no gain: the run keeps ht)."""
    no_gain = np.zeros(ctx.n_runs, dtype=bool)
    if not hy.anticipated:
        return var, no_gain
    shape = (ctx.n_runs, ctx.n_topics)
    sample = hy.sample_variance
    run_ratio, seen = _run_ratio(var, lam, sample, ctx)
    if per_segment:
        ratio = np.where(sample > 0, safe_divide(var, sample),
                         np.repeat(np.where(seen, run_ratio, 1.0), ctx.n_topics))
        above = var > sample * (1.0 + EXACT) + ROUNDING_VARIANCE
        scaled = np.where(above, hy.variance + (var - sample), hy.variance * ratio)
        return np.where(lam == 0, hy.variance, scaled), no_gain
    own = np.where(lam != 0, var, 0.0).reshape(shape).sum(axis=1)
    ratio = np.where(seen, run_ratio, np.where(own > 0, 1.0, 0.0))
    if reduction is not None:  # the model's, but exact where the sample's is (rounding aside)
        modelled = (ratio > EXACT) & np.isfinite(reduction)
        no_gain = modelled & (reduction >= 1.0)
        ratio = np.where(modelled, np.minimum(reduction, 1.0), ratio)
    return (np.where(lam == 0, hy.variance, hy.variance * np.repeat(ratio, ctx.n_topics)),
            no_gain)


def _run_ratio(var, lam, sample, ctx) -> tuple[np.ndarray, np.ndarray]:
    """Per run: R = sum var / sum ``sample`` (ht's sample variance) over its segments with
    lambda != 0 and a positive sample variance, and whether it has any such segment (R = 0
    where it has none)."""
    shape = (ctx.n_runs, ctx.n_topics)
    kept = ((lam != 0) & (sample > 0)).reshape(shape)
    base = np.where(kept, sample.reshape(shape), 0.0).sum(axis=1)
    return safe_divide(np.where(kept, var.reshape(shape), 0.0).sum(axis=1), base), base > 0


def _wider(var, ht_var, ctx) -> np.ndarray:
    """Per segment: whether its run's variance of the mean exceeds ht's (beyond rounding)."""
    by_run = var.reshape(ctx.n_runs, ctx.n_topics).sum(axis=1)
    limit = ht_var.reshape(ctx.n_runs, ctx.n_topics).sum(axis=1) * (1.0 + 1e-9) + 1e-20
    return np.repeat(by_run > limit, ctx.n_topics)
