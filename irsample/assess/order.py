"""The order documents are handed out in: the design's, or an adaptive method's.

- ``design``: first one document of every (topic, stratum) cell, in a seeded random order (a
  cell with nothing judged has inclusion probability 0 for the estimators, which flag every
  run mean reading it as unreliable: the sooner every cell has a judgment, the sooner the
  estimates can be trusted); then stratum by stratum from the top (the stratum holding the
  best-ranked document first: ranks 1-10 before 11-100, :func:`stratum_ranks`), shuffled
  within a stratum over all topics by a seeded permutation. Within a cell the documents come
  in a seeded random order throughout, so stopping early leaves a simple random subsample of
  each cell, not its best-ranked documents.
- ``topic``: the same within each topic, one topic after another (an assessor keeps a topic
  in mind).
- ``mtf``, ``mtf-global``, ``hedge``: :mod:`irsample.design.adaptive.methods` over the design's
  selected
  documents only: each run's list is its ranking restricted to them. After every saved or
  withdrawn judgment the method is replayed from the judgments (its state is a function of the
  judged documents, :func:`~irsample.design.adaptive.judging.judge_adaptively`) and ranks the
  documents
  still to judge; several assessors take the first open ones of that ranking.

Whatever the order, the set judged is the design's sample: the inclusion probabilities in the
design file do not depend on it. (If judging stops before the end, the unjudged documents are
missing at random under ``design`` and ``topic`` orders, not under adaptive ones.)

Overlap: :func:`overlap_flags` marks round(share x n) of the n documents, by a seeded draw, for
a second judgment by another assessor.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..design.frame import generator
from ..errors import DesignError, InputError
from . import ADAPTIVE_ORDERS, ORDERS, STATIC_ORDERS  # noqa: F401


def stratum_ranks(record) -> np.ndarray:
    """Each stratum's place from the top: strata ordered by the best rank of their best-ranked
    pool document (ties: the order of the labels). A design file's rows give the strata indices
    in the order their first row appears (``1``'s first document may well be in ``11-100``),
    so that index says nothing about which stratum is on top."""
    n = len(record.labels)
    top = np.full(n, np.inf)
    np.minimum.at(top, np.asarray(record.stratum, np.int64), np.asarray(record.best_rank, float))
    ranks = np.empty(n, np.int64)
    ranks[np.lexsort((np.arange(n), top))] = np.arange(n)
    return ranks


def to_judge(record) -> list[tuple[str, str, str, int]]:
    """(topic, docno, stratum label, stratum place from the top: :func:`stratum_ranks`) of the
    design's documents to judge: the selected ones, less those a planned design lists as
    judged before."""
    before = record.design.judged_before()
    place = stratum_ranks(record)
    rows = [(record.qid[i], record.docno[i], record.labels[record.stratum[i]],
             int(place[record.stratum[i]])) for i in np.flatnonzero(record.selected)]
    return sorted(r for r in rows if (r[0], r[1]) not in before)


def static_order(rows, order: str, seed: int) -> np.ndarray:
    """Positions (a permutation of range(len(rows))) of ``rows`` (from :func:`to_judge`):
    first one document of every (topic, stratum) cell, the cells in a seeded random order,
    then stratum by stratum from the top (``topic``: the same within each topic, one topic
    after another). Within a cell the order is a seeded random permutation, so what is judged
    of a cell at any moment is a simple random subset of its sampled documents."""
    if order not in STATIC_ORDERS:
        raise DesignError(f"not a static order: {order!r}")
    n = len(rows)
    key = generator(seed).permutation(n)
    stratum = np.array([r[3] for r in rows], np.int64)
    topics = {q: k for k, q in enumerate(sorted({r[0] for r in rows}))}
    topic = np.array([topics[r[0]] for r in rows], np.int64)
    cell = topic * (int(stratum.max(initial=0)) + 1) + stratum
    by_cell = np.lexsort((key, cell))
    head = np.zeros(n, bool)  # each cell's first document in its permutation
    head[by_cell[np.diff(cell[by_cell], prepend=-1) != 0]] = True
    phase = (~head).astype(np.int64)
    place = np.where(head, 0, stratum)
    if order == "design":
        sort = np.lexsort((key, place, phase))
    else:
        sort = np.lexsort((key, place, phase, topic))
    seq = np.empty(n, np.int64)
    seq[sort] = np.arange(n)
    return seq


def overlap_flags(n: int, share: float, seed: int) -> np.ndarray:
    """Which of ``n`` documents need two assessors: round(share * n) of them, seeded."""
    if not 0.0 <= share <= 1.0:
        raise DesignError(f"the overlap is a share in [0, 1], not {share!r}")
    flags = np.zeros(n, bool)
    flags[generator(np.random.SeedSequence([seed, 1])).permutation(n)[: round(share * n)]] = True
    return flags


class _Pending:
    """An assessor for judge_adaptively that has judged nothing yet (every grade -1)."""

    def judge(self, topic, docs):
        return np.full(len(docs), -1, np.int64)


class AdaptiveOrder:
    """An adaptive method ranking the design's documents still to judge (module docstring)."""

    def __init__(self, method: str, runs, pairs, *, record_runs=None, seed: int = 0,
                 rel_level: int = 1, beta: float | None = None):
        from ..design.adaptive.methods import parse_method
        from ..model import Collection

        if method not in ADAPTIVE_ORDERS:
            raise DesignError(f"not an adaptive order: {method!r} (one of {ADAPTIVE_ORDERS})")
        self.method = parse_method(method, beta=beta)
        self.seed, self.rel_level = seed, rel_level
        if record_runs is not None:
            names = [r.name for r in runs]
            missing = [r for r in record_runs if r not in names]
            if missing:
                raise InputError(f"the design pooled runs that were not given: "
                                 f"{', '.join(missing)} (given: {', '.join(names)})")
            runs = [r for r in runs if r.name in set(record_runs)]
        wanted = pa.array([f"{q}\t{d}" for q, d in pairs], pa.string())
        filtered = []
        for run in runs:
            keys = pc.binary_join_element_wise(
                run.qid.cast(pa.string()), run.docno.cast(pa.string()), "\t")
            keep = pc.is_in(keys, value_set=wanted).to_numpy(zero_copy_only=False)
            filtered.append(type(run)(run.name, run.source, run.qid.filter(keep),
                                      run.docno.filter(keep), run.score[keep], run.lineno[keep]))
        self.collection = Collection.build(filtered)
        t, tdi = self.collection.lookup(
            pa.array([q.encode("utf-8", "surrogateescape") for q, _ in pairs], pa.binary()),
            pa.array([d.encode("utf-8", "surrogateescape") for _, d in pairs], pa.binary()))
        lost = [p for p, d in zip(pairs, tdi) if d < 0]
        if lost:
            raise InputError(f"{len(lost)} documents of the design are in none of the runs "
                             f"given (e.g. {lost[0][1]!r} of topic {lost[0][0]!r})")
        self.topic = {p: int(x) for p, x in zip(pairs, t)}
        self.tdi = {p: int(d) for p, d in zip(pairs, tdi)}
        self.item_of = {int(d): p for p, d in zip(pairs, tdi)}
        self.total = len(pairs)

    def ranking(self, first_grades) -> list[tuple[str, str]]:
        """The (topic, docno) pairs not judged yet in the method's order, given
        ``first_grades`` [((topic, docno), grade)] of the judged ones in judging order."""
        from ..design.adaptive.judging import judge_adaptively

        done = [(i, g) for i, g in first_grades if i in self.tdi]
        history = (np.array([self.topic[i] for i, _ in done], np.int64),
                   np.array([self.tdi[i] for i, _ in done], np.int64),
                   np.array([g for _, g in done], np.int64))
        left = self.total - len(done)
        proposed = []
        if left > 0:
            result = judge_adaptively(self.collection, self.method, _Pending(), budget=self.total,
                                      batch=left, rng=self.seed, rel_level=self.rel_level,
                                      history=history)
            proposed = [self.item_of[int(d)] for d in result.tdi[len(done):]]
        return proposed
