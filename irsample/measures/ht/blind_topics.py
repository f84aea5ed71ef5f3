r"""The ratios' blind topics on the planner's top-ups.

On the planner's designs (a pilot, then top-ups: documents judged before, certain, and a simple
random sample of the rest of each cell) ht(AP) and ht(nDCG) take the sample's variance (the
stratified jackknife), which covers over 50 topics where the relevance model's anticipated
variance overstated the design's (``ht/anticipated.py``). But a topic whose drawn documents hold
no relevant one is *blind*: identified (its certain documents found some), its jackknife 0,
while the documents left undrawn may hold relevant ones that would lower its AP or nDCG. Such a
draw reads a low denominator and no variance together, so the run means' errors and standard
errors move apart from draw to draw: on the planner's 20-30% designs of collections we do not
have the unflagged run means covered 0.926 (Core 2018 ht(AP), 20%) and 0.925 (DL 2020 passages
ht(nDCG), 30%; synthetic runs, 100 draws).

So a blind topic takes the relevance model's anticipated variance of its ratio
(:func:`~.anticipated.ratio_moments` under :func:`~.anticipated.grade_probabilities`, the
variance the per-topic intervals take on these designs, ``ht/topic_own.py``) scaled by

    c = min(1, sum of the sample's variances / sum of the anticipated ones)

over the evaluation's identified (run, topic) cells: the model's share of what the sample
cannot see, at the level the sample itself reads (the model's variance of a ratio runs above
the design's on these designs), then multiplied by the topic's factor for what its draw saw
(below). A topic with variation in its sample keeps its own. Measured
(``simulate ci-coverage --param designs=planned``, 100 trials, seed 2525), unflagged coverage
before -> after: Core 2018 20% ht(AP) 0.926 -> 0.943, DL 2020 30% ht(nDCG) 0.925 -> 0.949,
Robust 2005 5% ht(nDCG) 0.918 -> 0.960; half-widths +2% to +15%; REPRODUCTION.md, "Blind topics
on the planner's top-ups".

What the draw saw (:func:`topic_frailty`). The model fits one intercept per topic over all its
judged documents, the certain ones included, so a topic whose certain top holds its relevant
documents keeps a high rate in its open cells even where the draw found none there. On the
planner's 30% designs the blind topics' undrawn documents held 3.1 relevant ones on TREC-COVID
round 5 and 1.0 on TREC-8 where the model expected 15.9 and 8.4 (4.7 and 3.9 expected among the
documents drawn), but 1.8 against 1.8 on DL 2020 passages and 4.9 against 2.9 on Core 2018 (20%;
E_t 0.9 and 1.0) (``benchmarks/blind_topic_variance.py``, 100 draws, seed 11). So the model's
rate on a topic is updated by what its draw saw: with the topic's rate a multiple u of the
model's, u ~ Gamma(k, k) a priori (mean 1) and the relevant documents among its drawn open ones
Poisson(u E_t), E_t the model's fitted relevance summed over them, O_t relevant ones found give
u's posterior mean (k + O_t) / (k + E_t) (the Gamma-Poisson conjugate pair), and a blind topic's
variance is multiplied by it (O_t = 0: k / (k + E_t)). k = 1 (:data:`FRAILTY_SHAPE`), an
exponential prior: u's spread as large as its mean. Measured (``simulate ci-coverage --param
designs=planned``, 100 trials, seed 2525), unflagged coverage before -> after: TREC-COVID round
5 30% ht(AP) / ht(nDCG) 0.979 / 0.978 -> 0.967 / 0.967, TREC-8 30% 0.976 / 0.969 -> 0.956 /
0.960, 20% 0.974 / 0.960 -> 0.966 / 0.955; where the blind topics' variance was needed, DL 2020
30% 0.974 / 0.949 -> 0.970 / 0.945 and Core 2018 20% 0.943 / 0.945 -> 0.937 / 0.945
(REPRODUCTION.md, "Blind topics: what the draw saw"). The reliability rule (below) reads the
model's scaled variance without this factor, as its threshold was chosen on it; a difference
of two runs takes the factor on its blind topics too (``ht/pairs.py``).

Not where a stratum is judged whole beside sampled ones (``1-10:1,11-100:0.2``, the demo's and
the rounds' designs): there the top ranks, where relevant documents sit, are all judged,
a topic with nothing relevant drawn below them mostly has nothing left, and the sample's
variance covered 0.935-0.960 (TREC-8, TREC-COVID round 5, DL 2019 with synthetic runs; 20-30%,
100 draws); with the blind topics' scaled model variance 0.950-0.984 (TREC-8 and TREC-COVID
0.970-0.984), and ppi(AP) on TREC-COVID round 5's 2strata 20-30% 0.974-0.988 (0.947-0.959
before). There the reliability rule reads the same scaled variance instead
(:func:`unseen_variance`; rule 7 of ``measures/reliability/limits.py``): a run mean whose blind
topics' share exceeds the variance its interval takes is flagged (a run whose relevant
documents sit below the judged top, where the draw missed them).
"""

from __future__ import annotations

import numpy as np

from ...model import JUDGED
from ..context import safe_divide
from .anticipated import (
    fitted_relevance,
    frame_positions,
    grade_probabilities,
    partly_certain,
    ratio_moments,
)
from .anticipated_terms import anticipated_terms
from .inclusion import HTDesign

#: a topic's sample variance at most this share of the model's is no variation at all
NO_VARIATION = 1e-9
#: the shape k of a topic's Gamma prior on its rate relative to the model's (module docstring,
#: "What the draw saw")
FRAILTY_SHAPE = 1.0


def ratio_model(ctx, d: HTDesign, inner):
    """``(terms, moments, expected)`` of the relevance model's anticipated variance of the ratio
    ``inner`` (AP, nDCG) under :func:`~.anticipated.grade_probabilities`: the
    :func:`~.anticipated_terms.anticipated_terms`, their ``RatioMoments`` and, per segment, the
    variance at the model's centre; None where the model is not fitted. Cached per context."""
    def build():
        probs = grade_probabilities(ctx, d)
        terms = None if probs is None else anticipated_terms(ctx, d, inner, probs)
        if terms is None:
            return None
        probs, weight, gain, slope, centre, y = terms
        moments = ratio_moments(ctx, d, probs, weight, gain, slope, y)
        return terms, moments, moments.variance(centre)

    return ctx.shared(("ht_ratio_model", inner, ctx.rel_level, d), build)


def with_blind_topics(ctx, d: HTDesign, inner, own: np.ndarray, known: np.ndarray) -> np.ndarray:
    """``own`` (per segment, the identified topics' sample variances) with each blind topic's
    replaced by c times the model's anticipated variance (module docstring), where some cell
    holds documents judged with certainty beside others drawn (a planner's top-up) and the
    model is fitted; ``own`` itself elsewhere. ``known``: (runs, topics), the identified
    topics."""
    if not partly_certain(ctx, d, within_cell=True):
        return own
    model = ratio_model(ctx, d, inner)
    if model is None:
        return own
    blind, scaled = _blind(model[2], own, known)
    if not blind.any():
        return own
    return np.where(blind, scaled * topic_frailty(ctx, d)[ctx.seg_topic], own)


def topic_frailty(ctx, d: HTDesign) -> np.ndarray:
    """Per topic: (k + O_t) / (k + E_t), the posterior mean of the topic's rate of relevance
    over the model's in its open cells (module docstring, "What the draw saw"): O_t the relevant
    documents among those drawn below certainty, E_t the model's fitted relevance summed over
    them, k = :data:`FRAILTY_SHAPE`. 1 where the model is not fitted, and on every design but a
    planner's top-up (certain documents beside drawn ones in one cell: a stratum judged whole
    beside sampled ones keeps the model's rate, module docstring). Cached per context."""
    def build():
        if not partly_certain(ctx, d, within_cell=True):
            return np.ones(ctx.n_topics)
        fitted = fitted_relevance(ctx, d, for_rule=False)
        if fitted is None:
            return np.ones(ctx.n_topics)
        fp = frame_positions(ctx)
        j = ctx.judgments
        pi = d.tdi_pi[fp.docs]
        drawn = (j.state[fp.docs] == JUDGED) & (pi > 0.0) & (pi < 1.0)
        found = drawn & (j.grade[fp.docs] >= max(ctx.rel_level, 1))
        expected = np.bincount(fp.topic[drawn], weights=fitted[drawn], minlength=ctx.n_topics)
        seen = np.bincount(fp.topic[found], minlength=ctx.n_topics)
        return (FRAILTY_SHAPE + seen) / (FRAILTY_SHAPE + expected)

    return ctx.shared(("ht_topic_frailty", ctx.rel_level, d), build)


def unseen_variance(ctx, d: HTDesign, inner, own: np.ndarray,
                    known: np.ndarray) -> np.ndarray | None:
    """Per segment: what the interval leaves out on the blind topics it keeps at the sample's
    variance of 0 (a stratum judged whole beside sampled ones, where
    :func:`with_blind_topics` does not replace it, module docstring): c times the model's
    anticipated variance there, 0 elsewhere; None where the model is not fitted. ``own`` the
    identified topics' variances as the interval takes them, ``known`` (runs, topics) which
    are identified. The reliability rule compares its sum over a run's topics with the run's
    variance (``measures/reliability/limits.py``, rule 7)."""
    model = ratio_model(ctx, d, inner)
    if model is None:
        return None
    blind, scaled = _blind(model[2], own, known)
    return np.where(blind, scaled, 0.0)


def _blind(expected: np.ndarray, own: np.ndarray, known: np.ndarray):
    """(per segment, blind: identified, no variation in its sample where the model anticipates
    some; c times ``expected``, c = min(1, sum own / sum expected) over the identified cells)."""
    cells = known.ravel() & np.isfinite(own)
    blind = cells & (expected > 0) & (own <= NO_VARIATION * expected)
    c = min(1.0, float(safe_divide(own[cells].sum(), expected[cells].sum())))
    return blind, c * expected
