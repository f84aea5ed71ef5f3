"""Evaluate many runs in bounded memory: read, evaluate and drop them a batch at a time.

``irsample eval`` needs no run beside another: every trec_eval measure of a run depends only on
that run and the judgments. :func:`evaluate_in_batches` therefore groups the run files into
batches of about ``batch_bytes`` of text (a gzip file counts four times its size; a DataFrame,
parquet file or standard input is a batch of its own), builds a :class:`~irsample.model.Collection`
of one batch and the judgments, evaluates it, keeps only the values, and moves on. Peak memory
is that of the largest batch (one run when runs are large), not of all runs. The first batch is
read ahead in background threads (:class:`~irsample.io.ahead.ReadAhead`; TREC qrels from a file
too, first) and evaluated in three parts, each as soon as its runs are in, so the threads read
the next part meanwhile.

The result is the :class:`~irsample.evaluation.Evaluation` the all-in-memory path gives: runs in
the order given, topics in byte-wise order over the judgments and all runs, the same values,
summaries and run names (a tag shared by several runs gets its file name appended, over all
batches). Simulations, which redraw judgments for all runs at once, keep using
:meth:`Collection.build <irsample.model.Collection.build>` on every run.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._threads import expect
from .errors import InputWarning
from .io import load_qrels, load_runs
from .io.ahead import (  # noqa: F401 (run_batches: API)
    BATCH_BYTES,
    TINY_QRELS,
    TINY_RUN,
    ReadAhead,
    run_batches,
)
from .io.trec import single_precision
from .model import Collection, Judgments, check_common_topics
from .model.collection import RunsAndTopics, unique_run_names


@dataclass(frozen=True)
class EvaluatedRuns(RunsAndTopics):
    """What an evaluation keeps of its collections: run names and sources, and the topics."""

    topics: tuple[str, ...]
    run_names: tuple[str, ...]
    run_sources: tuple[str, ...]


def evaluate_in_batches(
    qrels,
    runs,
    measures,
    *,
    qrels_format: str | None = None,
    batch_bytes: int = BATCH_BYTES,
    judgments_hook: Callable[[Judgments, Collection], None] | None = None,
    assume: str | None = None,
    **options,
):
    """Evaluate ``runs`` against ``qrels`` a batch of runs at a time.

    ``runs``: run sources (paths, ``-``, DataFrames, tables), or a
    :class:`~irsample.io.ahead.ReadAhead` of them already started (``batch_bytes`` is then
    the one it was made with). With a design-based estimator (``ht(M)``, ``ppi(M)``) among
    ``measures`` the run sources are read as one batch: their anticipated variance reads every
    run.

    ``measures`` are :class:`~irsample.measures.Measure` objects; ``options`` are those of
    :func:`~irsample.evaluation.evaluate_collection` (``rel_level``, ``judged_only``,
    ``max_docs``, ``complete``, ``compat``, ``ci``, ``variance``). ``judgments_hook`` is
    called once with the judgments of the first batch and its collection (e.g. to warn about
    them). ``assume``:
    the design to assume for judgments without inclusion probabilities
    (:meth:`~irsample.model.Judgments.assuming`; ``"uniform"``). Warnings
    about the input (:class:`~irsample.errors.InputWarning`, e.g. prels records statAP skips)
    are printed on standard error as ``irsample: warning: FILE:LINE: ...``. Raises
    :class:`InputError` for bad input, including a run sharing no topic with the qrels.
    """
    from .evaluation import evaluate_collection
    from .judgment_notes import unanswered, unanswered_topics, warn

    # a design-based estimator's anticipated variance fits one relevance model to where all
    # the runs rank each document (measures/ht/anticipated.py): one batch, in one part
    whole = any(m.needs_inclusion for m in measures)
    ahead = runs if isinstance(runs, ReadAhead) else None
    if ahead is None:
        sources = [runs] if isinstance(runs, (str, os.PathLike)) else list(runs)
        ahead = ReadAhead(sources, sys.maxsize if whole else batch_bytes)
    ahead.parse(qrels, qrels_format)  # the threads read the qrels (trec), then parse the runs
    if ahead.qrels is not None and ahead.first_part_pending():
        # while the threads read the qrels and the first part
        load_kernels(measures, options, ahead.first_part_lines() / TINY_RUN.count(b"\n"))
    try:
        table = ahead.qrels.result() if ahead.qrels is not None else None
        if table is None:  # another source or format: read here (its warnings are printed)
            table = _load_qrels_warning(qrels, qrels_format)
    except BaseException:
        ahead.cancel()
        raise
    parts, lacking = [], {}
    try:
        # the first batch in parts, evaluated while the next is read
        for batch in ahead.parts(1 if whole else 3):
            run_tables = load_runs(batch)
            if options.get("compat") == "9.0.8":
                run_tables = single_precision(run_tables)
            collection = Collection.build(run_tables, [table])
            judgments = Judgments.from_qrels(collection, table).assuming(assume)
            if judgments_hook is not None and not parts:
                judgments_hook(judgments, collection)
            check_common_topics(collection, judgments)
            lacking.update(unanswered_topics(collection, judgments))
            ev = evaluate_collection(collection, judgments, measures, **options)
            kept = EvaluatedRuns(collection.topics, collection.run_names, collection.run_sources)
            parts.append((dataclasses.replace(ev, collection=kept), [r.name for r in run_tables]))
            del run_tables, collection, judgments, ev  # the next part reuses this memory
    except BaseException:
        ahead.cancel()
        raise
    if not options.get("complete"):
        warn(unanswered(lacking))
    return merge_evaluations(parts)


def load_kernels(measures, options, scale: float = 1.0) -> None:
    """Evaluate ``measures`` with ``options`` on a three-line run and TREC qrels, dropping the
    values: numba loads the kernels that building and evaluating call (from its cache, a few
    ms each; TREC-8's official + infAP + ndcg: 0.1-0.2 s) while the reading threads read the
    qrels and parse the first runs, instead of after them. (Judgments of another format may
    need a few other kernels: they load when first called.) ``scale``: how many times larger
    the real input is, so that kernels with a serial and a parallel version load the one it
    will use (:func:`irsample._threads.expect`). A failure here is left to the real
    evaluation, which meets it again."""
    from io import BytesIO

    from .evaluation import evaluate_collection
    from .io.trec import read_qrels, read_run

    try:
        with warnings.catch_warnings(), expect(scale):
            warnings.simplefilter("ignore")
            qrels = read_qrels(BytesIO(TINY_QRELS))
            collection = Collection.build([read_run(BytesIO(TINY_RUN))], [qrels])
            judgments = Judgments.from_qrels(collection, qrels)
            evaluate_collection(collection, judgments, measures, **options)
    except Exception:  # noqa: BLE001 - only a warm-up: the evaluation reports any problem
        pass


def _load_qrels_warning(qrels, qrels_format):
    """:func:`~irsample.io.load_qrels`, printing its input warnings on standard error."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", InputWarning)
        table = load_qrels(qrels, qrels_format)
    for w in caught:
        if issubclass(w.category, InputWarning):
            print(f"irsample: warning: {w.message}", file=sys.stderr)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return table


def merge_evaluations(parts):
    """One :class:`Evaluation` from per-batch ``(evaluation, raw run tags)`` pairs that share
    measures and options; topics are united in byte-wise order."""
    from .evaluation import Evaluation

    if len(parts) == 1:
        ev, tags = parts[0]
        return ev
    first = parts[0][0]
    topics = sorted(
        {t for ev, _ in parts for t in ev.topics},
        key=lambda t: t.encode("utf-8", "surrogateescape"),
    )
    where = {t: i for i, t in enumerate(topics)}
    n_runs = sum(ev.collection.n_runs for ev, _ in parts)
    n_measures = len(first.measures)
    values = np.full((n_runs, len(topics), n_measures), np.nan)
    evaluated = np.zeros((n_runs, len(topics)), dtype=bool)
    variance = None if first.variance is None else np.full_like(values, np.nan)
    own = None if first.topic_variance is None else np.full_like(values, np.nan)
    flags = found = None
    if first.statuses is not None:
        flags = np.zeros(values.shape, dtype=np.uint8)
        found = np.zeros(len(topics), dtype=np.int64)
    strings: dict = {}
    names: list[str] = []
    sources: list[str] = []
    at = 0
    for ev, tags in parts:
        cols = np.array([where[t] for t in ev.topics], dtype=np.int64)
        rows = slice(at, at + ev.collection.n_runs)
        values[rows, cols] = ev.values
        evaluated[rows, cols] = ev.evaluated
        if variance is not None:
            variance[rows, cols] = ev.variance
        if own is not None:
            own[rows, cols] = ev.topic_variance
        if flags is not None:
            flags[rows, cols] = ev.statuses.topic_flags
            found[cols] = ev.statuses.found
        for (r, t, m), text in ev.strings.items():
            strings[(at + r, None if t is None else int(cols[t]), m)] = text
        names += tags
        sources += list(ev.collection.run_sources)
        at += ev.collection.n_runs
    runs = EvaluatedRuns(tuple(topics), unique_run_names(names, sources), tuple(sources))
    for r, t, m in list(strings):
        if t is None and m.family == "runid":
            strings[(r, t, m)] = runs.run_names[r]
    summary_variance = summary_df = statuses = None
    if first.summary_variance is not None:
        summary_variance = np.concatenate([ev.summary_variance for ev, _ in parts])
    if first.summary_df is not None:
        summary_df = np.concatenate([ev.summary_df for ev, _ in parts])
    if first.statuses is not None:
        from .measures.statuses import Statuses

        statuses = Statuses.concat([ev.statuses for ev, _ in parts], flags, found)
    return Evaluation(
        runs, first.measures, values, evaluated,
        np.concatenate([ev.summary for ev, _ in parts]), strings,
        first.ci, variance, summary_variance, first.variance_method, first.assumed, statuses,
        summary_df, own,
    )
