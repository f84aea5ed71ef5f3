"""The measure family ``ht(M)``: what ``-m 'ht(AP)'`` parses to; the estimate itself is
:func:`~irsample.measures.ht.estimator.estimate` (formulas in its module docstring)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import MeasureError
from ..base import Measure
from ..names import parse
from ..trec_eval.average_precision import AP
from ..trec_eval.counts import NumRel
from ..trec_eval.gain import NDCG
from ..trec_eval.precision import Recall, Rprec
from .blind_topics import unseen_variance
from .estimator import SUPPORTED, estimate, supported_text
from .expected import expected_found, expected_sample, expected_support
from .imputation import topic_states
from .inclusion import ht_design
from .topic_own import from_sample, ratios_from_sample, topic_variance

#: the targets ht estimates as ratios of totals
RATIOS = (AP, NDCG, Recall, Rprec)


@dataclass(frozen=True)
class HT(Measure):
    """``ht(M)``: the design-based estimate of M on the sampling frame (module docstring), with
    its design variance. M is one of AP, AP@k, nDCG, nDCG@k, P@k, Rprec, RBP(p), R@k, num_rel.

    Horvitz & Thompson, JASA 1952; Aslam, Pavlu & Yilmaz, SIGIR 2006 (AP as a ratio of HT
    estimates); Särndal, Swensson & Wretman, *Model Assisted Survey Sampling* (1992)."""

    of: str = "AP"
    family = "ht"
    estimator = True
    needs_inclusion = True
    at_param = "_none"
    citation = "Horvitz & Thompson 1952; Aslam, Pavlu & Yilmaz, SIGIR 2006; Särndal et al. 1992"
    variance_method = "design variance, linearised (measures/ht/inclusion.py)"

    @classmethod
    def from_params(cls, text):
        if not text:
            raise MeasureError(f"ht needs a measure: ht(AP), ht(P@10), ... ({supported_text()})")
        return {"of": text}

    def __post_init__(self):
        inner = self.inner  # the canonical name; num_rel as the docs and ppi(num_rel) spell it
        object.__setattr__(self, "of", "num_rel" if isinstance(inner, NumRel) else inner.name)

    @property
    def inner(self) -> Measure:
        found = parse(self.of) if isinstance(self.of, str) else [self.of]
        if len(found) != 1 or not isinstance(found[0], SUPPORTED):
            raise MeasureError(
                f"ht() does not estimate {self.of!r} (supported: {supported_text()})")
        return found[0]

    @property
    def name(self) -> str:
        return f"ht({self.of})"

    @property
    def summary(self):  # type: ignore[override]
        return "sum" if isinstance(self.inner, NumRel) else "mean"

    def compute(self, ctx):
        return estimate(ctx, self.inner).value

    def variance(self, ctx, method=None):  # one estimator: ``method`` is ignored
        return estimate(ctx, self.inner).variance

    def topic_variance(self, ctx, method=None):
        """The topic's own variance (``Estimate.topic_variance``; for AP and nDCG on the
        planner's designs the model's, ``topic_own.py``): NaN where ht imputes it."""
        return topic_variance(ctx, self.inner)

    def topic_variance_from_sample(self, ctx):
        return from_sample(ctx)

    def variance_spread(self, ctx):
        return estimate(ctx, self.inner).variance_spread

    @property
    def ratio(self) -> bool:  # type: ignore[override]
        return isinstance(self.inner, RATIOS)

    @property
    def logit_interval(self) -> bool:
        """A ratio in [0, 1]: its run means' intervals are found on the logit scale."""
        return self.ratio

    def expected_support(self, ctx, cutoff):
        """Per segment: the relevant documents the design is expected to judge within
        ``cutoff`` of each ranking, for the reliability rule (``expected.expected_support``);
        None where the design is not a stratified simple random sample, or for a ratio where
        some documents are judged with certainty beside others drawn (:meth:`_by_design`)."""
        return expected_support(ctx, cutoff) if self._by_design(ctx) else None

    def expected_found(self, ctx):
        """Per topic: the relevant documents the design is expected to judge in the topic's
        pool, for the reliability rule (``expected.expected_found``); None as
        :meth:`expected_support`."""
        return expected_found(ctx) if self._by_design(ctx) else None

    def expected_sample(self, ctx, cutoff):
        """Per segment: the positions within ``cutoff`` the design is expected to judge, and
        the variance and third cumulant of its estimate of the relevant documents there, for
        the reliability rule's skewness (``expected.expected_sample``); None as
        :meth:`expected_support`."""
        return expected_sample(ctx, cutoff) if self._by_design(ctx) else None

    def _by_design(self, ctx) -> bool:
        """The rule reads the design's expectation, as the interval does: not for a ratio on a
        top-up or beside a stratum judged whole, whose interval keeps the sample's variance
        (``anticipated.ratio_probabilities``)."""
        return not (self.ratio and ratios_from_sample(ctx))

    def unseen_variance(self, ctx):
        """(per segment, c times the relevance model's anticipated variance on the blind topics
        the interval keeps at the sample's variance of 0, ht's variance): AP and nDCG where the
        interval is the sample's and the model is fitted (``blind_topics.unseen_variance``: a
        stratum judged whole beside sampled ones); None elsewhere (the anticipated variance,
        or the planner's top-ups, whose blind topics take the model's variance)."""
        if not isinstance(self.inner, (AP, NDCG)):
            return None
        e = estimate(ctx, self.inner)
        if e.anticipated:
            return None

        def build():
            d = ht_design(ctx)
            known = topic_states(ctx, d, e.den)[0]  # the identified topics, as ht's imputation
            return unseen_variance(ctx, d, self.inner, e.topic_variance, known)

        unseen = ctx.shared(("ht_unseen", self.inner, ctx.rel_level), build)
        return None if unseen is None else (unseen, e.variance)

    def corrected(self, ctx):
        """Per segment: whether the estimate removes the ratio's second-order bias there (AP and
        recall on every identified topic; nDCG, on stratified simple random samples and
        importance samples, on those whose sample holds more than ``reliability.FEW``
        documents of positive grade:
        ``estimator.py``, "nDCG's ratio bias"); False for totals and R-prec (linear once R^ is
        rounded)."""
        fixed = estimate(ctx, self.inner).corrected if self.ratio else None
        return np.zeros(ctx.n_seg, dtype=bool) if fixed is None else fixed

    def estimated_bias(self, ctx, from_sample=False, signed=False):
        """Per segment: the ratio's second-order bias (theta v(Y^) - c(X^, Y^)) / Y^^2 where the
        estimate leaves it in; where it is removed (:meth:`corrected`), a bound on the
        correction's own error: the estimated bias b^ is a ratio of the sample's totals, so
        b^ - b is of the order of |b| times the denominator's coefficient of variation (capped
        at 1), with no fixed sign; ``signed``: the bias itself everywhere; 0 for topics not
        identified, and None for totals (P@k, RBP, num_rel: unbiased). Where the variance is
        the anticipated one (a stratified simple random sample), the bias and the coefficient
        are the relevance model's at its centre (``Estimate.model_bias``), which do not rise
        and fall with the draw; elsewhere, or ``from_sample``, the sample's, at the
        estimate."""
        if not self.ratio:
            return None
        b, cv = self.ratio_bias(ctx, from_sample)
        return b if signed else np.where(self.corrected(ctx), np.abs(b) * cv, b)

    def difference_bias(self, ctx, first, second):
        """(pairs, topics): the estimated bias of the difference of runs ``first[k]`` and
        ``second[k]``'s estimates on each topic, the sample's (a pair's variance is the
        sample's). On a topic both ratios share their denominator Y^, so the difference is the
        ratio (X^_a - X^_b) / Y^ and its second-order bias b_a - b_b; where the estimate removes
        it (:meth:`corrected`, the same for both runs of a topic), a bound on the correction's
        own error, |b_a - b_b| times Y^'s coefficient of variation (as :meth:`estimated_bias`
        for one run). None for totals."""
        if not self.ratio:
            return None
        shape = (ctx.n_runs, ctx.n_topics)
        b, cv = (x.reshape(shape) for x in self.ratio_bias(ctx, from_sample=True))
        fixed = self.corrected(ctx).reshape(shape)
        d = b[first] - b[second]
        return np.where(fixed[first] & fixed[second],
                        np.abs(d) * np.maximum(cv[first], cv[second]), d)

    def ratio_bias(self, ctx, from_sample):
        """Per segment: the ratio's second-order bias (theta v(Y^) - c(X^, Y^)) / Y^^2 and Y^'s
        coefficient of variation (capped at 1); the model's at its centre where the variance is
        the anticipated one, unless ``from_sample``; the bias is 0 where Y^ is 0."""
        e = estimate(ctx, self.inner)
        y = e.den
        ok = y > 0
        y_safe = np.where(ok, y, 1.0)
        if e.model_bias is not None and not from_sample:
            b = np.where(ok, e.model_bias.bias, 0.0)
            cv = np.minimum(np.sqrt(e.model_bias.rel_var_den), 1.0)
        else:
            b = np.where(ok, (e.plain * e.var_den - e.cov) / (y_safe * y_safe), 0.0)
            cv = np.minimum(np.sqrt(np.maximum(e.var_den, 0.0)) / y_safe, 1.0)
        return b, cv
