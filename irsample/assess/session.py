"""A judging session: a design's documents, their texts and topics, the store and the order.

:meth:`Session.open` reads the design (a folder written by ``irsample sample``, or its
``design.json``), loads the items into the store on first use (checking on later starts that the
settings are the same), reads the documents and topics of every round's documents (every one
must be found), and sets the order. :meth:`next_item`, :meth:`judge`, :meth:`skip` and
:meth:`undo` are what the web app calls; an adaptive order is re-ranked after every change of
the judgments. A round loaded later (:mod:`.rounds`, from the dashboard or ``irsample assess
next-round``) is picked up on the next request: its documents' texts are read then.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InputError
from . import readout
from .assign import Conflict
from .documents import read_documents
from .ops import judge_op, skip_op, undo_op
from .order import ADAPTIVE_ORDERS, ORDERS, AdaptiveOrder, overlap_flags, static_order, to_judge
from .store import MAX_NOTE, Item, Store
from .topics import Topic, read_topics

GRADE_NAMES = {2: ("not relevant", "relevant"),
               3: ("not relevant", "relevant", "highly relevant"),
               4: ("not relevant", "marginally relevant", "relevant", "highly relevant")}


class Paused(Exception):
    """Judging is paused for a moment (a new round is being loaded; answered 503)."""


def parse_grades(text: str) -> tuple[int, ...]:
    """``0-3`` or ``0,1,2``: the grades offered (single digits, one key each)."""
    try:
        if "-" in text:
            lo, hi = (int(v) for v in text.split("-"))
            grades = tuple(range(lo, hi + 1))
        else:
            grades = tuple(sorted({int(v) for v in text.split(",")}))
    except ValueError:
        raise InputError(
            f"grades are a range like 0-3 or a list like 0,1,2, not {text!r}"
        ) from None
    if len(grades) < 2 or not all(0 <= g <= 9 for g in grades):
        raise InputError(f"grades must be at least two single digits 0-9, not {text!r}")
    return grades


def _runs_of(paths, topics: set[str]):
    """The runs read from ``paths``; :class:`InputError` for one that cannot be read or that
    ranks none of the design's ``topics`` (a run of another collection)."""
    from ..io import load_runs
    from ..io.trec import text_of

    runs = load_runs(paths)
    for run in runs:
        ranked = {text_of(t) for t in run.qid.unique().to_pylist()}
        if not ranked & topics:
            raise InputError(f"run {run.name!r} ranks none of the design's {len(topics)} "
                             f"topics (it ranks {', '.join(sorted(ranked)[:3]) or 'none'}: a "
                             "run of another collection?)", run.source)
    return runs


def grade_labels(grades) -> dict[int, str]:
    names = GRADE_NAMES.get(len(grades), ())
    return {g: names[i] if i < len(names) else f"grade {g}" for i, g in enumerate(grades)}


@dataclass
class Session:
    store: Store
    documents: dict[str, str]
    topics: dict[str, Topic]
    grades: tuple[int, ...]
    rel_level: int = 1
    adaptive: AdaptiveOrder | None = None
    seed: int = 0
    order: str = "design"
    overlap: float = 0.0
    sources: tuple = (None, None)  #: (documents path, topics path), to read later rounds'
    paused: bool = False
    dirty: bool = field(default=True, repr=False)
    rounds_seen: int = field(default=0, repr=False)

    @classmethod
    def open(cls, design, docs, topics, db, *, order: str = "design", overlap: float = 0.0,
             seed: int | None = None, grades=(0, 1, 2, 3), runs=None, beta=None,
             rel_level: int = 1, lease_seconds: float = 600.0) -> Session:
        from ..design.record import DesignRecord

        if order not in ORDERS:
            raise InputError(f"unknown order {order!r} (one of {', '.join(ORDERS)})")
        path = Path(design)
        path = path / "design.json" if path.is_dir() else path
        record = DesignRecord.read(str(path))
        if not record.has_rows:
            raise InputError("the design file lists no documents: run 'irsample sample' first",
                             record.source)
        rows = to_judge(record)
        if not rows:
            raise InputError("the design has no documents to judge", record.source)
        seed = int(record.seed or 0) if seed is None else int(seed)
        seq = static_order(rows, "design" if order in ADAPTIVE_ORDERS else order, seed)
        required = np.where(overlap_flags(len(rows), overlap, seed), 2, 1)
        digest = hashlib.sha256("\n".join(f"{r[0]}\t{r[1]}\t{r[2]}" for r in rows).encode(
            "utf-8", "surrogateescape")).hexdigest()
        config = {"design": record.design.name, "design_seed": record.seed, "items": len(rows),
                  "digest": digest, "order": order, "overlap": overlap, "seed": seed,
                  "grades": list(grades)}
        topic_map = read_topics(topics)  # read before the store is touched: a failure
        texts = read_documents(docs, {r[1] for r in rows})  # leaves the database as it was
        for lost, what, where in (({r[0] for r in rows} - set(topic_map), "topics", topics),
                                  ({r[1] for r in rows} - set(texts), "documents", docs)):
            if lost:
                first = sorted(lost, key=readout.topic_key)[0]
                raise InputError(f"{len(lost)} {what} of the design are not in the {what}"
                                 f"{' file' if what == 'topics' else ''} (e.g. {first!r})",
                                 str(where))
        adaptive = loaded = None
        if runs:  # read now: the dashboard rereads them for its estimates, too late to say
            loaded = _runs_of(runs, {r[0] for r in rows})
        if order in ADAPTIVE_ORDERS:
            if not runs:
                raise InputError(f"the {order} order needs the design's runs (--runs)")
            adaptive = AdaptiveOrder(order, loaded, [(r[0], r[1]) for r in rows],
                                     record_runs=record.runs, seed=seed, rel_level=rel_level,
                                     beta=beta)
        store = Store(db, lease_seconds=lease_seconds)
        try:
            store.setup([(r[0], r[1], r[2], int(s), int(q))
                         for r, s, q in zip(rows, seq, required)], config)
            if not store.rounds():  # a new database, or one from before rounds
                store._set_meta("rounds", [{"round": 1, "design": str(path.resolve()),
                                            "items": len(rows), "at": time.time()}])
            for entry in store.rounds()[1:]:
                if not Path(entry["design"]).is_file():
                    raise InputError(f"round {entry['round']}'s design file is missing",
                                     entry["design"])
            session = cls(store, texts, topic_map, tuple(grades), rel_level, adaptive, seed, order,
                          overlap, (docs, topics))
            session.read_texts()
            store._set_meta("sources", {"docs": str(Path(docs).resolve()),
                                        "topics": str(Path(topics).resolve())})
        except BaseException:
            store.close()
            raise
        return session

    def read_texts(self) -> None:
        """Read the texts and topics of every active document not read yet (all of them at the
        start, a new round's later); every one must be found."""
        items = self.store.items()
        wanted = {it.docno for it in items} - set(self.documents)
        topics = {it.topic for it in items}
        docs_path, topics_path = self.sources
        if topics - set(self.topics):
            topic_map = read_topics(topics_path)
            missing = sorted(topics - set(topic_map), key=readout.topic_key)
            if missing:
                raise InputError(f"{len(missing)} topics of the design are not in the topics "
                                 f"file (e.g. {missing[0]!r})", str(topics_path))
            self.topics = topic_map
        if wanted:
            texts = read_documents(docs_path, wanted)
            lost = sorted(wanted - set(texts))
            if lost:
                raise InputError(f"{len(lost)} documents of the design are not in the "
                                 f"documents (e.g. {lost[0]!r})", str(docs_path))
            self.documents.update(texts)
        self.rounds_seen = len(self.store.rounds())
        self.dirty = True

    # --------------------------------------------------------------------------- judging

    def _refresh(self) -> None:
        if len(self.store.rounds()) != self.rounds_seen:  # a round loaded by the command line
            self.read_texts()
        if not self.dirty:
            return
        if self.adaptive is None:
            self.store.set_positions(it.id for it in self.store.items())
        else:
            items = self.store.items()
            key = {it.id: (it.topic, it.docno) for it in items}
            ids = {k: i for i, k in key.items()}
            second = [it.id for it in items if 0 < it.judged < it.required]
            ranked = self.adaptive.ranking(
                [(key[i], g) for i, g in readout.first_grades(self.store.db) if i in key])
            self.store.set_positions(second + [ids[k] for k in ranked if k in ids])
        self.dirty = False

    def next_item(self, assessor: int) -> Item | None:
        self._refresh()
        return self.store.current(assessor)

    def _check(self, item_id: int, grade: int | None = None, note: str = "") -> None:
        """:class:`ValueError` or :class:`KeyError` (unknown item) with a message."""
        if grade is not None and grade not in self.grades:
            raise ValueError(f"grade must be one of {', '.join(map(str, self.grades))}")
        if len(note) > MAX_NOTE:
            raise ValueError(f"the note is longer than {MAX_NOTE} characters")
        if self.store.item(item_id) is None:
            raise KeyError(f"no document with item id {item_id}")

    def _claim(self, assessor: int, item_id: int, grade: int, note: str, ticket=None) -> None:
        self._check(item_id, grade, note)
        if self.paused:
            raise Paused("a new round is being loaded: send the judgment again in a few seconds")
        self.store.claim(assessor, item_id, ticket)

    def judge(self, assessor: int, item_id: int, grade: int, note: str = "",
              ticket=None) -> str:
        """Validate, claim (:func:`~.assign.claim`; ``ticket``: :meth:`.Store.ticket`) and
        save (:func:`~.ops.judge_op`); committed when it returns."""
        self._claim(assessor, item_id, grade, note, ticket)
        try:
            status = self.store.judge(assessor, item_id, grade, note)
        except BaseException:
            self.store.release(assessor, item_id, judged=False)
            raise
        self.dirty |= self.adaptive is not None and status != "unchanged"
        return status

    def skip(self, assessor: int, item_id: int, ticket=None) -> None:
        """Put back a document the assessor holds (:meth:`.Store.bind`)."""
        self._check(item_id)
        self.store.bind(assessor, item_id, ticket)
        self.store.skip(assessor, item_id)

    def undo(self, assessor: int):
        withdrawn = self.store.undo(assessor)
        self.dirty |= self.adaptive is not None and withdrawn is not None
        return withdrawn

    # the same through the group commit of the server (:mod:`.writer`)

    async def judge_async(self, writer, assessor: int, item_id: int, grade: int,
                          note: str = "", ticket=None) -> str:
        self._claim(assessor, item_id, grade, note, ticket)
        try:
            status = await writer.run(lambda con: judge_op(con, assessor, item_id, grade, note))
        except BaseException:
            self.store.release(assessor, item_id, judged=False)
            raise
        self.store.release(assessor, item_id)
        self.dirty |= self.adaptive is not None and status != "unchanged"
        return status

    async def skip_async(self, writer, assessor: int, item_id: int, ticket=None) -> None:
        self._check(item_id)
        self.store.bind(assessor, item_id, ticket)
        await writer.run(lambda con: skip_op(con, assessor, item_id))
        self.store.release(assessor, item_id)

    async def undo_async(self, writer, assessor: int):
        withdrawn = self.store.after_undo(assessor,
                                          await writer.run(lambda con: undo_op(con, assessor)))
        self.dirty |= self.adaptive is not None and withdrawn is not None
        return withdrawn

    def renew(self, assessor: int, item_id: int, ticket=None) -> str:
        """Renew the lease on the document the assessor's page shows (:func:`.assign.renew`):
        ``"renewed"``, or ``"judged"`` (theirs already: nothing is leased)."""
        self._check(item_id)
        return self.store.renew(assessor, item_id, ticket)


__all__ = ["Conflict", "Paused", "Session", "grade_labels", "parse_grades"]
