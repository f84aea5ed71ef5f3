"""``ppi(M)`` and ``auto(M)``: the prediction-powered estimators of ``ppi/estimate.py`` as measures.

``ppi(AP)``, ``ppi(nDCG)``, ``ppi(nDCG@10)``, ``ppi(P@10)``, ``ppi(num_rel)``: automatic labels on
every pooled document corrected by the human sample (formulas and variance in ``ppi/estimate.py``),
with an interval from :meth:`Measure.variance`. ``auto(M)`` is the same measure with the labels in
place of judgments and no correction (biased whenever the labels are: for diagnostics only).

The labels reach the measures through the evaluation context (``EvalContext.auto_labels``,
set by :func:`irsample.evaluation.evaluate_collection` with ``auto_labels=``); a measure that
finds none raises :class:`MeasureError`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import MeasureError
from ..base import Measure
from ..context import safe_divide
from ..ht.estimator import estimate
from ..ht.topic_own import from_sample, ratios_from_sample, sample_topic_variance
from ..names import parse
from .anticipated import segment_reduction
from .estimate import label_contexts, ppi_estimate

_PPI = ("Angelopoulos, Bates, Fannjiang, Jordan & Zrnic, Prediction-powered inference, Science "
        "2023; Angelopoulos, Duchi & Zrnic, PPI++, 2023")


def attach_labels(ctx, labels) -> None:
    """Make ``labels`` (:class:`~irsample.io.labels.AutoLabels`) the context's automatic labels."""
    ctx.auto_labels = labels


def use_estimate(ctx, labels, target: str, estimate) -> None:
    """Make ``estimate`` (a :func:`~irsample.measures.ppi.estimate.ppi_estimate` of ``target``
    with ``labels``, with its own tuning or form, say) what ``ppi(target)`` reads on ``ctx``:
    its values, variances, and for the reliability rule the segments where it kept ht."""
    attach_labels(ctx, labels)
    ctx.replace_shared(_estimate_key(parse(target)[0], labels), estimate)


def _estimate_key(inner, labels):
    """Where a context keeps ppi's estimate of ``inner`` with ``labels``."""
    return ("ppi", inner, id(labels))


def _labels(ctx, name):
    labels = ctx.auto_labels
    if labels is None:
        raise MeasureError(f"{name} needs automatic labels (--auto-labels FILE|fusion, or "
                           "auto_labels= in irsample.estimate, or irsample.evaluate for auto(M))")
    return labels


def _target(text: str):
    """The (kind, k) ppi_estimate takes for a target measure name."""
    found = parse(text)
    if len(found) != 1:
        raise MeasureError(f"ppi() takes one measure, not {text!r}")
    m = found[0]
    k = getattr(m, "k", None)
    if m.family == "AP" and k is None:
        return "AP", None
    if m.family == "nDCG" and not getattr(m, "gains", ()):
        return "nDCG", k
    if m.family == "P" and k is not None:
        return "P", k
    if m.family == "NumRel":
        return "num_rel", None
    raise MeasureError(f"no prediction-powered estimator of {text!r} (AP, nDCG, nDCG@k, P@k, "
                       "num_rel)")


@dataclass(frozen=True)
class PPI(Measure):
    """ppi(AP) = ht(AP) + lambda (AP(f) - ht_f(AP)): ht(AP) on the human judgments, corrected by
    the labels' census value minus the same estimator run on the labels of the sample (its pairs
    take the residual of products y_d y_e - lambda f_d f_e over pi_de; ``ppi/estimate.py``), lambda
    tuned per run; ppi(P@k), ppi(num_rel), and ppi(nDCG) on stratified simple random samples:
    each total behind M as sum_F lambda_h f_d a_d + sum_S (y_d - lambda_h f_d) a_d / pi_d, one
    lambda per stratum, and nDCG = DCG^/IDCG^ (``ppi/difference.py``); ppi(nDCG) where ht's
    interval is its sample's variance (the planner's designs): ht(nDCG) + lambda (nDCG(f) -
    ht_f(nDCG)) on the topics ht identifies, ht's imputation on the others
    (``ppi/control_variate.py``); every lambda in [0, 1] by PPI++ power tuning."""

    target: str = "AP"
    family = "ppi"
    estimator = True
    needs_inclusion = True
    citation = _PPI
    variance_method = "stratified linearisation (ppi/estimate.py)"

    @classmethod
    def from_params(cls, text):
        if not text:
            raise MeasureError("ppi needs a measure, e.g. ppi(AP)")
        return {"target": text.strip()}

    def __post_init__(self):
        _target(self.target)

    @property
    def name(self) -> str:
        return f"{self.family}({self.target})"

    @property
    def summary(self) -> str:  # type: ignore[override]
        return "sum" if _target(self.target)[0] == "num_rel" else "mean"

    @property
    def inner(self) -> Measure:
        """The target measure."""
        return parse(self.target)[0]

    @property
    def ratio(self) -> bool:  # type: ignore[override]
        return _target(self.target)[0] in ("AP", "nDCG")

    @property
    def logit_interval(self) -> bool:
        """AP and nDCG, ratios in [0, 1]: run means' intervals on the logit scale, as ht's."""
        return self.ratio

    def expected_support(self, ctx, cutoff):
        """ht(M)'s (:meth:`HT.expected_support
        <irsample.measures.ht.measure.HT.expected_support>`): the same human sample."""
        return self._ht.expected_support(ctx, cutoff)

    def expected_found(self, ctx):
        """ht(M)'s (:meth:`HT.expected_found
        <irsample.measures.ht.measure.HT.expected_found>`): the same human sample."""
        return self._ht.expected_found(ctx)

    def expected_sample(self, ctx, cutoff):
        """ht(M)'s (:meth:`HT.expected_sample
        <irsample.measures.ht.measure.HT.expected_sample>`): the same human sample."""
        return self._ht.expected_sample(ctx, cutoff)

    def unseen_variance(self, ctx):
        """ht(M)'s (:meth:`HT.unseen_variance
        <irsample.measures.ht.measure.HT.unseen_variance>`), read against ht's variance: the
        same human sample and its blind topics (the labels see the documents not drawn, so
        ppi's share of what is left out is smaller; reading ht's keeps ppi's flags ht's)."""
        return self._ht.unseen_variance(ctx) if self.ratio else None

    def corrected(self, ctx):
        """Per segment: where ppi's estimate removes the ratio's second-order bias. ppi(AP)
        corrects the ratio as ht(AP) does (``ppi/ap_ratio.py``): ht's segments; so does
        ppi(nDCG)'s control variate where ht(nDCG)'s ratios carry the jackknife's replicates
        (importance samples, the planner's top-ups, ranks judged whole beside sampled ones;
        ``ppi/control_variate.py``, "Importance samples"). Elsewhere
        the control variate and the difference form (stratified samples,
        ``ppi/difference.py``) take the plain ratios, so only where ppi's value is ht(nDCG)'s
        own (``PPIEstimate.as_ht``) and ht corrects."""
        fixed = self._ht.corrected(ctx)
        if self._corrects_as_ht or not self.ratio:
            return fixed
        if estimate(ctx, self.inner).replicates is not None:
            return fixed
        return fixed & self._estimate(ctx).as_ht

    def bias_in_quadrature(self, ctx):
        """Per segment: where the reliability rule reads :meth:`estimated_bias` as a bound of
        no fixed sign, added in quadrature (``reliability.summed_bias``): where the estimate
        removes the bias (:meth:`corrected`), and for ppi(nDCG) also where the labels move the
        estimate and ht's bias is the sample's (:meth:`_bias_from_sample`)."""
        fixed = self.corrected(ctx)
        if self._corrects_as_ht or not self.ratio or not self._bias_from_sample(ctx):
            return fixed
        return fixed | ~self._estimate(ctx).as_ht

    def _bias_from_sample(self, ctx) -> bool:
        """Whether ppi(nDCG)'s bias where the labels move the estimate is read as |b^_y| times
        Y^'s coefficient of variation, added in quadrature: where ht(nDCG)'s ratio bias is the
        sample's (no relevance model at its centre, ``Estimate.model_bias``: top-ups, beside a
        stratum judged whole, importance samples). There the sample's b^_y rises and falls
        with ht's error, and ppi's error moves with ht's less the part the labels remove, so
        the signed sum flags the draws whose ppi errs least (see :meth:`estimated_bias`)."""
        return estimate(ctx, self.inner).model_bias is None

    @property
    def _ht(self) -> Measure:
        """ht(M): the human sample's estimator, whose design facts and bias ppi reads."""
        return parse(f"ht({self.target})")[0]

    @property
    def _corrects_as_ht(self) -> bool:
        return _target(self.target)[0] == "AP"

    @property
    def bias_reason(self) -> str:  # type: ignore[override]
        """The reason names the bias it reads: ht(M)'s, which ppi takes as its bound
        (:meth:`estimated_bias`), not an estimate of ppi's own."""
        return f"estimated bias (ht({self.target})'s, taken as ppi's bound)"

    def estimated_bias(self, ctx, from_sample=False):
        """Per segment: ht(M)'s estimated ratio bias (:meth:`HT.estimated_bias
        <irsample.measures.ht.measure.HT.estimated_bias>`); None for totals. Where ppi's value
        is ht(M)'s own (``PPIEstimate.as_ht``: the topics the difference form leaves to ht, a
        run the labels do not move) and for ppi(AP), which corrects the ratio as ht(AP) does,
        it is ht's reading exactly (a bound on the correction's error where ht corrects).

        Where the labels move the estimate, ppi's bias is ht's b_y less lambda times that of
        the same estimator on the labels, b_f, which removes part of it where the labels agree
        with the judgments. On a stratified simple random sample b_y is the relevance model's
        at its centre, steady over draws, and ht's signed b_y is taken as ppi's bound. Where
        it is the sample's b^_y (:meth:`_bias_from_sample`) it is read as |b^_y| times Y^'s
        coefficient of variation (capped at 1), of no fixed sign and added in quadrature, as
        ht's bound where ht corrects: the signed sample bias rises with ht's error, which the
        labels remove in part, so the signed rule flagged the draws ppi estimated best. DL
        2019's planned 5% samples with kappa 0.7 labels (100 draws): the unflagged run means
        covered 0.878 with 54% flagged under the signed reading, 0.897 with 16% flagged under
        this one; TREC-COVID round 5's 2strata 20% and 30% 0.938-0.954 with none flagged,
        against 0.933-0.955 with up to 64% flagged (REPRODUCTION.md, "ppi(nDCG)'s rule 3 in
        quadrature where its bias is the sample's"). Subtracting lambda b^_f, the labels' own
        sample bias, instead: 0.850 on DL 2019 (REPRODUCTION.md, "Rule 3 reading ppi's own
        sample bias, tried")."""
        if not self.ratio:
            return None
        ht = self._ht
        own = ht.estimated_bias(ctx, from_sample)
        if self._corrects_as_ht:
            return own
        if self._bias_from_sample(ctx):
            b, cv = ht.ratio_bias(ctx, from_sample)
            moved = np.abs(b) * cv
        else:
            moved = ht.estimated_bias(ctx, from_sample, signed=True)
        return np.where(self._estimate(ctx).as_ht, own, moved)

    def _estimate(self, ctx):
        _target(self.target)
        inner = parse(self.target)[0]
        labels = _labels(ctx, self.name)
        return ctx.shared(_estimate_key(inner, labels), lambda: ppi_estimate(ctx, labels, inner))

    def compute(self, ctx):
        return self._estimate(ctx).value

    def variance(self, ctx, method=None):  # one estimator: ``method`` is ignored
        return self._estimate(ctx).variance

    def topic_variance(self, ctx, method=None):
        """The topic's own variance: ht(M)'s where ppi keeps ht's estimate, none (NaN) on a
        topic ht imputes (its value rests on the run's mean), and elsewhere :meth:`variance`
        without the imputation's growth s^2 = (1 + m a_q)^2 (m imputed topics the topic
        stands for, a_q its weight: ``ht/imputation.py``), read as ht's ratio of grown to own
        variance (1 where ht's own is 0; never below 1). Each form grows an identified topic's
        variance by the humans' imputation: ``_steadier`` scales ht's grown variance, and
        ``control_variate.py`` imputes in the humans' structure; ppi(AP)'s ratio form grows its
        label side by the labels' own imputation, s_f^2, so that its variance is
        s^2 a - 2 lambda s s_f c + lambda^2 s_f^2 b (``ap_ratio.py``) and this gives the topic's
        own a - 2 lambda c + lambda^2 b exactly where r = s_f / s is 1 (the labels impute as
        the humans do). Elsewhere, at the weight the grown moments choose, lambda = c / (r b),
        the own variance exceeds it by (c^2 / b)(1 - r)^2 / r^2, a share (1 - r)^2 / r^2 of
        the labels' variance reduction c^2 / b (r 0.78-0.90 on CACM's uniform 20% samples
        with kappa 0.7 labels: 1-8% of it).

        On the planner's designs (a top-up; also beside a stratum judged whole) ppi's variance
        is the sample's, from a topic's few sampled relevant documents, and one topic's falls
        short as ht's does (planned 20%, kappa 0.7 labels, 100 draws: the ok intervals of
        ppi(AP), ppi(nDCG) and ppi(P@10) covered 0.810-0.914, 0.809-0.938 and 0.898-0.949 on
        CACM, Vaswani and TREC-COVID; scaled by ht's shortfall, the model's over the sample's,
        0.895 and 0.903 on CACM for AP and nDCG, 30 draws). There it is ht(M)'s own (the
        model's, ``ht/topic_own.py``) times the label-informed model's reduction at the run's
        weight, A(lambda) / A(0)
        (``ppi/anticipated.segment_reduction``), capped at 1: both of the design, neither of the
        draw. The cap: for AP and nDCG the model reads the labels' side at the humans' centre
        and denominator (ppi's label side has its own), and on one TREC-COVID round 5 draw a
        tenth of the segments came out above 5 (ppi(AP) half-widths 0.111 uncapped, 0.052
        capped, at coverage 0.979 and 0.972). ``benchmarks/topic_intervals.py --design planned
        --percent 20 --labels kappa0.7``, ok coverage of ppi(AP) / ppi(nDCG) / ppi(P@10) (mean
        half-widths; with ht's own in their place, as before, 0.994-1.000 at 0.446 / 0.404 /
        0.564 on CACM and 0.063 / 0.081 / 0.119 on TREC-COVID): CACM 0.963 / 0.954 / 0.966
        (0.249 / 0.163 / 0.166), TREC-COVID 0.972 / 0.972 / 0.962 (0.052 / 0.064 / 0.026)
        (REPRODUCTION.md, "ppi's per-topic intervals on the planner's designs, from the
        label-informed model"). Where that model is not fitted, no less than ht's own."""
        e, ht = self._estimate(ctx), self._ht
        inner = ht.inner
        sample = sample_topic_variance(ctx, inner)
        grown = np.asarray(ht.variance(ctx), dtype=np.float64)
        growth = np.where(np.isfinite(sample) & (sample > 0),
                          np.maximum(safe_divide(grown, sample), 1.0), 1.0)
        ht_own = ht.topic_variance(ctx)
        own = np.where(np.isnan(sample), np.nan, e.variance / growth)
        if ratios_from_sample(ctx):
            grades = label_contexts(ctx, _labels(ctx, self.name))[2]
            reduction = segment_reduction(ctx, inner, grades, np.asarray(e.lam, np.float64))
            floor = np.maximum(own, ht_own)  # where the model has nothing to say
            own = floor if reduction is None else np.where(
                np.isfinite(reduction), ht_own * np.minimum(reduction, 1.0), floor)
        return np.where(e.as_ht, ht_own, own)

    def topic_variance_from_sample(self, ctx):
        """As ht(M)'s (``ht/topic_own.from_sample``): on importance samples ppi's variance is
        the sample's, and per topic it fell short (0.796-0.838 on CACM and Vaswani, kappa 0.7
        labels, P@10 included)."""
        return from_sample(ctx)

    def variance_spread(self, ctx):
        return self._estimate(ctx).variance_spread


@dataclass(frozen=True)
class Auto(PPI):
    """auto(M): M with the automatic labels in place of judgments over the pool, uncorrected
    (probability labels as grades by ``label_judgments.label_grades``); biased wherever the labels
    are."""

    family = "auto"
    variance_method = None

    def compute(self, ctx):
        return self._estimate(ctx).auto

    def variance(self, ctx, method=None):
        raise MeasureError(f"{self.name} is uncorrected: it has no sampling variance")
