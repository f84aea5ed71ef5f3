"""Planning in batches: a pilot, then re-estimate and re-plan after every batch of judgments.

:func:`judge_in_batches` runs the loop against an assessor (a function from pool rows to their
grades: the complete qrels in a simulation, people otherwise):

1. judge a pilot (:func:`~irsample.design.planner.plan.pilot`: strata 1-10 and 11-depth, equal
   shares per topic; :func:`default_pilot`: 5% of the budget, at least 2 per topic) unless
   documents are judged already;
2. for each of ``batches`` batches: fit the relevance model to everything judged, plan the
   budget spent so far plus the batch (:func:`~irsample.design.planner.plan`, the earlier
   batches' strata kept as boundaries), and judge the plan's new documents (the earlier ones
   stay in the sample: within each cell they are an SRS conditionally on their number, so the
   union is an SRS of the planned size; :mod:`irsample.design.sampling.allocated`).

The last batch's draw is the sample; its inclusion probabilities are those of the last batch
given everything judged before it (:mod:`irsample.design.sampling.allocated`): 1 for the earlier
judgments, j_c / (N_c - m_c) for the rest of a cell topped up by j_c. Every batch's size follows
the earlier batches' outcomes, so only these conditional probabilities make the design-based
estimators (``ht``) unbiased; earlier batches enter as known documents, round by round.
:class:`PlannedDesign` wraps the loop as a :class:`~irsample.design.frame.Design` over a
:class:`~irsample.design.frame.SamplingFrame` (whose complete grades answer), so experiments
compare it with fixed designs at the same budget.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ...errors import DesignError
from ...io.arrow import binary_of
from ..frame import Design, Sample, SamplingFrame, generator
from ..sampling.budget import Budget
from .plan import PILOT_EDGE, SPREAD, Plan, pilot, plan
from .relevance_model import fit_relevance
from .variance_model import INFLUENCE


def check_estimator(estimator: str) -> None:
    """:class:`DesignError` unless the planner has a variance model for ``estimator``."""
    if estimator not in INFLUENCE:
        raise DesignError(f"cannot plan for {estimator!r}; known: {', '.join(INFLUENCE)}")


def default_pilot(budget: int, n_topics: int) -> int:
    """5% of the budget, at least 2 judgments per topic (1 per pilot stratum): every pilot
    judgment is a known document of the final sample, so a large pilot leaves the top-ups of
    its cells small and their weights large (module docstring)."""
    return min(budget, max(budget // 20, 2 * n_topics))


@dataclass
class BatchLog:
    """What each batch planned: its plan and the judgments it made so far."""

    plans: list[Plan] = field(default_factory=list)
    judged: list[int] = field(default_factory=list)


def judge_in_batches(units, grades_of: Callable[[np.ndarray], np.ndarray], budget: int, *,
                     estimator: str = "xinfAP", pilot_size: int | None = None,
                     batches: int = 1, max_strata: int = 4, min_take: int = 1, rng,
                     log: BatchLog | None = None, rel_level: int = 1,
                     spread: float | None = SPREAD) -> Sample:
    """The sequential design (module docstring) over ``units``; ``grades_of(rows)`` judges pool
    rows. Returns the final :class:`~irsample.design.frame.Sample`."""
    check_estimator(estimator)
    if isinstance(batches, bool) or not isinstance(batches, numbers.Integral) or batches < 1:
        raise DesignError(f"batches must be an integer >= 1, got {batches!r}")
    rng = generator(rng)
    n_topics = units.collection.n_topics
    pilot_size = default_pilot(budget, n_topics) if pilot_size is None else int(pilot_size)
    if not 0 < pilot_size <= budget:
        raise DesignError(f"pilot of {pilot_size} judgments for a budget of {budget}")
    grade = np.zeros(len(units.topic), dtype=np.int64)
    sample = pilot(units, pilot_size).select(units, rng=rng)
    judged = np.asarray(sample.judged, dtype=bool).copy()
    grade[judged] = grades_of(np.flatnonzero(judged))
    required: tuple[int, ...] = (PILOT_EDGE,)
    spent = int(judged.sum())
    for b in range(batches):
        goal = spent + (budget - spent) // (batches - b)
        model = fit_relevance(units, judged, grade, rel_level=rel_level,
                              gains=estimator == "infNDCG")
        planned = plan(units, model, goal, estimator=estimator, judged=judged,
                       required=required, max_strata=max_strata, min_take=min_take,
                       spread=spread)
        if log is not None:
            log.plans.append(planned)
        design = planned.design(before=judged_keys(units, judged))
        sample = design.select(units, rng=rng)
        new = np.asarray(sample.judged, dtype=bool) & ~judged
        grade[new] = grades_of(np.flatnonzero(new))
        judged |= new
        spent = int(judged.sum())
        if log is not None:
            log.judged.append(spent)
        required = planned.edges[1:]
    return sample


def judged_keys(units, rows_mask) -> frozenset:
    """(qid, docno) of the rows of ``units`` in ``rows_mask``: a planned design's ``before``."""
    import pyarrow as pa

    rows = np.flatnonzero(rows_mask)
    col = units.collection
    docnos = col.tdi_docno.take(pa.array(units.tdi[rows])).to_pylist()
    return frozenset((col.topics[int(t)], d.decode("utf-8", "surrogateescape"))
                     for t, d in zip(units.topic[rows], docnos))


@dataclass(frozen=True)
class PlannedDesign(Design):
    """The planner as a design for simulation: a pilot, ``batches`` planned batches, ``budget``
    judgments in all, over a :class:`~irsample.design.frame.SamplingFrame` whose complete
    grades play the assessor. Named ``plan(ESTIMATOR[,pilot=P][,batches=B])@BUDGET``."""

    kind = "plan"
    syntax = "plan(ESTIMATOR)@B"

    budget: int
    estimator: str = "xinfAP"
    pilot: int | None = None
    batches: int = 1
    max_strata: int = 4
    min_take: int = 1
    spread: float | None = SPREAD

    def __post_init__(self):
        b = self.budget
        if isinstance(b, Budget):  # with_budget, or a name's @B
            if b.per_topic:
                raise DesignError("plan: the planner spends a total budget, not one per topic")
            b = b.total
            object.__setattr__(self, "budget", b)
        if isinstance(b, bool) or not isinstance(b, numbers.Integral) or b < 1:
            raise DesignError(f"budget must be an integer >= 1, got {b!r}")
        check_estimator(self.estimator)

    @classmethod
    def from_spec(cls, spec: str, budget) -> PlannedDesign:
        """``xinfAP,pilot=40,batches=2`` (the budget, ``@B``, is required)."""
        estimator, *options = [part.strip() for part in spec.split(",")]
        given = {}
        for option in options:
            key, sep, value = option.partition("=")
            if not sep or key.strip() not in ("pilot", "batches") or not value.strip().isdigit():
                raise DesignError(f"plan: expected pilot=N or batches=N, got {option!r}")
            given[key.strip()] = int(value)
        if budget is None:
            raise DesignError(f"plan({spec}) needs a budget: plan({spec})@B")
        return cls(budget, estimator, **given)

    @property
    def name(self) -> str:
        pilot = "" if self.pilot is None else f",pilot={self.pilot}"
        return f"plan({self.estimator}{pilot},batches={self.batches})@{self.budget}"

    def select(self, frame: SamplingFrame, *, rng) -> Sample:
        if not isinstance(frame, SamplingFrame):
            raise DesignError(f"{self.name} judges as it goes: it draws from a SamplingFrame "
                              "(complete grades); use `irsample plan` with real judgments")
        return judge_in_batches(frame, lambda rows: frame.rel[rows], self.budget,
                                estimator=self.estimator, pilot_size=self.pilot,
                                batches=self.batches, max_strata=self.max_strata,
                                min_take=self.min_take, rng=rng,
                                spread=self.spread)


@dataclass(frozen=True, eq=False)
class JudgedSample:
    """What a drawn design and its judgments say about a pool: ``judged`` rows (the design's
    selected documents), their ``grade``, and the design's strata ``edges`` (kept by the next
    plan so the judged documents stay SRS within its cells)."""

    judged: np.ndarray
    grade: np.ndarray
    edges: tuple[int, ...]
    extra: int  #: judgments of documents the design did not select (not used)


def judged_sample(pool, record, qrels) -> JudgedSample:
    """The pool rows a drawn design file ``record`` selected, graded by ``qrels``
    (:class:`~irsample.io.trec.QrelsTable`). Raises :class:`InputError` (the design file) if
    the design has no rows or is not stratified by best rank, and if a selected document of the
    pool has no judgment."""
    from ...errors import InputError

    if not record.has_rows:
        raise InputError("the design file has no drawn rows: give the design.json that "
                         "`irsample sample` wrote", record.source)
    try:
        edges = tuple(sorted({_first_rank(label) for label in record.labels}))
    except ValueError:
        raise InputError(f"strata {list(record.labels)} are not rank strata ('a-b'); the "
                         "planner tops up stratified samples only", record.source) from None
    if not edges or edges[0] != 1:
        raise InputError(f"strata {list(record.labels)} do not start at rank 1", record.source)
    col = pool.collection
    chosen = np.flatnonzero(record.selected)
    _, tdi = col.lookup(binary_of([record.qid[i] for i in chosen]),
                        binary_of([record.docno[i] for i in chosen]))
    row_of = np.full(col.n_tdi, -1, dtype=np.int64)
    row_of[pool.tdi] = np.arange(len(pool.tdi))
    rows = np.where(tdi >= 0, row_of[np.maximum(tdi, 0)], -1)
    rows = rows[rows >= 0]
    grade_of = np.full(col.n_tdi, -1, dtype=np.int64)
    _, q_tdi = col.lookup(qrels.qid, qrels.docno)
    known = q_tdi >= 0
    grade_of[q_tdi[known]] = qrels.rel[known]
    grade = np.zeros(len(pool.tdi), dtype=np.int64)
    grade[rows] = grade_of[pool.tdi[rows]]
    missing = rows[grade[rows] < 0]
    if len(missing):
        i = int(missing[0])
        raise InputError(
            f"{len(missing)} documents the design selected have no judgment in {qrels.source}, "
            f"e.g. topic {col.topics[pool.topic[i]]} document "
            f"{col.tdi_docno[int(pool.tdi[i])].as_py().decode()}; judge them first",
            record.source)
    judged = np.zeros(len(pool.tdi), dtype=bool)
    judged[rows] = True
    in_pool = np.zeros(col.n_tdi, dtype=bool)
    in_pool[pool.tdi[judged]] = True
    extra = int(np.count_nonzero(known & ~in_pool[np.maximum(q_tdi, 0)]))
    return JudgedSample(judged, grade, edges, extra)


def _first_rank(label: str) -> int:
    """The first best rank of a stratum label: ``11-100`` or ``11-``: 11; ``all`` (a uniform
    sample): 1; a union of rounds' cell ``STRATUM/BAND`` (:mod:`irsample.design.rounds`, e.g.
    ``11-100/31-100``, ``11-100/>100``): the later of the two starts (31, 101), so the bands'
    boundaries stay boundaries as the strata's do (the judged documents of a cell are a simple
    random sample of it, not of a stratum across two cells of different rates)."""
    if "/" in label:
        stratum, _, band = label.partition("/")
        first = int(band[1:]) + 1 if band.startswith(">") else _first_rank(band)
        return max(_first_rank(stratum), first)
    first, sep, _ = label.partition("-")
    if not sep:
        if label == "all":  # a uniform sample: one stratum
            return 1
        raise ValueError(label)
    return int(first)
