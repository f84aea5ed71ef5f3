"""Per-evaluation arrays shared by all measure kernels.

An :class:`EvalContext` gathers, once per evaluation, the judgments of every ranked position
(grade, state) and derives lazily, with caching, what several measures share: relevance flags at
a level, their running counts, per-topic relevant/non-relevant counts. Measures read these
arrays; nothing here knows about a particular measure.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..model import JUDGED, POOLED, Collection, Judgments
from .kernels import gather_pair, positions_in_segments, segment_cumsum, segment_last_below


class EvalContext:
    """Rankings of a collection joined with judgments, after trec_eval's options.

    - ``rel_level`` (``-l``): judged documents with grade >= level are relevant.
    - ``judged_only`` (``-J``): drop every retrieved document that is not judged (pooled-unjudged
      and unpooled alike) before measuring.
    - ``drop_pooled_unjudged``: drop only pooled-but-unjudged documents (qrels value < 0) and keep
      unpooled ones (non-relevant), as induced AP does (Yilmaz & Aslam 2008, §4.3).
    - ``max_docs`` (``-M``): keep only the first ``max_docs`` documents of each ranking (in
      trec_eval order). As in trec_eval, the cut-off applies before documents are dropped.
    - ``compat``: the trec_eval version ("10" or "9.0.8") whose rounding of interpolated
      precision cut-offs to follow.
    """

    def __init__(
        self,
        collection: Collection,
        judgments: Judgments,
        *,
        rel_level: int = 1,
        judged_only: bool = False,
        max_docs: int | None = None,
        compat: str = "10",
        drop_pooled_unjudged: bool = False,
    ):
        if compat not in ("10", "9.0.8"):
            raise ValueError(f"compat must be '10' or '9.0.8', not {compat!r}")
        self.compat = compat
        self.collection = collection
        self.judgments = judgments
        self.rel_level = int(rel_level)
        self.judged_only = bool(judged_only)
        self.drop_pooled_unjudged = bool(drop_pooled_unjudged)
        self.max_docs = max_docs
        self.n_runs = collection.n_runs
        self.n_topics = collection.n_topics
        self.n_seg = self.n_runs * self.n_topics
        offsets = collection.rank_offsets
        tdi = collection.rank_tdi
        keep = None
        if max_docs is not None:
            keep = positions_in_segments(offsets) <= max_docs
        if judged_only:
            judged = judgments.state[tdi] == JUDGED
            keep = judged if keep is None else keep & judged
        elif drop_pooled_unjudged:
            not_pooled = judgments.state[tdi] != POOLED
            keep = not_pooled if keep is None else keep & not_pooled
        if keep is not None:
            kept = np.concatenate([[0], np.cumsum(keep, dtype=np.int64)])
            offsets = kept[offsets]
            tdi = tdi[keep]
        self.offsets = offsets
        self.pos_tdi = tdi
        self.seg_topic = np.tile(np.arange(self.n_topics, dtype=np.int64), self.n_runs)
        self.seg_len = np.diff(offsets)
        self._rel: dict[int, np.ndarray] = {}
        self._cum_rel: dict[int, np.ndarray] = {}
        self._shared: dict = {}
        #: the measures being evaluated with this context (set by evaluate_collection), so a
        #: shared computation can serve all of them in one pass
        self.requested: tuple = ()
        #: automatic labels (:class:`~irsample.io.labels.AutoLabels`) for ``ppi(M)`` and
        #: ``auto(M)``, set by evaluate_collection with ``auto_labels=``
        self.auto_labels = None

    def shared(self, key, build):
        """Compute ``build()`` once per context under ``key`` (arrays several measures use)."""
        if key not in self._shared:
            self._shared[key] = build()
        return self._shared[key]

    def shared_for(self, key, owner, build):
        """``build()`` once per context for the object ``owner`` (``key`` with its id; the entry
        keeps ``owner`` and is rebuilt if another object ever holds that id)."""
        full = (key, id(owner))
        cached = self._shared.get(full)
        if cached is None or cached[0] is not owner:
            cached = self._shared[full] = (owner, build())
        return cached[1]

    def replace_shared(self, key, value):
        """Store ``value`` under ``key`` (a fuller version of a shared result); return it."""
        self._shared[key] = value
        return value

    def on(self, judgments: Judgments) -> EvalContext:
        """A context like this one (collection and options) on other ``judgments``."""
        return EvalContext(self.collection, judgments, rel_level=self.rel_level,
                           judged_only=self.judged_only, max_docs=self.max_docs,
                           compat=self.compat, drop_pooled_unjudged=self.drop_pooled_unjudged)

    # ---- positions -------------------------------------------------------------------------
    def __getattr__(self, name):
        """``pos_grade`` (the qrels value of every ranked position, 0 where unpooled) and
        ``pos_state`` (``UNPOOLED``, ``POOLED``, ``JUDGED``), gathered together on first use:
        the estimators read the pooled positions alone (``pool_layout.pooled_positions``)."""
        if name not in ("pos_grade", "pos_state"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        j = self.judgments
        self.pos_grade, self.pos_state = gather_pair(self.pos_tdi, j.grade, j.state)
        return getattr(self, name)

    @cached_property
    def rank(self) -> np.ndarray:
        """1-based rank of every position within its ranking."""
        return positions_in_segments(self.offsets)

    @cached_property
    def answered(self) -> np.ndarray:
        """(runs, topics): whether the run ranks documents for a topic the judgments hold (the
        topics a run's mean over topics covers)."""
        present = (self.judgments.has_topic[self.seg_topic] & (self.seg_len > 0)).reshape(
            self.n_runs, self.n_topics)
        present.flags.writeable = False  # shared by every caller of this context
        return present

    @cached_property
    def judged(self) -> np.ndarray:
        """Whether each position holds a judged document (qrels value >= 0)."""
        return self.pos_state == JUDGED

    def rel(self, level: int | None = None) -> np.ndarray:
        """Whether each position is relevant at ``level`` (default: the context's ``-l``)."""
        level = self.rel_level if level is None else level
        if level not in self._rel:
            self._rel[level] = (self.judged & (self.pos_grade >= level)).astype(np.int64)
        return self._rel[level]

    def cum_rel(self, level: int | None = None) -> np.ndarray:
        """Relevant documents at or above each position."""
        level = self.rel_level if level is None else level
        if level not in self._cum_rel:
            self._cum_rel[level] = segment_cumsum(self.offsets, self.rel(level))
        return self._cum_rel[level]

    @cached_property
    def cum_judged(self) -> np.ndarray:
        """Judged documents at or above each position."""
        return segment_cumsum(self.offsets, self.judged.astype(np.int64))

    def at_cutoff(self, cum: np.ndarray, k) -> np.ndarray:
        """Per segment, the running value ``cum`` through rank ``min(k, n)`` (0 if empty)."""
        # a writable copy whatever ``k`` is: one kernel signature (each one loads separately)
        k = np.array(np.broadcast_to(np.asarray(k, dtype=np.int64), (self.n_seg,)))
        return segment_last_below(self.offsets, cum, k)

    def total(self, cum: np.ndarray) -> np.ndarray:
        """Per segment, the running value ``cum`` at the end of the ranking."""
        return self.at_cutoff(cum, self.seg_len)

    # ---- topics ----------------------------------------------------------------------------
    @cached_property
    def grade_topic(self) -> np.ndarray:
        """Topic of every entry of ``judgments.judged_grades``."""
        return np.repeat(np.arange(self.n_topics), np.diff(self.judgments.grade_offsets))

    def num_rel_topic(self, level: int | None = None) -> np.ndarray:
        """Judged relevant documents per topic (R), retrieved or not."""
        level = self.rel_level if level is None else level
        mask = self.judgments.judged_grades >= level
        return np.bincount(self.grade_topic[mask], minlength=self.n_topics)

    def num_rel(self, level: int | None = None) -> np.ndarray:
        """R of each segment's topic."""
        return self.num_rel_topic(level)[self.seg_topic]

    def num_nonrel(self, level: int | None = None) -> np.ndarray:
        """Judged non-relevant documents of each segment's topic (N)."""
        level = self.rel_level if level is None else level
        mask = self.judgments.judged_grades < level
        return np.bincount(self.grade_topic[mask], minlength=self.n_topics)[self.seg_topic]


def safe_divide(num, den) -> np.ndarray:
    """``num / den`` with 0 where ``den`` is 0 (trec_eval's convention for empty denominators)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out
