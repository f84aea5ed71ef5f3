"""Adaptive selection of the documents to judge: move-to-front pooling and Hedge.

Instead of judging a whole depth-k pool, an adaptive method picks the next document to judge
from the judgments made so far, so that relevant documents are found early (paper 003, "finding
relevant documents as quickly as possible"). The candidates are the documents some run retrieved
within its first ``depth`` ranks (default: its whole list); every judged document was retrieved
by some run. A *list* is one run's ranking of one topic, truncated at ``depth``, in trec_eval
order; Z is its length and r a document's 1-based rank in it. Relevant means grade >= rel_level.

**Move-to-front pooling** (Cormack, Palmer & Clarke, SIGIR 1998, §6). Each list is read in rank
order; lists are prioritised, and the next document of the list with the top priority is judged.
"If it is judged relevant (or has been previously judged relevant because it appeared in some
other submission) its priority is set to the maximum. Otherwise, its priority is reduced." Here:

- every list starts with priority 0 (the maximum) and no relevant document (stamp -1);
- the front list is the one of highest priority, then of most recent relevant document (so the
  list that just yielded a relevant document is read on), then of smallest random key (a seeded
  permutation of the lists: the initial order). The permutation is drawn over the lists in
  run-name order (per topic for local MTF; run name, then topic, for global MTF), so the same
  runs give the same keys, hence the same judgments, in whatever order their files are given
  (before, TREC-8's 12 runs of ``t8_12``, 20 per topic: 574 relevant found in one order, 569
  in the reverse);
- its next document is *examined*: if it is already judged, this costs nothing, and a relevant
  one resets the priority to 0 and stamps the list with the examination clock, a non-relevant
  one lowers the priority by 1 (so the priority is minus the number of non-relevant documents
  read since the list's last relevant one, the paper's estimate of 1/P(relevant)); if it is not
  judged yet, it is the next document to judge (and is examined once judged).

*Local* MTF keeps one queue per topic, each topic judging up to its own budget; *global* MTF
keeps one queue of all (run, topic) lists, so easy topics, whose lists keep yielding relevant
documents, get more judgments (the paper's "global MTF ... independent of the topic").

**Hedge** (Aslam, Pavlu & Savell, CIKM 2003; Freund & Schapire's Hedge(beta)), per topic. Runs
are experts with weights w_s, initially equal. A relevant document at rank r adds 1/i to the
precision at every rank i >= r, so the run's "total precision" (sum of precisions) gains
v_s(d) = 1/r + 1/(r+1) + ... + 1/Z_s = H(Z_s) - H(r - 1) (H: harmonic numbers; v = 0 if the run
did not retrieve d). Each step judges the unjudged candidate of largest weighted gain
sum_s w_s v_s(d) (paper 003's argmax; ties: seeded random order of the topic's candidates,
which are in docno order; the sum runs over the runs in run-name order), then every run suffers
the loss l_s = -v_s(d) if d is relevant, +v_s(d) if not, and w_s <- w_s * beta^l_s. The loss is
paper 003's GAIN/LOSS (the CIKM paper's ~ln(Z/r)); scaling it is the same as changing beta.
beta defaults to 0.1; beta = 1 never learns (a fixed metasearch ranking).

**Depth order** (``depth``; the baseline): rank 1 of every run (in run-name order), then rank
2, ...: with a budget, the largest depth-k pool that fits plus the start of depth k+1 in
run-name order.

Budgets: ``per_topic`` gives each topic up to N judgments; a total budget B goes to global MTF
as is, and is split over the topics for the per-topic methods by water-filling (each topic gets
min(n_t, q), q the largest level whose total fits, and the rest goes one by one to the first
topics still having candidates; n_t = candidates of topic t). Per-topic methods judge the topics
round robin (step 1 from the first topic, step 2 from the next, ...). The number judged is
exactly min(budget, candidates). With ``batch`` b, each step proposes b documents before their
grades are known (Hedge: the b best; MTF: the b next of the queue, each proposed document taken
as relevant), which is how a human assessor judges; b = 1 is the algorithms as published.

Every method's state is a function of the judged documents alone, so a judging session is
replayed from its judgments (see :class:`~irsample.design.adaptive.assessor.FileAssessor`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ...errors import DesignError
from ...model import Collection
from ..frame import generator
from . import _kernels as K

UNJUDGED = K.UNJUDGED


@dataclass(frozen=True, eq=False)
class JudgingProblem:
    """The lists of ``runs`` (run indices) on a collection, truncated at ``depth``, and the
    candidates: ``starts``/``lengths`` are (len(runs), T) arrays into ``collection.rank_tdi``.
    ``runs`` is kept in run-name order (the runid), so every tie rule below that follows the
    order of the lists follows the names, not the order the run files were given in."""

    collection: Collection
    runs: tuple[int, ...]
    depth: int | None
    starts: np.ndarray = field(repr=False)
    lengths: np.ndarray = field(repr=False)
    candidates: np.ndarray = field(repr=False)  #: (n_tdi,) bool
    n_candidates: np.ndarray = field(repr=False)  #: (T,) int64
    harmonic: np.ndarray = field(repr=False)  #: H(0..max Z)

    @classmethod
    def build(cls, collection: Collection, *, runs: Sequence[int] | None = None,
              depth: int | None = None) -> JudgingProblem:
        runs = tuple(range(collection.n_runs)) if runs is None else tuple(int(r) for r in runs)
        if (
            not runs
            or len(set(runs)) != len(runs)
            or not all(0 <= r < collection.n_runs for r in runs)
        ):
            raise DesignError(f"runs must be distinct run indices in [0, {collection.n_runs})")
        # lists in run-name order, whatever the order the runs were given in
        runs = tuple(sorted(runs, key=lambda r: (collection.run_names[r], r)))
        if depth is not None and depth < 1:
            raise DesignError(f"depth must be at least 1, not {depth}")
        T = collection.n_topics
        seg = np.array(runs, np.int64)[:, None] * T + np.arange(T)[None, :]
        starts = collection.rank_offsets[seg]
        lengths = collection.rank_offsets[seg + 1] - starts
        if depth is not None:
            lengths = np.minimum(lengths, depth)
        mask = K.candidate_mask(starts, lengths, collection.rank_tdi, collection.n_tdi)
        cum = np.concatenate([[0], np.cumsum(mask)])
        offsets = collection.topic_doc_offsets
        n_cand = (cum[offsets[1:]] - cum[offsets[:-1]]).astype(np.int64)
        top = int(lengths.max(initial=0))
        harmonic = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, top + 1))])
        return cls(collection, runs, depth, starts, lengths, mask, n_cand, harmonic)


# ---------------------------------------------------------------------------------- policies


class _Policy(ABC):
    """A method's state on one problem: ``propose`` the next documents, learn from grades.

    ``known`` (grades over tdi, UNJUDGED where unknown) and ``caps`` (budget left per topic) are
    owned by the driver; proposed documents are taken (never proposed again)."""

    @abstractmethod
    def propose(self, k: int, known: np.ndarray, caps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Up to ``k`` documents to judge next, as (topic, tdi) arrays."""

    # optional hooks: the default is to do nothing, so they are not abstract
    def update(self, topics: np.ndarray, docs: np.ndarray, grades: np.ndarray) -> None:  # noqa: B027
        """Learn from the grades of proposed documents (default: nothing to learn)."""

    def resume_after(self, topic: int) -> None:  # noqa: B027
        """Continue after a history whose last document belongs to ``topic`` (default: no-op)."""


class _MTFQueue(_Policy):
    """A move-to-front queue over lists (run index into problem.runs, topic) pairs."""

    def __init__(self, problem: JudgingProblem, run_idx, topics, rel_level, rng):
        start = problem.starts[run_idx, topics]
        length = problem.lengths[run_idx, topics]
        keep = length > 0
        self.start, self.length = start[keep], length[keep]
        self.topic = np.asarray(topics, np.int64)[keep]
        n = len(self.start)
        self.rkey = rng.permutation(n).astype(np.int64)
        self.heap = np.argsort(self.rkey).astype(np.int64)  # sorted by key: a valid heap
        self.prio = np.zeros(n, np.int64)
        self.stamp = np.full(n, -1, np.int64)
        self.ptr = np.zeros(n, np.int64)
        self.state = np.array([n, 0], np.int64)
        self.rank_tdi = problem.collection.rank_tdi
        self.rel_level = rel_level

    def _walk(self, arrays, known, caps):
        state, heap, prio, stamp, ptr = arrays
        return K.mtf_walk(state, heap, prio, stamp, self.rkey, ptr, self.start, self.length,
                          self.topic, self.rank_tdi, known, caps, self.rel_level)

    def propose(self, k, known, caps):
        arrays = (self.state, self.heap, self.prio, self.stamp, self.ptr)
        lst, d = self._walk(arrays, known, caps)  # free examinations: the queue's real moves
        if lst < 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        topics, docs = [self.topic[lst]], [d]
        if k > 1:  # plan the rest of the batch on a copy, taking proposed documents as relevant
            arrays = tuple(a.copy() for a in arrays)
            left = caps.copy()
            while True:
                left[topics[-1]] -= 1
                known[docs[-1]] = K.ASSUMED
                if len(docs) == k:
                    break
                lst, d = self._walk(arrays, known, left)
                if lst < 0:
                    break
                topics.append(self.topic[lst])
                docs.append(d)
            known[np.array(docs)] = UNJUDGED
        return np.array(topics, np.int64), np.array(docs, np.int64)


class _HedgeTopic(_Policy):
    """Hedge over the runs' lists of one topic; its candidates are numbered 0, 1, ... locally."""

    def __init__(self, problem: JudgingProblem, t, beta, rel_level, rng):
        c = problem.collection
        self.t, self.base = t, int(c.topic_doc_offsets[t])
        self.cand = np.flatnonzero(problem.candidates[self.base : c.topic_doc_offsets[t + 1]])
        self.local_of = np.full(int(c.topic_doc_offsets[t + 1]) - self.base, -1, np.int64)
        self.local_of[self.cand] = np.arange(len(self.cand))
        self.entries = K.hedge_entries(problem.starts[:, t], problem.lengths[:, t], c.rank_tdi,
                                       self.local_of, self.base, len(self.cand), problem.harmonic)
        self.logw = np.zeros(len(problem.runs))
        self.log_beta = float(np.log(beta))
        self.taken = np.zeros(len(self.cand), np.bool_)
        self.key = rng.permutation(len(self.cand)).astype(np.int64)
        self.rel_level = rel_level

    def propose(self, k, known, caps):
        args = (*self.entries, self.logw, self.taken)
        if k == 1:
            best = K.hedge_best(*args, self.key)
            docs = np.array([best] if best >= 0 else [], np.int64)
        else:
            score = K.hedge_scores(*args)
            valid = np.flatnonzero(score >= 0)
            docs = valid[np.lexsort((self.key[valid], -score[valid]))[:k]]
        self.taken[docs] = True
        return np.full(len(docs), self.t, np.int64), self.cand[docs] + self.base

    def update(self, topics, docs, grades):
        local = self.local_of[docs - self.base]
        self.taken[local] = True  # also documents judged before this policy started
        K.hedge_update(local, grades >= self.rel_level, *self.entries, self.log_beta, self.logw)


class _DepthTopic(_Policy):
    """Pooling order of one topic: rank 1 of every run, then rank 2, ..."""

    def __init__(self, problem: JudgingProblem, t, scratch):
        self.t = t
        self.order = K.depth_order(problem.starts[:, t], problem.lengths[:, t],
                                   problem.collection.rank_tdi, scratch)
        self.at = 0

    def propose(self, k, known, caps):
        docs = []
        while len(docs) < k and self.at < len(self.order):
            d = self.order[self.at]
            self.at += 1
            if known[d] == UNJUDGED:  # skip documents judged before this policy started
                docs.append(d)
        return np.full(len(docs), self.t, np.int64), np.array(docs, np.int64)


class _RoundRobin(_Policy):
    """Per-topic policies, judged round robin over the topics with budget left."""

    def __init__(self, policies: list[_Policy | None]):
        self.policies = policies
        self.done = np.array([p is None for p in policies])
        self.cursor = 0

    def propose(self, k, known, caps):
        T = len(self.policies)
        order, left, idle, t = [], caps.copy(), 0, self.cursor
        while len(order) < k and idle < T:
            if left[t] > 0 and not self.done[t]:
                order.append(t)
                left[t] -= 1
                idle = 0
            else:
                idle += 1
            t = (t + 1) % T
        self.cursor = t
        want = np.bincount(np.array(order, np.int64), minlength=T)
        got = {}
        for u in np.flatnonzero(want):
            got[u] = list(self.policies[u].propose(int(want[u]), known, caps)[1])[::-1]
            self.done[u] |= len(got[u]) < want[u]
        docs = [(u, got[u].pop()) for u in order if got[u]]
        return np.array([u for u, _ in docs], np.int64), np.array([d for _, d in docs], np.int64)

    def resume_after(self, topic: int) -> None:
        self.cursor = (int(topic) + 1) % len(self.policies)

    def update(self, topics, docs, grades):
        for u in np.unique(topics):
            at = topics == u
            self.policies[u].update(topics[at], docs[at], grades[at])


# ----------------------------------------------------------------------------------- methods


class Method(ABC):
    """An adaptive judging method: a frozen value object that starts a policy on a problem."""

    #: "local": per-topic policies sharing out the budget; "global": one policy over all topics
    scope = "local"

    @property
    @abstractmethod
    def name(self) -> str:
        """A canonical description (``mtf``, ``mtf-global``, ``hedge(beta=0.1)``, ``depth``)."""

    @abstractmethod
    def policy(self, problem: JudgingProblem, *, rng, rel_level: int) -> _Policy:
        """A fresh policy (seeded by ``rng``) over ``problem``."""

    def _per_topic(self, problem, build) -> _RoundRobin:
        return _RoundRobin(
            [
                build(t) if problem.n_candidates[t] else None
                for t in range(problem.collection.n_topics)
            ]
        )


@dataclass(frozen=True)
class MoveToFront(Method):
    """Move-to-front pooling, ``local`` (a queue per topic) or ``global`` (one queue)."""

    scope: str = "local"

    def __post_init__(self):
        if self.scope not in ("local", "global"):
            raise DesignError(f"move-to-front scope is 'local' or 'global', not {self.scope!r}")

    @property
    def name(self) -> str:
        return "mtf" if self.scope == "local" else "mtf-global"

    def policy(self, problem, *, rng, rel_level):
        rng = generator(rng)
        R, T = len(problem.runs), problem.collection.n_topics
        if self.scope == "global":
            runs, topics = np.divmod(np.arange(R * T), T)
            return _MTFQueue(problem, runs, topics, rel_level, rng)
        return self._per_topic(
            problem, lambda t: _MTFQueue(problem, np.arange(R), np.full(R, t), rel_level, rng)
        )


@dataclass(frozen=True)
class Hedge(Method):
    """Hedge(beta) over the runs of each topic (Aslam, Pavlu & Savell, CIKM 2003)."""

    beta: float = 0.1

    def __post_init__(self):
        if not 0.0 < self.beta <= 1.0:
            raise DesignError(f"Hedge's beta must be in (0, 1], not {self.beta!r}")

    @property
    def name(self) -> str:
        return f"hedge(beta={self.beta:g})"

    def policy(self, problem, *, rng, rel_level):
        rng = generator(rng)
        return self._per_topic(
            problem, lambda t: _HedgeTopic(problem, t, self.beta, rel_level, rng)
        )


@dataclass(frozen=True)
class DepthOrder(Method):
    """Non-adaptive pooling order (depth 1 of every run, then depth 2, ...): the baseline."""

    @property
    def name(self) -> str:
        return "depth"

    def policy(self, problem, *, rng, rel_level):
        scratch = np.zeros(problem.collection.n_tdi, np.bool_)
        return self._per_topic(problem, lambda t: _DepthTopic(problem, t, scratch))


METHODS = ("mtf", "mtf-global", "hedge", "depth")


def parse_method(name: str, *, beta: float | None = None) -> Method:
    """The method called ``name`` (one of :data:`METHODS`); ``beta`` is Hedge's only."""
    if beta is not None and name != "hedge":
        raise DesignError(f"beta is a parameter of hedge, not of {name}")
    methods = {
        "mtf": lambda: MoveToFront("local"),
        "mtf-global": lambda: MoveToFront("global"),
        "hedge": lambda: Hedge() if beta is None else Hedge(beta),
        "depth": DepthOrder,
    }
    if name not in methods:
        raise DesignError(f"unknown judging method {name!r} (one of {', '.join(METHODS)})")
    return methods[name]()
