"""A collection with complete judgments, loaded once per process from its files.

Simulation tasks travel between processes as small values; the collection itself (TREC-8:
6.3 million ranked positions) is named by a :class:`CollectionFiles` and parsed at most once in
each process (:func:`load`, a per-process cache; worker initializers call it before the first
task). What every trial of a process shares is computed once and cached there too: the two
truths and their significance decisions per run set, the sampling frames of the splits' pools (a
few at a time: random halves make a new pool every trial), and sub-collections of the evaluated
runs.

Two truths, two questions:

- the **frame truth** (:meth:`LoadedCollection.frame_truth`): the measure under the complete
  judgments restricted to the sampling frame, i.e. what judging the whole pool a design samples
  from would give (documents outside the frame non-relevant). A sample can only estimate this;
  estimate minus frame truth is the sampling error, and it is what every simulation compares
  with. For a run outside the pool (random halves, leave-one-group-out, unpooled runs) it is
  still the frame truth: the run is scored on the judgments the pool can provide.
- the **qrels truth** (:meth:`LoadedCollection.truth`): the measure under the complete qrels.
  Frame truth minus qrels truth is the pool's own bias (documents relevant but outside the
  pool), not a sampling error; estimate minus qrels truth mixes both. TREC-8's qrels are exactly
  the depth-100 pool of its pooled runs, so there the two truths agree for depth-100 frames of
  the pooled runs; on Vaswani and CACM (qrels from other sources) and for frames of fewer runs
  or shallower pools they differ.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..design import Pool, SamplingFrame
from ..errors import InputError
from ..evaluation import Evaluation, evaluate_collection
from ..io import load_qrels, load_runs
from ..io.irds import is_irds
from ..measures.names import parse_one
from ..model import Collection, Judgments, check_common_topics
from ..stats.pairs import PairDecisions, decisions
from .splits import RunInfo, read_pooled_flags, read_run_groups, run_info

FRAMES_KEPT = 8  #: sampling frames cached per process (least recently used dropped)


@dataclass(frozen=True)
class CollectionFiles:
    """Where a collection lives: run files, complete qrels, and optionally which runs were
    pooled (``run judged|notjudged``) and each run's group (``run group`` or TREC's
    ``runs_table``). Paths are absolute so that workers elsewhere read the same files."""

    runs: tuple[str, ...]
    qrels: str
    pooled: str | None = None
    groups: str | None = None
    #: > 1: every relevant judgment gets a grade drawn uniformly from 1..graded (:func:`regraded`)
    graded: int = 0
    graded_seed: int = 0

    @classmethod
    def of(cls, runs, qrels, *, pooled=None, groups=None, graded=0,
           graded_seed=0) -> CollectionFiles:
        """From paths; a directory in ``runs`` stands for its files (sorted by name)."""
        if isinstance(runs, (str, Path)):
            runs = [runs]
        files = []
        for r in runs:
            p = Path(r).resolve()
            files.extend(sorted(q for q in p.iterdir() if q.is_file()) if p.is_dir() else [p])
        if not files:
            raise ValueError("no run file given")

        def absolute(p):
            return None if p is None else p if is_irds(p) else str(Path(p).resolve())

        return cls(tuple(str(f) for f in files), absolute(qrels), absolute(pooled),
                   absolute(groups), int(graded), int(graded_seed))

    def settings(self) -> dict:
        runs = self.runs
        folders = sorted({str(Path(r).parent) for r in runs})
        return {"runs": len(runs), "run_folders": folders,
                "run_files": [Path(r).name for r in runs], "qrels": self.qrels,
                "pooled": self.pooled, "groups": self.groups,
                **({"graded": self.graded, "graded_seed": self.graded_seed}
                   if self.graded > 1 else {})}


class LoadedCollection:
    """A parsed collection with its complete judgments and per-process caches."""

    def __init__(self, files: CollectionFiles):
        self.files = files
        qrels = load_qrels(files.qrels)
        if files.graded > 1:
            qrels = regraded(qrels, files.graded, files.graded_seed)
        self.collection = Collection.build(load_runs(list(files.runs)), [qrels])
        self.qrels = qrels
        self.judgments = Judgments.from_qrels(self.collection, qrels)
        check_common_topics(self.collection, self.judgments)
        topic, tdi = self.collection.lookup(qrels.qid, qrels.docno)  # once: frames reuse it
        rel = np.asarray(qrels.rel, dtype=np.int64)
        # an entry marked unjudged (rel < 0; TREC-COVID's round-5 qrels hold two) is no
        # judgment: left out of the frame's rows, a pooled one counts as non-relevant, as
        # trec_eval counts it in the truth
        keep = (topic >= 0) & (rel >= 0)
        self._rows = (topic[keep], tdi[keep], rel[keep])
        self.info: RunInfo = run_info(
            self.collection.run_names,
            pooled=None if files.pooled is None else read_pooled_flags(files.pooled),
            groups=None if files.groups is None else read_run_groups(files.groups),
            source=files.pooled or files.groups or "",
        )
        self._lock = threading.RLock()
        self._truth: dict = {}
        self._decisions: dict = {}
        self._frame_truths: OrderedDict = OrderedDict()
        self._frame_decisions: OrderedDict = OrderedDict()
        self._pool_frames: OrderedDict = OrderedDict()
        self._frames: OrderedDict = OrderedDict()
        self._subsets: OrderedDict = OrderedDict()

    def truth(self, measures: Sequence[str]) -> Evaluation:
        """``measures`` of every run under the complete qrels (trec_eval's defaults)."""
        key = tuple(measures)
        with self._lock:
            if key not in self._truth:
                self._truth[key] = evaluate_collection(
                    self.collection, self.judgments, [parse_one(m) for m in key]
                )
            return self._truth[key]

    def truth_decisions(self, measures: Sequence[str], j: int, runs: tuple[int, ...],
                        alpha: float) -> PairDecisions:
        """Paired t-test decisions at ``alpha`` over all pairs of ``runs`` for the truth of
        measure ``j`` of ``measures`` (the gold standard of paper 002)."""
        key = (tuple(measures), j, runs, alpha)
        with self._lock:
            if key not in self._decisions:
                values = self.truth(measures).values[list(runs), :, j]
                self._decisions[key] = decisions(values, alpha=alpha)
            return self._decisions[key]

    def frame_truth(self, pool: tuple[int, ...], depth: float,
                    measures: Sequence[str]) -> Evaluation:
        """``measures`` of every run under the complete judgments of the frame of ``pool`` at
        ``depth`` (:meth:`frame`), unjudged = outside the frame = non-relevant: the truth a
        sample of that frame estimates (module docstring)."""
        key = (tuple(pool), float(depth), tuple(measures))
        with self._lock:
            return _lru(self._frame_truths, key, lambda: evaluate_collection(
                self.collection, self.frame(pool, depth).judgments(),
                [parse_one(m) for m in key[2]]))

    def frame_decisions(self, pool: tuple[int, ...], depth: float, measures: Sequence[str],
                        j: int, runs: tuple[int, ...], alpha: float) -> PairDecisions:
        """As :meth:`truth_decisions`, for the frame truth of ``pool`` at ``depth``."""
        key = (tuple(pool), float(depth), tuple(measures), j, runs, alpha)
        with self._lock:
            return _lru(self._frame_decisions, key, lambda: decisions(
                self.frame_truth(pool, depth, measures).values[list(runs), :, j], alpha=alpha))

    def frame(self, pool: tuple[int, ...], depth: float) -> SamplingFrame:
        """The sampling frame over the runs ``pool`` at ``depth``: the depth-``depth`` pool of
        those runs, graded by the qrels (inf: every qrels entry, retrieved or not, and where
        the qrels list relevant documents alone, every document the runs retrieve).

        Rows: the qrels entries whose best rank over the pool runs is at most ``depth``, and the
        documents those runs rank within ``depth`` that the qrels do not list, as non-relevant
        (grade 0: trec_eval's reading of complete qrels, e.g. Vaswani's and CACM's, which list
        relevant documents only), for topics the qrels judge (a topic without qrels is never
        evaluated). Entries beyond the depth are outside the simulated pool: never judged, they
        count as non-relevant for every estimator, as unpooled documents do. On TREC-8 the
        depth-100 pool of the pooled runs is exactly the qrels (no added rows).
        """
        with self._lock:
            return _lru(self._frames, (pool, float(depth)), lambda: self._cut(pool, depth))

    def _cut(self, pool: tuple[int, ...], depth: float) -> SamplingFrame:
        base = _lru(self._pool_frames, pool, lambda: SamplingFrame.from_arrays(
            self.collection, *self._rows, runs=pool, source=self.qrels.source))
        if np.isinf(depth):
            if (base.rel <= 0).any():  # qrels that list non-relevant documents: as they are
                return base
            # qrels of relevant documents alone (Vaswani's, CACM's) are complete: every
            # document the runs retrieve that they do not list is judged non-relevant
            keep = np.ones(len(base.rel), dtype=bool)
            pooled = Pool.from_runs(self.collection, list(pool), depth=None)
        else:
            keep = base.best_rank <= depth
            pooled = Pool.from_runs(self.collection, list(pool), depth=int(depth))
        listed = np.zeros(self.collection.n_tdi, dtype=bool)
        listed[base.tdi[base.tdi >= 0]] = True
        judged_topic = np.zeros(self.collection.n_topics, dtype=bool)
        judged_topic[base.topic] = True
        extra = ~listed[pooled.tdi] & judged_topic[pooled.topic]
        return SamplingFrame(
            self.collection, np.concatenate([base.topic[keep], pooled.topic[extra]]),
            np.concatenate([base.tdi[keep], pooled.tdi[extra]]),
            np.concatenate([base.rel[keep], np.zeros(int(extra.sum()), dtype=np.int64)]),
            np.concatenate([base.best_rank[keep], pooled.best_rank[extra].astype(np.float64)]),
            base.runs, f"{base.source} (depth {depth:g})",
        )

    def subcollection(self, runs: tuple[int, ...]) -> Collection:
        """The collection restricted to ``runs`` (same topics and document ids, so judgments
        of the full collection apply to it unchanged)."""
        if runs == tuple(range(self.collection.n_runs)):
            return self.collection
        with self._lock:
            return _lru(self._subsets, runs, lambda: restrict_runs(self.collection, runs))


def regraded(qrels, levels: int, seed: int):
    """The qrels with every relevant judgment (grade > 0) given a grade drawn uniformly from
    1..``levels`` by ``numpy.random.default_rng(seed)`` in file order; other judgments as they
    are. A graded version of a binary collection (``irsample simulate --graded``), to validate
    the estimators of graded measures where no graded collection is at hand: the relevant set,
    and so every binary measure, is unchanged. Graded qrels are refused: drawing over their
    grades would silently replace them."""
    rel = np.asarray(qrels.rel, dtype=np.int64).copy()
    if len(rel) and rel.max() > 1:
        raise InputError(
            f"--graded {levels} draws grades for a binary collection's relevant documents, but "
            f"these qrels are graded already (grades up to {int(rel.max())}); leave --graded "
            "out to use their own grades", qrels.source)
    relevant = rel > 0
    rel[relevant] = np.random.default_rng(seed).integers(1, levels + 1, int(relevant.sum()))
    return replace(qrels, rel=rel)


def _lru(cache: OrderedDict, key, build, size: int = FRAMES_KEPT):
    if key in cache:
        cache.move_to_end(key)
        return cache[key]
    cache[key] = value = build()
    while len(cache) > size:
        cache.popitem(last=False)
    return value


def restrict_runs(collection: Collection, runs: Sequence[int]) -> Collection:
    """``collection`` with only the runs ``runs`` (in that order): their segments' positions
    gathered into new CSR arrays; topics and the ``tdi`` space are unchanged."""
    runs = np.asarray(runs, dtype=np.int64)
    n_topics = collection.n_topics
    seg = (runs[:, None] * n_topics + np.arange(n_topics)).ravel()
    starts = collection.rank_offsets[seg]
    lengths = collection.rank_offsets[seg + 1] - starts
    offsets = np.zeros(len(seg) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    index = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1])
    return dataclasses.replace(
        collection,
        run_names=tuple(collection.run_names[r] for r in runs),
        run_sources=tuple(collection.run_sources[r] for r in runs),
        rank_offsets=offsets,
        rank_tdi=collection.rank_tdi[index],
        rank_score=collection.rank_score[index],
    )


_LOADED: dict[CollectionFiles, LoadedCollection] = {}
_LOAD_LOCK = threading.Lock()


def load(files: CollectionFiles) -> LoadedCollection:
    """The collection of ``files``, parsed once per process."""
    with _LOAD_LOCK:
        if files not in _LOADED:
            _LOADED[files] = LoadedCollection(files)
        return _LOADED[files]


def forget(files: CollectionFiles | None = None) -> None:
    """Drop a loaded collection (all of them with ``None``) from this process's cache."""
    with _LOAD_LOCK:
        if files is None:
            _LOADED.clear()
        else:
            _LOADED.pop(files, None)
