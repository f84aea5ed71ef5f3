"""The Python API's comparisons of runs on one judged sample: :func:`compare` (every pair, with
its interval and reliability status) and :func:`compare_table` (runs x measures for a paper).
Both read their inputs as :func:`irsample.api.load` does, and issue the notices on the
judgments (:mod:`irsample.judgment_notes`) as :class:`~irsample.errors.JudgmentWarning`, with
one more when the runs answer different judged topics."""

from __future__ import annotations

from .api import load, measures_from
from .errors import InputError
from .judgment_notes import Note, judgment_notes, warn
from .measures import Measure
from .model import check_common_topics


def _read(judgments, runs, measures, *, qrels_format, assume, design, rel_level):
    """The collection and judgments of a comparison, at least two runs, and its notices
    issued as warnings to the caller's caller."""
    collection, judged = load(judgments, runs, qrels_format=qrels_format, assume=assume,
                              design=design)
    if collection.n_runs < 2:
        raise InputError(f"compare needs at least two runs; {collection.n_runs} given "
                         f"({', '.join(collection.run_names)})")
    check_common_topics(collection, judged)
    warn(judgment_notes(measures, judged, collection, level=rel_level, intervals=True),
         stacklevel=3)
    answered = (collection.segment_lengths() > 0) & judged.has_topic
    if not (answered == answered[0]).all():
        total, counts = int(judged.has_topic.sum()), answered.sum(axis=1)
        short = ", ".join(f"{r}: {n} of {total}" for r, n in zip(collection.run_names, counts)
                          if n < total)
        warn([Note("note", f"the runs do not answer the same judged topics ({short}): each "
                   "pair is compared on the topics both answer, a run's mean is over its own")],
             stacklevel=3)
    return collection, judged


def compare(
    judgments, runs, measure: str | Measure = "ht(AP)", *, ci: float = 0.95,
    correction: str = "holm", variance: str = "design", qrels_format: str | None = None,
    rel_level: int = 1, assume: str | None = None, design=None,
):
    r"""Every pair of ``runs`` compared on one judged sample with a design-based measure.

    The difference of two runs' Horvitz-Thompson estimates is estimated on the same sample, so
    its variance comes from the paired per-document contributions (see
    :mod:`irsample.comparison` for the formula and its sources).

    Parameters
    ----------
    judgments : path, ``"-"``, DataFrame, parquet path or binary file object
        The judged sample: qrels (-1: pooled, not judged), stratified qrels or prels.
    runs : sequence
        At least two runs (see :func:`load`).
    measure : str or Measure, default "ht(AP)"
        A design-based measure: ``ht(AP)``, ``ht(nDCG@10)``, ...
    ci : float, default 0.95
        Confidence level of the intervals; a pair is decided when p_adjusted < 1 - ci.
    correction : {"holm", "bh", "none"}, default "holm"
        Adjustment of the p-values for the many pairs (Holm 1979; Benjamini & Hochberg 1995).
    variance : {"design", "topics"}, default "design"
        ``design`` treats the topics as fixed; ``topics`` adds topic-to-topic variance.
    qrels_format : {"trec", "strata", "prels"}, optional
        Overrides the detection of the judgments' format.
    rel_level : int, default 1
        The lowest grade counted relevant.
    assume : {"uniform"}, optional
        The design of sampled TREC qrels (see :func:`load`).
    design : path or binary file object, optional
        The design file the judged documents were drawn by; ``judgments`` are then the
        assessors' judgments of its selected documents (see :func:`load`).

    Returns
    -------
    pandas.DataFrame
        One row per pair: run_a, run_b, measure, diff (mean of a - b), se, df (the
        interval's degrees of freedom; inf for a normal interval), low, high, p, p_adjusted,
        decided, the status of the difference's interval (``status``: ``ok`` or
        ``unreliable``, ``reason``, ``causes``: topic ids;
        :func:`irsample.measures.pair_reliability.assess_pair`); and ``assume`` when a design was
        assumed.

    Raises
    ------
    MeasureError
        A measure that is not design-based.
    InputError
        Bad input, including runs that share no topic with the judgments.

    Examples
    --------
    >>> from io import BytesIO
    >>> import irsample
    >>> sample = BytesIO(b"1 0 a 1\n1 0 b -1\n1 0 c 0\n1 0 d 1\n2 0 x 1\n2 0 y -1\n2 0 z 0\n")
    >>> runs = [BytesIO(b"1 Q0 a 1 4 r1\n1 Q0 b 2 3 r1\n1 Q0 c 3 2 r1\n1 Q0 d 4 1 r1\n"
    ...                 b"2 Q0 x 1 2 r1\n2 Q0 y 2 1 r1\n"),
    ...         BytesIO(b"1 Q0 c 1 4 r2\n1 Q0 d 2 3 r2\n1 Q0 a 3 2 r2\n"
    ...                 b"2 Q0 z 1 2 r2\n2 Q0 y 2 1 r2\n2 Q0 x 3 0 r2\n")]
    >>> pairs = irsample.compare(sample, runs, "ht(AP)", assume="uniform")
    >>> pairs[["run_a", "run_b", "diff", "df", "p", "decided"]].round(4)
      run_a run_b    diff       df       p  decided
    0    r1    r2  0.4043  18.5234  0.0239     True
    """
    from .comparison import compare_collection, comparison_measure

    chosen = comparison_measure(measure)
    collection, judged = _read(judgments, runs, [chosen], qrels_format=qrels_format,
                               assume=assume, design=design, rel_level=rel_level)
    return compare_collection(collection, judged, chosen, ci=ci, correction=correction,
                              variance=variance, rel_level=rel_level)


def compare_table(
    judgments, runs, measures=("ht(AP)",), *, ci: float = 0.95, correction: str = "holm",
    variance: str = "design", qrels_format: str | None = None, rel_level: int = 1,
    assume: str | None = None, design=None,
):
    r"""Runs x measures for a paper: each run's estimate, interval, reliability status and the
    runs it is significantly better than (superscript letters), as a
    :class:`~irsample.comparison_table.ComparisonTable`; ``.render("markdown")``, ``"latex"``
    or ``"html"`` gives the text. Arguments as :func:`compare`, with several design-based
    ``measures``; the rule behind each superscript is in :mod:`irsample.comparison_table`.

    Examples
    --------
    >>> from io import BytesIO
    >>> import irsample
    >>> sample = BytesIO(b"1 0 a 1\n1 0 b -1\n1 0 c 0\n1 0 d 1\n1 0 e 1\n"
    ...                  b"2 0 x 1\n2 0 y -1\n2 0 z 0\n2 0 w 1\n2 0 v 1\n")
    >>> runs = [BytesIO(b"1 Q0 a 1 5 r1\n1 Q0 b 2 4 r1\n1 Q0 c 3 3 r1\n1 Q0 d 4 2 r1\n"
    ...                 b"1 Q0 e 5 1 r1\n2 Q0 x 1 3 r1\n2 Q0 y 2 2 r1\n2 Q0 w 3 1 r1\n"),
    ...         BytesIO(b"1 Q0 c 1 4 r2\n1 Q0 b 2 3 r2\n1 Q0 d 3 2 r2\n1 Q0 a 4 1 r2\n"
    ...                 b"2 Q0 z 1 3 r2\n2 Q0 y 2 2 r2\n2 Q0 x 3 1 r2\n2 Q0 v 4 0 r2\n")]
    >>> table = irsample.compare_table(sample, runs, ["ht(AP)", "ht(P@2)"], assume="uniform")
    >>> print(table.render("markdown", places=2).split("\n\n")[0])
    | run | ht(AP) | ht(P@2) | status |
    |---|---:|---:|---|
    | (a) r1 | **0.69** [0.41, 0.88]<sup>b</sup> | **0.62** [0.20, 1.05]<sup>b</sup> | ok |
    | (b) r2 | 0.31 [0.16, 0.51] | 0.00 [-0.35, 0.35] | ok |
    >>> table.estimates[["run", "measure", "status"]]
      run  measure status
    0  r1   ht(AP)     ok
    1  r1  ht(P@2)     ok
    2  r2   ht(AP)     ok
    3  r2  ht(P@2)     ok
    """
    from .comparison_table import comparison_table

    names = [measures] if isinstance(measures, (str, Measure)) else list(measures)
    collection, judged = _read(judgments, runs, measures_from(names), qrels_format=qrels_format,
                               assume=assume, design=design, rel_level=rel_level)
    return comparison_table(collection, judged, names, ci=ci, correction=correction,
                            variance=variance, rel_level=rel_level)
