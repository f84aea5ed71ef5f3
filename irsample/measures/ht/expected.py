"""What a stratified simple random sample is expected to judge: the reliability rule's inputs
that do not rise and fall with the draw (``measures/reliability/limits.py``, rules 1 and 2).

Each reads the relevance model of the anticipated variance (:mod:`.anticipated`: every frame
document's fitted probability of relevance, judged ones included) and the design's rates:
:func:`expected_judged` per document (pi_d P(relevant)), :func:`expected_support` per run and
topic within a cut-off, :func:`expected_found` per topic, and :func:`expected_sample`, the
variance and third cumulant of the design's estimate of a run's relevant documents within a
cut-off (rule 1's skewness), with the standard error the model's own fit leaves on their
fitted number (rule 1 reads the skewness at the low end of that). None where the anticipated
variance does not apply.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..context import safe_divide
from .anticipated import (
    RelevanceFit,
    certain_docs,
    fitted_relevance,
    frame_positions,
    open_rates,
    relevance_fit,
)
from .frame_sums import segment_chance_sums, segment_reach_total
from .inclusion import ht_design, open_cells


def _doc_rates(ctx, certain: float = 1.0) -> np.ndarray:
    """Per document of ``frame_positions(ctx).docs``: its inclusion probability pi_d, its
    cell's rate over the documents not judged with certainty (:func:`.anticipated.open_rates`),
    and ``certain`` for those judged with certainty (1: it is judged; 0: counting the random
    part of the sample alone)."""
    fp = frame_positions(ctx)
    d = ht_design(ctx)
    return np.where(certain_docs(ctx, d), certain, open_rates(ctx, d)[fp.topic, fp.stratum])


def _reach_total(ctx, per_doc: np.ndarray, cutoff: int | None) -> np.ndarray:
    """Per segment: ``per_doc`` summed over the frame positions within ``cutoff`` of the run's
    ranking (all of them when None)."""
    fp = frame_positions(ctx)
    return segment_reach_total(fp.seg, fp.doc, fp.rank, _rank_limit(cutoff),
                               np.ascontiguousarray(per_doc, dtype=np.float64), ctx.n_seg)


def _rank_limit(cutoff: int | None) -> int:
    """The worst rank a cut-off keeps (every rank when None)."""
    return np.iinfo(np.int64).max if cutoff is None else int(cutoff)


def expected_judged(ctx) -> np.ndarray | None:
    """Per document of ``frame_positions(ctx).docs``: pi_d P(relevant), its stratum's rate
    times its fitted relevance (:func:`fitted_relevance`): the chance that a stratified simple
    random sample of this design judges it and finds it relevant; None where the anticipated
    variance does not apply. What :func:`expected_support` and :func:`expected_found` add up
    (cached)."""
    def build():
        fitted = fitted_relevance(ctx, ht_design(ctx))
        if fitted is None:
            return None
        return _doc_rates(ctx) * fitted

    return ctx.shared(("ht_expected_judged", ctx.rel_level), build)


def expected_support(ctx, cutoff: int | None) -> np.ndarray | None:
    """Per segment: the relevant documents a stratified simple random sample of this design is
    expected to judge among the run's top ``cutoff`` (its whole ranking when None): the sum of
    :func:`expected_judged` over them. Unlike the count in the judged sample it does not rise
    and fall with the draw's luck (``measures/reliability/limits.py``, rule 1); None where the
    anticipated variance does not apply."""
    def build():
        per_doc = expected_judged(ctx)
        return None if per_doc is None else _reach_total(ctx, per_doc, cutoff)

    return ctx.shared(("ht_expected_support", ctx.rel_level, cutoff), build)


@dataclass(frozen=True)
class ExpectedSample:
    """Per segment, over the frame positions within a cut-off of the run's ranking: ``judged``
    (the sum of their inclusion probabilities, those judged with certainty left out: the
    positions a stratified simple random sample of this design is expected to draw), and the
    ``variance`` and ``third`` cumulant of the Horvitz-Thompson estimate of the relevant
    documents there under the design, with each position relevant with its fitted
    probability. Both add over topics (strata are drawn independently), so a run's mean over
    its topics has skewness sum third / (sum variance)^1.5: what the reliability rule's
    sample-size criterion reads (``measures/reliability/limits.py``, rule 1).

    Behind them, per segment and stratum: ``relevant`` (Q_h, the fitted relevant documents
    among the run's positions there that are left to chance), the cells' ``size`` N'_h and
    ``rate`` f_h (per topic, read through ``seg_topic``); :meth:`moments` gives the cumulants at
    other values of Q_h. ``gradient`` (per segment, the fixed effects') and ``topic_gradient``
    (its topic intercept's) are the derivatives of the segment's sum of Q_h in the relevance
    model's parameters, ``fit`` the model (None where it is given, not fitted):
    :meth:`count_se`."""

    judged: np.ndarray
    relevant: np.ndarray
    size: np.ndarray
    rate: np.ndarray
    seg_topic: np.ndarray
    gradient: np.ndarray | None = None
    topic_gradient: np.ndarray | None = None
    fit: RelevanceFit | None = None

    @cached_property
    def _at_fit(self) -> tuple[np.ndarray, np.ndarray]:
        return self.moments(np.ones(len(self.relevant)))

    @property
    def variance(self) -> np.ndarray:
        """Per segment: :meth:`moments`' variance at the fitted Q_h."""
        return self._at_fit[0]

    @property
    def third(self) -> np.ndarray:
        """Per segment: :meth:`moments`' third cumulant at the fitted Q_h."""
        return self._at_fit[1]

    def moments(self, scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per segment: the variance and third cumulant of the design's estimate with each
        cell's Q_h times the segment's ``scale``.

        In cell h (topic x stratum: N_h documents, n_h = f_h N_h drawn without replacement)
        the run's relevant documents within the cut-off are a domain: z_d = 1 for a relevant
        document there, 0 otherwise, a share q_h = Q_h / N_h of ones, so population moments
        s2 = q (1 - q) and m3 = q (1 - q)(1 - 2q) (divisor N). The estimate N z-bar of a simple
        random sample without replacement has variance N (1 - f) / f s2 N / (N - 1) and third
        cumulant N (1 - f)(1 - 2f) / f^2 m3 N^2 / ((N - 1)(N - 2)) (the sample mean's moments:
        Cochran, Sampling Techniques, 1977, §2.5 and §2.15), 0 in cells judged whole. Where
        documents are judged with certainty (a planner's pilot and earlier batches) the cell is
        its other N'_h documents, n'_h of them drawn (:func:`~.inclusion.open_cells`): the
        certain ones add a constant."""
        n_cell, f = self.size[self.seg_topic], self.rate[self.seg_topic]
        q = safe_divide(self.relevant * np.asarray(scale)[:, None], n_cell).clip(0.0, 1.0)
        open_ = (f > 0) & (f < 1) & (n_cell > 2)
        g, big = np.where(open_, f, 1.0), np.where(open_, n_cell, 3.0)
        spread = q * (1.0 - q)
        variance = np.where(open_, big * (1 - g) / g * spread * big / (big - 1), 0.0)
        third = np.where(open_, big * (1 - g) * (1 - 2 * g) / (g * g) * spread * (1 - 2 * q)
                         * big * big / ((big - 1) * (big - 2)), 0.0)
        return variance.sum(axis=1), third.sum(axis=1)

    def count_se(self, evaluated: np.ndarray) -> np.ndarray:
        """Per run (rows of ``evaluated``, runs x topics, over the segments in that order):
        the standard error of its fitted relevant count (the sum of ``relevant`` over its
        evaluated segments) that the relevance model's own estimation leaves, by the delta
        method at the posterior mode (:meth:`irsample.stats.logistic.Curvature.variance`;
        the topics' intercepts and the shared fixed effects both carry it); 0 without a
        fitted model."""
        if self.fit is None:
            return np.zeros(evaluated.shape[0])
        shape = evaluated.shape
        fixed = np.where(evaluated[..., None],
                         self.gradient.reshape(shape + (self.gradient.shape[1],)), 0.0).sum(1)
        group = np.where(evaluated, self.topic_gradient.reshape(shape), 0.0)
        return np.sqrt(np.clip(self.fit.curvature.variance(fixed, group), 0.0, None))

    def skewness_per_run(self, evaluated: np.ndarray, lower_by: float
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per run (rows of ``evaluated``, runs x topics): the positions n the design is
        expected to judge within the cut-off over its evaluated topics; the skewness gamma of
        the design's estimate of its relevant documents there, sum third / (sum variance)^1.5,
        with their fitted number Q lowered to Q - ``lower_by`` :meth:`count_se` and each
        cell's share scaled alike (infinite where that reaches 0 while the design leaves some
        to chance; 0 where it leaves none); and the lowered share of Q. Where domain shares
        are below one half (a run's relevant documents within a cut-off are a small part of
        any stratum), fewer relevant documents mean a larger skewness: the low end is the one
        that tests a normal interval (``measures/reliability/limits.py``, rule 1)."""
        shape = evaluated.shape

        def total(x):
            return np.where(evaluated, np.asarray(x).reshape(shape), 0.0).sum(axis=1)

        fitted = total(self.relevant.sum(axis=1))
        lowered = np.clip(1.0 - lower_by * self.count_se(evaluated)
                          / np.where(fitted > 0, fitted, 1.0), 0.0, 1.0)
        variance, third = (total(x) for x in self.moments(np.repeat(lowered, shape[1])))
        scale = variance**1.5
        skew = np.divide(third, scale, out=np.full_like(third, np.inf), where=scale > 0)
        return total(self.judged), np.where(total(self.variance) > 0, skew, 0.0), lowered


def expected_sample(ctx, cutoff: int | None) -> ExpectedSample | None:
    """:class:`ExpectedSample` of every segment within ``cutoff`` (the whole ranking when
    None); None where the anticipated variance does not apply (cached)."""
    def build():
        d = ht_design(ctx)
        fitted = fitted_relevance(ctx, d)
        if fitted is None:
            return None
        fp = frame_positions(ctx)
        n_strata = ctx.judgments.stratum_size.shape[1]
        judged = _reach_total(ctx, _doc_rates(ctx, certain=0.0), cutoff)
        fit = relevance_fit(ctx, d)
        n_docs = len(fp.docs)
        slope, x = ((np.zeros(n_docs), np.zeros((n_docs, 0))) if fit is None
                    else (fit.slope, np.ascontiguousarray(fit.x)))
        # certain documents are constants: only the others are left to chance
        relevant, topic_gradient, gradient = segment_chance_sums(
            fp.seg, fp.doc, fp.rank, _rank_limit(cutoff), certain_docs(ctx, d), fp.stratum,
            np.asarray(fitted, dtype=np.float64), slope, x, ctx.n_seg, n_strata)
        size, rate = open_cells(ctx.judgments, d)[0], open_rates(ctx, d)
        seg_topic = ctx.seg_topic.astype(np.int64)
        if fit is None:
            return ExpectedSample(judged, relevant, size, rate, seg_topic)
        return ExpectedSample(judged, relevant, size, rate, seg_topic, gradient, topic_gradient,
                              fit)

    return ctx.shared(("ht_expected_sample", ctx.rel_level, cutoff), build)


def expected_found(ctx) -> np.ndarray | None:
    """Per topic: the relevant documents a stratified simple random sample of this design is
    expected to judge in the topic's frame (the pooled documents the evaluated runs rank), the
    sum of :func:`expected_judged` over it (as :func:`expected_support`, over the topic rather
    than one run's reach); the reliability rule's weak topics (``measures/reliability/``, rule
    2). None where the anticipated variance does not apply."""
    per_doc = expected_judged(ctx)
    if per_doc is None:
        return None
    topic = frame_positions(ctx).topic
    return np.bincount(topic, weights=per_doc, minlength=ctx.n_topics)
