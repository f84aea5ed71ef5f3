"""Judging in rounds: plan the next round from the judgments so far, draw it, load it.

The database's rounds (``meta.rounds``) each name the design file whose sample they judge:
round 1 is the design ``serve --design`` was given; round k+1 is planned by :func:`plan_round`
one of two ways, and :func:`draw_round` draws it into a design file:

- **in rounds, for ht(M)** (:class:`RoundsPlan`; ``irsample plan --next-round``), when round k
  is finished and its strata are simple random samples (round 1 from ``irsample sample`` with a
  uniform or rank-strata design, or a round planned this way): every cell (topic, round-1
  stratum, best-rank band) is topped up from the documents it has left, each fold of topics
  allocated from the other fold's judgments (:mod:`irsample.design.rounds`), and the union is
  a stratified simple random sample over the cells with pi = judged / size, exact whatever the
  judgments showed;
- **by the planner, for xinfAP's variance model** (:class:`RoundPlan`; ``irsample plan
  --design ROUND_k/design.json --judged QRELS --batch B``) otherwise (a round stopped part-way,
  a planned round): the relevance model is fitted to the judgments, the least-variance
  allocation of B more judgments tops up the cells of round k's strata, and the design's
  inclusion probabilities are those *given the documents judged before* (1 for them,
  j / (N - m) for the rest of a cell: :mod:`irsample.design.sampling.allocated`), so ``ht(M)``
  stays unbiased across rounds too. Its plan is made over what is judged: a round's documents
  still unjudged are not judged as part of it (they leave the judging set, ``items.active`` 0;
  a document the new round draws again comes back); because its probabilities are conditional
  on the judged set, the earlier round need not be finished.

:func:`load_round` adds the new round's documents to the database. Only a finished round has
its own estimates (:mod:`.estimates`).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from functools import cached_property
from io import BytesIO
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..stats.random import derived_seed
from .order import overlap_flags, static_order, to_judge

#: the estimator whose variance model the planner minimises (when rounds cannot be used)
ESTIMATOR = "xinfAP"


@dataclass(frozen=True, eq=False)
class RoundPlan:
    """A planned next round: the planner's :class:`~irsample.design.planner.plan.Plan`, its
    design (topping up the judged documents), the pool it was planned over, and what it is
    based on (round, judgments, judgments of this database at planning time)."""

    plan: object
    design: object
    pool: object
    round: int
    judged: int
    batch: int  #: the judgments asked for
    stamp: tuple  #: the judgments when planned (:meth:`.dashboard.Live.stamp_now`)
    left: int | None = None  #: the pool's documents left to judge

    basis = (f"planned for {ESTIMATOR}'s variance; the inclusion probabilities are given the "
             "judgments so far, so ht stays unbiased")

    @property
    def planned(self) -> int:
        """The new round's judgments: the planner's budget, ``batch``, or what the pool has
        left where that is less."""
        return self.batch if self.left is None else min(self.batch, self.left)

    def why(self) -> str:
        """Why the round is not ``batch`` judgments ("": it is)."""
        if self.planned == self.batch:
            return ""
        return (f"{self.planned} judgments, not the {self.batch} asked for: only {self.left} "
                "documents of the pool are left to judge")

    def summary(self) -> str:
        return self.plan.summary()


@dataclass(frozen=True, eq=False)
class RoundsPlan:
    """A next round judged in rounds for ht(M) (module docstring): the campaign's rounds so far
    (:class:`~irsample.design.rounds_files.Resumed`), the round they end with, what is judged
    and the new round's size."""

    rounds: object
    round: int
    judged: int
    batch: int
    stamp: tuple
    top: int = 0  #: the first best-rank bands to judge whole (``design.rounds.outside_bands``)

    basis = ("judged in rounds for ht(M): every cell topped up, each fold of topics allocated "
             "from the other's judgments, so the union's inclusion probabilities are exact; a "
             "topic the reliability rule holds weak until judged whole is judged whole, and "
             "the top ranks where a P@10 mean is estimated outside [0, 1]")

    @cached_property
    def take(self) -> np.ndarray:
        """Per cell: the new round's judgments (``design.rounds.allocation`` of ``batch``)."""
        from ..design.rounds import allocation

        return allocation(self.rounds.frame, self.rounds.state, self.batch, self.top)

    @property
    def planned(self) -> int:
        """The new round's judgments: ``batch``, less where the pool has fewer left, more where
        the cells' floors or the topics judged whole take more."""
        return int(self.take.sum())

    @cached_property
    def left(self) -> int:
        """The pool's documents (in the cells) not judged yet."""
        from ..design.rounds import cell_counts

        size, done, _ = cell_counts(self.rounds.frame, self.rounds.state)
        return int((size - done).sum())

    @cached_property
    def least(self) -> int:
        """The fewest judgments a next round takes: the cells' floors and the topics judged
        whole (``design.rounds.allocation`` of 0)."""
        from ..design.rounds import allocation

        return int(allocation(self.rounds.frame, self.rounds.state, 0).sum())

    def why(self) -> str:
        """Why the round is not ``batch`` judgments, in words ("": it is)."""
        from ..design.rounds import MIN_CELL, judged_whole_note

        if self.planned == self.batch:
            return ""
        if self.planned < self.batch:
            return (f"{self.planned} judgments, not the {self.batch} asked for: only "
                    f"{self.left} documents of the pool are left to judge")
        whole = judged_whole_note(self.rounds.frame, self.rounds.state, self.take, self.top)
        return (f"{self.planned} judgments, not the {self.batch} asked for: judging in rounds "
                f"keeps at least {MIN_CELL} judged documents in every cell (where the pool has "
                f"them){' and judges some topics whole (below)' if whole else ''}, which alone "
                f"takes {self.least}; a smaller round cannot be drawn")

    def summary(self) -> str:
        from ..design.rounds import judged_whole_note

        frame, state, take = self.rounds.frame, self.rounds.state, self.take
        cells = int(np.count_nonzero(np.bincount(state.cell[state.cell >= 0])))
        return (f"judging in rounds for ht(M): {self.planned} more judgments over "
                f"{int(np.count_nonzero(take))} of {cells} cells (topic x round-1 stratum x "
                "best-rank band), each cell's size from the other fold of topics' judgments; "
                "the union is a stratified simple random sample of the cells (pi = judged / "
                f"size){judged_whole_note(frame, state, take, self.top)}\n")

    def draw(self, seed: int):
        """The design record of the union with the new round drawn with ``seed``."""
        return self.rounds.next(self.batch, seed, self.take)[1]


def judged_record(record, judged_keys):
    """``record`` with ``selected`` narrowed to its documents in ``judged_keys`` ((topic,
    docno) pairs): the sample the judgments realised."""
    judged = np.array([(q, d) in judged_keys for q, d in zip(record.qid, record.docno)], bool)
    return dataclasses.replace(record, selected=record.selected & judged)


def plan_round(rounds: list[dict], qrels: str, runs, *, batch: int, stamp=(),
               max_strata: int = 4, level: float = 0.95, rel_level: int = 1):
    """Plan ``batch`` more judgments over the latest round's design, in rounds where it can
    (:class:`RoundsPlan`), else by the planner (:class:`RoundPlan`; module docstring);
    ``qrels`` the exported current judgments (:mod:`.export`), ``runs`` the run files;
    ``rel_level`` the session's lowest relevant grade, which the rounds' statuses and
    allocation read as the live estimates do (the planner's relevance model reads grades
    above 0)."""
    from ..design import DesignRecord, Pool
    from ..design.planner.plan import plan
    from ..design.planner.relevance_model import fit_relevance
    from ..design.planner.sequential import judged_keys, judged_sample
    from ..io import load_qrels, load_runs
    from ..model import Collection

    if not runs:
        raise InputError("planning a round needs the design's runs (serve --runs)")
    latest = rounds[-1]
    record = DesignRecord.read(latest["design"])
    table = load_qrels(BytesIO(qrels.encode("utf-8", "surrogateescape")), "trec")
    keys = {(q.decode("utf-8", "surrogateescape"), d.decode("utf-8", "surrogateescape"))
            for q, d in zip(table.qid.to_pylist(), table.docno.to_pylist())}
    elsewhere = record.design.judged_before() - keys
    if elsewhere:
        raise InputError(f"{len(elsewhere)} documents the design lists as judged before are not "
                         "judged in this database: a next round needs their judgments here",
                         record.source)
    collection = Collection.build(load_runs(runs))
    missing = [r for r in record.runs or () if r not in collection.run_names]
    if missing:
        raise InputError(f"the design pooled runs that were not given: {', '.join(missing)}",
                         record.source)
    rounds_so_far = _in_rounds(record, table, collection, rel_level)
    if rounds_so_far is not None:
        return RoundsPlan(rounds_so_far, latest["round"], rounds_so_far.state.judged, batch,
                          tuple(stamp), _outside_bands(collection, rounds_so_far, rel_level))
    pooled = None if record.runs is None else tuple(collection.run_names.index(r)
                                                    for r in record.runs)
    depth = int(record.depth) if record.depth else 100
    pool = Pool.from_runs(collection, pooled, depth=depth)
    sample = judged_sample(pool, judged_record(record, keys), table)
    if not sample.judged.any():
        raise InputError("nothing of the design is judged yet: judge some documents first",
                         record.source)
    judged, left = int(sample.judged.sum()), int((~sample.judged).sum())
    if left == 0:  # nothing to plan: the dashboard says so
        return RoundPlan(None, None, pool, latest["round"], judged, batch, tuple(stamp), left)
    model = fit_relevance(pool, sample.judged, sample.grade, gains=ESTIMATOR == "infNDCG")
    result = plan(pool, model, judged + min(batch, left), estimator=ESTIMATOR,
                  judged=sample.judged, required=sample.edges[1:], max_strata=max_strata,
                  level=level)
    design = result.design(before=judged_keys(pool, sample.judged))
    return RoundPlan(result, design, pool, latest["round"], judged, batch, tuple(stamp), left)


def _outside_bands(collection, rounds, rel_level: int = 1) -> int:
    """The first best-rank bands the next round asks to judge whole
    (``design.rounds.outside_bands``), from ht(M)'s estimates of the live measures
    (:data:`.estimates.HT_MEASURES`) on the judgments so far, relevant from ``rel_level``."""
    from ..design.rounds import outside_bands
    from ..evaluation import evaluate_collection
    from ..measures import parse
    from .estimates import HT_MEASURES

    measures = [m for name in HT_MEASURES for m in parse(name)]
    return outside_bands(evaluate_collection(collection, rounds.judgments(), measures, ci=0.95,
                                             per_topic=False, rel_level=rel_level))


def _in_rounds(record, table, collection, rel_level: int = 1):
    """The rounds so far when the next round can be judged in rounds (module docstring), else
    None: a planned round (conditional probabilities), a round stopped part-way or one whose
    strata are not simple random samples (:func:`~irsample.design.rounds_files.resume`'s
    errors) go to the planner, which handles them."""
    from ..design.rounds_files import resume
    from ..design.sampling.allocated import Allocated

    if isinstance(record.design, Allocated):
        return None
    try:
        return resume(record, table, collection, seed=0, rel_level=rel_level)
    except InputError:
        return None


def draw_round(planned, seed: int, folder) -> tuple[object, Path]:
    """Draw the planned round (:class:`RoundPlan` or :class:`RoundsPlan`) with ``seed`` into
    ``folder`` (``design.json`` and ``to_judge.tsv``, as ``irsample sample`` writes them);
    returns the record and the path."""
    from ..design import DesignRecord
    from ..io.output import write_atomic

    if isinstance(planned, RoundsPlan):
        record = planned.draw(seed)
    else:
        sample = planned.design.select(planned.pool, rng=seed)
        record = DesignRecord.from_sample(planned.pool, planned.design, sample, seed=seed)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(folder / "design.json", record.to_json())
    write_atomic(folder / "to_judge.tsv", record.to_judge_tsv())
    return record, (folder / "design.json").resolve()


def load_round(store, record, path, *, order: str, overlap: float, seed: int) -> int:
    """Add the drawn round ``record`` (its file at ``path``) to ``store``: its documents not
    judged before become the documents to judge (shuffled by ``order`` with a seed derived
    from ``seed`` and the round, ``overlap`` of them for two assessors); documents of earlier
    rounds nobody judged leave the judging set. Returns the round's number."""
    rounds = store.rounds()
    number = len(rounds) + 1
    rows = to_judge(record)
    if not rows:
        raise InputError("the new round has no documents to judge", str(path))
    round_seed = derived_seed(seed, "round", number)
    seq = static_order(rows, order, round_seed)
    required = np.where(overlap_flags(len(rows), overlap, round_seed), 2, 1)
    con = store.db
    base = con.execute("SELECT coalesce(max(seq), -1) + 1 FROM items").fetchone()[0]
    con.execute("BEGIN IMMEDIATE")
    try:
        con.execute("UPDATE items SET active=0 WHERE active=1 AND judged=0")
        # leases on the documents that left: their holders get an open document next
        con.execute("DELETE FROM assignments WHERE item IN (SELECT id FROM items WHERE "
                    "active=0)")
        con.executemany(
            "INSERT INTO items(topic, docno, stratum, seq, required, round) VALUES (?, ?, ?, "
            "?, ?, ?) ON CONFLICT(topic, docno) DO UPDATE SET stratum=excluded.stratum, "
            "seq=excluded.seq, required=max(excluded.required, judged), round=excluded.round, "
            "active=1",
            [(r[0], r[1], r[2], base + int(s), int(q), number)
             for r, s, q in zip(rows, seq, required)])
        store._set_meta("rounds", rounds + [{"round": number, "design": str(path),
                                             "items": len(rows), "at": time.time()}])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return number


def round_folder(db, number: int) -> Path:
    """Where the dashboard writes round ``number``'s design: beside the database."""
    return Path(f"{db}.round{number}")
