"""Judging in rounds in a real campaign: the round state rebuilt from a design file and the
judgments so far, and the next round written as a design file of the union.

:mod:`irsample.design.rounds` judges in rounds over a simulated frame (complete grades). A
campaign has no complete grades, only its design file and the judged qrels; :func:`resume`
rebuilds the same :class:`~irsample.design.rounds.RoundState` from them:

- the rows are the design file's (its pool), with their recorded best ranks (those of the runs
  the pool was built from: a cell's band may not change between rounds);
- the cells: after round 1 (a named design, e.g. ``2strata@600``) its strata cut into the
  best-rank bands (:func:`~irsample.design.rounds.start`, which checks the strata are simple
  random samples); after later rounds (a :class:`~irsample.design.sampling.union.RoundsUnion`
  file) the recorded stratum of each row is its cell's kind, and its recorded pi must be the
  cell's share judged n_h / N_h (checked);
- the folds of the topics from the seed the design file records
  (:func:`~irsample.design.rounds.fold_of`: round 1's draw seed, then carried in the ``rounds``
  block), so every round of a campaign cross-fits over the same folds;
- the frame's grades: the judged rows' grades; the unjudged rows hold 0, which nothing reads
  (:func:`~irsample.design.rounds.allocation` counts relevant documents over judged rows only,
  and :func:`~irsample.design.rounds.next_round` reads the frame through it alone; the
  judgments handed to the estimators mark those rows unjudged, -1).

Every selected document of the design file must be judged (a missing one would make the judged
set a sample of the design's sample whose probabilities nobody knows), and no other document
(:func:`irsample.design.merge.merge`'s checks).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import DesignError, InputError
from ..io.arrow import binary_of
from ..stats.random import derived_seed
from .frame import Sample, SamplingFrame
from .merge import merge
from .record import DesignRecord
from .rounds import RoundState, check_first_design, fold_of, next_round, start
from .sampling.union import RoundsUnion


@dataclass(frozen=True, eq=False)
class Resumed:
    """A campaign's rounds so far: the design file's ``record``, the ``frame`` of its rows
    (grades of judged rows; 0 elsewhere, never read), the ``state``, round 1's design name
    ``first`` and the ``fold_seed``."""

    record: DesignRecord
    frame: SamplingFrame
    state: RoundState
    first: str
    fold_seed: int

    def judgments(self):
        """The judgments so far for the estimators: judged rows with their grade and pi,
        unjudged rows pooled but unjudged (-1), strata the state's (round 1's, or the cells)."""
        return self.frame.judgments(self.state.sample, source=self.record.source)

    def next(self, budget: int, seed: int,
             take: np.ndarray | None = None) -> tuple[RoundState, DesignRecord]:
        """Draw the next round (about ``budget`` new judgments): the new state and the design
        file of the union (rows: cell kind and pi = n_h / N_h; to-judge: the new documents).
        The draw's stream is :func:`draw_seed` of ``seed`` (recorded as the file's seed);
        ``take``: the round's allocation of ``budget``, where the caller has it already."""
        state = next_round(self.frame, self.state, budget, draw_seed(seed, self.state.rounds + 1),
                           take=take)
        rec = self.record
        judged = self.state.sample.judged
        before = frozenset((rec.qid[i], rec.docno[i]) for i in np.flatnonzero(judged))
        design = RoundsUnion(self.first, self.fold_seed, state.spent, before)
        used, stratum = np.unique(state.sample.stratum, return_inverse=True)
        record = DesignRecord(
            design, seed, rec.runs, rec.depth, rec.qid, rec.docno, rec.best_rank,
            tuple(state.labels[s] for s in used), stratum.astype(np.int64),
            np.asarray(state.sample.inclusion, dtype=np.float64),
            np.asarray(state.sample.judged, dtype=bool), rec.source, True)
        return state, record


def draw_seed(seed: int, number: int) -> int:
    """The seed round ``number``'s draw uses under the campaign's ``seed``: a stream of its own
    (:func:`~irsample.stats.random.derived_seed`), so one seed given to every round (the
    commands' common default) does not replay round 1's random numbers over the documents it
    left, which would tie the rounds' draws together."""
    return derived_seed(seed, "round", number)


def resume(record: DesignRecord, table, collection, *, seed: int,
           rel_level: int = 1) -> Resumed:
    """The rounds so far from a design file and the judged qrels ``table`` (module docstring);
    ``seed`` gives the folds only where the design file records no seed; ``rel_level`` the
    grade from which a judged document is relevant for the allocation. Errors are
    :class:`InputError` naming the file at fault."""
    if not record.has_rows:
        raise InputError("the design file lists no documents (a design to draw, not a drawn "
                         "round): draw round 1 with `irsample sample` first", record.source)
    merged = merge(record, table)
    missing = np.flatnonzero(merged.unjudged)
    if len(missing):
        i = int(missing[0])
        raise InputError(f"{len(missing)} documents selected by {record.source} have no "
                         f"judgment (first: topic {record.qid[i]} document {record.docno[i]}); "
                         "judge them first: a next round is planned once the round it follows "
                         "is judged whole (--judged: every judgment so far)",
                         table.source)
    topic, tdi = collection.lookup(binary_of(record.qid), binary_of(record.docno))
    if np.any(topic < 0):
        q = record.qid[int(np.flatnonzero(topic < 0)[0])]
        raise InputError(f"topic {q} of the design is not in the runs given", record.source)
    judged = merged.judged
    grade = merged.rel
    runs = tuple(collection.run_names.index(r) for r in (record.runs or ())
                 if r in collection.run_names)
    frame = SamplingFrame(collection, topic, tdi, np.where(judged, grade, 0), record.best_rank,
                          runs, table.source,
                          math.inf if record.depth is None else float(record.depth))
    design = record.design
    sample = Sample(judged, record.stratum, record.labels, record.inclusion)
    if isinstance(design, RoundsUnion):
        first, fold_seed = design.first, design.fold_seed
        fold = _folds(collection, record.qid, fold_seed)
        n = len(record.labels)
        cell = topic * n + record.stratum
        _check_union(record, cell, judged)
        state = RoundState(sample, cell, record.labels, n, fold, design.spent, rel_level)
    else:
        first = design.name
        fold_seed = record.seed if record.seed is not None else seed
        fold = _folds(collection, record.qid, fold_seed)
        try:
            check_first_design(design)
            state = start(topic, record.best_rank, sample, fold, design.name,
                          (int(judged.sum()),), rel_level=rel_level)
        except DesignError as exc:
            raise InputError(str(exc), record.source) from None
    return Resumed(record, frame, state, first, int(fold_seed))


def _folds(collection, qids, seed: int) -> np.ndarray:
    """Per topic of ``collection``: its fold (:func:`fold_of` over the design's topics)."""
    folds = fold_of(qids, seed)
    return np.array([folds.get(q, 0) for q in collection.topics], dtype=np.int64)


def _check_union(record: DesignRecord, cell: np.ndarray, judged: np.ndarray) -> None:
    """A union's rows must carry pi = n_h / N_h of their cell (what its rounds gave)."""
    size = np.bincount(cell)
    done = np.bincount(cell[judged], minlength=len(size))
    share = done[cell] / size[cell]
    bad = np.flatnonzero(np.abs(record.inclusion - share) > 1e-9)
    if len(bad):
        i = int(bad[0])
        raise InputError(
            f"{len(bad)} rows' inclusion probabilities are not their cell's share judged (first: "
            f"topic {record.qid[i]} document {record.docno[i]}, {record.inclusion[i]:g} where "
            f"{int(done[cell[i]])} of {int(size[cell[i]])} are judged): not a union of rounds",
            record.source)
