"""The data model: a :class:`Collection` of ranked runs and :class:`Judgments` over it.

Everything after parsing works on integer arrays:

- Topics are numbered in byte-wise (``strcmp``) order of their ids.
- Documents are interned *per topic*: the pairs (topic, document) that occur in any run or in
  the judgments form one index space, ``tdi`` ("topic-document index"), ordered by topic and then
  by docno byte-wise. Topic ``t`` owns ``tdi`` in ``[topic_doc_offsets[t], topic_doc_offsets[t+1])``.
- A run's ranking for a topic is a segment of ``rank_tdi`` (CSR: segment ``s = run * T + topic``
  spans ``rank_offsets[s]:rank_offsets[s+1]``), already in trec_eval order: score descending,
  ties broken by docno descending (reference-semantics §1). The rank column of the file never
  matters.
- :class:`Judgments` are arrays over ``tdi``: the qrels value (``grade``) and the document's
  state (unpooled / pooled-but-unjudged / judged), plus per-topic facts from the whole qrels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numba
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ._build import intern_topic_docs, rank_segments
from .errors import InputError
from .io.trec import QrelsTable, RunTable, text_of

UNPOOLED = np.int8(0)  #: absent from the qrels
POOLED = np.int8(1)  #: in the qrels with a negative value: pooled, not judged
JUDGED = np.int8(2)  #: in the qrels with a value >= 0


def _intern_sorted(arrays: Sequence[pa.Array]) -> tuple[pa.Array, list[np.ndarray]]:
    """Intern binary strings: the sorted distinct values and each array's indices into them.

    One dictionary encoding over all arrays (no concatenated copy); the dictionary is then
    sorted byte-wise so that indices compare like ``strcmp`` on the strings.
    """
    if not arrays:
        return pa.array([], pa.binary()), []
    chunks = pc.dictionary_encode(pa.chunked_array([a.cast(pa.binary()) for a in arrays], pa.binary())).chunks
    dictionary = max((c.dictionary for c in chunks), key=len)
    order = pc.sort_indices(dictionary).to_numpy()
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    ids = [rank[c.indices.to_numpy(zero_copy_only=False)] for c in chunks]
    ids += [np.zeros(0, np.int32)] * (len(arrays) - len(ids))  # trailing empty arrays
    return dictionary.take(pa.array(order)), ids


def _decode(values: pa.Array) -> tuple[str, ...]:
    return tuple(v.decode("utf-8", "surrogateescape") for v in values.to_pylist())


@dataclass(frozen=True, eq=False)
class Collection:
    """Runs x topics, with rankings as integer document ids in trec_eval order.

    Build one with :meth:`build` (from parsed tables) or :func:`irsample.load` (from files).
    """

    topics: tuple[str, ...]
    run_names: tuple[str, ...]
    run_sources: tuple[str, ...]
    docnos: pa.Array = field(repr=False)  #: distinct docnos, byte-wise sorted
    topic_doc_offsets: np.ndarray = field(repr=False)  #: (T+1,) int64
    tdi_doc: np.ndarray = field(repr=False)  #: (n_tdi,) int32 index into ``docnos``
    rank_offsets: np.ndarray = field(repr=False)  #: (R*T+1,) int64
    rank_tdi: np.ndarray = field(repr=False)  #: (positions,) int32
    rank_score: np.ndarray = field(repr=False)  #: (positions,) float64

    @property
    def n_runs(self) -> int:
        return len(self.run_names)

    @property
    def n_topics(self) -> int:
        return len(self.topics)

    @property
    def n_tdi(self) -> int:
        return len(self.tdi_doc)

    @property
    def tdi_topic(self) -> np.ndarray:
        """Topic index of every ``tdi``."""
        return np.repeat(
            np.arange(self.n_topics, dtype=np.int32), np.diff(self.topic_doc_offsets)
        )

    def segment_lengths(self) -> np.ndarray:
        """Documents retrieved per (run, topic), shape ``(n_runs, n_topics)``."""
        return np.diff(self.rank_offsets).reshape(self.n_runs, self.n_topics)

    def ranking(self, run: int | str, topic: int | str) -> list[str]:
        """The docnos a run retrieved for a topic, in trec_eval order."""
        r = self.run_names.index(run) if isinstance(run, str) else run
        t = self.topics.index(topic) if isinstance(topic, str) else topic
        s = r * self.n_topics + t
        tdi = self.rank_tdi[self.rank_offsets[s] : self.rank_offsets[s + 1]]
        return list(_decode(self.docnos.take(pa.array(self.tdi_doc[tdi]))))

    @classmethod
    def build(cls, runs: Sequence[RunTable], qrels: Sequence[QrelsTable] = ()) -> "Collection":
        """Intern topics and documents of ``runs`` and ``qrels`` and rank every run.

        Raises :class:`InputError` naming the file and line of a document repeated within a
        topic of one run.
        """
        tables = list(runs) + list(qrels)
        topic_values, topic_ids = _intern_sorted([t.qid for t in tables])
        docnos, doc_ids = _intern_sorted([t.docno for t in tables])
        n_topics = len(topic_values)
        concat = lambda parts, dtype: np.concatenate(parts) if parts else np.zeros(0, dtype)
        row_tdi, topic_doc_offsets, tdi_doc = intern_topic_docs(
            concat(topic_ids, np.int32), concat(doc_ids, np.int32), n_topics, len(docnos),
            numba.get_num_threads(),
        )
        n_rows = sum(len(r) for r in runs)
        row_tdi = row_tdi[:n_rows]
        row_run = np.repeat(np.arange(len(runs), dtype=np.int64), [len(r) for r in runs])
        seg = row_run * n_topics + concat(topic_ids[: len(runs)], np.int32)
        score = concat([r.score for r in runs], np.float64)
        perm, offsets, dup = rank_segments(
            seg, score, row_tdi, len(runs) * n_topics, len(tdi_doc), numba.get_num_threads()
        )
        if dup >= 0:
            _raise_duplicate(runs, dup)
        names = _unique_names(runs)
        return cls(
            topics=_decode(topic_values),
            run_names=names,
            run_sources=tuple(r.source for r in runs),
            docnos=docnos,
            topic_doc_offsets=topic_doc_offsets,
            tdi_doc=tdi_doc,
            rank_offsets=offsets,
            rank_tdi=row_tdi[perm],
            rank_score=score[perm],
        )

    def lookup(self, qid: pa.Array, docno: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        """Topic index and ``tdi`` of each (qid, docno) pair; -1 where not in the collection."""
        t = pc.index_in(qid.cast(pa.binary()), value_set=pa.array(self.topics, pa.binary()))
        d = pc.index_in(docno.cast(pa.binary()), value_set=self.docnos)
        t = t.fill_null(-1).to_numpy().astype(np.int64)
        d = d.fill_null(-1).to_numpy().astype(np.int64)
        tdi = np.full(len(t), -1, dtype=np.int64)
        ok = (t >= 0) & (d >= 0)
        lo = self.topic_doc_offsets[t[ok]]
        hi = self.topic_doc_offsets[t[ok] + 1]
        found = np.full(ok.sum(), -1, dtype=np.int64)
        # documents of one topic are sorted by doc index: binary search inside the topic's range
        key = self.tdi_doc.astype(np.int64) + self.tdi_topic.astype(np.int64) * len(self.docnos)
        want = t[ok] * len(self.docnos) + d[ok]
        pos = np.searchsorted(key, want)
        hit = (pos < len(key)) & (pos >= lo) & (pos < hi)
        hit[hit] &= key[pos[hit]] == want[hit]
        found[hit] = pos[hit]
        tdi[ok] = found
        return t, tdi


def _unique_names(runs: Sequence[RunTable]) -> tuple[str, ...]:
    names = [r.name for r in runs]
    seen: dict[str, int] = {}
    for n in names:
        seen[n] = seen.get(n, 0) + 1
    return tuple(
        n if seen[n] == 1 else f"{n} ({r.source})" for n, r in zip(names, runs)
    )


def _raise_duplicate(runs: Sequence[RunTable], row: int) -> None:
    for run in runs:
        if row < len(run):
            raise InputError(
                f"document {text_of(run.docno[row].as_py())!r} appears twice in topic "
                f"{text_of(run.qid[row].as_py())!r}",
                run.source,
                int(run.lineno[row]),
            )
        row -= len(run)


@dataclass(frozen=True, eq=False)
class Judgments:
    """Relevance information over a collection's ``tdi`` space.

    ``grade[i]`` is the qrels value of document ``i`` (0 where unpooled), ``state[i]`` one of
    :data:`UNPOOLED`, :data:`POOLED`, :data:`JUDGED`. ``has_topic[t]`` tells whether the qrels
    name topic ``t`` at all. ``judged_grades`` holds, per topic (CSR by ``grade_offsets``), the
    grades of all judged documents in descending order, including documents no run retrieved;
    it is what ideal rankings and relevant counts are built from.

    Strata (sample_eval's categories; reference-semantics §3.1): ``stratum[i]`` is the stratum
    index of document ``i`` (-1 outside every stratum), ``stratum_labels`` the labels in
    byte-wise order. Per topic and stratum, over the whole qrels: ``stratum_size`` (N_s,
    entries), ``stratum_sampled`` (n_s, entries with rel >= 0) and ``stratum_grades[t, s, g]``
    (entries with rel = g, g >= 1). Plain TREC qrels form one stratum holding every entry.
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
    stratum_grades: np.ndarray = field(default=None, repr=False)

    @classmethod
    def from_qrels(cls, collection: Collection, table: QrelsTable) -> "Judgments":
        """Map a qrels table onto ``collection`` (documents no run retrieved still count)."""
        topic, tdi = collection.lookup(table.qid, table.docno)
        n_topics = collection.n_topics
        has_topic = np.zeros(n_topics, dtype=bool)
        has_topic[topic[topic >= 0]] = True
        grade = np.zeros(collection.n_tdi, dtype=np.int32)
        state = np.zeros(collection.n_tdi, dtype=np.int8)
        inside = tdi >= 0
        grade[tdi[inside]] = table.rel[inside]
        state[tdi[inside]] = np.where(table.rel[inside] >= 0, JUDGED, POOLED)
        judged = (table.rel >= 0) & (topic >= 0)
        jt, jg = topic[judged], table.rel[judged]
        order = np.lexsort((-jg, jt))
        counts = np.bincount(jt, minlength=n_topics)
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        labels, row_stratum = _stratum_ids(table)
        n_strata, n_grades = len(labels), int(max(table.rel.max(initial=0), 0)) + 1
        known = topic >= 0
        t, st, rel = topic[known], row_stratum[known], table.rel[known]
        size = np.zeros((n_topics, n_strata), dtype=np.int64)
        np.add.at(size, (t, st), 1)
        sampled = np.zeros((n_topics, n_strata), dtype=np.int64)
        np.add.at(sampled, (t[rel >= 0], st[rel >= 0]), 1)
        grades = np.zeros((n_topics, n_strata, n_grades), dtype=np.int64)
        np.add.at(grades, (t[rel > 0], st[rel > 0], rel[rel > 0]), 1)
        stratum = np.full(collection.n_tdi, -1, dtype=np.int32)
        stratum[tdi[inside]] = row_stratum[inside]
        return cls(
            table.source, grade, state, has_topic, offsets, jg[order].astype(np.int32),
            stratum, labels, size, sampled, grades,
        )


def _stratum_ids(table: QrelsTable) -> tuple[tuple[str, ...], np.ndarray]:
    """Stratum labels (byte-wise sorted) and each row's stratum index; one stratum if none."""
    if table.stratum is None:
        return ("all",), np.zeros(len(table.rel), dtype=np.int32)
    enc = pc.dictionary_encode(table.stratum.cast(pa.binary()))
    order = pc.sort_indices(enc.dictionary).to_numpy()
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    labels = _decode(enc.dictionary.take(pa.array(order)))
    return labels, rank[enc.indices.to_numpy(zero_copy_only=False)]
