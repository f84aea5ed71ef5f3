"""Design-based estimators ``ht(M)``: Horvitz-Thompson estimates of M on the sampling frame.

Reference-semantics §3.6. The truth is M on the complete judgments restricted to the frame (the
pool); documents outside the frame are non-relevant. From the judged sample S and the inclusion
probabilities of ``ht/inclusion.py`` (pi_d; pi_de = pi_d pi_e g_d g_e within a cell):

- linear totals T = sum_F y_d are estimated by sum_S y_d / pi_d (unbiased): R (``num_rel``),
  P@k = (1/k) sum_{r<=k} rel_r, RBP(p) = (1-p) sum_r p^(r-1) gain_r (trec_eval's gain scaling),
  DCG@k = sum_{r<=k} gain_r / log2(r+1), the relevant retrieved in the top k;
- AP's numerator N = sum_k rel_k/k + sum_{j<k} rel_j rel_k/k (ranks j < k of the run, at most
  ``k`` for AP@k) by sum_S rel_k/(k pi_k) + sum_{j<k in S} rel_j rel_k/(k pi_jk) (unbiased), in
  one pass per ranking (``walks.ap_walk``);
- ratios theta = X / Y (AP = N/R, recall@k = RelRet@k / R, nDCG = DCG / IDCG, Rprec) by
  theta^ = X^/Y^ with the second-order (Taylor) correction of its bias,
  theta^_bc = theta^ - (theta^ v(Y^) - c(X^, Y^)) / Y^^2 (Cochran, *Sampling Techniques* §6.8;
  Särndal, Swensson & Wretman §5.6), with v and c from the design (below). IDCG is the ideal DCG
  of the estimated counts per grade, extended to real counts by linear interpolation of the
  cumulative discount D, minus its second-order (concavity) bias: with the grades in decreasing
  gain g_(1) > g_(2) > ... and S_k the count of the k highest grades,
  IDCG = sum_k (g_(k) - g_(k+1)) D(S_k), and the bias is (1/2) sum_k (g_(k) - g_(k+1))
  D''(S^_k) v(S^_k), the covariances of the grade counts inside v(S^_k)
  (``ideal_dcg.concavity_bias``); nDCG takes the Taylor ratio correction on every design, on
  the topics whose sample holds more than ``reliability.FEW`` documents of positive grade
  (below), AP and recall on every identified topic; R-prec cuts at round(R^).

nDCG's ratio bias. With binary grades IDCG^'s linearised variable is y_d = D'(R) ~ 1/log2(R+1) per
relevant document while IDCG = D(R) is larger than R D'(R) (the discount falls), so (theta v(Y^) -
c(X^, Y^)) / Y^2 = ((1 - pi)/pi) D'(R) (DCG/IDCG^2) (R D'(R)/IDCG - 1) under Bernoulli sampling at
rate pi: negative, about -0.036 theta for R = 15 at pi = 0.3, and summed over a run's topics of the
order of its standard error (``benchmarks/ht_bias_sources.py --measure nDCG``, 60 draws, seed 3:
TREC-8 uniform 30% -0.0094, 20% -0.0152; Vaswani and CACM uniform 30% -0.018 and -0.020). The
plug-in correction removes it where the topic's sample is informative and overshoots where it holds
one or two relevant documents (fitted to them, the correction is of the order of the estimate: on
every identified topic it turned Vaswani's uniform 10% bias from +0.018 into +0.108, CACM's from
+0.033 into +0.150). Those are rule 2's weak topics, which the reliability rule counts, so they
keep the plain ratio; corrected from the third document on: TREC-8 uniform 30% -0.0094 -> -0.0035,
20% -0.0152 -> -0.0072, 2strata 10% -0.0064 -> -0.0009; TREC-COVID uniform 10% -0.0081 -> -0.0032;
Vaswani uniform 30% -0.0176 -> -0.0059, CACM -0.0197 -> -0.0083; on the sparse collections at 10%,
whose means rule 2 flags, +0.018 -> +0.027 (Vaswani uniform) and +0.019 -> +0.028 (CACM 2strata).
Every design takes it. Where the anticipated variance does not apply (importance samples, with
unequal probabilities within a cell; the planner's designs, a pilot then top-ups; designs that judge
a stratum whole beside sampled ones) the identified topics' variance is the jackknife of the
corrected ratio (``ht/ndcg_replicates.py``), as AP's is there (on the planner's top-ups a blind
topic's, nothing relevant drawn and so a jackknife of 0, is the relevance model's variance scaled
to the sample's level: ``ht/blind_topics.py``): deep documents drawn thinly beside
certain or heavily sampled top ranks make IDCG^ vary more than DCG^, so the plain ratio's bias is
upward, and the correction's own noise needs a variance that carries it. With the plain ratio and
its variance linearised at the run's mean, the planner's designs' run means (``simulate
ci-coverage``, 100 trials, seed 2525, synthetic runs) covered 0.907-0.923 on Robust 2005 and
0.857-0.921 on Core 2018 unflagged; with the correction and the jackknife 0.946-0.955 and
0.9297-0.962 at 10-30% (Robust 0.918 at 5%, 62% flagged), TREC-8 0.937-0.955 (0.950-0.976 before),
fewer flagged everywhere; the correction with the linearised variance instead let rule 3 pass means
that missed (TREC-8 planned 5%, seed 3: 39% -> 26% flagged, the unflagged covering 0.954 -> 0.907).
REPRODUCTION.md, "ht(nDCG)'s ratio correction", "ht(nDCG) on importance samples: the jackknife of
the corrected ratio" and "ht(nDCG) on the planner's designs: the jackknife of the corrected ratio".

Variances: X^ linearised by its first-order influence (for AP, u_d = prec(d) + sum of
rel_e/rank_e over relevant e ranked below d, the Hoeffding projection of the quadratic form),
then the cell formula of ``ht/inclusion.py``; a ratio's variance is that of
z_d = (u_d - theta y_d)/Y over the sample, divided by Y^^2. With every frame document judged
(pi = 1) every estimate equals M and every variance is 0. P@k adds, on a topic whose estimated
variance is 0 while positions of the run's top k are unjudged, the variance of those positions
(``imputation.unseen_variance``).

Anticipated variance (``ht/anticipated.py``). On a stratified SRS the variances above are
replaced by their expectation under a relevance model of the documents not judged (judged ones
enter as they are): the design variance of the same linearised variables, which does not rise
and fall with the estimate as the sample's does. AP, nDCG and P@k use it (R-prec, recall, RBP
and num_rel keep the sample's); ``Estimate.sample_variance`` keeps the sample's own. The model
knows no run's success on a topic beyond the documents' consensus (relevant documents cluster in
the rankings of the runs that do well on a topic), so for the ratios (AP, nDCG) it can fall
short where the design leaves the runs' top ranks mostly unjudged: on TREC-8 uniform 30% it gave
0.64 of the design variance the truth gives (8 draws, both at the topic's true AP and R). So
their anticipated variances are floored (:func:`floor_factor`): scaled by rho = sum of the
sample's variances / sum of the anticipated ones over every identified (run, topic) cell of
the evaluation when rho > 1, both linearised at the model's centre (``ht/anticipated.py``,
"Centre"; the sample's variance at that centre rather than at the run's mean, below, which
inflates it). The sample's variance is right on average over cells but rises and falls per run
with the estimate; summed over all runs and topics the floor is one number per evaluation
(TREC-8, 100 trials: ht(AP) and ht(nDCG) cover 0.93-0.97 on uniform 30% and on 2strata samples
from 10%; REPRODUCTION.md, "The model's centre"). The ratios are floored at their stratified
jackknife too (rho the larger of the two factors): AP's of the plain ratio
(``Estimate.sample_variance``), nDCG's of the corrected ratio (``ht/ndcg_replicates.py``) less
its second-order excess (``ndcg_replicates.ndcg_second_order``: the delete-one jackknife counts
the ideal DCG's curvature about twice, and with it the floor made ht(nDCG)'s variance 1.24 of
the spread over draws on TREC-COVID round 5's uniform 5%, where A alone was right; REPRODUCTION.md,
"nDCG's jackknife less its second-order terms"). The
first-order formula leaves out AP's pair terms (a precision is a sum over the documents
above), which weigh where relevant documents sit deep among sampled ones: there AP's
anticipated variance was 0.61-0.84 of the spread, with the truth as the model 0.69 (TREC-7 and
TREC-10 web synthetic runs, 2strata 30%), and nDCG's 0.85 (DL 2020 2strata 30%, DL 2023
uniform 20%; REPRODUCTION.md, "The floor at the jackknife"). The model's anticipated bias of
the ratio (``Estimate.model_bias``) is not floored: rho makes up the numerator's variance the model
misses by run, and scaling the bias by it flagged half of TREC-8's 2strata 10% ht(AP) means,
whose intervals covered 0.96 (30 trials).

Sparse topics (ratios only). A sample that holds one or two relevant documents of a topic
fits theta^ to them: the plug-in linearised variance at theta^ is then near 0 (with one
relevant document z_d = u_d - theta^ = 0 exactly) although the estimate is far from certain.
Measured
on Vaswani (benchmarks/ht_coverage.py), the linearised variance evaluated at the true theta is
unbiased, at theta^ it is a third of the observed. So the variance is evaluated at the run's mean
over its identified topics (theta~, not fitted to the topic's own sample):
v = (v(X^) - 2 theta~ c(X^, Y^) + theta~^2 v(Y^)) / Y^^2. A topic whose sample holds no relevant
document (Y^ = 0) is unidentified: its value is the mean of the run's identified topics
(missing at random over topics); the variances make the mean over topics honest (``impute``):
each identified topic also stands for m/k unidentified ones, and each unidentified one adds
the topic-to-topic variance of the truths. A topic judged completely (no sampling) keeps 0.
Those variances are each topic's part of the mean's; a topic's own interval (``eval -q``)
takes ``Estimate.topic_variance``: an identified topic's variance before the growth, and none
(NaN) for an unidentified one, whose value is the run's mean, not an estimate of the topic.

nDCG imputes from the topics whose sample holds exactly one relevant document (donors), not
from every identified topic: unidentified topics are those with few relevant documents, not a
random subset. Under Poisson sampling of a topic's relevant documents, P(k = 0) = prod(1 - pi)
and P(k = 1, hit d) = pi_d / (1 - pi_d) P(k = 0), so sum over single-hit topics of
theta_q (1 - pi_d) / (pi_d R_q) has the expectation of the sum of theta_q over the unidentified
ones; with R_q by its one-hit HT estimate 1/pi_d, a single-hit topic weighs 1 - pi_d (a run with
fewer than two donors uses every identified topic). ``benchmarks/ht_bias_sources.py
--measure nDCG``: with the plain mean, the imputed topics made +0.044 of +0.054 (Vaswani 2strata
10%), +0.049 of +0.060 (uniform 10%), +0.038 of +0.070 (CACM uniform 10%). AP keeps the plain
mean (single-hit donors measured worse for AP: CACM uniform 10% bias -0.108)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from ...errors import MeasureError
from ...model import JUDGED
from ..base import Measure
from ..context import safe_divide
from ..incomplete.score_intervals import RBP, rbp_gain_table
from ..reliability import FEW
from ..trec_eval.average_precision import AP
from ..trec_eval.counts import NumRel
from ..trec_eval.gain import NDCG
from ..trec_eval.gain_tables import shared_gain_tables
from ..trec_eval.precision import P, Recall, Rprec
from .anticipated import (
    RatioMoments,
    grade_probabilities,
    ratio_moments,
    ratio_variance,
)
from .anticipated_terms import anticipated_terms
from .blind_topics import with_blind_topics
from .corrected_replicates import corrected_replicates
from .ideal_dcg import concavity_bias, hits_and_donors, ideal_linearisation
from .imputation import impute, linearised_variance, topic_states, unseen_variance
from .inclusion import (
    HTDesign,
    SampledPositions,
    TopicTotal,
    cell_variance,
    ht_design,
    topic_total,
    total_variance,
)
from .jackknife import ap_replicates, jackknife_variance, scaled_spread
from .ndcg_replicates import ndcg_replicates, ndcg_second_order
from .walks import NO_CUTOFF, ap_walk, cell_sums, weighted_prefix

SUPPORTED = (AP, NDCG, P, Recall, Rprec, RBP, NumRel)


@dataclass(frozen=True)
class ModelBias:
    """Per segment, anticipated by the relevance model at its centre theta_m (``ht/anticipated.py``)
    (not scaled by the floor: below): ``bias`` = (theta_m V(Y^) - C(X^, Y^)) / Y^2, the ratio's
    second-order bias, and ``rel_var_den`` = V(Y^) / Y^2, the denominator's squared
    coefficient of variation. Both come from the anticipated variance f(c) = (V(X) - 2 c C +
    c^2 V(Y)) / Y^2, quadratic in the centre c: ``moments`` (f is ``RatioMoments.variance``:
    sums kept per segment and cell, no reference to the context, which caches the estimate;
    the differences of runs read them too, ``pairs.py``), ``centre`` (theta_m) and
    ``at_centre`` (f(theta_m)); f at theta_m +- 1 is computed on first use (only the
    reliability rule reads them)."""

    moments: RatioMoments
    centre: np.ndarray
    at_centre: np.ndarray
    #: rho, the floor the variances were scaled by (:func:`floor_factor`); the differences of
    #: runs take it too (``pairs.py``)
    floor: float = 1.0

    @cached_property
    def _either_side(self) -> tuple[np.ndarray, np.ndarray]:
        f = self.moments.variance
        return f(self.centre + 1.0), f(self.centre - 1.0)

    @cached_property
    def bias(self) -> np.ndarray:
        high, low = self._either_side
        return (high - low) / 4.0

    @cached_property
    def rel_var_den(self) -> np.ndarray:
        high, low = self._either_side
        return np.maximum(high + low - 2.0 * self.at_centre, 0.0) / 2.0


@dataclass(frozen=True)
class Estimate:
    """Per segment: the bias-corrected estimate, its variance, the plain ratio X^/Y^, and the
    parts (X^, Y^ per segment, v(X^), c(X^, Y^), v(Y^)); Y^ = 1, c = v(Y^) = 0 for totals.
    ``x`` is the linearised numerator variable of every ranked position (0 where not sampled),
    spread on first use from ``x_sampled``, its values at the positions ``sampled`` (every
    position when ``sampled`` is None); ``centre`` the theta~ the variance is evaluated at,
    ``known`` whether Y^ > 0 (or a total), ``present`` whether the segment is evaluated (topic
    judged and answered)."""

    value: np.ndarray
    variance: np.ndarray
    plain: np.ndarray
    num: np.ndarray
    den: np.ndarray
    var_num: np.ndarray
    cov: np.ndarray
    var_den: np.ndarray
    x_sampled: np.ndarray | None = None
    centre: np.ndarray | None = None
    known: np.ndarray | None = None
    #: AP's jackknife replicates (``ht/jackknife.py``), of the corrected ratio where the
    #: interval takes the jackknife (``ht/corrected_replicates.py``); nDCG's on importance
    #: samples (``ht/ndcg_replicates.py``)
    replicates: tuple | None = None
    donors: np.ndarray | None = None  #: per segment, the weight of a topic in ``impute``
    sampled: SampledPositions | None = None  #: where ``x_sampled`` is given
    #: the variance from the sample alone (``ht/inclusion.py``) where ``variance`` is the
    #: anticipated one (``ht/anticipated.py``); None where they are the same
    sample_variance: np.ndarray | None = None
    #: the ratio's second-order bias and v(Y^)/Y^2 anticipated by the model, where the
    #: variance is the anticipated one (the reliability rule reads them)
    model_bias: ModelBias | None = None
    #: per segment, whether ``value`` removes the ratio's second-order bias (the reliability
    #: rule then bounds the correction's error); None for totals
    corrected: np.ndarray | None = None
    #: per segment, the estimated variance of ``variance`` where that is the sample's jackknife
    #: (AP on the planner's designs and importance samples, nDCG on importance samples;
    #: ``ht/jackknife.py``, "Degrees of
    #: freedom"), scaled as the imputation scales it and 0 on imputed topics; None where the
    #: variance is taken as known (a normal interval)
    variance_spread: np.ndarray | None = None
    #: per segment, the variance of the topic's own estimate (``Measure.topic_variance``):
    #: ``variance`` without the imputation's growth on identified topics, NaN on imputed ones
    #: (their value is the run's mean), 0 on topics judged whole; None where it is
    #: ``variance`` (totals)
    topic_variance: np.ndarray | None = None

    @property
    def anticipated(self) -> bool:
        """Whether ``variance`` is the design's anticipated variance (stratified simple random
        samples, ``ht/anticipated.py``) rather than the sample's own (the planner's designs,
        importance samples: for AP the sample's jackknife)."""
        return self.sample_variance is not None

    @property
    def variance_from_sample(self) -> np.ndarray:
        """The variance estimated from the sample alone (``variance`` where it is that)."""
        return self.sample_variance if self.anticipated else self.variance

    @cached_property
    def x(self) -> np.ndarray | None:
        if self.x_sampled is None or self.sampled is None:
            return self.x_sampled
        return self.sampled.scatter(self.x_sampled)


def estimate(ctx, inner: Measure) -> Estimate:
    """The design-based estimate of ``inner`` (one of :data:`SUPPORTED`), cached per context."""
    return ctx.shared(("ht", inner, ctx.rel_level), lambda: _estimate(ctx, inner))


def _estimate(ctx, m: Measure) -> Estimate:
    d = ht_design(ctx)
    if isinstance(m, NumRel):
        r = _relevant_total(ctx, d)
        vy = total_variance(d, r)
        z = np.zeros(ctx.n_topics)
        est = _total_estimate(r.value, vy)
        return Estimate(*(a[ctx.seg_topic] for a in (est.value, est.variance, est.plain, est.num,
                                                        est.den, est.var_num, z, z)))
    at = d.sampled  # the walks read the sampled positions alone (walks.py)
    if isinstance(m, P):
        weight = np.full(m.k, 1.0 / m.k)
        rel = at.rel(ctx).astype(np.float64)
        num, term = weighted_prefix(at.offsets, at.rank, rel, at.pi, weight, m.k)
        est = _linear(ctx, d, num, term)
        probs = grade_probabilities(ctx, d)
        if probs is not None:
            est = replace(est, sample_variance=est.variance,
                          variance=ratio_variance(ctx, d, *anticipated_terms(ctx, d, m, probs)))
        return replace(est, variance=est.variance + unseen_variance(
            ctx, est.value, est.variance, m.k))
    if isinstance(m, RBP):
        if m.point != "B":
            raise MeasureError("ht(RBP) estimates RBP itself (point=B)")
        table = _rbp_gains(ctx, m.gains)
        gain = at.by_grade(ctx, table)
        longest = int(ctx.seg_len.max(initial=0))
        weight = (1.0 - m.p) * m.p ** np.arange(longest, dtype=np.float64)
        num, term = weighted_prefix(at.offsets, at.rank, gain, at.pi, weight, NO_CUTOFF)
        return _linear(ctx, d, num, term)
    rel = at.rel(ctx).astype(np.float64)
    r = _relevant_total(ctx, d)
    tdi_rel = tdi_relevant(ctx)
    if isinstance(m, AP):
        cutoff = NO_CUTOFF if m.k is None else m.k
        num, _, influence = ap_walk(
            at.offsets, at.rank, ctx.seg_topic, at.rel(ctx), at.pi, at.cell, at.g, d.n_cells,
            cutoff)
        replicates = ap_replicates(ctx, d, cutoff)
        anticipated = _anticipated(ctx, d, m)
        if not anticipated:  # the interval takes the jackknife: of the estimate as corrected
            replicates = corrected_replicates(ctx, d, replicates, cutoff, tdi_rel)

        # the jackknife's own uncertainty only where the interval takes the jackknife
        own, own_spread = (jackknife_variance(ctx, d, replicates), None) if anticipated else (
            jackknife_variance(ctx, d, replicates, spread=True))
        est = _ratio(ctx, d, num, influence, r, tdi_rel, own=own, anticipated=anticipated,
                     jackknife=own if anticipated else None, blind=m)
        spread = None if own_spread is None else np.where(  # scaled as ``impute`` scales
            est.known, scaled_spread(est.variance, own, own_spread), 0.0)
        return replace(est, replicates=replicates, variance_spread=spread)
    if isinstance(m, Recall):
        weight = np.ones(m.k)
        num, term = weighted_prefix(at.offsets, at.rank, rel, at.pi, weight, m.k)
        return _ratio(ctx, d, num, term, r, tdi_rel)
    if isinstance(m, Rprec):
        k = np.floor(r.value + 0.5).astype(np.int64)[ctx.seg_topic]
        seg = np.repeat(np.arange(ctx.n_seg), np.diff(at.offsets))
        inside = at.rank <= k[seg]
        term = np.where(inside & (at.pi > 0), rel * safe_divide(1.0, k[seg]), 0.0)
        num = np.bincount(seg, weights=safe_divide(term, at.pi), minlength=ctx.n_seg)
        return _linear(ctx, d, num, term)
    if isinstance(m, NDCG):
        return _ndcg(ctx, d, m)
    raise MeasureError(f"ht() does not estimate {m.name} (supported: {supported_text()})")


def supported_text() -> str:
    return "AP, AP@k, nDCG, nDCG@k, P@k, Rprec, RBP(p), R@k, num_rel"


def _rbp_gains(ctx, gains: tuple) -> np.ndarray:
    """RBP's gain per topic and level. trec_eval rescales by the topic's highest judged level,
    which a sample may miss: without a ``gains`` map, levels are divided by the highest level
    judged in any topic (binary grades stay 0/1), so the gain never depends on the topic's draw
    and RBP^ stays a linear Horvitz-Thompson total."""
    if gains:
        return rbp_gain_table(ctx, gains)
    j = ctx.judgments
    top = max(int(j.judged_grades.max(initial=0)), 1)
    levels = np.arange(max(top, int(j.grade.max(initial=0))) + 1, dtype=np.float64)
    return np.tile(levels / top, (ctx.n_topics, 1))


# ---- totals over the frame ---------------------------------------------------------------------
def tdi_relevant(ctx) -> np.ndarray:
    """r_d per tdi: 1 for a judged document at ``ctx.rel_level`` or above (its value in R);
    cached per context (every ratio measure reads it)."""
    j = ctx.judgments
    return ctx.shared(("ht_tdi_relevant", ctx.rel_level), lambda: (
        (j.state == JUDGED) & (j.grade >= ctx.rel_level)).astype(np.float64))


def _relevant_total(ctx, d: HTDesign) -> TopicTotal:
    def build():
        n_grades = ctx.judgments.stratum_grades.shape[2]
        by_grade = (np.arange(n_grades) >= ctx.rel_level).astype(np.float64)
        return topic_total(ctx, d, tdi_relevant(ctx), np.tile(by_grade, (ctx.n_topics, 1)))

    return ctx.shared(("ht_relevant", ctx.rel_level), build)


def _total_estimate(value, variance) -> Estimate:
    one, zero = np.ones_like(value), np.zeros_like(value)
    return Estimate(value, variance, value, value, one, variance, zero, zero)


def _linear(ctx, d: HTDesign, num, term) -> Estimate:
    """``term``: per sampled position (``d.sampled``)."""
    zero = np.zeros(ctx.collection.n_tdi)
    at = d.sampled
    sx, swx, swxx, _ = cell_sums(at.offsets, term, at.pi, at.cell, at.tdi, zero, d.n_cells)
    est = _total_estimate(num, cell_variance(d, ctx.seg_topic, sx, swx, swxx))
    ones = np.ones(len(num), dtype=bool)
    return Estimate(est.value, est.variance, est.plain, est.num, est.den, est.var_num, est.cov,
                    est.var_den, term, np.zeros(len(num)), ones, sampled=at)


def _ratio(ctx, d: HTDesign, num, influence, den: TopicTotal, tdi_den, *,
           correct: bool | np.ndarray = True, own=None, donors=None,
           anticipated=None, jackknife=None, excess=None, blind=None) -> Estimate:
    """theta^ = X^/Y^ and its bias correction (on the segments ``correct``, or on all) and
    variance (module docstring); ``influence``:
    per sampled position (``d.sampled``) the linearised numerator variable, ``tdi_den`` the
    denominator's y_d; ``anticipated``: (f, theta_m), f(c) the identified topics' anticipated
    variances linearised at the centre c and theta_m the model's centre (``ht/anticipated.py``),
    which replace the sample's variances and give the model's bias; ``jackknife``: per segment
    the stratified jackknife's variances, a second floor under the anticipated ones (module
    docstring, "Anticipated variance"); ``excess``: a function giving per segment what to take
    from the jackknife's variances, called only where they alone would raise the floor;
    ``blind``: the ratio measure whose blind topics take the model's scaled variance where the
    sample's is kept (``ht/blind_topics.py``)."""
    at = d.sampled
    sx, swx, swxx, swxy = cell_sums(
        at.offsets, influence, at.pi, at.cell, at.tdi, tdi_den, d.n_cells
    )
    t = ctx.seg_topic
    sy, swy, swyy = den.sx[t], den.swx[t], den.swxx[t]
    y = den.value[t]
    var_x = cell_variance(d, t, sx, swx, swxx)
    var_y = cell_variance(d, t, sy, swy, swyy)
    # covariance: (v(X + Y) - v(X) - v(Y)) / 2 by the same bilinear form
    var_sum = cell_variance(d, t, sx + sy, swx + swy, swxx + 2.0 * swxy + swyy)
    cov = 0.5 * (var_sum - var_x - var_y)
    theta = safe_divide(num, y)
    est = _sparse_aware(ctx, d, theta, num, y, var_x, cov, var_y, correct, own, donors,
                        anticipated, jackknife, excess, blind)
    return Estimate(est.value, est.variance, theta, num, y, var_x, cov, var_y, influence,
                    est.centre, y > 0, donors=est.donors, sampled=at,
                    sample_variance=est.sample_variance, model_bias=est.model_bias,
                    corrected=est.corrected, topic_variance=est.topic_variance)


def _sparse_aware(ctx, d: HTDesign, theta, num, y, var_x, cov, var_y, correct,
                  own=None, donors=None, anticipated=None, jackknife=None, excess=None,
                  blind=None) -> Estimate:
    """Per-topic ratio estimates and variances that stay honest when a topic's sample holds few
    or no relevant documents (module docstring, "Sparse topics"); ``own``: the identified
    topics' variances (default: linearised at the run's mean over topics); ``donors``: per
    segment, the weights of the topics an unidentified one is imputed from (default: every
    identified topic equally); ``anticipated``, ``jackknife``, ``excess``, ``blind``: as in
    :func:`_ratio`."""
    shape = (ctx.n_runs, ctx.n_topics)
    known, missing = topic_states(ctx, d, y)
    y2 = y * y
    corrected = known.ravel() & np.broadcast_to(np.asarray(correct, dtype=bool), y.shape)
    plain = np.where(corrected, theta - safe_divide(theta * var_y - cov, y2), theta)
    plain = plain.reshape(shape)
    k = known.sum(axis=1)
    mean = safe_divide(np.where(known, plain, 0.0).sum(axis=1), k)
    ref = np.broadcast_to(mean[:, None], shape).ravel()
    if own is None:
        own = linearised_variance(var_x, cov, var_y, ref, y)
    if blind is not None and anticipated is None:
        own = with_blind_topics(ctx, d, blind, own, known)
    if donors is not None:  # a run with fewer than two donors takes every identified topic
        weight = np.where(known, donors.reshape(shape), 0.0)
        weight = np.where((weight > 0).sum(axis=1, keepdims=True) >= 2, weight, known * 1.0)
        donors = weight.ravel()
    weights = None if donors is None else donors.reshape(shape)
    value, var = impute(plain, own.reshape(shape), known, missing, weights)
    sample = model_bias = None
    if anticipated is not None:
        sample = var
        moments, centre = anticipated
        expected = moments.variance(centre)
        rho = floor_factor(expected.reshape(shape), linearised_variance(
            var_x, cov, var_y, centre, y).reshape(shape), known)
        if jackknife is not None:  # the stratified jackknife's floor too
            by_jackknife = floor_factor(expected.reshape(shape), jackknife.reshape(shape), known)
            if excess is not None and by_jackknife > rho:  # less the excess (>= 0): it may bind
                by_jackknife = floor_factor(expected.reshape(shape),
                                            (jackknife - excess()).reshape(shape), known)
            rho = max(rho, by_jackknife)
        own = rho * expected
        var = impute(plain, own.reshape(shape), known, missing, weights)[1]
        model_bias = ModelBias(moments, centre, expected, rho)
    topic_variance = np.where(known, own.reshape(shape), np.where(missing, np.nan, 0.0))
    return Estimate(value.ravel(), var.ravel(), theta, num, y, var_x, cov, var_y, None, ref,
                    donors=donors, sample_variance=None if sample is None else sample.ravel(),
                    model_bias=model_bias, corrected=corrected,
                    topic_variance=topic_variance.ravel())


def _anticipated(ctx, d: HTDesign, m):
    """``(RatioMoments, theta_m)`` of ht(``m``)'s anticipated variance (AP, nDCG), or None where
    it does not apply (``anticipated_terms.anticipated_terms``)."""
    terms = anticipated_terms(ctx, d, m)
    if terms is None:
        return None
    probs, weight, gain, slope, theta_m, y = terms
    return ratio_moments(ctx, d, probs, weight, gain, slope, y), theta_m


def floor_factor(expected: np.ndarray, own: np.ndarray, known: np.ndarray) -> float:
    """rho = max(1, sum own / sum expected) over every identified (run, topic) cell (runs x
    topics arrays): the factor that keeps the anticipated variances ``expected`` from falling
    below what the sample's own variances ``own`` (linearised at the same centre, or the
    ratio's jackknife) say of the whole evaluation (module docstring, "Anticipated variance")."""
    return max(1.0, float(safe_divide(own[known].sum(), expected[known].sum())))


# ---- nDCG ---------------------------------------------------------------------------------------
def _ndcg(ctx, d: HTDesign, m: NDCG) -> Estimate:
    if m.gains:
        raise MeasureError("ht(nDCG) uses the grades as gains (no gains= parameter)")
    cutoff = NO_CUTOFF if m.k is None else m.k
    num, term, den, tdi_slope = ndcg_totals(ctx, d, cutoff)
    j = ctx.judgments
    sampled = (j.state == JUDGED) & (j.grade > 0)
    anticipated = _anticipated(ctx, d, m)

    hits, donors = hits_and_donors(ctx, d, sampled)
    # the ratio correction wherever the sample is informative ("nDCG's ratio bias"); where the
    # anticipated variance does not apply (importance samples, the planner's top-ups, a stratum
    # judged whole beside sampled ones) with the jackknife of the corrected ratio as variance,
    # elsewhere that jackknife floors the anticipated variance, as AP's does
    correct = (hits > FEW)[ctx.seg_topic]
    corrected = correct & (den.value[ctx.seg_topic] > 0)
    replicates = ndcg_replicates(ctx, d, term, cutoff, corrected)
    if anticipated is None:
        own, own_spread = jackknife_variance(ctx, d, replicates, spread=True)
        est = _ratio(ctx, d, num, term, den, tdi_slope, correct=correct, own=own,
                     donors=donors[ctx.seg_topic], blind=m)
        spread = np.where(est.known, scaled_spread(est.variance, own, own_spread), 0.0)
        return replace(est, replicates=replicates, variance_spread=spread)
    # the floor's jackknife less its second-order excess ("Anticipated variance")
    return _ratio(ctx, d, num, term, den, tdi_slope, correct=correct, anticipated=anticipated,
                  donors=donors[ctx.seg_topic], jackknife=jackknife_variance(ctx, d, replicates),
                  excess=lambda: ndcg_second_order(ctx, d, term, cutoff, corrected))


def ndcg_totals(ctx, d: HTDesign, cutoff: int):
    """ht(nDCG)'s totals on design ``d`` (module docstring): per segment DCG^ and per sampled
    position its gain-discount term, the denominator (the ideal DCG of the estimated counts
    less its concavity bias, with the cell sums of its linearised variable) and that variable
    per tdi (the slope of the document's grade)."""
    longest = int(ctx.seg_len.max(initial=0))
    discount = 1.0 / np.log2(np.arange(2, longest + 2, dtype=np.float64))
    at = d.sampled
    gain = at.by_grade(ctx, shared_gain_tables(ctx, ())[0])
    num, term = weighted_prefix(at.offsets, at.rank, gain, at.pi, discount, cutoff)
    _, gains, ideal, slope, tdi_slope = ideal_linearisation(ctx, d, cutoff)
    # the ideal DCG is concave in the counts: remove its second-order bias
    ideal = ideal - concavity_bias(ctx, d, gains, cutoff)
    den = topic_total(ctx, d, tdi_slope, slope)
    return num, term, TopicTotal(ideal, den.sx, den.swx, den.swxx), tdi_slope
