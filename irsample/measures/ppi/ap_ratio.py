"""ppi(AP): ht(AP) on the human judgments corrected stratum by stratum by the same estimator on
the automatic labels (``ppi/estimate.py`` for the setting and the other measures).

Estimator. Write ht_y = ht(AP) on the human judgments of the sample S (``ht/estimator.py``),
ht_f = the *same* estimator on the same sample with each judged grade replaced by its label, and
AP(f) the labels' value on the whole pool F (known without sampling error). With strata
h = 1..H of the design (per topic: the cells of ``ht_design``), let E_k be ht(AP) on the labels
with strata 1..k sampled and strata k+1..H judged completely by their labels (pi = 1,
``label_judgments.labelled_sample(census=...)``): E_0 = AP(f), E_H = ht_f. Stratum h's step

    D_h = E_{h-1} - E_h

is what sampling stratum h instead of knowing it adds to the labels' error, and
sum_h D_h = AP(f) - ht_f. Then (stratified PPI, Fisch et al. 2024, on PPI's correction of
Angelopoulos, Bates, Fannjiang, Jordan & Zrnic, Science 2023)

    ppi(AP) = ht_y + sum_h lambda_h D_h,    lambda_h in [0, 1].

With one lambda for every stratum the sum telescopes to ht_y + lambda (AP(f) - ht_f).

Why D_h estimates 0: for AP = Num / R with Num = sum_{j<=k} y_j y_k / k (ranks of the run, j = k
the single term), ht's numerator is the pairwise HT sum
sum_{k in S} y_k/(k pi_k) + sum_{j<k in S} y_j y_k / (k pi_jk). In E_h the pairs with a document
of a stratum > h take pi = 1 for it (pi_jk = pi_j when k is certain). Given the sample of strata
< h, E_{h-1} and E_h differ only in how stratum h enters: E_{h-1} takes its documents with
weight 1, E_h with 1/pi (singles and pairs with other strata) or 1/pi_jk (pairs inside h), and
E[1{k in S_h}/pi_k] = E[1{j,k in S_h}/pi_jk] = 1: the numerator's step has mean 0 exactly for
any fixed lambda_h; R's likewise; the ratio (and ht's bias correction and sparse-topic rules,
applied identically to every E_h) leaves the bias b(ht_y) - sum_h lambda_h b_h, b_h the labels'
ratio bias of the step. In terms of the human values, stratum by stratum the correction
replaces the pair terms y_j y_k / pi_jk by the residual of *products*

    (y_j y_k - lambda f_j f_k) / pi_jk   (plus lambda f_j f_k on the census side),

unbiased for Num(y) since E[1{j,k in S}/pi_jk] = 1. The product of residuals
(y_j - lambda f_j)(y_k - lambda f_k) would estimate sum y_j y_k - lambda(y_j f_k + f_j y_k) +
lambda^2 f_j f_k, not Num(y) - lambda Num(f): its cross terms are not a correction of Num(f).
(A pair of documents from strata h < h' enters E_{h-1}, ..., E_H with weight 1, 1/pi_k, then
1/pi_j pi_k: its lambda is lambda_h on the first step and lambda_h' on the second.)

Exact cases. Labels equal to the human grades: ht_f = ht_y bit for bit, every lambda_h = 1
(below) and ppi(AP) = AP(f) = AP(y) with variance 0. Labels constant over a topic's pool: lambda_h
= 0 there and ppi(AP) = ht(AP), value and variance, bit for bit.

Variance. ht_y's error is e_y, D_h's is -e_h with e_h the part of ht_f's error stratum h's
sample adds (first order: the strata are sampled independently, the steps uncorrelated):

    var(ppi) = V_y - 2 sum_h lambda_h C_h + sum_h lambda_h^2 V_f,h,

V_y = ht(AP)'s variance of ht_y (jackknife, ``ht/jackknife.py``), V_f its variance of ht_f,
split over the strata V_f,h = V_f s_f,h and V_y,h = V_y s_y,h by the shares s of the strata,
and C_h = rho_h sqrt(V_y,h V_f,h) with rho_h the two estimates' correlation in stratum h; the
shares and correlations are those of the variance ht(AP)'s interval takes:

- where it is the sample's jackknife (the planner's designs, which have no anticipated
  variance for the ratios: ``ht/anticipated.py``), the two estimates' jackknife over the same
  deletions (``jackknife_cross_moments``: each sampled document deleted from both at once; a
  document relevant on one side only is a non-relevant deletion on the other);
- where it is the anticipated variance (stratified simple random samples, ``_steadier`` in
  ``ppi/estimate.py`` then takes ppi's variance reduction to that scale), the linearised
  influences' (per sampled document z_d = (x_d - theta~ r_d) / Y of each estimate,
  ``ppi/influence.py``, and ht_design's cell formula, cell by cell).

Where a segment has no variance in a stratum on either side (a topic ht imputes, or no sampled
document there moves an estimate) it takes the run's pooled shares and correlation. No sample
of unlabelled documents enters (AP(f) is a census of F), so PPI++'s factor (1 + n/N) on V_f
does not apply.

Degrees of freedom. Where the moments are the jackknife's, var(ppi) on a topic ht identifies
is the jackknife variance of s theta_y - lambda s_f theta_f over the same deletions (s^2, s_f^2
the imputation's scaling of each side's variance), itself estimated from few deletions; its
variance is estimated as ht(AP)'s is (``ht/jackknife.py``, "Degrees of freedom") with the
combination's squared deviations (``jackknife.CombinedSpread``), and the run mean's interval
takes the t on Satterthwaite's nu, as ht(AP)'s does (``Evaluation.summary_df``). Topics ht
imputes count as known; a run that keeps ht keeps ht's. Measured: REPRODUCTION.md, "The
jackknife's degrees of freedom for run means".

Why two sources (measured: REPRODUCTION.md, "ppi(AP)'s variance: the jackknife's
correlation"). The first-order influences see how the labels and the grades move the two
ratios' linear parts; they miss that both ratios jump together when a sampled relevant
document is deleted, which is where the jackknife's variance comes from when a topic's sample
holds few relevant documents. On the planner's designs the linearised rho was too high
(TREC-8 planned 10%, kappa 0.7 labels, 100 draws: covariance estimated / observed 1.34, the
jackknife's 1.16) and ppi's variance too small: per run, mean estimated se over the spread of
the estimates (``benchmarks/ppi_variance_anatomy.py``, seed 2525), TREC-COVID planned 5% 0.943
-> 1.023 (ht 1.022), coverage 0.901 -> 0.927; TREC-8 planned 10% 0.876 -> 0.932, coverage
0.895 -> 0.919 (ht 1.001 and 0.932). On TREC-COVID's 2strata 10% samples, whose variance is
the anticipated one, the jackknife's correlation narrowed the intervals below their error (se
over spread 0.955, coverage 0.931) where the linearised one holds (0.990, 0.939; ht 1.020 and
0.945; both with the cross-fitted weight below).

Power tuning (PPI++, Angelopoulos, Duchi & Zrnic 2023). lambda minimises the estimated variance
of the mean over the run's topics:

- ``tuning="run"`` (default): one weight per run for every stratum,
  lambda = sum_h sum_t C_h,t / sum_h sum_t V_f,h,t (the telescoped form, no intermediate E_h);
- ``"stratum"``: one weight per run and stratum, lambda_h = sum_t C_h,t / sum_t V_f,h,t
  (stratified PPI);
- ``"topic"``: one per (run, topic); ``"global"``: one over every run and topic; or a fixed
  number for every stratum.

Cross-fitted: the sums over topics leave out the topic the weight is for (each topic's weight
is fitted on the run's other topics, or every run's other topics for ``"global"``; Zrnic &
Candes's cross-prediction applied to the weight). A weight fitted to a topic's own moments
selects the value at which that topic's noisy variance estimate is low, so the interval
understates the variance at the weight chosen; fitted on the other topics it is independent
of the topic's own moments (the topics' samples are independent), and the topic's estimated
variance at it is what it is at any fixed weight. ``"topic"`` cannot be cross-fitted.

Clipped to [0, 1], 0 on topics whose labels are constant; where a sum of V_f is 0 (no sampled
document moves ht_f) the weight falls back to the next wider sum (topic, run, everything) and to
1 where even that is 0. A stratum whose cells cannot be judged completely (an unsampled pooled
document outside the collection: no label, no grade; ``label_judgments.census_possible``) has no
computable step, and ``"stratum"`` then falls back to ``"run"``. A run whose estimated variance
would exceed ht's keeps ht (``estimate._wider``, applied by the caller).

Why one weight per run is the default (2strata design, 10% human judgments, seed 2024, the
draws of ``irsample simulate model-assisted``; ratios are ppi's over ht's): per stratum the
linearised model puts lambda near 0.95 in the top stratum (pi about 0.33) and 0.4-0.5 below (pi
about 0.07), and the *estimated* half-width ratio drops, but the *observed* spread of the
estimates over the draws grows and the variance is understated:

| collection, labels, draws | estimated ratio: run / stratum | observed sd ratio: run / stratum |
|---|---|---|
| Vaswani, kappa 0.5, 40 | 0.809 / 0.775 | 0.808 / 0.830 |
| Vaswani, kappa 0.7, 40 | 0.684 / 0.651 | 0.756 / 0.800 |
| TREC-8, kappa 0.5, 20 | 0.813 / 0.808 | 0.813 / 0.830 |
| TREC-8, kappa 0.7, 20 | 0.687 / 0.680 | 0.673 / 0.700 |

(TREC-8's per-run column was measured with one correlation over the whole sample, before the
strata's shares; on Vaswani that change moved the estimated ratio by at most 0.003.) Coverage
fell with it (Vaswani kappa 0.7: 0.78 per run, 0.46 per stratum, ht 0.67; TREC-8:
0.92 / 0.91, ht 0.94). The low weight of the sparse stratum is the linearisation's; the labels'
ratio error there tracks the humans' (at fixed weights on Vaswani, kappa 0.7, the observed
ratio is 0.752 at (0.9, 0.9), 0.761 at (0.95, 0.4), 0.742 at (0.95, 0.7)), and with ht's ratio
bias (+0.055 there) a high weight in that stratum also removes more of it. The per-stratum
weight therefore narrows the stated interval without narrowing the estimate's error: it is
offered, not the default.
"""

from __future__ import annotations

import numpy as np

from ...errors import MeasureError
from ..context import safe_divide
from ..ht.estimator import estimate as ht_estimate
from ..ht.estimator import tdi_relevant
from ..ht.inclusion import ht_design
from ..ht.jackknife import jackknife_cross_moments
from .difference import cell_moments, influence_cells
from .label_judgments import census_possible, labelled_sample

TUNINGS = ("run", "stratum", "topic", "global")


def ratio_form(ctx, ctx_f, m, hy, auto, useful, tuning, grades, centre=None, label_bias=None):
    """(value, variance, lambda per segment, ht_f, rho, lambda per segment and stratum, the
    variance's estimated variance or None) of the module docstring. ``useful`` per segment:
    whether its topic's labels vary; ``grades`` the label grades per tdi. The rule that keeps
    ht for a run whose variance would exceed ht's is the caller's (``ppi/estimate.py``, shared
    with the difference form). ``centre``: ``(c, mc)`` per segment, the labels' centre under the
    design and its Monte Carlo variance (``ppi/redraw.py``), which a segment with one weight
    for every stratum takes in place of AP(f): lambda (c - ht_f). ``label_bias``: per segment
    the labels' side's bias under the design, c - AP(f), which one weight per run then counts
    (:func:`choose`; ``tuning="mse"``, ``ppi/estimate.py``)."""
    hf = ht_estimate(ctx_f, m)
    v_y, v_f = hy.variance_from_sample, np.where(useful, hf.variance_from_sample, 0.0)
    # where ht's interval is its sample's jackknife (no anticipated variance: the planner's
    # designs), the two estimates' jackknife over the same deletions (module docstring)
    moments = spread = None
    if not hy.anticipated and hy.replicates is not None and hf.replicates is not None:
        *moments, spread = jackknife_cross_moments(ctx, ht_design(ctx), hy.replicates,
                                                   hf.replicates)
    cov, vf_h = strata_moments(ctx, ctx_f, hy, hf, v_y, v_f, moments=moments)
    cov = np.where(useful[:, None], cov, 0.0)
    n_cells = cov.shape[1]
    if tuning == "stratum" and not census_possible(ctx.collection, ctx.judgments).all():
        tuning = "run"  # some stratum's step cannot be computed: the telescoped form
    if tuning == "stratum":
        lam_h = choose(cov, vf_h, "run", ctx.n_runs, ctx.n_topics)
    else:  # one weight for every stratum of a segment
        bias = None if label_bias is None else np.where(useful, label_bias, 0.0)[:, None]
        lam = choose(cov.sum(axis=1, keepdims=True), vf_h.sum(axis=1, keepdims=True), tuning,
                     ctx.n_runs, ctx.n_topics, bias=bias)
        lam_h = np.repeat(lam, n_cells, axis=1)
    lam_h = np.where(useful[:, None], lam_h, 0.0)
    var = np.maximum(v_y - (2.0 * lam_h * cov - lam_h * lam_h * vf_h).sum(axis=1), 0.0)
    shift = _shift(ctx, m, hf, auto, lam_h, grades, centre=None if centre is None else centre[0])
    if centre is not None:
        var = var + np.where(_one_weight(lam_h), lam_h[:, 0] ** 2 * centre[1], 0.0)
    used = lam_h.max(axis=1) > 0
    total_f = vf_h.sum(axis=1)
    lam = np.where(total_f > 0, safe_divide((lam_h * vf_h).sum(axis=1), total_f),
                   lam_h.mean(axis=1))
    rho = safe_divide(cov.sum(axis=1), np.sqrt(np.maximum(v_y * v_f, 0.0)))
    if spread is not None:
        spread = np.where(used, _combined_spread(moments, spread, v_y, v_f, lam_h, hy.known),
                          hy.variance_spread)
    return (np.where(used, hy.value + shift, hy.value), np.where(used, var, v_y), lam, hf.value,
            np.clip(rho, -1.0, 1.0), lam_h, spread)


def _combined_spread(moments, spread, v_y, v_f, lam_h, known):
    """Per segment: the estimated variance of ppi(AP)'s jackknife variance (module docstring,
    "Degrees of freedom"). On a topic ht identifies, v_y and v_f are the two jackknifes a and
    b scaled by the imputation (s^2 a, s_f^2 b) and the shares and correlations are the
    jackknife's, so var = s^2 a - 2 lambda s s_f c + lambda^2 s_f^2 b: the jackknife of
    s theta_y - lambda s_f theta_f, whose variance is ``ht/jackknife.CombinedSpread`` at
    u = s, w = lambda s_f. A topic ht imputes counts as known (0), as in ht(AP)."""
    _, var_b, var_a = moments
    s = np.sqrt(safe_divide(v_y, var_a.sum(axis=1)))[:, None]
    s_f = np.sqrt(safe_divide(v_f, var_b.sum(axis=1)))[:, None]
    return np.where(known, spread(s, lam_h * s_f), 0.0)


def _one_weight(lam_h):
    """Per segment: whether one weight serves every stratum."""
    return np.all(lam_h == lam_h[:, :1], axis=1)


def _shift(ctx, m, hf, auto, lam_h, grades, centre=None):
    """sum_h lambda_h D_h per segment (module docstring); one weight per segment telescopes to
    lambda (AP(f) - ht_f) and needs no intermediate estimate, and with the labels' ``centre``
    under the design (``ppi/redraw.py``) it is lambda (centre - ht_f)."""
    n_cells = lam_h.shape[1]
    ht_f = np.nan_to_num(hf.value)
    same = _one_weight(lam_h)
    aim = auto if centre is None else centre
    telescoped = np.where(lam_h[:, 0] > 0, lam_h[:, 0] * (aim - ht_f), 0.0)
    if same.all():
        return telescoped
    # E_k: strata 0..k-1 sampled, k.. judged completely by their labels; E_0 = AP(f), E_H = ht_f
    levels = [auto]
    n_topics = ctx.n_topics
    for k in range(1, n_cells):
        mask = np.zeros((n_topics, n_cells), bool)
        mask[:, k:] = True
        judgments = labelled_sample(ctx.collection, ctx.judgments, grades, census=mask)
        levels.append(np.nan_to_num(ht_estimate(ctx.on(judgments), m).value))
    levels.append(ht_f)
    steps = np.stack([levels[k] - levels[k + 1] for k in range(n_cells)], axis=1)
    shift = (np.where(lam_h > 0, lam_h * steps, 0.0)).sum(axis=1)
    return np.where(same, telescoped, shift)


def strata_moments(ctx, ctx_f, hy, hf, v_y, v_f, den_values=None, out=None, moments=None):
    """Per segment and stratum: C_h = rho_h sqrt(V_y,h V_f,h) and V_f,h (module docstring).
    ``moments``: (covariance, V(ht_f), V(ht_y)) per segment and cell that give the shares and
    correlations (AP: the jackknife's); default the linearised influences', with
    ``den_values``: each side's r_d per tdi (default AP's, the document's value in R) and
    ``out``: each side's r of a sampled document no run retrieved, per topic and grade
    (default: its relevance; it keeps its human grade on both sides)."""
    if moments is not None:
        return _combined(ctx, v_y, v_f, *moments)
    n_seg = ctx.n_seg
    if den_values is None:
        den_values = (tdi_relevant(ctx), tdi_relevant(ctx_f))
    if out is None:
        n_grades = ctx.judgments.stratum_grades.shape[2]
        rel = (np.arange(n_grades) >= ctx.rel_level).astype(np.float64)
        out = (np.tile(rel, (ctx.n_topics, 1)),) * 2

    def parts(est, c, r):
        x = np.zeros(len(c.pos_tdi)) if est.x is None else np.asarray(est.x, dtype=np.float64)
        centre = np.zeros(n_seg) if est.centre is None else est.centre
        den = np.broadcast_to(np.asarray(est.den, dtype=np.float64), (n_seg,))
        return x, r, centre, den

    sums = influence_cells(ctx, parts(hy, ctx, den_values[0]), parts(hf, ctx_f, den_values[1]),
                           out_a=out[0], out_b=out[1])
    return _combined(ctx, v_y, v_f, *cell_moments(ctx, sums))


def _combined(ctx, v_y, v_f, c, b, a):
    """C_h and V_f,h from the moments per segment and cell (covariance ``c``, V(ht_f) ``b``,
    V(ht_y) ``a``): the strata's shares and correlations, the segment's own where both sides
    vary in the stratum, else the run's pooled over its topics."""
    n_runs, n_topics = ctx.n_runs, ctx.n_topics

    def by_run(v):  # (n_seg, S): the run's sums over its topics, per stratum
        return np.repeat(v.reshape(n_runs, n_topics, -1).sum(axis=1), n_topics, axis=0)

    def shares(v):
        own = safe_divide(v, v.sum(axis=1, keepdims=True))
        pooled = by_run(v)
        pooled = safe_divide(pooled, pooled.sum(axis=1, keepdims=True))
        return np.where(v.sum(axis=1, keepdims=True) > 0, own, pooled)

    own_rho = safe_divide(c, np.sqrt(np.maximum(a * b, 0.0)))
    pooled_rho = safe_divide(by_run(c), np.sqrt(np.maximum(by_run(a) * by_run(b), 0.0)))
    rho = np.clip(np.where((a > 0) & (b > 0), own_rho, pooled_rho), -1.0, 1.0)
    vy_h = v_y[:, None] * shares(a)
    vf_h = v_f[:, None] * shares(b)
    return rho * np.sqrt(np.maximum(vy_h * vf_h, 0.0)), vf_h


def fixed_tuning(tuning) -> bool:
    """Whether ``tuning`` is a fixed weight (a number) rather than a tuning level."""
    return isinstance(tuning, (int, float)) and not isinstance(tuning, bool)


def choose(cov, v_f, tuning, n_runs, n_topics, bias=None) -> np.ndarray:
    """lambda per segment and stratum: C_h / V_f,h summed per segment (``"topic"``), over the
    run's other topics (``"run"``) or over every run's other topics (``"global"``), stratum by
    stratum, clipped to [0, 1]; or the fixed ``tuning``. The segment's own topic is left out of
    the run's and the global sums (cross-fitting, module docstring "Power tuning"): a weight
    fitted to the topic's own moments makes its estimated variance the minimum of noisy
    estimates, smaller on average than the variance at that weight. Where a sum of V_f,h is 0
    lambda_h changes no estimated variance; it falls back to the next wider sum (topic, run,
    everything) and to 1 where even that is 0. With ``bias`` (per segment and stratum, the
    labels' side's bias b_f of ht_f, known: ``ppi/redraw.py``) the weight minimises the
    variance plus the squared bias lambda^2 (sum b_f)^2 over the same sums: sum C / (sum V_f +
    (sum b_f)^2) (``ppi/estimate.py``, "The labels' bias in the weight")."""
    if fixed_tuning(tuning):
        if not 0.0 <= tuning <= 1.0:
            raise MeasureError(f"lambda must be in [0, 1], not {tuning}")
        return np.full(cov.shape, float(tuning))
    levels = ("topic", "run", "global")
    if tuning not in levels:
        raise MeasureError(f"tuning must be one of {TUNINGS} or a number in [0, 1], not {tuning!r}")
    n_seg, n_cells = cov.shape

    def others_of_run(v):  # the run's sum over its topics but the segment's own, and all
        whole = np.repeat(v.reshape(n_runs, n_topics, n_cells).sum(axis=1), n_topics, axis=0)
        return whole - v, whole

    def others_of_all(v):  # every segment's sum but those of the segment's topic, and all
        by_topic = v.reshape(n_runs, n_topics, n_cells).sum(axis=0)
        whole = np.broadcast_to(v.sum(axis=0), v.shape)
        return whole - np.tile(by_topic, (n_runs, 1)), whole

    sums = {"topic": (cov, v_f, v_f), "run": (others_of_run(cov)[0], *others_of_run(v_f)),
            "global": (others_of_all(cov)[0], *others_of_all(v_f))}
    if bias is not None:  # the squared bias of the same sums joins the labels' variance
        parts = {"topic": (bias, bias), "run": others_of_run(bias), "global": others_of_all(bias)}
        sums = {level: (num, den + parts[level][0] ** 2, whole + parts[level][1] ** 2)
                for level, (num, den, whole) in sums.items()}
    lam = np.ones((n_seg, n_cells))
    for level in reversed(levels[levels.index(tuning):]):  # widest first, narrower override
        num, den, whole = sums[level]
        # den > 0, and not the rounding left by taking the own topic away (whole >= 0)
        lam = np.where(den > 1e-9 * whole, np.clip(safe_divide(num, den), 0.0, 1.0), lam)
    return lam
