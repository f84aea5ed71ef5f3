"""Running an adaptive judging method against an assessor: budgets, batches, the judging order.

    collection = Collection.build(load_runs(paths), [qrels])
    result = judge_adaptively(collection, Hedge(0.1), QrelsAssessor(collection, qrels),
                              budget=100, per_topic=True, rng=42)
    result.judgments()        # Judgments: judged documents JUDGED, every other document UNPOOLED
    result.qrels_text()       # the judged set as TREC qrels, in judging order
    result.order_text()       # step, topic, docno, grade (TSV)

Adaptive methods have no pool: the documents they did not judge are simply absent from the
judgments (UNPOOLED), as they would be from the qrels file of the judged set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from ...errors import DesignError
from ...model import Collection, Judgments
from .assessor import Assessor
from .methods import UNJUDGED, JudgingProblem, Method


def water_fill(total: int, n: np.ndarray) -> np.ndarray:
    """Split ``total`` judgments over topics with ``n`` candidates each: min(n_t, q) for the
    largest level q whose sum fits, then one more to each of the first topics with n_t > q until
    ``total`` (or every candidate) is given out."""
    n = np.asarray(n, np.int64)
    if total >= n.sum():
        return n.copy()
    lo, hi = 0, int(n.max(initial=0))
    while lo < hi:
        q = (lo + hi + 1) // 2
        lo, hi = (q, hi) if np.minimum(n, q).sum() <= total else (lo, q - 1)
    caps = np.minimum(n, lo)
    caps[np.flatnonzero(n > lo)[: total - int(caps.sum())]] += 1
    return caps


def _integer(value, what) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise DesignError(f"{what} must be a non-negative integer, not {value!r}")
    return int(value)


def budget_caps(budget, *, per_topic: bool, n_candidates: np.ndarray, scope: str):
    """(judgments allowed per topic, total judgments) for a budget (see the module docstring of
    :mod:`irsample.design.adaptive.methods`); ``budget`` may also be a sequence, one budget per
    topic."""
    n = np.asarray(n_candidates, np.int64)
    if isinstance(budget, (Sequence, np.ndarray)) and not isinstance(budget, str):
        b = np.array([_integer(v, "a topic's budget") for v in budget], np.int64)
        if len(b) != len(n):
            raise DesignError(f"{len(b)} per-topic budgets for {len(n)} topics")
        caps = np.minimum(b, n)
        return caps, int(caps.sum())
    total = _integer(budget, "the budget")
    if per_topic:
        caps = np.minimum(total, n)
        return caps, int(caps.sum())
    if scope == "global":
        return n.copy(), min(total, int(n.sum()))
    caps = water_fill(total, n)
    return caps, int(caps.sum())


@dataclass(frozen=True, eq=False)
class JudgingResult:
    """The judging order of a session: row i is step i + 1, with the topic index, the document
    (``tdi``) and its grade (-1: handed out, not judged yet). ``total`` is the number of
    judgments the budget allows in all (min(budget, candidates))."""

    collection: Collection
    method: str
    topic: np.ndarray = field(repr=False)
    tdi: np.ndarray = field(repr=False)
    grade: np.ndarray = field(repr=False)
    total: int
    rel_level: int = 1

    def __len__(self) -> int:
        return len(self.tdi)

    @property
    def step(self) -> np.ndarray:
        return np.arange(1, len(self) + 1)

    @property
    def pending(self) -> np.ndarray:
        """Rows handed out but not judged yet."""
        return self.grade < 0

    @property
    def complete(self) -> bool:
        """Whether the whole budget is judged."""
        return len(self) == self.total and not self.pending.any()

    def docnos(self) -> list[str]:
        values = self.collection.tdi_docno.take(pa.array(self.tdi, pa.int64())).to_pylist()
        return [v.decode("utf-8", "surrogateescape") for v in values]

    def relevant_found(self) -> np.ndarray:
        """Relevant documents judged, per topic."""
        hit = self.grade >= self.rel_level
        return np.bincount(self.topic[hit], minlength=self.collection.n_topics)

    def judgments(self, *, source: str | None = None) -> Judgments:
        """The judged documents as :class:`Judgments` (all other documents unpooled)."""
        j = ~self.pending
        return Judgments.from_arrays(self.collection, self.topic[j], self.tdi[j], self.grade[j],
                                     source=source or self.method)

    def qrels_text(self) -> str:
        """The judged documents as TREC qrels lines (``topic 0 docno grade``), judging order."""
        topics, docnos = self.collection.topics, self.docnos()
        return "".join(
            f"{topics[t]} 0 {d} {g}\n"
            for t, d, g in zip(self.topic.tolist(), docnos, self.grade.tolist()) if g >= 0
        )

    def order_text(self) -> str:
        """``step topic docno grade`` (TSV with a header; empty grade: not judged yet)."""
        topics, docnos = self.collection.topics, self.docnos()
        rows = (
            f"{s}\t{topics[t]}\t{d}\t{g if g >= 0 else ''}\n"
            for s, t, d, g in zip(range(1, len(self) + 1), self.topic.tolist(), docnos,
                                  self.grade.tolist())
        )
        return "step\ttopic\tdocno\tgrade\n" + "".join(rows)


def judge_adaptively(
    collection: Collection,
    method: Method,
    assessor: Assessor,
    *,
    budget,
    per_topic: bool = False,
    depth: int | None = None,
    runs: Sequence[int] | None = None,
    batch: int = 1,
    rng,
    rel_level: int = 1,
    history: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> JudgingResult:
    """Judge documents chosen by ``method`` until the budget is spent or a grade is missing.

    ``budget`` is a total (split over topics for per-topic methods), or per topic with
    ``per_topic``, or a sequence of per-topic budgets. Only the first ``depth`` documents of
    each run (``runs``: run indices, default all) are candidates. Each step proposes ``batch``
    documents and asks ``assessor`` for their grades; it stops after a batch with a missing
    grade (-1), the documents a human assessor still has to judge. ``history`` (topic, tdi,
    grade arrays, -1 where not judged yet) are documents handed out before, in order: they
    start the order, and the method resumes from their grades (its state depends on the judged
    documents only). ``rng`` (seed or Generator) breaks ties and orders the runs initially.
    """
    problem = JudgingProblem.build(collection, runs=runs, depth=depth)
    batch = _integer(batch, "batch")
    if batch < 1 or _integer(rel_level, "rel_level") < 1:
        raise DesignError("batch and rel_level must be at least 1")
    caps, total = budget_caps(budget, per_topic=per_topic, n_candidates=problem.n_candidates,
                              scope=method.scope)
    policy = method.policy(problem, rng=rng, rel_level=rel_level)
    known = np.full(collection.n_tdi, UNJUDGED, np.int64)
    parts = [(np.zeros(0, np.int64),) * 3]
    if history is not None:
        t, d, g = (np.asarray(a, np.int64) for a in history)
        _check_history(problem, caps, total, t, d)
        np.subtract.at(caps, t, 1)
        done = g >= 0
        known[d[done]] = g[done]
        policy.update(t[done], d[done], g[done])
        if len(t):
            policy.resume_after(int(t[-1]))
        parts.append((t, d, g))
    handed = sum(len(p[0]) for p in parts)
    while handed < total and not (parts[-1][2] < 0).any():
        t, d = policy.propose(min(batch, total - handed), known, caps)
        if len(d) == 0:
            break
        np.subtract.at(caps, t, 1)
        g = _ask(assessor, t, d)
        parts.append((t, d, g))
        handed += len(d)
        done = g >= 0
        known[d[done]] = g[done]
        if done.all():
            policy.update(t, d, g)
    topic, tdi, grade = (np.concatenate(c) for c in zip(*parts))
    return JudgingResult(collection, method.name, topic, tdi, grade, total, rel_level)


def _ask(assessor: Assessor, t: np.ndarray, d: np.ndarray) -> np.ndarray:
    if len(d) == 1:
        grades = [np.asarray(assessor.judge(int(t[0]), d), np.int64)]
        order = np.zeros(1, np.int64)
    else:
        topics = np.unique(t)
        grades = [np.asarray(assessor.judge(int(u), d[t == u]), np.int64) for u in topics]
        order = np.concatenate([np.flatnonzero(t == u) for u in topics])
    g = np.empty(len(d), np.int64)
    flat = np.concatenate(grades)
    if len(flat) != len(d):
        raise DesignError(f"the assessor returned {len(flat)} grades for {len(d)} documents")
    g[order] = flat
    return np.where(g < 0, UNJUDGED, g)


def _check_history(problem: JudgingProblem, caps, total, t, d):
    c = problem.collection
    if np.any(d < 0) or np.any(d >= c.n_tdi) or not np.all(problem.candidates[d]):
        raise DesignError("the judging history names documents the runs did not retrieve "
                          "(within the depth considered)")
    if np.any(c.tdi_topic[d] != t) or len(np.unique(d)) != len(d):
        raise DesignError("the judging history repeats documents or misplaces their topics")
    if np.any(np.bincount(t, minlength=c.n_topics) > caps) or len(d) > total:
        raise DesignError("the judging history holds more documents than the budget allows")
