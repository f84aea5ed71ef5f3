"""Relevance information over a collection's ``tdi`` space: :class:`Judgments`."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from ..io.arrow import number_array, numbers
from ..io.trec import QrelsTable
from .collection import Collection, _decode, few
from .refusals import missing_probabilities, unlisted_pool

UNPOOLED = np.int8(0)  #: absent from the qrels
POOLED = np.int8(1)  #: in the qrels with a negative value: pooled, not judged
JUDGED = np.int8(2)  #: in the qrels with a value >= 0

#: the largest grade a per-grade table (nDCG gains, sample_eval's grade counts) may hold
MAX_GRADE_LEVEL = 1000

#: where a :class:`Judgments`' inclusion probabilities come from (its ``probabilities``):
#: ``design`` (stratified qrels, prels, a design's draw: stated by the input), ``census`` (no
#: pooled-but-unjudged row: every pooled document judged, pi = 1), ``none`` (a sample, the -1
#: rows of TREC qrels, whose design the input does not state)
PROBABILITY_SOURCES = ("design", "census", "none")
#: the designs a user may state for judgments whose probabilities are ``none`` (``--assume``):
#: ``uniform``, each topic's judged documents a simple random sample of its pool
ASSUMPTIONS = ("uniform",)


@dataclass(frozen=True, eq=False)
class Judgments:
    """Relevance information over a collection's ``tdi`` space.

    ``grade[i]`` is the qrels value of document ``i`` (0 where unpooled), ``state[i]`` one of
    :data:`UNPOOLED`, :data:`POOLED`, :data:`JUDGED`. ``has_topic[t]`` tells whether the qrels
    name topic ``t`` at all. ``judged_grades`` holds, per topic (CSR by ``grade_offsets``), the
    grades of all judged documents in descending order, including documents no run retrieved;
    it is what ideal rankings and relevant counts are built from.

    Strata (sample_eval's categories; reference-semantics §3.1): ``stratum[i]`` is the stratum
    index of document ``i`` (-1 outside every stratum), ``stratum_labels`` the labels (byte-wise
    order when read from a file). Per topic and stratum, over the whole qrels: ``stratum_size``
    (N_s, entries), ``stratum_sampled`` (n_s, entries with rel >= 0) and
    ``stratum_grades[t, s, g]`` (entries with rel = g, g >= 1; built on first use, and refused
    past :data:`MAX_GRADE_LEVEL` since it has one entry per grade level). Plain TREC qrels form
    one stratum holding every entry. ``max_grade`` is the largest judged grade and
    ``max_grade_line`` its qrels line (``None`` without lines). Nothing is sized by the largest
    grade unless a measure asks for a per-grade table.

    Importance samples (prels; reference-semantics §3.2): ``inclusion[i]`` is document ``i``'s
    inclusion probability (NaN where not sampled, i.e. not judged; ``None`` without prels); per
    topic, ``sampled_count`` counts the sampled documents and ``relevant_sampled_prob`` (CSR by
    ``relevant_sampled_offsets``) holds the probabilities of the sampled relevant documents,
    with their ``tdi`` in ``relevant_sampled_tdi`` (-1 for documents outside the collection).

    Provenance of the inclusion probabilities (design-based estimators need them exactly):
    ``probabilities`` is one of :data:`PROBABILITY_SOURCES`; ``assumed`` the design the user
    stated for judgments without them (:meth:`assuming`; ``None``: nothing assumed). Estimators
    that need the probabilities call :meth:`require_probabilities`, which refuses ``none``
    unless a design is assumed: TREC qrels drop the probabilities of a stratified sample, and
    guessing a uniform one there gave ht(AP) above 1 on TREC-8.
    """

    source: str
    grade: np.ndarray
    state: np.ndarray
    has_topic: np.ndarray
    grade_offsets: np.ndarray
    judged_grades: np.ndarray
    stratum: np.ndarray = field(default=None, repr=False)
    stratum_labels: tuple[str, ...] = ()
    stratum_size: np.ndarray = field(default=None, repr=False)
    stratum_sampled: np.ndarray = field(default=None, repr=False)
    relevant_cell: np.ndarray = field(default=None, repr=False)  #: t * S + s per relevant row
    relevant_grade: np.ndarray = field(default=None, repr=False)  #: its grade (>= 1)
    max_grade: int = 0
    max_grade_line: int | None = None
    inclusion: np.ndarray = field(default=None, repr=False)
    sampled_count: np.ndarray = field(default=None, repr=False)
    relevant_sampled_offsets: np.ndarray = field(default=None, repr=False)
    relevant_sampled_prob: np.ndarray = field(default=None, repr=False)
    relevant_sampled_tdi: np.ndarray = field(default=None, repr=False)
    probabilities: str = "census"
    assumed: str | None = None
    #: whether the judgments list each topic's whole pool: False for prels that list only
    #: the sampled documents (statAP's convention: no row below 0, probabilities below 1),
    #: which the design-based estimators refuse (:meth:`require_probabilities`)
    pool_listed: bool = True
    #: whether some topic was sampled with unequal inclusion probabilities: strata of one
    #: topic with different sampling rates n_h / N_h, or judged documents of one topic with
    #: different given probabilities (prels). Estimators that take the sample as uniform
    #: (infAP, induced AP) warn then.
    unequal_probabilities: bool = False
    #: rows below 0 (pooled, not judged) and the file line of the first (None without lines):
    #: what the refusal of :meth:`require_probabilities` points to (counted only for judgments
    #: without probabilities, the ones it refuses)
    pooled_rows: tuple[int, int | None] = (0, None)
    #: per tdi: pooled, not judged, and listed with inclusion probability 0 (prels of a design
    #: that never judges it: ``merge --format prels`` of a depth-k pool); None when no
    #: document is
    never_sampled: np.ndarray | None = field(default=None, repr=False)
    #: per topic: such rows, over every row of the file (documents no run retrieved too)
    never_sampled_rows: np.ndarray | None = field(default=None, repr=False)
    #: per tdi: the inclusion probability its row gives, judged or not (prels listing the pool
    #: give the design's pi of documents not drawn too); NaN where no row gives one; None
    #: without prels. What the command line's note on thinly sampled pools reads
    listed_inclusion: np.ndarray | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        """Counts, not the arrays: ``Judgments('q.qrels': 3,790 judged, 412 relevant, 1,203
        pooled unjudged; 93 topics; 2 strata: s1, s2; probabilities: strata)``."""
        judged = self.state == JUDGED
        counts = (f"{int(judged.sum()):,} judged, {int((judged & (self.grade > 0)).sum()):,} "
                  f"relevant, {int((self.state == POOLED).sum()):,} pooled unjudged")
        strata = (f"; {len(self.stratum_labels)} strata{few(self.stratum_labels)}"
                  if len(self.stratum_labels) > 1 else "")
        assumed = f", assumed {self.assumed}" if self.assumed else ""
        return (f"Judgments({self.source!r}: {counts} (of the runs' documents); "
                f"{int(self.has_topic.sum())} topics{strata}; probabilities: "
                f"{self.probabilities}{assumed})")

    def assuming(self, design: str | None) -> Judgments:
        """These judgments with ``design`` (one of :data:`ASSUMPTIONS`, or ``None``: nothing)
        stated for them: recorded in ``assumed`` when they carry no probabilities, otherwise
        they are returned as they are (their own probabilities win)."""
        if design is None:
            return self
        if design not in ASSUMPTIONS:
            raise InputError(f"unknown design to assume {design!r} (one of "
                             f"{', '.join(ASSUMPTIONS)})")
        if self.probabilities != "none":
            return self
        return dataclasses.replace(self, assumed=design)

    def judged_inclusion(self, tdi_topic: np.ndarray) -> np.ndarray:
        """Per document (``tdi_topic``: its topic index): a judged document's inclusion
        probability, the one the judgments give (prels, merged designs) or else its stratum's
        rate n_h / N_h (a stratified simple random sample), 1 without strata; 0 where not
        judged."""
        judged = np.flatnonzero(self.state == JUDGED)
        out = np.zeros(len(self.state))
        if self.stratum is None:  # no design recorded: judged documents count as certain
            out[judged] = 1.0
            return out
        size = self.stratum_size.astype(np.float64)
        rate = np.divide(self.stratum_sampled.astype(np.float64), size,
                         out=np.zeros_like(size), where=size > 0)
        pi = rate[tdi_topic[judged], np.maximum(self.stratum[judged], 0)]
        if self.inclusion is not None:
            given = self.inclusion[judged]
            pi = np.where(np.isfinite(given), given, pi)
        out[judged] = pi
        return out

    def judged_share(self) -> np.ndarray:
        """Per topic: the share of its listed entries judged, n_t / N_t over the strata (1
        where the topic lists none: nothing is estimated there)."""
        size = self.stratum_size.sum(axis=1)
        return np.where(size > 0, self.stratum_sampled.sum(axis=1) / np.maximum(size, 1), 1.0)

    def require_probabilities(self, what: str) -> None:
        """Raise :class:`InputError` (naming the file, ``what`` needs them and the formats
        that carry them) when the judgments carry no inclusion probabilities and no design is
        assumed, or when they leave the pool out (prels of the sampled documents alone)."""
        if self.probabilities == "none" and self.assumed is None:
            count, line = self.pooled_rows
            where = (f" ({count} row{'s' * (count != 1)} below 0 here"
                     + (f", the first on line {line})" if line is not None else ")")
                     if count else "")
            raise InputError(missing_probabilities(what) + where, self.source)
        if not self.pool_listed:
            raise InputError(unlisted_pool(what), self.source)

    @property
    def stratum_grades(self) -> np.ndarray:
        """``[t, s, g]``: entries of topic t and stratum s with rel = g (g >= 1; index 0 is 0).

        Built on first use (only measures with per-grade tables ask for it); a grade above
        :data:`MAX_GRADE_LEVEL` raises :class:`InputError` naming its qrels line."""
        cached = self.__dict__.get("_stratum_grades")
        if cached is None:
            self.check_grade_levels("per-grade counts")
            n_topics, n_strata = len(self.has_topic), len(self.stratum_labels)
            n_grades = self.max_grade + 1
            cached = np.bincount(
                self.relevant_cell * n_grades + self.relevant_grade,
                minlength=n_topics * n_strata * n_grades,
            ).astype(np.int64).reshape(n_topics, n_strata, n_grades)
            self.__dict__["_stratum_grades"] = cached
        return cached

    def check_grade_levels(self, what: str) -> None:
        """Raise unless a table with one entry per grade level 0..max_grade is small enough
        for ``what`` (a measure family, for the message)."""
        if self.max_grade > MAX_GRADE_LEVEL:
            raise InputError(
                f"relevance grade {self.max_grade} is too large for {what}, which keep one "
                f"entry per grade level (grades up to {MAX_GRADE_LEVEL} are supported there)",
                self.source,
                self.max_grade_line,
            )

    @classmethod
    def from_qrels(cls, collection: Collection, table: QrelsTable) -> Judgments:
        """Map a qrels table onto ``collection`` (documents no run retrieved still count)."""
        topic, tdi = collection.lookup(table.qid, table.docno)
        labels, row_stratum = _stratum_ids(table)
        given = table.stratum is not None or table.prob is not None  # their format states it
        no_design = "none" if np.any(table.rel < 0) else "census"
        judgments = cls.from_arrays(
            collection, topic, tdi, table.rel, stratum=row_stratum, labels=labels,
            prob=table.prob, source=table.source, lines=table.lineno,
            probabilities="design" if given else no_design,
        )
        if table.prob is not None and no_design == "census" and np.any(table.prob < 1.0):
            # every row judged, yet sampled: the documents not sampled are not listed
            judgments = dataclasses.replace(judgments, pool_listed=False)
        return judgments

    @classmethod
    def from_arrays(
        cls,
        collection: Collection,
        topic: np.ndarray,
        tdi: np.ndarray,
        rel: np.ndarray,
        *,
        stratum: np.ndarray | None = None,
        labels: Sequence[str] | None = None,
        prob: np.ndarray | None = None,
        source: str = "<arrays>",
        lines: np.ndarray | None = None,
        probabilities: str | None = None,
    ) -> Judgments:
        """Judgments from per-row integer arrays, one row per qrels entry.

        ``topic`` is the topic index (-1: a topic outside the collection; the row is ignored),
        ``tdi`` the document (-1: a document no run retrieved; it still counts in R, the ideal
        ranking and the stratum counts), ``rel`` the qrels value (< 0: pooled, not judged).
        ``stratum`` indexes ``labels`` (default: one stratum ``all``); ``prob`` gives inclusion
        probabilities, in (0, 1] on every judged row (prels; ignored on the other rows).
        Vectorised throughout (counts by ``bincount``): the constructor simulations call per
        draw. ``lines`` (the rows' file lines) only serve error messages. No array is sized by
        the largest grade. ``probabilities`` (one of :data:`PROBABILITY_SOURCES`) says where
        the inclusion probabilities come from; by default ``design`` when ``prob`` or
        ``stratum`` is given, else ``census`` without pooled-but-unjudged rows and ``none``
        with them. Raises :class:`InputError` on inconsistent arrays or a repeated ``tdi``.
        """
        if probabilities is None:
            probabilities = ("design" if prob is not None or stratum is not None
                             else "none" if np.any(np.asarray(rel) < 0) else "census")
        elif probabilities not in PROBABILITY_SOURCES:
            raise ValueError(f"probabilities must be one of {', '.join(PROBABILITY_SOURCES)}")
        topic = np.asarray(topic, dtype=np.int64)
        tdi = np.asarray(tdi, dtype=np.int64)
        rel = np.asarray(rel, dtype=np.int64)
        n_topics, n = collection.n_topics, len(rel)
        if stratum is None:
            labels, stratum = ("all",) if labels is None else tuple(labels), np.zeros(n, np.int64)
        elif labels is None:
            raise InputError("stratum indices need their labels", source)
        stratum = np.asarray(stratum, dtype=np.int64)
        labels = tuple(labels)
        _check_rows(collection, topic, tdi, rel, stratum, len(labels), prob, source)
        known = topic >= 0
        inside = tdi >= 0
        has_topic = np.bincount(topic[known], minlength=n_topics) > 0
        grade = np.zeros(collection.n_tdi, dtype=np.int32)
        state = np.zeros(collection.n_tdi, dtype=np.int8)
        at, rel_in = tdi[inside], rel[inside]
        grade[at] = rel_in
        state[at] = np.where(rel_in >= 0, JUDGED, POOLED)
        if np.count_nonzero(state) != len(at):
            raise InputError("a document appears twice in the judgments", source)
        n_strata = len(labels)
        t, st, rv = topic[known], stratum[known], rel[known]
        cell = t * n_strata + st
        judged, relevant = rv >= 0, rv > 0

        def count(index, size):
            return np.bincount(index, minlength=size).astype(np.int64)

        jt, jg = t[judged], rv[judged]
        judged_grades, counts = _descending_grades(jt, jg, n_topics)
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        cells = n_topics * n_strata
        size = count(cell, cells).reshape(n_topics, n_strata)
        sampled = count(cell[judged], cells).reshape(n_topics, n_strata)
        max_grade, max_line = 0, None
        if n and rel.max() > 0:  # over all rows, as the tables have always been sized
            top = int(np.argmax(rel))
            max_grade = int(rel[top])
            max_line = None if lines is None else int(np.asarray(lines)[top])
        row_stratum = np.full(collection.n_tdi, -1, dtype=np.int32)
        row_stratum[at] = stratum[inside]
        sample = {}
        if prob is not None:
            prob = np.asarray(prob, dtype=np.float64)
            inclusion = np.full(collection.n_tdi, np.nan)
            with_prob = inside & (rel >= 0)
            inclusion[tdi[with_prob]] = prob[with_prob]
            listed = np.full(collection.n_tdi, np.nan)
            listed[at] = prob[inside]
            rt = t[relevant]
            by_topic = np.argsort(rt, kind="stable")
            sample = dict(
                inclusion=inclusion,
                listed_inclusion=listed,
                sampled_count=counts,
                relevant_sampled_offsets=np.concatenate(
                    [[0], np.cumsum(np.bincount(rt, minlength=n_topics))]
                ).astype(np.int64),
                relevant_sampled_prob=prob[known][relevant][by_topic],
                relevant_sampled_tdi=tdi[known][relevant][by_topic],
            )
            never = known & (rel < 0) & (prob == 0)
            if never.any():
                sample["never_sampled"] = np.zeros(collection.n_tdi, dtype=bool)
                sample["never_sampled"][tdi[never & inside]] = True
                sample["never_sampled_rows"] = np.bincount(topic[never], minlength=n_topics)
        pooled_rows = (0, None)
        if probabilities == "none":  # only the refusal reads them: not on a draw's hot path
            below = np.flatnonzero(rel < 0)
            pooled_rows = (len(below), None if lines is None or not len(below)
                           else int(np.asarray(lines)[below[0]]))
        unequal = _unequal_rates(size, sampled)
        if prob is not None and not unequal:
            with_p = known & (rel >= 0)
            unequal = varies_within(topic[with_p], prob[with_p], n_topics)
        return cls(
            source, grade, state, has_topic, offsets, judged_grades,
            row_stratum, labels, size, sampled, cell[relevant], rv[relevant], max_grade, max_line,
            **sample, probabilities=probabilities, unequal_probabilities=bool(unequal),
            pooled_rows=pooled_rows,
        )


def _unequal_rates(size: np.ndarray, sampled: np.ndarray) -> bool:
    """Whether some topic's non-empty strata (``size`` > 0) have different rates n / N."""
    if size.shape[1] < 2:
        return False
    rate = sampled / np.maximum(size, 1)
    hi = np.where(size > 0, rate, -np.inf).max(axis=1)
    lo = np.where(size > 0, rate, np.inf).min(axis=1)
    return bool(np.any((hi > -np.inf) & (hi - lo > 1e-12)))


def varies_within(group: np.ndarray, value: np.ndarray, n_groups: int, *,
                  floor: float = 0.0) -> bool:
    """Whether ``value`` differs between two rows of one group (``group``: the rows' group
    indices, below ``n_groups``, e.g. topics) by more than 1e-12 times the larger of the
    group's largest value and ``floor``."""
    if not len(group):
        return False
    hi, lo = group_range(group, value, n_groups)
    seen = hi > -np.inf
    return bool(np.any(hi[seen] - lo[seen] > 1e-12 * np.maximum(hi[seen], floor)))


def group_range(group: np.ndarray, value: np.ndarray,
                n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group (``group``: the rows' group indices, below ``n_groups``): the largest and the
    smallest ``value`` of its rows (-inf and +inf for a group with none)."""
    hi = np.full(n_groups, -np.inf)
    lo = np.full(n_groups, np.inf)
    np.maximum.at(hi, group, value)
    np.minimum.at(lo, group, value)
    return hi, lo


def check_common_topics(collection: Collection, judgments: Judgments) -> None:
    """Every run must share at least one topic with the judgments."""
    answered = collection.segment_lengths() > 0
    shared = answered & judgments.has_topic
    for r in range(collection.n_runs):
        if not shared[r].any():
            topics = np.asarray(collection.topics, dtype=object)
            mine, theirs = topics[answered[r]][:3], topics[judgments.has_topic][:3]
            raise InputError(
                f"run {collection.run_names[r]!r} has no topic in common with the qrels "
                f"({judgments.source}; topic ids compare as text: the run's "
                f"{', '.join(mine) or 'none'}, the qrels' {', '.join(theirs) or 'none'})",
                collection.run_sources[r],
            )


def _descending_grades(topic: np.ndarray, grade: np.ndarray, n_topics: int):
    """(judged grades grouped by topic, each topic's in descending order; count per topic).

    Few grade levels (the usual 0..4): counted per (topic, grade) and expanded, which is what
    simulations, building judgments per draw, need to be fast. Otherwise sorted, so that no
    array is sized by the largest grade."""
    counts = np.bincount(topic, minlength=n_topics).astype(np.int64)
    top = int(grade.max(initial=0))
    if top >= 64:
        key = topic.astype(np.int64) * (2**32) + (INT32_LIMIT - grade)
        return grade[np.argsort(key, kind="stable")].astype(np.int32), counts
    levels = top + 1
    by_grade = np.bincount(topic * levels + grade, minlength=n_topics * levels)
    by_grade = by_grade.reshape(n_topics, levels)[:, ::-1]
    descending = np.arange(levels - 1, -1, -1, dtype=np.int32)
    return np.repeat(np.tile(descending, n_topics), by_grade.ravel()), counts


INT32_LIMIT = 2**31


def _check_rows(collection, topic, tdi, rel, stratum, n_strata, prob, source) -> None:
    """Raise :class:`InputError` unless the per-row arrays of ``from_arrays`` fit together."""
    n = len(rel)
    lengths = {len(topic), len(tdi), len(stratum), n} | ({len(prob)} if prob is not None else set())
    if len(lengths) != 1:
        raise InputError(f"per-row arrays differ in length ({sorted(lengths)})", source)
    if n == 0:
        return
    if topic.min() < -1 or topic.max() >= collection.n_topics:
        raise InputError("topic index out of range", source)
    if tdi.min() < -1 or tdi.max() >= collection.n_tdi:
        raise InputError("document index (tdi) out of range", source)
    if stratum.min() < 0 or stratum.max() >= n_strata:
        raise InputError(f"stratum index out of range (there are {n_strata} labels)", source)
    inside = tdi >= 0
    t = topic[inside]
    lo = collection.topic_doc_offsets[np.maximum(t, 0)]
    hi = collection.topic_doc_offsets[np.maximum(t, 0) + 1]
    if np.any((t < 0) | (tdi[inside] < lo) | (tdi[inside] >= hi)):
        raise InputError("a document index (tdi) belongs to another topic than its row's", source)
    if prob is not None:
        judged = (topic >= 0) & (rel >= 0)
        p = np.asarray(prob, dtype=np.float64)[judged]
        if not np.all((p > 0) & (p <= 1)):
            raise InputError("inclusion probabilities of judged rows must be in (0, 1]", source)


def _stratum_ids(table: QrelsTable) -> tuple[tuple[str, ...], np.ndarray]:
    """Stratum labels (byte-wise sorted) and each row's stratum index; one stratum if none."""
    if table.stratum is None:
        return ("all",), np.zeros(len(table.rel), dtype=np.int32)
    enc = pc.dictionary_encode(table.stratum.cast(pa.binary()))
    order = numbers(pc.sort_indices(enc.dictionary))
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    labels = _decode(enc.dictionary.take(number_array(order)))
    return labels, rank[numbers(enc.indices)]
