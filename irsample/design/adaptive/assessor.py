"""Assessors: who grades the documents an adaptive judging method selects.

An :class:`Assessor` answers ``judge(topic, docs)`` for a batch of documents of one topic (topic
index, ``tdi`` array of a :class:`~irsample.model.Collection`) with their grades, or -1 for a
document handed out but not judged yet.

- :class:`QrelsAssessor` simulates an assessor with complete qrels. A document the qrels do not
  judge is taken as non-relevant (grade 0), as trec_eval does with unpooled documents and with
  those listed below 0 (pooled, not judged; the Web track's -2); ``outside`` and ``unjudged``
  count the two kinds, so that a simulation can say how many of its judgments were such guesses.
- :class:`FileAssessor` is a human working through files in a state directory ``DIR``; the
  files are the whole state, so every invocation of ``irsample judge`` resumes where the last
  one stopped:

  ``DIR/order.tsv``   every document handed out, in order: ``step topic docno grade`` (TSV
                      with a header; written by irsample, the grade column for reading only);
  ``DIR/batch.tsv``   the documents still to judge, ``topic docno`` (written by irsample);
  ``DIR/judgments``   the assessor's grades as TREC qrels lines ``topic 0 docno grade``, in any
                      order, any subset (grade -1: not judged yet; any other value below
                      0 is an error, as is a document not handed out, with file:line);
  ``DIR/qrels``       the judged documents as TREC qrels, in judging order (written by irsample);
  ``DIR/config.json`` the method and options of the session; later invocations must match
                      (the runs as a set: their order does not matter).

  Until every handed-out document is judged, an invocation writes the missing ones to
  ``batch.tsv`` again; then the method continues from all the grades (its state depends on the
  judged documents only, so corrected grades are taken into account) and hands out the next
  batch.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from pathlib import Path

import numpy as np
import pyarrow as pa

from ...errors import DesignError, InputError
from ...io.output import write_atomic
from ...io.trec import QrelsTable, read_qrels
from ...model import Collection

CONFIG, ORDER, BATCH, JUDGMENTS, QRELS = (
    "config.json",
    "order.tsv",
    "batch.tsv",
    "judgments",
    "qrels",
)
ORDER_HEADER = "step\ttopic\tdocno\tgrade"


class Assessor(ABC):
    """Grades documents of a collection."""

    @abstractmethod
    def judge(self, topic: int, docs: np.ndarray) -> np.ndarray:
        """Grades (>= 0) of ``docs`` (tdi of topic ``topic``); -1 where not judged yet."""


class QrelsAssessor(Assessor):
    """Answers from complete judgments; documents they do not judge are judged non-relevant."""

    _ABSENT, _LISTED_UNJUDGED = -1, -2

    def __init__(self, collection: Collection, table: QrelsTable):
        topic, tdi = collection.lookup(table.qid, table.docno)
        self._grade = np.full(collection.n_tdi, self._ABSENT, np.int64)
        rel = np.asarray(table.rel, np.int64)
        inside = tdi >= 0
        self._grade[tdi[inside]] = np.where(rel[inside] >= 0, rel[inside], self._LISTED_UNJUDGED)
        self.outside = 0  #: documents judged so far that the qrels do not list (graded 0)
        self.unjudged = 0  #: documents judged so far that the qrels list below 0 (graded 0)

    def judge(self, topic: int, docs: np.ndarray) -> np.ndarray:
        grades = self._grade[docs]
        self.outside += int((grades == self._ABSENT).sum())
        self.unjudged += int((grades == self._LISTED_UNJUDGED).sum())
        return np.where(grades < 0, 0, grades)


class FileAssessor(Assessor):
    """A human assessor: grades come from ``DIR/judgments`` (see the module docstring).

    Reading validates the state: ``order.tsv`` must name documents of the collection, once
    each, with steps 1, 2, ...; ``judgments`` must be TREC qrels naming handed-out documents
    only. Errors are :class:`~irsample.errors.InputError` with file and line.
    """

    def __init__(self, collection: Collection, directory):
        self.collection = collection
        self.directory = Path(directory)
        if self.directory.exists() and not self.directory.is_dir():
            raise InputError("the judging state must be a directory", str(self.directory))
        self._topic, self._tdi = self._read_order()
        self._grades = self._read_judgments()

    def history(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(topic, tdi, grade) of the documents handed out so far, in order (-1: not judged)."""
        grade = np.array([self._grades.get(int(d), -1) for d in self._tdi], np.int64)
        return self._topic, self._tdi, grade

    def judge(self, topic: int, docs: np.ndarray) -> np.ndarray:
        return np.array([self._grades.get(int(d), -1) for d in docs], np.int64)

    def _read_order(self) -> tuple[np.ndarray, np.ndarray]:
        path = self.directory / ORDER
        empty = np.zeros(0, np.int64)
        if not path.exists():
            return empty, empty
        lines = _read_lines(path)
        if not lines or lines[0].rstrip("\r") != ORDER_HEADER:
            raise InputError(f"expected the header {ORDER_HEADER!r}", str(path), 1)
        qids, docnos, linenos = [], [], []
        for number, text in enumerate(lines[1:], start=2):
            if not text.strip():
                continue
            fields = text.rstrip("\r").split("\t")
            if len(fields) != 4:
                raise InputError(
                    f"expected 4 tab-separated fields ({ORDER_HEADER.replace(chr(9), ' ')}), "
                    f"found {len(fields)}",
                    str(path),
                    number,
                )
            if fields[0] != str(len(qids) + 1):
                raise InputError(
                    f"expected step {len(qids) + 1}, found {fields[0]!r}", str(path), number
                )
            qids.append(fields[1])
            docnos.append(fields[2])
            linenos.append(number)
        if not qids:
            return empty, empty
        topic, tdi = self.collection.lookup(
            pa.array(qids, pa.binary()), pa.array(docnos, pa.binary())
        )
        for i in np.flatnonzero(tdi < 0)[:1]:
            raise InputError(f"document {docnos[i]!r} of topic {qids[i]!r} is not in the runs",
                             str(path), linenos[i])
        seen: dict[int, int] = {}
        for i, d in enumerate(tdi.tolist()):
            if d in seen:
                raise InputError(f"document {docnos[i]!r} of topic {qids[i]!r} is handed out twice "
                                 f"(first at line {linenos[seen[d]]})", str(path), linenos[i])
            seen[d] = i
        return topic.astype(np.int64), tdi.astype(np.int64)

    def _read_judgments(self) -> dict[int, int]:
        path = self.directory / JUDGMENTS
        if not path.exists() or not any(
            line.strip() and not line.lstrip().startswith("#") for line in _read_lines(path)
        ):
            return {}
        table = read_qrels(str(path))
        topic, tdi = self.collection.lookup(table.qid, table.docno)
        handed = set(self._tdi.tolist())
        grades = {}
        for i, (d, rel) in enumerate(zip(tdi.tolist(), np.asarray(table.rel).tolist())):
            if d < 0 or d not in handed:
                qid, docno = (table.qid[i].as_py(), table.docno[i].as_py())
                raise InputError(
                    f"document {docno.decode(errors='replace')!r} of topic "
                    f"{qid.decode(errors='replace')!r} was never handed out for judging",
                    str(path), int(table.lineno[i]),
                )
            if rel >= 0:
                grades[d] = rel
            elif rel != -1:
                raise InputError(
                    f"grade {rel} of document {table.docno[i].as_py().decode(errors='replace')!r}"
                    ": a grade is an integer >= 0, or -1 for a document not judged yet",
                    str(path), int(table.lineno[i]),
                )
        return grades


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="surrogateescape").split("\n")
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", str(path)) from None


def check_config(directory, config: dict) -> None:
    """Raise unless ``directory`` is new or holds a session started with the same ``config``."""
    directory = Path(directory)
    path = directory / CONFIG
    if path.exists():
        try:
            old = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise InputError(f"not a judging configuration ({exc})", str(path)) from None
        old, new = _options(_same_order(old)), _options(_same_order(config))
        if old != new:
            keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
            what = "; ".join(f"{k} differs ({_shown(old.get(k))} in the session, "
                             f"{_shown(new.get(k))} given)" for k in keys)
            raise DesignError(
                f"{directory} holds a judging session with other options: {what}; continue it "
                "with the same options or use another --state directory"
            )
    elif (directory / ORDER).exists():
        raise DesignError(f"{directory / ORDER} exists without {CONFIG}: not a judging state")


def _options(config) -> dict:
    """``config`` with a method's parameters as options of their own (``hedge(beta=0.2)``:
    method ``hedge``, beta ``0.2``), so that a difference names the parameter."""
    method = config.get("method") if isinstance(config, dict) else None
    m = re.fullmatch(r"([\w-]+)\((.*)\)", method) if isinstance(method, str) else None
    if m is None:
        return config
    params = dict(p.split("=", 1) for p in m.group(2).split(",") if "=" in p)
    return config | {"method": m.group(1)} | {k.strip(): v.strip() for k, v in params.items()}


def _shown(value) -> str:
    if value is None:
        return "none"
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return str(value)


def _same_order(config) -> dict:
    """``config`` with its runs in name order: the judging methods do not depend on the order
    the run files are given in, so a session continues with its runs in any order."""
    if isinstance(config, dict) and isinstance(config.get("runs"), list):
        return config | {"runs": sorted(config["runs"], key=str)}
    return config


def write_state(directory, result, config: dict, *, batch_file: bool) -> list[Path]:
    """Write the session's files (all texts are built first, each file atomically); returns
    the paths written. ``batch_file``: also ``batch.tsv`` with the documents still to judge."""
    directory = Path(directory)
    texts = {CONFIG: json.dumps(config, indent=2) + "\n"}
    if batch_file:
        pending = np.flatnonzero(result.pending)
        docnos = result.docnos()
        topics = result.collection.topics
        texts[BATCH] = "topic\tdocno\n" + "".join(
            f"{topics[result.topic[i]]}\t{docnos[i]}\n" for i in pending
        )
    texts[QRELS] = result.qrels_text()
    texts[ORDER] = result.order_text()  # last: the state a failed write leaves stays consistent
    written = []
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for name, text in texts.items():
            write_atomic(directory / name, text.encode("utf-8", "surrogateescape"))
            written.append(directory / name)
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror or exc}", str(directory)) from None
    return written
