"""Runs x topics as integer arrays: the :class:`Collection` (see :mod:`irsample.model`).

- Topics are numbered in byte-wise (``strcmp``) order of their ids.
- Documents are interned *per topic*: the pairs (topic, document) that occur in any run or in
  the judgments form one index space, ``tdi`` ("topic-document index"), ordered by topic and then
  by docno byte-wise. Topic ``t`` owns ``tdi`` in
  ``[topic_doc_offsets[t], topic_doc_offsets[t+1])``.
- A run's ranking for a topic is a segment of ``rank_tdi`` (CSR: segment ``s = run * T + topic``
  spans ``rank_offsets[s]:rank_offsets[s+1]``), already in trec_eval order: score descending,
  ties broken by docno descending (reference-semantics §1). The rank column of the file never
  matters.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numba
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._build import find_docs, gather_strings, intern_strings, intern_topic_docs
from .._rank import group_rows, rank_runs
from ..errors import InputError
from ..io.arrow import binary_of, number_array, numbers
from ..io.trec import QrelsTable, RunTable, text_of


def _intern_sorted(arrays: Sequence[pa.Array]) -> tuple[pa.Array, list[np.ndarray]]:
    """Intern binary strings: the sorted distinct values and each array's indices into them.

    One dictionary encoding over all arrays (no concatenated copy); the dictionary is then
    sorted byte-wise so that indices compare like ``strcmp`` on the strings.
    """
    if not arrays:
        return binary_of([]), []
    chunks = pc.dictionary_encode(
        pa.chunked_array([a.cast(pa.binary()) for a in arrays], pa.binary())
    ).chunks
    dictionary = max((c.dictionary for c in chunks), key=len)
    order = numbers(pc.sort_indices(dictionary))
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    ids = [rank[numbers(c.indices)] for c in chunks]
    ids += [np.zeros(0, np.int32)] * (len(arrays) - len(ids))  # trailing empty arrays
    return dictionary.take(number_array(order)), ids


def _binary_parts(values) -> tuple[np.ndarray, np.ndarray]:
    """Offsets and data of a binary/string Arrow array as NumPy views (no copy for binary)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if values.type not in (pa.binary(), pa.large_binary()):
        values = values.cast(pa.binary())
    dtype = np.int64 if values.type == pa.large_binary() else np.int32
    if len(values) == 0:
        return np.zeros(1, dtype), np.zeros(0, np.uint8)
    _, offsets, data = values.buffers()
    offsets = np.frombuffer(offsets, dtype)[values.offset : values.offset + len(values) + 1]
    data = (
        np.frombuffer(data, np.uint8) if data is not None and data.size else np.zeros(0, np.uint8)
    )
    return offsets, data


def _binary_from(offsets: np.ndarray, data: np.ndarray) -> pa.Array:
    """An Arrow binary array over int64 ``offsets`` and ``data`` (large_binary past 2 GiB)."""
    large = offsets[-1] >= 2**31
    typ = pa.large_binary() if large else pa.binary()
    offsets = offsets if large else offsets.astype(np.int32)
    return pa.Array.from_buffers(
        typ, len(offsets) - 1, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )


def _intern_topics(tables) -> tuple[pa.Array, np.ndarray]:
    """Sorted distinct qids of all tables and every row's index into them (int32, all rows).

    Each table is interned on its own first (consecutive rows usually share the qid), so the
    global dictionary only sees each table's few distinct qids.
    """
    local = [intern_strings(*_binary_parts(t.qid)) for t in tables]
    values, maps = _intern_sorted(
        [t.qid.take(number_array(first)) for t, (_, first) in zip(tables, local)]
    )
    row_topic = np.empty(sum(len(ids) for ids, _ in local), dtype=np.int32)
    at = 0
    for (ids, _), m in zip(local, maps):
        np.take(m, ids, out=row_topic[at : at + len(ids)])
        at += len(ids)
    return values, row_topic


def _decode(values: pa.Array) -> tuple[str, ...]:
    return tuple(v.decode("utf-8", "surrogateescape") for v in values.to_pylist())


def few(names, shown: int = 3) -> str:
    """``": a, b, c, ..."``: the first ``shown`` of ``names`` for a short repr ("" if none)."""
    names = list(names)
    if not names:
        return ""
    return ": " + ", ".join(map(str, names[:shown])) + (", ..." if len(names) > shown else "")


class RunsAndTopics:
    """``n_runs`` and ``n_topics`` of anything that names its ``run_names`` and ``topics``."""

    @property
    def n_runs(self) -> int:
        return len(self.run_names)

    @property
    def n_topics(self) -> int:
        return len(self.topics)


@dataclass(frozen=True, eq=False)
class Collection(RunsAndTopics):
    """Runs x topics, with rankings as integer document ids in trec_eval order.

    Build one with :meth:`build` (from parsed tables) or :func:`irsample.load` (from files).
    """

    topics: tuple[str, ...]
    run_names: tuple[str, ...]
    run_sources: tuple[str, ...]
    topic_doc_offsets: np.ndarray = field(repr=False)  #: (T+1,) int64
    tdi_docno: pa.Array = field(repr=False)  #: (n_tdi,) binary: the docno of every ``tdi``
    rank_offsets: np.ndarray = field(repr=False)  #: (R*T+1,) int64
    rank_tdi: np.ndarray = field(repr=False)  #: (positions,) int32
    rank_score: np.ndarray = field(repr=False)  #: (positions,) float64
    #: per judgments table the collection was built with: its (qid, docno) columns and each
    #: row's topic and ``tdi``, placed by :meth:`build` (:meth:`lookup` answers them)
    located: tuple = field(default=(), repr=False)

    @property
    def n_tdi(self) -> int:
        return len(self.tdi_docno)

    def __repr__(self) -> str:
        """Counts and the first few names, not the arrays: ``Collection(4 runs: a, b, c, ...;
        93 topics: 1, 10, 11, ...; 75,807 topic-documents)``."""
        return (f"Collection({self.n_runs} runs{few(self.run_names)}; {self.n_topics} "
                f"topics{few(self.topics)}; {self.n_tdi:,} topic-documents)")

    @cached_property
    def _doc_dictionary(self) -> tuple[pa.Array, np.ndarray]:
        docnos, (tdi_doc,) = _intern_sorted([self.tdi_docno])
        return docnos, tdi_doc

    @property
    def docnos(self) -> pa.Array:
        """Distinct docnos of the collection, byte-wise sorted (computed on first use)."""
        return self._doc_dictionary[0]

    @property
    def tdi_doc(self) -> np.ndarray:
        """(n_tdi,) int32 index of every ``tdi``'s docno into :attr:`docnos`."""
        return self._doc_dictionary[1]

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
        return list(_decode(self.tdi_docno.take(number_array(tdi))))

    @classmethod
    def build(cls, runs: Sequence[RunTable], qrels: Sequence[QrelsTable] = ()) -> Collection:
        """Intern topics and documents of ``runs`` and ``qrels`` and rank every run.

        Raises :class:`InputError` naming the file and line of a document repeated within a
        topic of one run.
        """
        tables = list(runs) + list(qrels)
        n_threads = numba.get_num_threads()
        topic_values, row_topic = _intern_topics(tables)
        n_topics = len(topic_values)
        base = np.zeros(len(tables) + 1, dtype=np.int64)
        base[1:] = np.cumsum([len(t) for t in tables])
        grp, seg_offsets = group_rows(row_topic, base, n_topics)
        del row_topic
        parts = [_binary_parts(t.docno) for t in tables] or [
            (np.zeros(1, np.int32), np.zeros(0, np.uint8))
        ]
        data_base = np.zeros(len(parts), dtype=np.int64)
        data_base[1:] = np.cumsum(np.array([o[-1] - o[0] for o, _ in parts], dtype=np.int64))[:-1]
        data_base -= np.array([o[0] for o, _ in parts], dtype=np.int64)
        offsets = np.concatenate([o for o, _ in parts])
        data = np.concatenate([d[o[0] : o[-1]] for o, d in parts])
        row_local, topic_doc_offsets, doc_start, doc_end = intern_topic_docs(
            grp, seg_offsets, base, offsets, data_base, data, n_topics, n_threads
        )
        tdi_docno = _binary_from(*gather_strings(data, doc_start, doc_end))
        del offsets, data, doc_start, doc_end
        n_rows = int(base[len(runs)])
        rank_tdi = np.empty(n_rows, dtype=np.int32)
        rank_score = np.empty(n_rows, dtype=np.float64)
        score = np.concatenate(
            [np.asarray(r.score, dtype=np.float64) for r in runs] or [np.zeros(0)]
        )
        dup_run, dup_row = rank_runs(
            score, base, grp, seg_offsets, row_local, topic_doc_offsets, len(runs), n_threads,
            rank_tdi, rank_score,
        )
        del score
        if dup_run >= 0:
            _raise_duplicate(runs, int(base[dup_run]) + int(dup_row))
        names = unique_run_names([r.name for r in runs], [r.source for r in runs])
        located = []
        for k, table in enumerate(qrels, start=len(runs)):
            segments = seg_offsets[k * n_topics : (k + 1) * n_topics + 1]
            at = slice(segments[0], segments[-1])
            topic = np.repeat(np.arange(n_topics, dtype=np.int64), np.diff(segments))
            row_topic, row_tdi = np.empty((2, len(table)), dtype=np.int64)
            row_topic[grp[at]] = topic
            row_tdi[grp[at]] = topic_doc_offsets[topic] + row_local[at]
            located.append((table.qid, table.docno, row_topic, row_tdi))
        return cls(
            topics=_decode(topic_values),
            run_names=names,
            run_sources=tuple(r.source for r in runs),
            topic_doc_offsets=topic_doc_offsets,
            tdi_docno=tdi_docno,
            rank_offsets=seg_offsets[: len(runs) * n_topics + 1].copy(),
            rank_tdi=rank_tdi,
            rank_score=rank_score,
            located=tuple(located),
        )

    def lookup(self, qid: pa.Array, docno: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        """Topic index and ``tdi`` of each (qid, docno) pair; -1 where not in the collection.

        The columns of a judgments table the collection was built with are answered from the
        build, which placed every row already (no search: a third of the time of
        ``Judgments.from_qrels`` on TREC-8)."""
        for q, d, t, tdi in self.located:
            if qid is q and docno is d:
                return t.copy(), tdi.copy()
        t = pc.index_in(qid.cast(pa.binary()), value_set=binary_of(self.topics))
        t = numbers(t, missing=-1).astype(np.int64)
        q_offsets, q_data = _binary_parts(docno)
        d_offsets, d_data = _binary_parts(self.tdi_docno)
        tdi = find_docs(q_offsets, q_data, t, self.topic_doc_offsets, d_offsets, d_data)
        return t, tdi


def unique_run_names(names: Sequence[str], sources: Sequence[str]) -> tuple[str, ...]:
    """The runs' names: each tag, and a repeated tag with its file (``tag (path)``). One file
    given twice is an error (every output format keys a run by its name, and it would be
    evaluated twice or, in JSON, once); runs from memory (a source such as ``<DataFrame>``,
    one per frame without a tag column) are numbered in order instead (``name #2``)."""
    seen = Counter(names)
    out = [n if seen[n] == 1 else f"{n} ({s})" for n, s in zip(names, sources)]
    counts = Counter(out)
    numbered: dict[str, int] = {}
    for i, (label, name, s) in enumerate(zip(list(out), names, sources)):
        if counts[label] > 1:
            if not str(s).startswith("<"):
                raise InputError("this run file is given twice (with the same run tag)", s)
            numbered[label] = numbered.get(label, 0) + 1
            out[i] = f"{name} #{numbered[label]}"
    return tuple(out)


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
