"""The sampling frame: complete judgments over a collection, from which designs draw samples.

In survey-sampling terms (Thompson, *Sampling*; Cochran, *Sampling Techniques*) the *frame* lists
the units a sample is drawn from. Here a unit is one qrels entry (topic, document) of a complete
set of judgments, i.e. one document of a topic's pool; the frame also keeps each document's
true grade (the simulated assessor's answer) and its **best rank**: the smallest 1-based rank at
which any of the frame's runs retrieved it (trec_eval order; ``inf`` if none of them did), which
depth-k pools and rank strata are defined by.

A :class:`Design` chooses which frame rows to judge and returns a :class:`Sample`: per row,
judged or not, its stratum and its first-order inclusion probability pi (the probability that the
design judges it). A design also defines its own pool: rows beyond it (e.g. best rank > 15 for a
depth-15 pool) are outside the design (stratum -1, pi = 0). :meth:`SamplingFrame.judgments` turns
a sample into :class:`Judgments` whose unjudged design documents are pooled-but-unjudged (qrels
value -1) and whose rows outside the design are unpooled (absent), with the strata recorded for
sample_eval's estimators and pi in ``inclusion`` for statAP. Nothing here touches strings:
building the frame looks documents up once, and every draw works on integer arrays.

Designs select over *pool rows* (``topic``, ``tdi``, ``best_rank``, ``runs``, ``depth``): a
frame is a pool's rows plus their complete grades, and a :class:`~irsample.design.pools.Pool`
(rankings only, for real judging) offers the same rows without grades.
"""

from __future__ import annotations

import dataclasses
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from numba import njit

from ..errors import DesignError
from ..io.trec import QrelsTable
from ..model import Collection, Judgments
from ..stats import random

NOT_RETRIEVED = np.inf  #: best rank of a pool document none of the frame's runs retrieved


@njit(cache=True, nogil=True)
def _best_rank(rank_offsets, rank_tdi, n_topics, runs, n_tdi):
    """Smallest 1-based rank of every ``tdi`` over the given runs' rankings (inf if none)."""
    best = np.full(n_tdi, np.inf)
    for r in runs:
        for s in range(r * n_topics, (r + 1) * n_topics):
            a = rank_offsets[s]
            for i in range(rank_offsets[s + 1] - a):
                d = rank_tdi[a + i]
                if i + 1.0 < best[d]:
                    best[d] = i + 1.0
    return best


@dataclass(frozen=True, eq=False)
class Sample:
    """One draw of a design over a frame's rows.

    ``judged[i]``: whether row ``i`` is judged; ``stratum[i]``: its stratum, an index into
    ``labels`` (-1: the row is outside the design's pool); ``inclusion[i]``: its first-order
    inclusion probability pi_i under the design (for every row, judged or not; 0 outside).
    """

    judged: np.ndarray
    stratum: np.ndarray
    labels: tuple[str, ...]
    inclusion: np.ndarray


class PoolRowsBase:
    """What a pool and a sampling frame share: one row per pooled document of a topic, with
    arrays ``topic`` and ``tdi`` over a ``collection`` (the rows every design selects over)."""

    def __len__(self) -> int:
        return len(self.tdi)

    @property
    def n_topics(self) -> int:
        return self.collection.n_topics

    def pool_size(self) -> np.ndarray:
        """N_t: the rows (pooled documents) of every topic."""
        return np.bincount(self.topic, minlength=self.n_topics)


@dataclass(frozen=True, eq=False)
class SamplingFrame(PoolRowsBase):
    r"""Complete judgments of a collection's pools as per-row arrays (one row per qrels entry).

    ``topic`` and ``tdi`` index the collection (``tdi`` = -1 for a judged document no run
    retrieved, when the collection was built without the qrels), ``rel`` is the complete grade
    (>= 0), ``best_rank`` the smallest rank over the runs ``runs`` (``inf`` if none retrieved it).
    Build one with :meth:`from_qrels` (or :meth:`from_pool`); it is reused for every draw, and a
    design's draw becomes judgments with :meth:`judgments`.

    Attributes
    ----------
    collection : Collection
        The runs whose rankings define the best ranks.
    topic, tdi, rel, best_rank : numpy.ndarray, shape (rows,)
        Per row: topic index, document index, complete grade, best rank over ``runs``.
    runs : tuple of int
        The runs (indices) that define best ranks, e.g. the pooled runs only.

    Examples
    --------
    Four judged documents of topic 1, three of them retrieved; half of them drawn uniformly,
    the others become pooled but unjudged (-1):

    >>> from io import BytesIO
    >>> import irsample
    >>> from irsample.design import SamplingFrame, uniform
    >>> from irsample.io import load_qrels
    >>> qrels = load_qrels(BytesIO(b"1 0 a 1\n1 0 b 0\n1 0 c 1\n1 0 d 0\n"))
    >>> run = BytesIO(b"1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 c 3 1 r\n")
    >>> collection, _ = irsample.load(qrels, [run])
    >>> frame = SamplingFrame.from_qrels(collection, qrels)
    >>> len(frame), frame.best_rank
    (4, array([ 1.,  2.,  3., inf]))
    >>> frame.judgments(uniform(0.5).select(frame, rng=1)).grade
    array([-1, -1,  1,  0], dtype=int32)
    """

    collection: Collection
    topic: np.ndarray = field(repr=False)  #: (n,) int64
    tdi: np.ndarray = field(repr=False)  #: (n,) int64
    rel: np.ndarray = field(repr=False)  #: (n,) int64, all >= 0
    best_rank: np.ndarray = field(repr=False)  #: (n,) float64, 1-based; inf if not retrieved
    runs: tuple[int, ...]
    source: str = "<frame>"
    depth: float = NOT_RETRIEVED  #: depth of the rankings best ranks come from (inf: whole)
    _memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @classmethod
    def from_qrels(
        cls, collection: Collection, table: QrelsTable, *, runs: Sequence[int] | None = None
    ) -> SamplingFrame:
        """The frame of complete qrels ``table`` over ``collection``.

        Entries of topics outside the collection are dropped (they are never evaluated).

        Parameters
        ----------
        collection : Collection
            The runs (see :func:`irsample.load`).
        table : QrelsTable
            Complete judgments (:func:`irsample.io.load_qrels`).
        runs : sequence of int, optional
            The runs whose rankings define best ranks (default: all), e.g. the pooled runs only.

        Returns
        -------
        SamplingFrame

        Raises
        ------
        DesignError
            An entry is not judged (rel < 0): a frame must hold complete judgments to simulate
            an assessor.
        """
        topic, tdi = collection.lookup(table.qid, table.docno)
        keep = topic >= 0
        rel = np.asarray(table.rel, dtype=np.int64)
        if np.any(rel[keep] < 0):
            raise DesignError(
                f"{table.source}: {int(np.count_nonzero(rel[keep] < 0))} qrels entries are not "
                "judged (rel < 0); a sampling frame needs complete judgments"
            )
        return cls.from_arrays(
            collection, topic[keep], tdi[keep], rel[keep], runs=runs, source=table.source
        )

    @classmethod
    def from_arrays(
        cls, collection: Collection, topic, tdi, rel, *, runs: Sequence[int] | None = None,
        source: str = "<frame>",
    ) -> SamplingFrame:
        """The frame of per-row arrays (``topic`` >= 0, ``tdi`` >= -1, ``rel`` >= 0)."""
        topic = np.asarray(topic, dtype=np.int64)
        tdi = np.asarray(tdi, dtype=np.int64)
        rel = np.asarray(rel, dtype=np.int64)
        if np.any(topic < 0) or np.any(rel < 0):
            raise DesignError("frame rows need topic >= 0 and a judged grade rel >= 0")
        runs = tuple(range(collection.n_runs)) if runs is None else tuple(int(r) for r in runs)
        if len(set(runs)) != len(runs) or any(not 0 <= r < collection.n_runs for r in runs):
            raise DesignError(
                f"runs must be distinct run indices in [0, {collection.n_runs}), got {runs}"
            )
        best = _best_rank(
            collection.rank_offsets, collection.rank_tdi, collection.n_topics,
            np.array(runs, dtype=np.int64), collection.n_tdi,
        )
        best_rank = np.where(tdi >= 0, best[np.maximum(tdi, 0)], NOT_RETRIEVED)
        frame = cls(collection, topic, tdi, rel, best_rank, runs, source)
        frame.judgments()  # validates the rows once (ranges, topics of tdi, repeated documents)
        return frame

    @classmethod
    def from_pool(cls, pool, table: QrelsTable) -> SamplingFrame:
        """The frame of a :class:`~irsample.design.pools.Pool`'s rows, in the pool's order, with
        their grades from complete qrels ``table`` (documents the qrels judge outside the pool
        are left out: they are unpooled for every design over this pool). Raises
        :class:`DesignError` if a pooled document has no judgment (rel >= 0) in ``table``."""
        collection = pool.collection
        topic, tdi = collection.lookup(table.qid, table.docno)
        rel = np.full(collection.n_tdi, -1, dtype=np.int64)
        inside = tdi >= 0
        rel[tdi[inside]] = np.asarray(table.rel, dtype=np.int64)[inside]
        pooled_rel = rel[pool.tdi]
        missing = np.flatnonzero(pooled_rel < 0)
        if len(missing):
            i = int(missing[0])
            raise DesignError(
                f"{table.source}: {len(missing)} documents of the pool have no judgment, e.g. "
                f"topic {collection.topics[pool.topic[i]]} document "
                f"{collection.tdi_docno[int(pool.tdi[i])].as_py().decode()}; a sampling frame "
                "needs complete judgments of its pool"
            )
        frame = cls(
            collection, pool.topic, pool.tdi, pooled_rel, pool.best_rank, tuple(pool.runs),
            table.source, float(pool.depth),
        )
        frame.judgments()
        return frame

    def judgments(self, sample: Sample | None = None, *, source: str | None = None) -> Judgments:
        """Judgments of a sample: judged rows keep their grade, the other rows become pooled but
        unjudged (qrels value -1); strata and inclusion probabilities are recorded. Without a
        sample, the complete judgments (one stratum, pi = 1): the truth a design estimates."""
        if sample is None:
            return Judgments.from_arrays(
                self.collection, self.topic, self.tdi, self.rel, source=source or self.source
            )
        if len(sample.judged) != len(self):
            raise DesignError(f"sample of {len(sample.judged)} rows for a frame of {len(self)}")
        rows = sample.stratum >= 0  # rows outside the design's pool are unpooled
        if rows.all():
            rows = slice(None)
        return Judgments.from_arrays(
            self.collection, self.topic[rows], self.tdi[rows],
            np.where(sample.judged, self.rel, -1)[rows], stratum=sample.stratum[rows],
            labels=sample.labels, prob=sample.inclusion[rows], source=source or self.source,
        )

    def memo(self, key, build):
        """``build()`` computed once per frame under ``key`` (a design's fixed allocation)."""
        if key not in self._memo:
            self._memo[key] = build()
        return self._memo[key]


def generator(rng) -> np.random.Generator:
    """:func:`irsample.stats.random.generator`, raising :class:`DesignError`: a design draw must
    be reproducible, so the caller names its seed (``None`` is refused)."""
    return random.generator(rng, error=DesignError)


#: design kind -> its class: every :class:`Design` subclass that sets ``kind`` registers here
#: (:func:`~irsample.design.sampling.named.parse_design` reads names through it)
DESIGNS: dict[str, type[Design]] = {}

_KIND = re.compile(r"[a-z][a-z0-9_]*")


class Design(ABC):
    """A way of choosing the documents to judge: :meth:`select` draws a :class:`Sample` over a
    frame; :meth:`sample` returns it as :class:`Judgments` ready for the estimators.

    Designs are frozen value objects; ``rng`` is keyword-only and required (see
    :func:`generator`), so the same seed gives the same sample on any machine (NumPy's PCG64).

    A design class says in itself how it is named and handled, so adding one is one module:

    - ``kind``: the word its :attr:`name` starts with (``uniform`` in ``uniform(0.3)@500``);
      setting it registers the class in :data:`DESIGNS`, and :meth:`from_spec` reads the text
      between the parentheses back (``syntax``, e.g. ``uniform(F)``, shows it in messages;
      empty for a design that cannot be named);
    - ``merge_formats``: the formats its judgments merge into
      (:mod:`irsample.design.merge`; ``merge_note`` says why one is missing);
    - ``takes_budget``: whether :meth:`with_budget` applies (``irsample sample --budget``);
    - ``file_key``: a design that cannot be named is written into its design file under this
      key (:meth:`file_block`, :meth:`from_file_block`; :mod:`irsample.design.record`).
    """

    kind: ClassVar[str] = ""
    syntax: ClassVar[str] = ""
    merge_formats: ClassVar[tuple[str, ...]] = ("strata", "prels", "trec")
    merge_note: ClassVar[str] = ""
    takes_budget: ClassVar[bool] = True
    file_key: ClassVar[str | None] = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        kind = cls.__dict__.get("kind")
        if not kind:
            return
        if not _KIND.fullmatch(kind):
            raise TypeError(f"{cls.__qualname__}: design kind {kind!r} is not a lowercase word")
        known = DESIGNS.get(kind)
        if known is not None and (known.__module__, known.__qualname__) != (
            cls.__module__, cls.__qualname__
        ):
            raise RuntimeError(f"design kind {kind!r} registered twice ({known.__qualname__}, "
                               f"{cls.__qualname__})")
        DESIGNS[kind] = cls

    @classmethod
    def from_spec(cls, spec: str, budget) -> Design:
        """The design named ``kind(spec)`` (``@budget``: a
        :class:`~irsample.design.sampling.budget.Budget` or None)."""
        raise DesignError(f"{cls.kind} designs cannot be read from a name")

    @property
    @abstractmethod
    def name(self) -> str:
        """A canonical, parseable description (``uniform(0.3)``)."""

    @property
    def depth(self) -> float:
        """The deepest best rank the design can judge (inf: any); the depth of the pool to
        build for it from runs alone."""
        return NOT_RETRIEVED

    def with_budget(self, budget) -> Design:
        """The same design with its sample sizes set by ``budget``
        (:class:`~irsample.design.sampling.budget.Budget`)."""
        if not self.takes_budget:
            raise DesignError(f"{self.name} is a {self.kind or type(self).__name__} design: its "
                              "sample sizes are fixed by the design, so a budget (--budget) "
                              "does not apply")
        return dataclasses.replace(self, budget=budget)

    def judged_before(self) -> frozenset[tuple[str, str]]:
        """(topic, docno) of documents judged before the draw, which it always selects (left
        out of the to-judge list)."""
        return frozenset()

    def stratum_labels(self) -> tuple[str, ...] | None:
        """The design's strata in their order when the design fixes them whatever the pool
        (a design file's rows are then checked against them), else None."""
        return None

    def file_block(self) -> str | None:
        """The design file entry (`` "key": {...}``) of a design that cannot be named."""
        return None

    @classmethod
    def from_file_block(cls, block, source: str, locate) -> Design:
        """The design of a design file's ``file_key`` entry ``block``; errors are
        :class:`~irsample.errors.InputError` of ``source`` at ``locate(needle)``'s line."""
        raise DesignError(f"{cls.kind} designs are not read from design files")

    @abstractmethod
    def select(self, frame: SamplingFrame, *, rng) -> Sample:
        """Draw which rows of a frame (or of a :class:`~irsample.design.pools.Pool`) are
        judged."""

    def sample(self, frame: SamplingFrame, *, rng) -> Judgments:
        """Draw a sample and return its judgments (source: the design's name)."""
        return frame.judgments(self.select(frame, rng=rng), source=self.name)
