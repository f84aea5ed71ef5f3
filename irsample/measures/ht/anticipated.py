r"""The anticipated design variance of ht(M): the variance of the estimator under the design,
with the population's unjudged documents filled in by a relevance model rather than left out.

Why. The sample's own variance estimate (``ht/inclusion.py``) is right on average but rises
and falls with the estimate: a sample that catches a relevant document at a run's top ranks
gets a high estimate and a large variance, one that misses it a low estimate and a small
variance, so the low estimates get the narrow intervals (``benchmarks/interval_studentization.py``:
corr(error, SE) +0.6 to +0.9, the low-SE half of the draws covering 0.72-0.89). The variance of
the design itself does not depend on the draw; only its estimate does.

What. For a stratified simple random sample (n_c of N_c frame documents of cell c judged), a
linearised estimator sum_c (N_c / n_c) sum_{judged d in c} z_d has variance
(Cochran, *Sampling Techniques*, eq. 5.6)

    V = sum_c N_c^2 (1/n_c - 1/N_c) S_c^2,   (N_c - 1) S_c^2 = sum_c z_d^2 - (sum_c z_d)^2 / N_c,

over every frame document of the cell, judged or not. The z_d of unjudged documents are unknown;
with their relevance drawn from a model (independent, E z_d = m_d, Var z_d = s_d^2) its
expectation is (Isaki & Fuller 1982's anticipated variance; the judging planner's objective,
``design/planner/variance_model.py``)

    E[(N_c - 1) S_c^2] = sum (m_d^2 + s_d^2) - [(sum m_d)^2 + sum s_d^2] / N_c,

and judged documents enter with their known z_d (s_d = 0). The model: P(relevant) of a frame
document is a logistic regression on log(consensus), log(best rank) and its stratum (one
indicator per stratum shared by two topics or more, but the first) with a random topic intercept
(:mod:`irsample.stats.logistic`), fitted to the judged documents; consensus is the sum over the
runs of 1/rank, relative to the topic's mean over its frame; a relevant document's grade has
the sample's Horvitz-Thompson grade shares. The sample is a random sample within each stratum,
so the fit (which matches the relevant documents judged in each stratum: the score equations of
the stratum indicators) is calibrated for the documents not judged.

Topic intercepts. Their prior standard deviation is :data:`TOPIC_SD` = 3 on the logit scale,
not 1: topics' rates of relevance differ by more than that (TREC-COVID round 5: 9 relevant
documents in a frame of 2,212 for topic 19, hundreds for most), and a prior of 1 pulled a
sparse topic's intercept towards the others' by so much that the model expected twice its
relevant documents: on uniform 30% samples, 12-18 among topic 19's unjudged documents where
there were 4-8 (4.5-11 with 3; six draws). Too many relevant documents expected raise the
ideal DCG the variance divides by, so the topic's anticipated variance fell short (7.3-11.7
against 10.6-14.0 with the truth as the model), and with the labels, whose residual variance on
such a topic is mostly the label errors' (fixed by the labels, divided by the same ideal DCG),
ppi(nDCG)'s fell further. The reliability rule's expected counts (:func:`fitted_relevance`,
:func:`relevance_fit`) keep a model with the prior of 1 (:data:`RULE_TOPIC_SD`), the one its
thresholds were chosen with: with 3 there, a sparse topic's expected count follows its draw
more, and rule 2 flagged 59% of TREC-8's ht(AP) means on two-strata 10% samples (6% with 1),
whose flagged intervals covered better than the rest. Measured in REPRODUCTION.md, "The topic
intercepts' prior".

Strata. One intercept per topic, the stratum effect shared by the topics. An intercept of a
topic's own in each stratum the topics share, nested in the topic's
(``fit_model(..., stratum_sd=1.0)``; :func:`~irsample.stats.logistic.random_intercepts_logit`),
is an option, not the default. On TREC-COVID round 5's 2strata samples (ranks 1-10 judged
whole, 11-100 sampled) the shared model's rate in a topic's deep stratum followed its top
ranks' (146-161 relevant documents expected among topics 27 and 28's unjudged deep ones, which
held 46-49; two draws), and the run means' anticipated ht(nDCG) variance was 2.0 times their
squared error (40 draws); nested, 1.7, and the recipe's 2strata 20-30% cells came into range
but for ht(nDCG) (0.991 / 0.981: topic 19, 9 relevant documents all in the top ten, whose deep
stratum no sample of 146 tells from one with a few). On TREC-8 the same change took ht(AP) on
2strata 20% from 0.959 to 0.982 and the share of ppi(nDCG) means flagged from about 10% to
44-48% (100 draws, seed 5). Measured in REPRODUCTION.md, "A topic's own rate in each stratum".

The ratio estimators' z_d = (a_d x_d - theta b(x_d)) / Y (x_d the document's grade, a_d the
run's weight of that document in the numerator, b the denominator's slope in the grade, theta
and Y the model's centre, below):

- nDCG: a_d = gain(x_d) / log2(rank + 1) within the cut-off, b = the ideal DCG's slope in a
  document of that grade (``ideal_dcg.ideal_and_slopes``);
- AP: x_d relevance, b = x_d, a_d = (1 + sum_{j<k} p_j) / k + sum_{k<i<=K} p_i / i at rank k
  (the first-order influence of the numerator with the other documents at their expected
  relevance p; Aslam & Yilmaz 2007's w_k), K the cut-off;
- P@k (a total): a_d = 1/k within the top k, theta = 0, Y = 1.

Centre. The linearisation is taken at the population the model anticipates: theta_m = E[X] /
E[Y] per run and topic and Y = E[Y] (judged documents at their grade, the others at the fitted
probabilities; ``anticipated_terms.model_ap``, ``model_ndcg``), the point a design variance of
a ratio is linearised at (Särndal, Swensson & Wretman §5.6, at the population ratio). With the
truth as the model they are the topic's true AP or nDCG and R or ideal DCG, and the variance is
the first-order design variance (TREC-8 2strata 10%, 8 draws: 0.94 of the Monte Carlo variance
for AP, 1.12 for nDCG). It was taken at the run's mean over its topics with the draw's Y^ (as
the sample's variance is, ``estimator.py``, "Sparse topics"), which inflated it wherever a
topic's AP is far from the run's mean: 2.4 and 1.9 of the Monte Carlo variance there, the
2strata intervals covering 0.985-0.993 (REPRODUCTION.md, "The model's centre"). The same
quadratic in the centre gives the ratio's second-order bias the model anticipates, (theta_m
V(Y^) - C(X^, Y^)) / Y^2 = (f(theta_m + 1) - f(theta_m - 1)) / 4 with f the anticipated
variance at a centre, and V(Y^) / Y^2 = (f(theta_m + 1) + f(theta_m - 1) - 2 f(theta_m)) / 2:
the reliability rule's estimated bias on these samples (``Estimate.model_bias``), which, like
the variance, does not rise and fall with the draw.

The features read where the runs of the evaluation rank each document, so a run's interval
(not its estimate) depends a little on the runs evaluated with it; ``irsample eval`` reads all
runs at once for these estimators, so that its intervals are those of the API.

The anticipated variance is used where the design is a stratified SRS (every judged document's
pi is its stratum's rate: uniform and stratified designs), or one given the documents judged
with certainty (pi = 1): the planner's designs (a pilot, then batches) top up each cell by an SRS of
the documents not judged before, at the rate n'/N' of those (``sampling/allocated.py``), so
given the earlier judgments they are a stratified SRS of the rest, each cell's certain
documents a known constant (:func:`~.inclusion.open_cells`; conditionally unbiased, so the
conditional variance is the one to anticipate). There it is used for P@k, whose sample
variance had left ht(P@10)'s unflagged intervals covering 0.615 of the truths on CACM planned
10% and 0.870 on Vaswani planned 5% (100 trials); with this one Vaswani's covered
0.950-0.960 at 10-30% (5%: every mean flagged), CACM's 0.938-0.965 at 20-30% and 0.861 +-
0.058 of the 18% left unflagged at 10%, where all intervals covered 0.952. Not for the ratios
(:func:`ratio_probabilities`): on planned designs at 20-30% their anticipated variance
overstated the design's (sd_ratio 1.10-1.26 on TREC-8, 1.15-1.50 on TREC-COVID; intervals
covering 0.972-0.995) and the model's nDCG bias flagged 28-99% of the means, whose intervals
covered as well as the rest, where the sample's variance covered 0.930-0.975 (REPRODUCTION.md,
"Planned designs"). Nor where a stratum is judged whole beside sampled ones (``1-10:1,
11-100:0.2``; :func:`partly_certain`): there the anticipated variance's ht(nDCG) intervals
covered 0.981-0.992 on TREC-8, TREC-COVID round 5 and DL 2019 with synthetic runs (ht(AP)
0.933-0.978), the sample's 0.926-0.970 (100 trials, 20-30%). Most of the excess sat on the
topics whose open cells hold no sampled relevant document, where the model anticipates some
left deep and the dense collections have mostly none. On CACM they still have some: there the
sample's variance covered 0.19-0.78 (the model's 0.82-0.96), and the reliability rule flags
every mean; a difference of two runs keeps the model's variance on such topics
(``ht/pairs.py``, "Blind topics"). REPRODUCTION.md, "The judged-whole top: the sample's
variance instead, and the blind topics". It also needs
the sample to judge both relevant and non-relevant documents; otherwise the sample's own
estimate stays (importance samples).
The same model gives the reliability rule's inputs on these samples (:mod:`.expected`: the
relevant documents the design is expected to judge in a run's reach and per topic, and the
skewness of its estimate there, not the counts of the draw, which rise and fall with the
estimate). The model knows no run's success on a topic
beyond the documents' consensus, so the ratios' anticipated variance can fall short; the
estimator floors it at the sample's over the whole evaluation (``estimator.floor_factor``;
for AP and nDCG at their jackknife too).
Measured in ``REPRODUCTION.md``, "Anticipated variance".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...model import JUDGED
from ...stats.logistic import Curvature, curvature, random_intercepts_logit
from ..context import safe_divide
from ..pool_layout import pool_layout, pooled_segments
from .frame_sums import segment_stratum_moments
from .inclusion import HTDesign, open_cells

#: the fewest judged relevant documents of one label grade whose grade shares the label-informed
#: model takes for that label (:func:`fit_model`); fewer: the shares of all relevant documents
MIN_SHARED = 5
#: the prior standard deviation of the model's topic intercepts, on the logit scale, in the
#: model the variances read (module docstring, "Topic intercepts")
TOPIC_SD = 3.0
#: the same in the model the reliability rule's expected counts read (:func:`fitted_relevance`)
RULE_TOPIC_SD = 1.0
#: the prior standard deviation of a topic's deviation in one stratum from its intercept (the
#: strata two topics or more share), in the model the variances read: None, no such intercept
#: (module docstring, "Strata": 1.0 is the option studied)
STRATUM_SD: float | None = None


def stratified_srs(ctx, d: HTDesign) -> bool:
    """Whether every judged document not judged with certainty has its cell's rate n'/N' over
    the documents not judged with certainty (:func:`~.inclusion.open_cells`): a stratified SRS,
    given the certain documents where there are any (cached per context)."""
    def build():
        j = ctx.judgments
        judged = np.flatnonzero((j.state == JUDGED) & (d.tdi_pi < 1.0))
        r = open_rates(ctx, d)[ctx.collection.tdi_topic[judged],
                               np.maximum(j.stratum[judged], 0)]
        return bool(np.all(np.abs(d.tdi_pi[judged] - r) <= 1e-9 * np.maximum(r, 1e-12)))

    return ctx.shared(("ht_stratified_srs", d), build)


def open_rates(ctx, d: HTDesign) -> np.ndarray:
    """(T, S): each cell's sampling rate over its documents not judged with certainty
    (:func:`~.inclusion.open_cells`; 0 where there are none)."""
    size, sampled = open_cells(ctx.judgments, d)
    return safe_divide(sampled, size)


def partly_certain(ctx, d: HTDesign, within_cell: bool = False) -> bool:
    """Whether some topic holds documents judged with certainty (pi = 1) beside documents left
    to draw, in one cell (a planner's top-up: a pilot, then batches given the earlier
    judgments) or in different ones (a stratum judged whole beside sampled ones,
    ``1-10:1,11-100:0.2``); a topic judged whole (no document left to draw) does not count.
    ``within_cell``: only the first kind, both in one cell (cached)."""
    def build():
        size, _ = open_cells(ctx.judgments, d)
        certain = ctx.judgments.stratum_size - size
        if within_cell:
            return bool(np.any((certain > 0) & (size > 0)))
        return bool(np.any((certain.sum(axis=1) > 0) & (size.sum(axis=1) > 0)))

    return ctx.shared(("ht_partly_certain", d, within_cell), build)


def ratio_probabilities(ctx, d: HTDesign) -> np.ndarray | None:
    """:func:`grade_probabilities` for the ratios' (AP, nDCG) run means, None where some
    documents are judged with certainty beside others drawn (:func:`partly_certain`): there the
    model's variance of a ratio overstated the design's (module docstring), and the ratios keep
    the sample's variance, bias and counts."""
    return None if partly_certain(ctx, d) else grade_probabilities(ctx, d)


def certain_docs(ctx, d: HTDesign) -> np.ndarray:
    """Per document of :func:`frame_positions`: judged with certainty (pi = 1), so known
    whatever the draw: outside every cell's random part (cached: the variances and the
    expected sample read it)."""
    def build():
        docs = frame_positions(ctx).docs
        return (ctx.judgments.state[docs] == JUDGED) & (d.tdi_pi[docs] >= 1.0)

    return ctx.shared(("ht_certain_docs", d), build)


@dataclass(frozen=True)
class FramePositions:
    """The frame's documents and the ranked positions that hold them: everything the
    anticipated variance reads (probabilities are 0 outside the frame, so the rest of the
    collection's ranked positions add nothing). ``docs``: the frame's tdi, with their ``topic``
    and ``stratum`` (0 where the judgments have none); per position of a frame document, in the
    context's order: ``doc`` (index into ``docs``), ``seg`` (segment), ``rank``; ``offsets``:
    where each segment's positions start, as ``ctx.offsets``."""

    docs: np.ndarray
    topic: np.ndarray
    stratum: np.ndarray
    doc: np.ndarray
    seg: np.ndarray
    rank: np.ndarray
    offsets: np.ndarray


def frame_positions(ctx) -> FramePositions:
    """:class:`FramePositions` of the context (cached: every measure reads it)."""
    def build():
        docs, layout = pool_layout(ctx)  # the frame: the pooled documents
        topic = ctx.collection.tdi_topic[docs].astype(np.int64)
        stratum = np.maximum(ctx.judgments.stratum[docs], 0).astype(np.int64)
        return FramePositions(docs, topic, stratum, layout.row, pooled_segments(ctx),
                              layout.rank + 1, layout.offsets)

    return ctx.shared("ht_frame_positions", build)


def grade_probabilities(ctx, d: HTDesign) -> np.ndarray | None:
    """(frame documents, G): per document of ``frame_positions(ctx).docs`` P(grade = v)
    (judged: its grade); None where the anticipated variance does not apply (module docstring).
    Cached."""
    model = _relevance_model(ctx, d)
    return None if model is None else model[0]


def fitted_relevance(ctx, d: HTDesign, for_rule: bool = True) -> np.ndarray | None:
    """Per document of ``frame_positions(ctx).docs``: the model's P(grade >= ``ctx.rel_level``),
    judged documents included (their fitted value, not their grade); None as
    :func:`grade_probabilities`. ``for_rule``: the reliability rule's model, else the one the
    variances read."""
    model = _relevance_model(ctx, d, for_rule=for_rule)
    return None if model is None else model[1]


@dataclass(frozen=True)
class RelevanceFit:
    """What the relevance model's fitted relevance rests on, per document of
    ``frame_positions(ctx).docs``: its row ``x`` of the regression (features and stratum
    indicators; its topic is the group), the ``slope`` of its fitted relevance in the linear
    predictor (fitted x (1 - p), p the model's P(relevant)), and the posterior's ``curvature``
    at the mode: the delta-method variance of a sum of fitted relevances
    (``expected.ExpectedSample.count_se``)."""

    x: np.ndarray
    slope: np.ndarray
    curvature: Curvature


def relevance_fit(ctx, d: HTDesign) -> RelevanceFit | None:
    """:class:`RelevanceFit` of the model behind :func:`fitted_relevance`; None where that is
    None or the model is given rather than fitted."""
    model = _relevance_model(ctx, d, for_rule=True)
    return None if model is None else model[2]


def _relevance_model(ctx, d: HTDesign, for_rule: bool = False):
    """(grade probabilities, fitted relevance, :class:`RelevanceFit`) or None (cached per
    context and design): the variances' model, or ``for_rule`` the reliability rule's (priors
    :data:`RULE_TOPIC_SD`, no strata's own intercepts)."""
    priors = dict(topic_sd=RULE_TOPIC_SD, stratum_sd=None) if for_rule else {}
    return ctx.shared(("ht_relevance_model", d, for_rule),
                      lambda: fit_model(ctx, d, **priors))


def fit_model(ctx, d: HTDesign, label: np.ndarray | None = None, *,
              topic_sd: float = TOPIC_SD, stratum_sd: float | None = STRATUM_SD,
              open_cells_only: bool = False, whole_rate: bool = False):
    """The model of :func:`_relevance_model`; ``label`` (per frame document, an automatic
    label's grade) adds one indicator per label grade that the judged documents do not all
    share to the regression, and takes the grade shares among the relevant documents per label
    grade where it holds :data:`MIN_SHARED` or more of them (``ppi/anticipated.py``).
    ``stratum_sd``: where the design has two strata or more that topics share, each topic's
    documents in each of them get an intercept of their own about the topic's, with this prior
    sd (None: none); the fit's :class:`RelevanceFit` is then None (only the rule reads it, and
    its model has none). ``open_cells_only`` (an option, for ``benchmarks/anticipated_parts.py``):
    fit on the judged documents of cells sampled below rate 1 alone, leaving out the cells
    judged whole, whose documents need no prediction; ``whole_rate`` (with it) adds the
    topic's relevant share in its cells judged whole, as a smoothed logit, to the regression."""
    j = ctx.judgments
    n_grades = j.stratum_grades.shape[2]
    fp = frame_positions(ctx)
    frame = fp.docs
    judged = j.state[frame] == JUDGED
    grade = np.clip(j.grade[frame], 0, n_grades - 1)
    relevant = judged & (grade >= 1)
    if not relevant.any() or not (judged & ~relevant).any() or not stratified_srs(ctx, d):
        return None
    topic, stratum, x = fp.topic, fp.stratum, relevance_features(ctx)
    shared = _shared_strata(stratum, topic, j.stratum_size.shape[1], ctx.n_topics)
    rows = judged  # the documents the regression is fitted on
    if open_cells_only:
        rows = _in_open_cells(judged, topic * j.stratum_size.shape[1] + stratum)
        if not (rows & relevant).any() or not (rows & ~relevant).any():
            rows = judged
        shared = [h for h in shared if rows[stratum == h].any()]
        if whole_rate:
            x = np.column_stack([x, _whole_rate(judged & ~rows, relevant, topic, ctx.n_topics)])
    columns = [(stratum == h) for h in shared[1:]]  # the design's strata: calibrated in each
    if label is not None:
        columns += [label == v for v in range(1, n_grades)
                    if 0 < np.count_nonzero(label[rows] == v) < np.count_nonzero(rows)]
    x = np.column_stack([x, *(c.astype(np.float64) for c in columns)])
    factors = [(topic, ctx.n_topics, topic_sd)]
    if stratum_sd is not None and len(shared) >= 2:
        n_strata = j.stratum_size.shape[1]
        factors.append((topic * n_strata + stratum, ctx.n_topics * n_strata, stratum_sd))
    from scipy.special import expit  # here: listing the measures needs no scipy (0.5 s)

    coef, offsets = random_intercepts_logit(
        x[rows], relevant[rows].astype(np.float64),
        [(index[rows], n, sd) for index, n, sd in factors])
    p = expit(x @ coef + sum(g[index] for g, (index, _, _) in zip(offsets, factors)))
    weight = 1.0 / d.tdi_pi[frame[relevant]]
    share = np.bincount(grade[relevant], weights=weight, minlength=n_grades)
    probs = p[:, None] * (share / share.sum())[None, :]
    if label is not None:  # the grade shares of the relevant documents given their label
        for v in range(n_grades):
            of_v = label[relevant] == v
            if np.count_nonzero(of_v) >= MIN_SHARED:
                by_v = np.bincount(grade[relevant][of_v], weights=weight[of_v],
                                   minlength=n_grades)
                probs[label == v] = p[label == v, None] * (by_v / by_v.sum())[None, :]
    probs[:, 0] = 1.0 - p
    fitted = probs[:, max(ctx.rel_level, 1):].sum(axis=1)
    fit = None if len(factors) > 1 else RelevanceFit(
        x, fitted * (1.0 - p),
        curvature(x[rows], p[rows], topic[rows], ctx.n_topics, topic_sd))
    probs[judged] = 0.0
    probs[np.flatnonzero(judged), grade[judged]] = 1.0
    return probs, fitted, fit


def _whole_rate(whole, relevant, topic, n_topics) -> np.ndarray:
    """Per document: the smoothed logit of its topic's relevant share among ``whole`` (the
    documents of its cells judged whole), centred; 0 for a topic with no such cell."""
    n = np.bincount(topic[whole], minlength=n_topics)
    r = np.bincount(topic[whole & relevant], minlength=n_topics)
    logit = np.log((r + 0.5) / (n - r + 0.5))
    has = n > 0
    logit = np.where(has, logit - (logit[has].mean() if has.any() else 0.0), 0.0)
    return logit[topic]


def _in_open_cells(judged: np.ndarray, cell: np.ndarray) -> np.ndarray:
    """``judged`` narrowed to the documents of cells not judged whole."""
    size = np.bincount(cell)
    return judged & (np.bincount(cell[judged], minlength=len(size)) < size)[cell]


def _shared_strata(stratum, topic, n_strata, n_topics) -> np.ndarray:
    """The strata that hold documents of two topics or more (a stratum of one topic is the
    topic's own: its intercept already)."""
    held = np.bincount(stratum * n_topics + topic, minlength=n_strata * n_topics)
    return np.flatnonzero((held.reshape(n_strata, n_topics) > 0).sum(axis=1) >= 2)


def relevance_features(ctx) -> np.ndarray:
    """Per frame document: [1, log consensus, log best rank] over the runs (cached: the
    variances' model and the rule's read the same rows; new arrays are stacked on it, never
    written into it)."""
    return ctx.shared("ht_relevance_features", lambda: _features(ctx, frame_positions(ctx)))


def _features(ctx, fp: FramePositions) -> np.ndarray:
    """:func:`relevance_features` of the frame positions ``fp``."""
    n = len(fp.docs)
    rank = fp.rank.astype(np.float64)
    consensus = np.bincount(fp.doc, weights=1.0 / rank, minlength=n)
    best = np.full(n, 1e6)
    np.minimum.at(best, fp.doc, rank)
    topic = fp.topic
    mean = safe_divide(np.bincount(topic, weights=consensus, minlength=ctx.n_topics),
                       np.bincount(topic, minlength=ctx.n_topics))
    q = np.maximum(safe_divide(consensus, mean[topic]), 1e-6)
    return np.column_stack([np.ones(n), np.log(q), np.log(best)])


def relevance_gains(ctx, probs: np.ndarray) -> np.ndarray:
    """(T, G): 1 for the grades at ``ctx.rel_level`` or above, 0 below: the relevance variable
    of AP and P@k by grade."""
    level = (np.arange(probs.shape[1]) >= ctx.rel_level).astype(np.float64)
    return np.tile(level, (ctx.n_topics, 1))


def rank_weights(ctx, by_rank: np.ndarray, cutoff: int) -> np.ndarray:
    """Per position of :func:`frame_positions`: ``by_rank[rank - 1]`` within the cut-off, 0
    beyond it (ranks past the table's end take its last entry)."""
    rank = frame_positions(ctx).rank
    return np.where(rank <= cutoff, by_rank[np.minimum(rank, len(by_rank)) - 1], 0.0)


def ratio_variance(ctx, d: HTDesign, probs: np.ndarray, weight: np.ndarray, gain: np.ndarray,
                   slope: np.ndarray, theta: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per segment: the anticipated variance of a linearised ratio (module docstring), for z_d =
    (weight_pos gain[t, x_d] - theta slope[t, x_d]) / y. ``probs``: :func:`grade_probabilities`;
    ``weight``: per position of :func:`frame_positions` (0 where the position adds nothing to
    the numerator); ``gain``, ``slope``: (T, G) by grade; ``theta``, ``y``: per segment (a
    total: theta = 0, y = 1)."""
    return ratio_moments(ctx, d, probs, weight, gain, slope, y).variance(theta)


@dataclass(frozen=True)
class RatioMoments:
    """Per segment and cell, the model's sums the anticipated variance of a linearised ratio is
    built from (:func:`ratio_moments`), so that it can be evaluated at any centre without a
    pass over the positions and without holding the context (an estimate cached in its
    context keeps these, not a closure over the context: no reference cycle, freed as soon as
    the context is). ``a1``, ``a2``, ``ab``, ``a11``, ``a1b1``: the run's weighted moments;
    ``s1``, ``s2``, ``s11``: the slope's; ``size``: N_c; ``factor``: N_c^2 (1/n_c - 1/N_c) /
    (N_c - 1) for a cell partly judged, 0 otherwise; ``y``: the denominator per segment."""

    a1: np.ndarray
    a2: np.ndarray
    ab: np.ndarray
    a11: np.ndarray
    a1b1: np.ndarray
    s1: np.ndarray
    s2: np.ndarray
    s11: np.ndarray
    size: np.ndarray
    factor: np.ndarray
    y: np.ndarray

    def variance(self, theta: np.ndarray) -> np.ndarray:
        """Per segment: the anticipated variance linearised at the centre ``theta``."""
        c = theta[:, None]
        second = self.a2 - 2.0 * c * self.ab + c * c * self.s2  # sum E z^2 (times y^2)
        first = self.a1 - c * self.s1  # sum E z
        spread = second - (self.a11 - 2.0 * c * self.a1b1 + c * c * self.s11)  # sum Var z
        ss = np.maximum(second - safe_divide(first * first + spread, self.size), 0.0)
        v = (self.factor * ss).sum(axis=1)
        y = self.y
        return np.where(y > 0, v / np.where(y > 0, y * y, 1.0), 0.0)


def open_moment(ctx, d: HTDesign, probs: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Per document of :func:`frame_positions`: E f(x_d) under the model, f by grade (``table``,
    topics x grades); 0 for a document judged with certainty, no part of its cell's draw."""
    return (probs * table[frame_positions(ctx).topic]).sum(axis=1) * ~certain_docs(ctx, d)


def ratio_moments(ctx, d: HTDesign, probs: np.ndarray, weight: np.ndarray, gain: np.ndarray,
                  slope: np.ndarray, y: np.ndarray) -> RatioMoments:
    """:class:`RatioMoments` of z_d as in :func:`ratio_variance` (one pass over the positions)."""
    return moments_of(ctx, d, weight, y, document_moments(ctx, d, probs, gain, slope))


def document_moments(ctx, d: HTDesign, probs: np.ndarray, gain: np.ndarray,
                     slope: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per document of :func:`frame_positions`, under the model ``probs``: E g, E g^2, E b,
    E b^2 and E[g b] of the gain g = ``gain``[t, x_d] and slope b = ``slope``[t, x_d] of its
    grade x_d (0 for a document judged with certainty: :func:`open_moment`)."""
    return tuple(open_moment(ctx, d, probs, f) for f in (
        gain, gain * gain, slope, slope * slope, gain * slope))


def moments_of(ctx, d: HTDesign, weight: np.ndarray, y: np.ndarray,
               moments: tuple[np.ndarray, ...]) -> RatioMoments:
    """:class:`RatioMoments` of z_d = (weight_pos g_d - theta b_d) / y from the documents'
    ``moments`` (E g, E g^2, E b, E b^2, E[g b], as :func:`document_moments`)."""
    j = ctx.judgments
    fp = frame_positions(ctx)
    n_cells, n_topics, n_seg = d.n_cells, ctx.n_topics, ctx.n_seg
    topic, stratum = fp.topic, fp.stratum
    m_g, m_gg, m_s, m_ss, m_gs = moments
    cell = topic * n_cells + stratum

    def by_cell(value):  # run-independent sums over each cell's frame documents
        return np.bincount(cell, weights=value, minlength=n_topics * n_cells).reshape(
            n_topics, n_cells)

    t = ctx.seg_topic
    s1, s2, s11 = (by_cell(v)[t] for v in (m_s, m_ss, m_s * m_s))
    a1, a2, ab, a11, a1b1 = segment_stratum_moments(
        fp.seg, fp.doc, weight, stratum, m_g, m_gg, m_gs, m_s, n_seg, n_cells)
    size, n = (x[t] for x in open_cells(j, d))
    open_cell = (n > 0) & (n < size)
    factor = np.where(open_cell, size * size * (safe_divide(1.0, n) - safe_divide(1.0, size))
                      / np.maximum(size - 1.0, 1.0), 0.0)
    return RatioMoments(a1, a2, ab, a11, a1b1, s1, s2, s11, size, factor, y)
