"""The Python API: load runs and judgments, evaluate measures, get tidy tables.

>>> import irsample
>>> result = irsample.evaluate("qrels.txt", ["run1.gz", "run2.gz"], ["AP", "P@10", "ndcg_cut.10"])
>>> result.frame()      # tidy: run, topic, measure, value (topic "all" = summary)
>>> result.table()      # one row per run, one column per measure
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .errors import InputError, MeasureError
from .evaluation import Evaluation, evaluate_collection
from .io import load_qrels, load_runs
from .measures import Measure, parse_all
from .measures.base import DEFAULT_VARIANCE, output_key
from .model import Collection, Judgments


def load(qrels, runs, *, qrels_format: str | None = None) -> tuple[Collection, Judgments]:
    """Parse ``runs`` and ``qrels`` (paths, ``-``, DataFrames, parquet) into arrays.

    ``qrels_format`` (``trec``, ``strata``, ``prels``) overrides the detection of the judgments'
    format."""
    qrels_table = load_qrels(qrels, qrels_format)
    run_tables = load_runs(runs)
    collection = Collection.build(run_tables, [qrels_table])
    return collection, Judgments.from_qrels(collection, qrels_table)


def measures_from(names: Iterable[str | Measure] | str) -> list[Measure]:
    """Measures from names (any syntax) or objects, in trec_eval's output order."""
    if isinstance(names, (str, Measure)):
        names = [names]
    objects = [n for n in names if isinstance(n, Measure)]
    parsed = parse_all([n for n in names if not isinstance(n, Measure)])
    return sorted(dict.fromkeys(objects + parsed), key=output_key)


def evaluate(
    qrels,
    runs,
    measures: Sequence[str | Measure] | str = ("official",),
    *,
    rel_level: int = 1,
    judged_only: bool = False,
    max_docs: int | None = None,
    complete: bool = False,
    compat: str = "10",
) -> Evaluation:
    """Evaluate ``runs`` against ``qrels`` as trec_eval does.

    ``rel_level`` is trec_eval's ``-l``, ``judged_only`` ``-J``, ``max_docs`` ``-M`` and
    ``complete`` ``-c``; ``compat`` ("10" or "9.0.8") the
    trec_eval version whose iprec_at_recall/11pt_avg rounding to follow. Raises
    :class:`~irsample.errors.InputError` for bad input, including
    runs that share no topic with the qrels.
    """
    collection, judgments = load(qrels, runs)
    check_common_topics(collection, judgments)
    return evaluate_collection(
        collection,
        judgments,
        measures_from(measures),
        rel_level=rel_level,
        judged_only=judged_only,
        max_docs=max_docs,
        complete=complete,
        compat=compat,
    )


def estimate(
    judgments,
    runs,
    measures: Sequence[str | Measure] | str = ("infAP",),
    *,
    ci: float = 0.95,
    qrels_format: str | None = None,
    rel_level: int = 1,
    complete: bool = False,
    variance: str = DEFAULT_VARIANCE,
    auto_labels=None,
) -> Evaluation:
    """Estimate measures from sampled ``judgments`` with confidence intervals.

    ``auto_labels``: automatic labels for the prediction-powered estimators ``ppi(AP)``,
    ``ppi(nDCG@10)``, ...: a label file (``topic Q0 docno value``), ``"fusion"`` (a labeller
    fitted on the judged sample from the runs, cross-fitted by topic) or
    :class:`~irsample.io.labels.AutoLabels`.

    ``judgments``: TREC qrels with -1 for pooled-but-unjudged documents (infAP), stratified
    qrels (xinfAP, infNDCG) or prels (statAP), detected or named by ``qrels_format``. Every
    measure must have a variance estimator (``Measure.variance_method``). The result holds
    per-topic values and means with their variances; ``result.interval()`` and
    ``result.frame()`` (columns ``variance``, ``low``, ``high``) give the limits at level ``ci``.
    ``variance`` names the variance estimator of infAP and xinfAP: ``"jackknife"`` (default),
    ``"covariance"`` or ``"paper"`` (see :func:`~irsample.evaluation.evaluate_collection`).

    >>> est = irsample.estimate("sampled.qrels", ["run.gz"], ["xinfAP", "infNDCG"], ci=0.95)
    >>> est.frame()
    """
    chosen = measures_from(measures)
    lacking = [m.name for m in chosen if m.variance_method is None]
    if lacking:
        from .measures import REGISTRY

        have = sorted(name for name, cls in REGISTRY.items() if cls.variance_method)
        raise MeasureError(
            f"no variance estimator for {', '.join(lacking)} "
            f"(estimators with one: {', '.join(have)})"
        )
    collection, judged = load(judgments, runs, qrels_format=qrels_format)
    check_common_topics(collection, judged)
    from .design.labels.fusion import resolve_labels

    labels = resolve_labels(auto_labels, collection, judged, rel_level=rel_level)
    return evaluate_collection(
        collection, judged, chosen, rel_level=rel_level, complete=complete, ci=ci,
        variance=variance, auto_labels=labels,
    )


def compare(
    judgments, runs, measure: str | Measure = "ht(AP)", *, ci: float = 0.95,
    correction: str = "holm", variance: str = "design", qrels_format: str | None = None,
    rel_level: int = 1,
):
    """Every pair of ``runs`` compared on one judged sample with a design-based measure
    (``ht(AP)``, ``ht(nDCG@10)``, ...): a tidy table with run_a, run_b, diff (mean of a - b),
    se, low, high (level ``ci``), p, p_adjusted (``correction``: ``holm``, ``bh`` or ``none``)
    and decided (p_adjusted < 1 - ci). ``variance="design"`` treats the topics as fixed,
    ``"topics"`` adds topic-to-topic variance (see :mod:`irsample.comparison`).

    >>> irsample.compare("sample.qrels", ["a.run", "b.run", "c.run"], "ht(AP)", correction="bh")
    """
    from .comparison import compare_collection, comparison_measure

    chosen = comparison_measure(measure)
    collection, judged = load(judgments, runs, qrels_format=qrels_format)
    check_common_topics(collection, judged)
    return compare_collection(collection, judged, chosen, ci=ci, correction=correction,
                              variance=variance, rel_level=rel_level)


def check_common_topics(collection: Collection, judgments: Judgments) -> None:
    """Every run must share at least one topic with the judgments."""
    shared = (collection.segment_lengths() > 0) & judgments.has_topic
    for r in range(collection.n_runs):
        if not shared[r].any():
            raise InputError(
                f"run {collection.run_names[r]!r} has no topic in common with the qrels "
                f"({judgments.source})",
                collection.run_sources[r],
            )
