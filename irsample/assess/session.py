"""A judging session: a design's documents, their texts and topics, the store and the order.

:meth:`Session.open` reads the design (a folder written by ``irsample sample``, or its
``design.json``), loads the items into the store on first use (checking on later starts that the
settings are the same), reads the documents and topics it needs (every one must be found), and
sets the order. :meth:`next_item`, :meth:`judge`, :meth:`skip` and :meth:`undo` are what the web
app calls; an adaptive order is re-ranked after every change of the judgments.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InputError
from . import agreement
from .documents import read_documents
from .order import ADAPTIVE_ORDERS, ORDERS, AdaptiveOrder, overlap_flags, static_order, to_judge
from .store import MAX_NOTE, Item, Store, judge_op, skip_op, undo_op
from .topics import Topic, read_topics

GRADE_NAMES = {2: ("not relevant", "relevant"),
               3: ("not relevant", "relevant", "highly relevant"),
               4: ("not relevant", "marginally relevant", "relevant", "highly relevant")}


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
    dirty: bool = field(default=True, repr=False)

    @classmethod
    def open(cls, design, docs, topics, db, *, order: str = "design", overlap: float = 0.0,
             seed: int | None = None, grades=(0, 1, 2, 3), runs=None, beta=None,
             rel_level: int = 1, lease_seconds: float = 600.0) -> Session:
        from ..design.record import DesignRecord

        if order not in ORDERS:
            raise InputError(f"unknown order {order!r} (one of {', '.join(ORDERS)})")
        path = Path(design)
        record = DesignRecord.read(str(path / "design.json" if path.is_dir() else path))
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
        topic_map = read_topics(topics)
        missing = sorted({r[0] for r in rows} - set(topic_map))
        if missing:
            raise InputError(f"{len(missing)} topics of the design are not in the topics file "
                             f"(e.g. {missing[0]!r})", str(topics))
        texts = read_documents(docs, {r[1] for r in rows})
        lost = sorted({r[1] for r in rows} - set(texts))
        if lost:
            raise InputError(f"{len(lost)} documents of the design are not in the documents "
                             f"(e.g. {lost[0]!r})", str(docs))
        adaptive = None  # built before the store is touched: a failure leaves it as it was
        if order in ADAPTIVE_ORDERS:
            if not runs:
                raise InputError(f"the {order} order needs the design's runs (--runs)")
            from ..io import load_runs

            adaptive = AdaptiveOrder(order, load_runs(runs), [(r[0], r[1]) for r in rows],
                                     record_runs=record.runs, seed=seed, rel_level=rel_level,
                                     beta=beta)
        store = Store(db, lease_seconds=lease_seconds)
        store.setup([(r[0], r[1], r[2], int(s), int(q)) for r, s, q in zip(rows, seq, required)],
                    config)
        return cls(store, texts, topic_map, tuple(grades), rel_level, adaptive, seed)

    # --------------------------------------------------------------------------- judging

    def _refresh(self) -> None:
        if not self.dirty:
            return
        if self.adaptive is None:
            self.store.set_positions(it.id for it in self.store.items())
        else:
            items = self.store.items()
            key = {it.id: (it.topic, it.docno) for it in items}
            ids = {k: i for i, k in key.items()}
            second = [it.id for it in items if 0 < it.judged < it.required]
            ranked = self.adaptive.ranking([(key[i], g) for i, g in self.store.first_grades()])
            self.store.set_positions(second + [ids[k] for k in ranked])
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

    def judge(self, assessor: int, item_id: int, grade: int, note: str = "") -> str:
        """Validate and save (see :func:`~.store.judge_op`); committed when it returns."""
        self._check(item_id, grade, note)
        status = self.store.judge(assessor, item_id, grade, note)
        self.dirty |= self.adaptive is not None and status != "unchanged"
        return status

    def skip(self, assessor: int, item_id: int) -> None:
        self._check(item_id)
        self.store.skip(assessor, item_id)

    def undo(self, assessor: int) -> Item | None:
        item = self.store.undo(assessor)
        self.dirty |= self.adaptive is not None and item is not None
        return item

    # the same through the group commit of the server (:mod:`.writer`)

    async def judge_async(self, writer, assessor: int, item_id: int, grade: int,
                          note: str = "") -> str:
        self._check(item_id, grade, note)
        status = await writer.run(lambda con: judge_op(con, assessor, item_id, grade, note))
        self.store.release(assessor, item_id)
        self.dirty |= self.adaptive is not None and status != "unchanged"
        return status

    async def skip_async(self, writer, assessor: int, item_id: int) -> None:
        self._check(item_id)
        await writer.run(lambda con: skip_op(con, assessor, item_id))
        self.store.release(assessor, item_id)

    async def undo_async(self, writer, assessor: int) -> Item | None:
        item = self.store.after_undo(assessor, await writer.run(lambda con: undo_op(con, assessor)))
        self.dirty |= self.adaptive is not None and item is not None
        return item

    # --------------------------------------------------------------------- progress, agreement

    def progress(self) -> list[dict]:
        keys = ("topic", "stratum", "items", "judged", "judgments", "required")
        rows = [dict(zip(keys, r)) for r in self.store.counts()]
        for r in rows:
            r["to_judge"] = r["items"] - r["judged"]
        return rows

    def agreement(self, *, level: float = 0.95, n_resamples: int = 2000) -> dict:
        """Kappa for every pair of assessors with common items, alpha over all of them
        (grades, and relevant/not at ``rel_level``), bootstrap intervals seeded by the session's
        seed; kappa also with the analytic interval."""
        ratings = self.store.ratings()
        names = sorted({n for r in ratings.values() for n in r})
        out = {"items": len(ratings), "assessors": names, "pairs": [], "alpha": []}
        if not ratings:
            return out
        matrix = np.full((len(ratings), len(names)), np.nan)
        for row, grades in enumerate(ratings.values()):
            for name, g in grades.items():
                matrix[row, names.index(name)] = g
        binary = np.where(np.isnan(matrix), np.nan, (matrix >= self.rel_level).astype(float))
        for (i, a), (j, b) in itertools.combinations(enumerate(names), 2):
            both = ~np.isnan(matrix[:, i]) & ~np.isnan(matrix[:, j])
            if not both.any():
                continue
            x, y = matrix[both, i].astype(int), matrix[both, j].astype(int)
            bx, by = (x >= self.rel_level).astype(int), (y >= self.rel_level).astype(int)
            opts = dict(level=level, n_resamples=n_resamples, rng=self.seed)
            out["pairs"].append({
                "a": a, "b": b, "items": int(both.sum()),
                "kappa": agreement.kappa_interval(x, y, **opts),
                "kappa_analytic": agreement.kappa_interval(x, y, level=level, method="analytic"),
                "kappa_binary": agreement.kappa_interval(bx, by, **opts),
                "raw": float(np.mean(x == y)),
            })
        opts = dict(level=level, n_resamples=n_resamples, rng=self.seed)
        out["alpha"] = [
            agreement.alpha_interval(matrix, level_of_measurement="nominal", **opts),
            agreement.alpha_interval(matrix, level_of_measurement="ordinal", **opts),
            agreement.alpha_interval(binary, level_of_measurement="nominal", **opts),
        ]
        return out
