"""Evaluate measures over a collection and summarise them as trec_eval does.

Topics evaluated for a run: those the judgments name and the run retrieved (trec_eval 9.0.8's
intersection); with ``complete=True`` (trec_eval ``-c``) every topic the judgments name, a topic
the run lacks being evaluated as an empty ranking (AP 0, but its R still counts in ``num_rel``).
Summaries: the mean over evaluated topics, the sum for counts, the geometric mean
exp(mean(log(max(x, 1e-5)))) for ``gm_*`` measures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .measures.base import DEFAULT_VARIANCE, VARIANCE_METHODS, Measure
from .measures.context import EvalContext
from .measures.judged_only import refuse_judged_only
from .measures.reliability import assess, found_per_topic
from .measures.statuses import Statuses
from .measures.topic_status import topic_flags
from .model import Collection, Judgments
from .model.collection import few
from .stats.intervals import (
    Interval,
    logit_interval,
    mean_degrees_of_freedom,
    normal_interval,
)

if TYPE_CHECKING:  # pragma: no cover - pandas is imported only where a table is built
    import pandas as pd

GM_FLOOR = 1e-5  #: trec_eval's MIN_GEO_MEAN


@dataclass(frozen=True, eq=False)
class Evaluation:
    r"""Per-topic values ``values[run, topic, measure]`` and per-run ``summary[run, measure]``.

    ``evaluated[run, topic]`` tells which topics count for a run; values elsewhere are NaN.
    String-valued measures (``runid``, ``relstring``) are in ``strings[(run, topic, measure)]``.

    With a confidence level ``ci`` (see :func:`evaluate_collection`), ``variance[run, topic,
    measure]`` holds each estimator's estimated sampling variance and ``summary_variance[run,
    measure]`` that of the mean over topics, sum of var_q / Q^2 (topics sampled independently);
    NaN for measures without a variance estimator. ``topic_variance[run, topic, measure]`` is
    the variance of each topic's own estimate, which the per-topic intervals take
    (``Measure.topic_variance``): ``variance`` but where ht(M) and ppi(M) spread the imputed
    topics' part of the mean's variance over the identified topics, where ht(AP) and ht(nDCG) on
    the planner's designs take the relevance model's (``ht/topic_own.py``; ppi(M) there ht(M)'s
    times the reduction the labels bring under it), and NaN on an imputed topic (no interval of
    its own); None without a confidence level or with ``per_topic=False``. :meth:`interval`
    gives normal-theory limits, for a run mean whose variance is the sample's jackknife (ht(AP)
    and ppi(AP) on the planner's designs) the t's on ``summary_df[run, measure]``,
    Satterthwaite's degrees of freedom of that variance (inf elsewhere: the variance is taken as
    known).
    ``variance_method`` names the estimator used for infAP and xinfAP (see
    :func:`evaluate_collection`). ``statuses`` (:class:`~irsample.measures.statuses.Statuses`)
    tells per run and measure whether the interval of the mean can be trusted: ``ok``, or
    ``unreliable`` with the reason and the topic ids that cause it (``""`` for measures without
    an interval; the rule: :mod:`irsample.measures.reliability`), and per topic whether the
    topic's interval can (:meth:`~irsample.measures.statuses.Statuses.topic`, the rule:
    :mod:`irsample.measures.topic_status`).

    ``measures`` (in output order) index the last axis, ``collection`` the runs and topics.
    ``assumed``: the design assumed for judgments without inclusion probabilities that a
    design-based measure here relied on (``"uniform"``; ``None``: none), which outputs record.
    Built by :func:`irsample.evaluate`, :func:`irsample.estimate` or
    :func:`evaluate_collection`, not by hand.

    Examples
    --------
    >>> from io import BytesIO
    >>> import irsample
    >>> ev = irsample.evaluate(BytesIO(b"1 0 a 1\n1 0 b 0\n2 0 c 1\n2 0 d 1\n"),
    ...                        [BytesIO(b"1 Q0 b 1 2 r1\n1 Q0 a 2 1 r1\n2 Q0 c 1 1 r1\n")],
    ...                        ["AP"])
    >>> ev.values[:, :, 0]     # run r1, topics 1 and 2: AP = 1/2 and (1/1) / 2
    array([[0.5, 0.5]])
    >>> ev.summary
    array([[0.5]])
    """

    collection: Collection
    measures: tuple[Measure, ...]
    values: np.ndarray
    evaluated: np.ndarray
    summary: np.ndarray
    strings: dict
    ci: float | None = None
    variance: np.ndarray | None = None
    summary_variance: np.ndarray | None = None
    variance_method: str | None = None
    assumed: str | None = None
    statuses: Statuses | None = None
    summary_df: np.ndarray | None = None
    topic_variance: np.ndarray | None = None
    per_topic: bool = True

    def __repr__(self) -> str:
        """What was evaluated, not the arrays (``table()`` and ``frame()`` show them):
        ``Evaluation(4 runs: a, b, c, ...; 93 topics; ht(AP), ht(P@10); ci 0.95, 2 of 8
        intervals unreliable)``."""
        names = ", ".join(m.name for m in self.measures[:4])
        names += f", ... ({len(self.measures)} measures)" if len(self.measures) > 4 else ""
        ci = "" if self.ci is None else f"; ci {self.ci:g}"
        if self.ci is not None and self.statuses is not None:
            shown = int((self.statuses.status != "").sum())
            ci += f", {len(self.statuses.unreliable())} of {shown} intervals unreliable"
        c = self.collection
        return f"Evaluation({c.n_runs} runs{few(c.run_names)}; {c.n_topics} topics; {names}{ci})"

    def interval(self, *, summary: bool = True) -> Interval:
        r"""Normal-theory intervals value -/+ z(ci) sqrt(variance).

        z = 1.96 for ci = 0.95 (see :func:`~irsample.stats.intervals.normal_interval`); for a
        run mean with finite ``summary_df`` Student's t on those degrees of freedom in its place
        (per topic always z). The run means of the design-based ratio estimators (ht and ppi of
        AP, nDCG, R-prec, recall: ``Measure.logit_interval``) take the same quantile on the
        logit scale (:func:`~irsample.stats.intervals.logit_interval`), inside (0, 1), where
        the normal interval lies inside (0, 1); where it reaches past 0 or 1 (an estimate at or
        near the bound, e.g. 0 with a variance of rounding size) the normal interval is kept.
        No limit is clipped to the measure's range.

        Parameters
        ----------
        summary : bool, default True
            Intervals of the summaries (arrays ``[run, measure]``); False: per topic
            (``[run, topic, measure]``).

        Returns
        -------
        Interval
            ``estimate``, ``low``, ``high``, ``level``, ``method`` and ``standard_error``;
            ``low, high = ev.interval()`` unpacks the limits. NaN for measures without a
            variance estimator.

        Raises
        ------
        ValueError
            The evaluation has no confidence level (``ci=None``), or per topic, it was made
            without the topics' intervals (``per_topic=False``).

        Examples
        --------
        >>> from io import BytesIO
        >>> import irsample
        >>> est = irsample.estimate(
        ...     BytesIO(b"1 0 a 1\n1 0 b -1\n1 0 c 0\n2 0 x 1\n2 0 y -1\n2 0 z 0\n"),
        ...     [BytesIO(b"1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 c 3 1 r\n"
        ...              b"2 Q0 y 1 2 r\n2 Q0 x 2 1 r\n")],
        ...     ["infAP"], ci=0.9)
        >>> est.summary, est.summary_variance
        (array([[0.875]]), array([[0.03255208]]))
        >>> low, high = est.interval()
        >>> low.round(4), high.round(4)
        (array([[0.5782]]), array([[1.1718]]))
        """
        if self.ci is None:
            raise ValueError("evaluated without a confidence level (ci=None)")
        if not summary and not self.per_topic:
            raise ValueError("evaluated without the topics' intervals (per_topic=False)")
        df = None
        if summary:
            value, var, df = self.summary, self.summary_variance, self.summary_df
        else:
            value = self.values
            var = self.variance if self.topic_variance is None else self.topic_variance
        method = f"normal, {self.variance_method} variance"
        if df is not None and np.isfinite(df).any():
            method += "; t on Satterthwaite's degrees of freedom where the variance is a jackknife"
        logit = np.array([m.logit_interval for m in self.measures], dtype=bool)
        if not summary or not logit.any():
            return normal_interval(value, var, self.ci, method=method, df=df)
        method += "; on the logit scale for the run means of ht and ppi ratios"
        return logit_interval(value, var, self.ci, logit=logit, method=method, df=df)

    @property
    def has_interval(self) -> np.ndarray:
        """Per measure: whether it has a variance estimator (and so an interval).

        Returns
        -------
        numpy.ndarray of bool, shape (measures,)
        """
        return np.array([m.variance_method is not None for m in self.measures], dtype=bool)

    @property
    def run_names(self) -> tuple[str, ...]:
        """The runs' names (tags), in the order of the first axis of ``values``."""
        return self.collection.run_names

    @property
    def topics(self) -> tuple[str, ...]:
        """The topic ids, in the order of the second axis of ``values``."""
        return self.collection.topics

    def frame(self, *, summary: bool = True, per_topic: bool = True) -> pd.DataFrame:
        r"""Tidy table: ``run, topic, measure, value`` (topic ``all`` for summaries).

        Parameters
        ----------
        summary : bool, default True
            Include the per-run summaries (topic ``all``).
        per_topic : bool, default True
            Include the per-topic values.

        Returns
        -------
        pandas.DataFrame
            Columns ``run``, ``topic``, ``measure`` (the trec_eval name), ``value``, and with a
            confidence level ``variance``, ``low``, ``high`` (per topic: the topic's own,
            ``topic_variance``), and ``status``, ``reason``, ``causes`` (see ``statuses``;
            None for measures without an interval; a topic's causes are empty). String
            measures are left out (see ``strings``).

        Examples
        --------
        >>> from io import BytesIO
        >>> import irsample
        >>> ev = irsample.evaluate(BytesIO(b"1 0 a 1\n1 0 b 0\n"),
        ...                        [BytesIO(b"1 Q0 b 1 2 r1\n1 Q0 a 2 1 r1\n")], ["AP", "P@1"])
        >>> ev.frame(per_topic=False)
          run topic measure  value
        0  r1   all     map    0.5
        1  r1   all     P_1    0.0
        """
        from .tidy import tidy_frame  # only tidy tables need pandas

        return tidy_frame(self, summary=summary, per_topic=per_topic)

    def table(self) -> pd.DataFrame:
        r"""Summary values as a wide table: one row per run, one column per measure.

        Returns
        -------
        pandas.DataFrame
            Indexed by run; columns are the measures' trec_eval names (string measures left
            out).

        Examples
        --------
        >>> from io import BytesIO
        >>> import irsample
        >>> ev = irsample.evaluate(
        ...     BytesIO(b"1 0 a 1\n1 0 b 0\n2 0 c 1\n2 0 d 1\n"),
        ...     [BytesIO(b"1 Q0 b 1 2 r1\n1 Q0 a 2 1 r1\n2 Q0 c 1 1 r1\n"),
        ...      BytesIO(b"1 Q0 a 1 2 r2\n2 Q0 d 1 2 r2\n2 Q0 c 2 1 r2\n")], ["AP", "num_ret"])
        >>> ev.table()
             num_ret  map
        run
        r1       3.0  0.5
        r2       3.0  1.0
        """
        import pandas as pd
        numeric = [i for i, m in enumerate(self.measures) if m.value_type != "str"]
        return pd.DataFrame(
            self.summary[:, numeric],
            index=pd.Index(self.run_names, name="run"),
            columns=[self.measures[i].trec_name for i in numeric],
        )


def evaluate_collection(
    collection: Collection,
    judgments: Judgments,
    measures: Sequence[Measure],
    *,
    rel_level: int = 1,
    judged_only: bool = False,
    max_docs: int | None = None,
    complete: bool = False,
    compat: str = "10",
    ci: float | None = None,
    variance: str = DEFAULT_VARIANCE,
    auto_labels=None,
    per_topic: bool = True,
) -> Evaluation:
    r"""Compute ``measures`` for every run and topic and summarise them per run.

    ``auto_labels`` (:class:`~irsample.io.labels.AutoLabels`) are the automatic labels the
    prediction-powered measures ``ppi(M)`` and ``auto(M)`` read.

    ``compat`` selects the trec_eval version ("10" or "9.0.8") whose interpolated-precision
    rounding ``iprec_at_recall`` and ``11pt_avg`` follow. With a confidence level ``ci`` (in
    (0, 1)), the sampling variance of every measure that has an estimator of it is computed too,
    per topic and for the mean over topics (sum of var_q / Q^2): see :class:`Evaluation`.

    ``variance`` picks the variance estimator of infAP and xinfAP
    (``measures/incomplete/ap_variance.py``): ``"jackknife"`` (the default: a stratified delete-one
    jackknife, whose 95% intervals cover closest to nominal on TREC-8), ``"covariance"`` (a
    linearisation that adds the covariances of the precisions at different cut-offs and of the two
    stages) or ``"paper"`` (Yilmaz, Kanoulas & Aslam 2008 §3, precisions at different cut-offs
    taken as independent; its standard errors are about half the observed spread). infNDCG and
    statAP have one estimator.

    Parameters
    ----------
    collection, judgments : Collection, Judgments
        As :func:`irsample.load` returns them (or a design's draw of judgments).
    measures : sequence of Measure
        The measures, in output order (see :func:`irsample.measures_from`).
    rel_level, judged_only, max_docs, complete, compat
        trec_eval's ``-l``, ``-J``, ``-M``, ``-c`` and version (see :func:`irsample.evaluate`).
    ci : float, optional
        Confidence level in (0, 1): compute variances and intervals.
    variance : {"jackknife", "covariance", "paper"}, default "jackknife"
        The variance estimator of infAP and xinfAP.
    auto_labels : AutoLabels, optional
        Labels for ``ppi(M)`` and ``auto(M)``.
    per_topic : bool, default True
        With ``ci``: also each topic's own variance and its interval's status (``topic_variance``,
        ``Statuses.topic_flags``). False skips them, for callers that read the run means only
        (the simulation recipes: on the planner's designs the topics' model variance was 15%
        of a TREC-8 ci-coverage trial's CPU); the evaluation then refuses per-topic intervals.

    Returns
    -------
    Evaluation

    Raises
    ------
    ValueError
        ``ci`` outside (0, 1) or an unknown ``variance``.

    Examples
    --------
    >>> from io import BytesIO
    >>> import irsample
    >>> collection, judgments = irsample.load(BytesIO(b"1 0 a 1\n1 0 b 0\n"),
    ...                                       [BytesIO(b"1 Q0 b 1 2 r\n1 Q0 a 2 1 r\n")])
    >>> ev = evaluate_collection(collection, judgments, irsample.measures_from(["AP", "P@1"]))
    >>> ev.summary
    array([[0.5, 0. ]])
    """
    if ci is not None and not 0.0 < ci < 1.0:
        raise ValueError(f"ci must be a confidence level in (0, 1), not {ci!r}")
    if variance not in VARIANCE_METHODS:
        raise ValueError(f"variance must be one of {', '.join(VARIANCE_METHODS)}, not {variance!r}")
    needing = [m.name for m in measures if m.needs_inclusion]
    if judged_only:
        refuse_judged_only(measures, ci is not None)  # before any work
    if needing:  # before any work: the refusal names the measures and the formats to use
        judgments.require_probabilities(", ".join(needing))
    ctx = EvalContext(collection, judgments, rel_level=rel_level, judged_only=judged_only,
                      max_docs=max_docs, compat=compat)
    ctx.requested = tuple(measures)
    ctx.auto_labels = auto_labels
    n_runs, n_topics = collection.n_runs, collection.n_topics
    retrieved = collection.segment_lengths() > 0
    evaluated = np.broadcast_to(judgments.has_topic, (n_runs, n_topics)).copy()
    if not complete:
        evaluated &= retrieved
    values = np.full((n_runs, n_topics, len(measures)), np.nan)
    summary = np.zeros((n_runs, len(measures)))
    strings: dict = {}
    variances = topic_variances = summary_variance = summary_df = statuses = None
    if ci is not None:
        variances = np.full_like(values, np.nan)
        topic_variances = np.full_like(values, np.nan) if per_topic else None
        summary_variance = np.full_like(summary, np.nan)
        summary_df = np.full_like(summary, np.inf)
        statuses = Statuses.empty(n_runs, len(measures), found_per_topic(ctx))
    for j, m in enumerate(measures):
        if m.value_type == "str":
            strings.update(_string_values(m, ctx, evaluated))
            continue
        v = np.asarray(m.compute(ctx), dtype=np.float64).reshape(n_runs, n_topics)
        values[:, :, j] = np.where(evaluated, v, np.nan)
        summary[:, j] = summarise(v, evaluated, m.summary)
        if ci is not None and m.variance_method is not None:
            var = np.asarray(m.variance(ctx, variance), dtype=np.float64).reshape(n_runs, n_topics)
            variances[:, :, j] = np.where(evaluated, var, np.nan)
            how = "sum" if m.summary == "sum" else "variance_of_mean"
            summary_variance[:, j] = summarise(var, evaluated, how)
            # where the variance is itself estimated from few deletions: its degrees of freedom
            summary_df[:, j] = mean_degrees_of_freedom(var, m.variance_spread(ctx), evaluated)
            rule = assess(ctx, m, evaluated, var, v)
            flags = None
            if per_topic:
                own = np.asarray(m.topic_variance(ctx, variance), np.float64).reshape(var.shape)
                topic_variances[:, :, j] = np.where(evaluated, own, np.nan)
                flags = topic_flags(ctx, m, evaluated, v, own, rule)
            statuses.set(j, rule, collection.topics, flags)
    return Evaluation(
        collection, tuple(measures), values, evaluated, summary, strings,
        ci, variances, summary_variance, variance if ci is not None else None,
        judgments.assumed if needing else None, statuses, summary_df,
        topic_variances, per_topic,
    )


def _string_values(m: Measure, ctx: EvalContext, evaluated: np.ndarray) -> dict:
    out = {}
    if m.family == "runid":
        for r, name in enumerate(ctx.collection.run_names):
            out[(r, None, m)] = name
        return out
    texts = m.compute_strings(ctx)
    n_topics = ctx.n_topics
    for r, t in zip(*np.nonzero(evaluated)):
        out[(int(r), int(t), m)] = texts[r * n_topics + t]
    return out


def summarise(values: np.ndarray, evaluated: np.ndarray, how: str) -> np.ndarray:
    """Per-run summary of ``values[run, topic]`` over evaluated topics."""
    count = evaluated.sum(axis=1)
    v = np.where(evaluated, values, 0.0)
    if how == "sum":
        return v.sum(axis=1)
    if how == "gmean":
        logs = np.where(evaluated, np.log(np.maximum(values, GM_FLOOR)), 0.0)
        return np.where(count > 0, np.exp(logs.sum(axis=1) / np.maximum(count, 1)), 0.0)
    if how == "none":
        return np.zeros(len(values))
    if how == "variance_of_mean":  # per-topic variances -> variance of the mean: sum / Q^2
        return np.where(count > 0, v.sum(axis=1) / np.maximum(count, 1) ** 2, 0.0)
    return np.where(count > 0, v.sum(axis=1) / np.maximum(count, 1), 0.0)
