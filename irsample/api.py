"""The Python API: load runs and judgments, evaluate measures, get tidy tables.

::

    import irsample
    result = irsample.evaluate("qrels.txt", ["run1.gz", "run2.gz"], ["AP", "P@10", "ndcg_cut.10"])
    result.frame()      # tidy: run, topic, measure, value (topic "all" = summary)
    result.table()      # one row per run, one column per measure

Inputs are paths (plain or ``.gz``), ``-`` (standard input), parquet files, pandas DataFrames or
binary file objects; the examples below read small in-memory files.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .errors import InputError, MeasureError
from .evaluation import Evaluation, evaluate_collection
from .io import load_qrels, load_runs
from .io.trec import single_precision
from .judgment_notes import judgment_notes, unanswered, unanswered_topics, unlabelled_pool, warn
from .measures import Measure, parse_all
from .measures.base import DEFAULT_VARIANCE
from .measures.names import output_key
from .model import Collection, Judgments, check_common_topics


def load(qrels, runs, *, qrels_format: str | None = None,
         assume: str | None = None, compat: str = "10",
         design=None) -> tuple[Collection, Judgments]:
    r"""Parse ``runs`` and ``qrels`` into the columnar arrays every measure works on.

    Parameters
    ----------
    qrels : path, ``"-"``, DataFrame, parquet path or binary file object
        The judgments: TREC qrels (``qid iter docno rel``; -1 = pooled, not judged), stratified
        qrels (sample_eval; a DataFrame or parquet file with a ``stratum`` column) or prels
        (statAP; text only).
    runs : path, DataFrame or file object, or a sequence of them
        TREC runs (``qid Q0 docno rank score tag``): a file is one run, named by its last
        line's tag as trec_eval names it; a DataFrame with several tags holds several runs.
    qrels_format : {"trec", "strata", "prels"}, optional
        Overrides the detection of the judgments' format.
    assume : {"uniform"}, optional
        The design of TREC qrels with -1 rows, which do not carry inclusion probabilities:
        design-based estimators (``ht(M)``, ``ppi(M)``) refuse such judgments unless it is
        given; ``"uniform"`` takes each topic's judged documents as a uniform random sample of
        its pool. Ignored for judgments that carry probabilities (stratified qrels, prels).
    compat : {"10", "9.0.8"}, default "10"
        "9.0.8": scores rounded to single precision, as trec_eval 9.0.8 keeps them (ties
        where they agree in float's 24 bits; trec_eval 10 keeps doubles).
    design : path or binary file object, optional
        The design file (``design.json``) the judged documents were drawn by: ``qrels`` are then
        the assessors' judgments of its selected documents (as for ``irsample merge``), and the
        judgments carry every pooled document's stratum and inclusion probability at once,
        which the design-based estimators read (and ppi's ``centre="design"`` draws the design
        again on the labels: ``irsample.measures.ppi.redraw``). Judgments of documents the
        design did not select are an error naming the file and line, and so are selected
        documents not judged yet in an importance or active sample (no probabilities hold for
        the part judged: ``design.merge.unjudged_refusal``).

    Returns
    -------
    collection : Collection
        The runs' rankings (trec_eval's order: score descending, docno descending on ties),
        with document ids interned per topic.
    judgments : Judgments
        The grades of the collection's documents.

    Raises
    ------
    InputError
        Malformed input, naming the file and line.

    Examples
    --------
    >>> from io import BytesIO
    >>> import irsample
    >>> collection, judgments = irsample.load(
    ...     BytesIO(b"1 0 a 1\n1 0 b 0\n2 0 c 1\n"),
    ...     [BytesIO(b"1 Q0 b 1 2.0 bm25\n1 Q0 a 2 1.0 bm25\n2 Q0 c 1 1.0 bm25\n")])
    >>> collection.run_names, collection.topics
    (('bm25',), ('1', '2'))
    """
    qrels_table = load_qrels(qrels, qrels_format)
    if design is not None:
        from .design.merge import merge, unjudged_refusal
        from .design.record import DesignRecord

        record = DesignRecord.read(design)
        merged = merge(record, qrels_table)
        refusal = unjudged_refusal(merged)
        if refusal:
            raise InputError(refusal, record.source)
        qrels_table = merged.table()
    run_tables = load_runs(runs)
    if compat == "9.0.8":
        run_tables = single_precision(run_tables)
    collection = Collection.build(run_tables, [qrels_table])
    return collection, Judgments.from_qrels(collection, qrels_table).assuming(assume)


def measures_from(names: Iterable[str | Measure] | str) -> list[Measure]:
    """Measures from names (any syntax) or objects, in trec_eval's output order.

    Parameters
    ----------
    names : str, Measure or iterable of them
        irsample names (``AP``, ``P@10``, ``nDCG@10``), trec_eval names (``map``, ``P.5,10``,
        ``ndcg_cut.10``), ir_measures names, the sets ``official`` and ``all_trec``, or
        :class:`~irsample.measures.Measure` objects.

    Returns
    -------
    list of Measure
        Without repeats, in the order trec_eval prints them.

    Raises
    ------
    MeasureError
        An unknown name or invalid parameters.

    Examples
    --------
    >>> import irsample
    >>> irsample.measures_from(["P@10", "map", "ndcg_cut.10"])
    [AP(k=None), P(k=10), NDCG(gains=(), k=10)]
    >>> irsample.measures_from("AP@x")
    Traceback (most recent call last):
    ...
    irsample.errors.MeasureError: unknown measure 'AP@x' (see `irsample measures`)
    """
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
    assume: str | None = None,
    auto_labels=None,
) -> Evaluation:
    r"""Evaluate ``runs`` against ``qrels`` as trec_eval does.

    Every measure is trec_eval's, number for number (each measure's docstring gives its formula
    and source; ``irsample measures`` lists them).

    Parameters
    ----------
    qrels : path, ``"-"``, DataFrame, parquet path or binary file object
        The judgments (see :func:`load`).
    runs : path, DataFrame or file object, or a sequence of them
        The runs (see :func:`load`).
    measures : str, Measure or sequence of them, default ``("official",)``
        Measure names in any syntax (see :func:`measures_from`).
    rel_level : int, default 1
        trec_eval's ``-l``: the lowest grade counted relevant.
    judged_only : bool, default False
        trec_eval's ``-J``: drop unjudged documents from the rankings.
    max_docs : int, optional
        trec_eval's ``-M``: keep each ranking's first ``max_docs`` documents.
    complete : bool, default False
        trec_eval's ``-c``: a topic of the qrels that a run lacks counts as an empty ranking.
    compat : {"10", "9.0.8"}, default "10"
        The trec_eval version whose ``iprec_at_recall``/``11pt_avg`` rounding to follow.
    assume : {"uniform"}, optional
        The design of sampled TREC qrels, for design-based measures (see :func:`load`).
    auto_labels : path, ``"fusion"`` or AutoLabels, optional
        Automatic labels, for ``auto(M)`` (the labels alone, no interval) and ``ppi(M)``
        (see :func:`estimate`).

    Returns
    -------
    Evaluation
        Per-topic values and per-run summaries; :meth:`Evaluation.frame` and
        :meth:`Evaluation.table` give pandas tables.

    Raises
    ------
    InputError
        Bad input, including runs that share no topic with the qrels.
    MeasureError
        An unknown measure name.

    Examples
    --------
    Topic 1 has its relevant documents at ranks 1 and 3, AP = (1/1 + 2/3) / 2; topic 2 one of
    its two relevant documents at rank 2, AP = (1/2) / 2:

    >>> from io import BytesIO
    >>> import irsample
    >>> qrels = BytesIO(b"1 0 a 1\n1 0 b 0\n1 0 c 2\n2 0 x 1\n2 0 y 0\n2 0 z 1\n")
    >>> run = BytesIO(b"1 Q0 a 1 3 bm25\n1 Q0 b 2 2 bm25\n1 Q0 c 3 1 bm25\n"
    ...               b"2 Q0 y 1 2 bm25\n2 Q0 x 2 1 bm25\n")
    >>> ev = irsample.evaluate(qrels, [run], ["AP", "P@2"])
    >>> ev.frame()
        run topic measure     value
    0  bm25     1     map  0.833333
    1  bm25     1     P_2  0.500000
    2  bm25     2     map  0.250000
    3  bm25     2     P_2  0.500000
    4  bm25   all     map  0.541667
    5  bm25   all     P_2  0.500000
    """
    collection, judgments = load(qrels, runs, assume=assume, compat=compat)
    check_common_topics(collection, judgments)
    chosen = _some(measures_from(measures))
    warn(judgment_notes(chosen, judgments, collection, level=rel_level))
    if not complete:
        warn(unanswered(unanswered_topics(collection, judgments)))
    labels = None
    if auto_labels is not None:  # the labeller's module only where labels are given
        from .design.labels.fusion import resolve_labels

        labels = resolve_labels(auto_labels, collection, judgments, rel_level=rel_level)
        warn(unlabelled_pool(chosen, labels, judgments))
    return evaluate_collection(
        collection,
        judgments,
        chosen,
        rel_level=rel_level,
        judged_only=judged_only,
        max_docs=max_docs,
        complete=complete,
        compat=compat,
        auto_labels=labels,
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
    assume: str | None = None,
    design=None,
) -> Evaluation:
    r"""Estimate measures from sampled ``judgments`` with confidence intervals.

    The result holds per-topic estimates and their means with their estimated sampling
    variances (the mean's: sum of var_q / Q^2, topics sampled independently) and normal-theory
    limits value -/+ z(ci) sqrt(variance) (for the run means of ht and ppi ratios, on the logit
    scale: :meth:`Evaluation.interval <irsample.evaluation.Evaluation.interval>`).

    Parameters
    ----------
    judgments : path, ``"-"``, DataFrame, parquet path or binary file object
        TREC qrels with -1 for pooled-but-unjudged documents (infAP), stratified qrels
        (xinfAP, infNDCG) or prels (statAP), detected or named by ``qrels_format``.
    runs : path, DataFrame or file object, or a sequence of them
        The runs (see :func:`load`).
    measures : str, Measure or sequence of them, default ``("infAP",)``
        Estimators; every one must have a variance estimator (``Measure.variance_method``).
    ci : float, default 0.95
        Confidence level of the intervals, in (0, 1).
    qrels_format : {"trec", "strata", "prels"}, optional
        Overrides the detection of the judgments' format.
    rel_level : int, default 1
        The lowest grade counted relevant.
    complete : bool, default False
        A topic of the judgments that a run lacks counts as an empty ranking.
    variance : {"jackknife", "covariance", "paper"}, default "jackknife"
        The variance estimator of infAP and xinfAP (see
        :func:`~irsample.evaluation.evaluate_collection`).
    auto_labels : path, ``"fusion"`` or AutoLabels, optional
        Automatic labels for the prediction-powered estimators ``ppi(AP)``, ``ppi(nDCG@10)``,
        ...: a label file (``topic Q0 docno value``), ``"fusion"`` (a labeller fitted on the
        judged sample from the runs, cross-fitted by topic) or
        :class:`~irsample.io.labels.AutoLabels`.
    assume : {"uniform"}, optional
        The design of sampled TREC qrels, for design-based measures (see :func:`load`).
    design : path or binary file object, optional
        The design file the judged documents were drawn by; ``judgments`` are then the
        assessors' judgments of its selected documents (see :func:`load`).

    Returns
    -------
    Evaluation
        With ``ci`` set: :meth:`Evaluation.interval` and the ``variance``, ``low``, ``high``
        columns of :meth:`Evaluation.frame`, and each interval's reliability status
        (``Evaluation.statuses``; the ``status``, ``reason`` and ``causes`` columns).

    Raises
    ------
    MeasureError
        A measure without a variance estimator, or an unknown name.
    InputError
        Bad input, including runs that share no topic with the judgments.

    Examples
    --------
    A sample with one pooled document per topic left unjudged (-1), infAP of two runs:

    >>> from io import BytesIO
    >>> import irsample
    >>> sample = BytesIO(b"1 0 a 1\n1 0 b -1\n1 0 c 0\n1 0 d 1\n2 0 x 1\n2 0 y -1\n2 0 z 0\n")
    >>> runs = [BytesIO(b"1 Q0 a 1 4 r1\n1 Q0 b 2 3 r1\n1 Q0 c 3 2 r1\n1 Q0 d 4 1 r1\n"
    ...                 b"2 Q0 x 1 2 r1\n2 Q0 y 2 1 r1\n"),
    ...         BytesIO(b"1 Q0 c 1 4 r2\n1 Q0 d 2 3 r2\n1 Q0 a 3 2 r2\n"
    ...                 b"2 Q0 z 1 2 r2\n2 Q0 y 2 1 r2\n2 Q0 x 3 0 r2\n")]
    >>> est = irsample.estimate(sample, runs, ["infAP"], ci=0.95)
    >>> frame = est.frame(per_topic=False)
    >>> frame.iloc[:, :7].round(4)
      run topic measure   value  variance    low    high
    0  r1   all   infAP  0.9062    0.0365  0.532  1.2805
    1  r2   all   infAP  0.4583    0.0157  0.213  0.7037
    >>> frame[["run", "status"]]  # infAP gives no estimate of its bias: not checkable
      run      status
    0  r1  unreliable
    1  r2  unreliable
    >>> "no estimate of its own bias" in frame.reason[0]  # and 1-2 relevant documents a topic
    True
    >>> irsample.estimate(sample, runs, ["AP"])
    Traceback (most recent call last):
    ...
    irsample.errors.MeasureError: no variance estimator for AP (estimators with one: ...)
    """
    chosen = _some(measures_from(measures))
    lacking = [m.name for m in chosen if m.variance_method is None]
    if lacking:
        from .measures import REGISTRY

        have = sorted(name for name, cls in REGISTRY.items() if cls.variance_method)
        raise MeasureError(
            f"no variance estimator for {', '.join(lacking)} "
            f"(estimators with one: {', '.join(have)}; irsample.evaluate computes the others, "
            "auto(M) with auto_labels=)"
        )
    collection, judged = load(judgments, runs, qrels_format=qrels_format, assume=assume,
                              design=design)
    check_common_topics(collection, judged)
    warn(judgment_notes(chosen, judged, collection, level=rel_level, intervals=True))
    if not complete:
        warn(unanswered(unanswered_topics(collection, judged)))
    from .design.labels.fusion import resolve_labels

    labels = resolve_labels(auto_labels, collection, judged, rel_level=rel_level)
    warn(unlabelled_pool(chosen, labels, judged))
    return evaluate_collection(
        collection, judged, chosen, rel_level=rel_level, complete=complete, ci=ci,
        variance=variance, auto_labels=labels,
    )


def _some(measures: list[Measure]) -> list[Measure]:
    """``measures``, refused when empty (an empty list is a mistake: ``official`` is the
    default when none is named)."""
    if not measures:
        raise MeasureError("no measure given (the default is trec_eval's official set; name "
                           "some, e.g. ['AP', 'P@10'])")
    return measures
