"""A planned design: a fixed sample size per (topic, rank stratum) cell, topping up judged sets.

Where the other designs derive their sample sizes from rates or a budget, a planner (e.g. one
that spreads judgments over topics and strata by a pilot's variances, Neyman-style: Cochran,
*Sampling Techniques*, §5.5) fixes them itself: :class:`Allocated` takes, per topic, the number
k_ts of documents to judge in each rank stratum s, and the documents already judged (the
pilot, ``before``). Strata are by best rank as in
:class:`~irsample.design.sampling.stratified.Stratified`:
stratum s holds best ranks edges[s] .. edges[s+1] - 1, the last one up to ``last`` (``inf``:
open-ended); documents beyond ``last`` are outside the design (stratum -1, unpooled).

In a cell (topic t, stratum s) of N pool documents, m of them already judged, with planned size
k, the sample is the m judged documents plus a simple random sample without replacement (SRS;
Algorithm S, as in :mod:`irsample.design.sampling.stratified`) of j = max(0, min(k, N) - m) of
the other N - m. The inclusion probabilities recorded are those **given the documents judged
before** (two-phase sampling conditioned on the first phase; Cochran, *Sampling Techniques*,
ch. 12; Särndal, Swensson & Wretman §9.1):

    pi = 1 for the m judged documents, pi = j / (N - m) for the other N - m   (j > 0 or m = N).

Why conditional: a planner sizes the top-up from the earlier judgments' *outcomes* (their
relevant documents, their variances), so the marginal probability of a document is a random
function of the pilot and max(k, m)/N is not it; weighting by it biased every AP estimator
upward on Vaswani and CACM (issue 12). Given the earlier judgments, the top-up is an SRS of the
unjudged documents with known size, so every Horvitz-Thompson total
sum_{judged before} y_d + sum_{top-up} y_d / pi_d has conditional expectation the cell's total
(unbiased whatever the allocation rule), and its conditional variance (SRS of j of N - m:
second order as in ``ht/inclusion.py``) is an unbiased estimate of the total variance. Sequential
designs that top up in several batches condition on everything judged before the last batch.

A cell with no top-up (k <= m < N) has no second-phase sample of its unjudged documents: there
its m judged documents are taken as the SRS of the cell they were, given their count (a pilot
that was an SRS of a set containing the cell), pi = m / N. This keeps the estimate defined; it
is unbiased only as far as the planner's choice of k <= m does not depend on the pilot's
outcomes in that cell, and it cannot be when the pilot found nothing there (the cell then
estimates 0 relevant documents with variance 0). The planner therefore tops up every cell that
has unjudged documents by at least two (:data:`irsample.design.planner.plan.MIN_TOP_UP`; fewer
only when the budget cannot pay for them); this case remains for hand-written plans.

A non-empty cell with k = 0 and no judged document is an error: an empty stratum sample cannot
be estimated (see :mod:`irsample.design.sampling.stratified`). Planned designs are not parseable
by name; they live in their design file (:mod:`irsample.design.record`, key ``plan``;
:mod:`irsample.design.sampling.plan_file`).
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ...errors import DesignError
from ...io.arrow import binary_of
from ..frame import NOT_RETRIEVED, Design, Sample
from .cells import CellAllocation, draw
from .plan_file import plan_json, read_plan
from .stratified import RankStratum

_LABEL = re.compile(r"[A-Za-z][\w.-]*")


@dataclass(frozen=True, eq=False)
class _PlannedAllocation(CellAllocation):
    """A :class:`~irsample.design.sampling.cells.CellAllocation` of the not-yet-judged rows
    (``take``: the top-up size per cell), plus the rows judged before, which every draw
    selects."""

    already: np.ndarray  #: (n,) bool


@dataclass(frozen=True)
class Allocated(Design):
    """Per topic and rank stratum a planned sample size, topping up the documents judged
    ``before`` (see the module docstring for the design and its inclusion probabilities).

    ``edges``: first best rank of each stratum (strictly increasing, from 1); ``last``: last rank
    of the last stratum (``inf``: open-ended); ``take``: ``(qid, sizes)`` per topic, one size per
    stratum; ``before``: ``(qid, docno)`` of the documents already judged. Build one with
    :func:`allocated`. It has no parseable name: its design file carries it (``plan``).
    """

    kind = "planned"
    takes_budget = False
    file_key = "plan"

    edges: tuple[int, ...]
    last: float
    take: tuple[tuple[str, tuple[int, ...]], ...]
    before: frozenset[tuple[str, str]] = frozenset()
    label: str = "planned"

    def __post_init__(self):
        edges = tuple(self.edges)
        if not edges or not all(_is_integer(e) for e in edges):
            raise DesignError(f"planned: edges must be integers, got {self.edges!r}")
        edges = tuple(int(e) for e in edges)
        if edges[0] != 1 or any(b <= a for a, b in zip(edges, edges[1:])):
            raise DesignError(
                f"planned: edges must start at rank 1 and increase strictly, got {list(edges)}"
            )
        # RankStratum checks the last rank (an integer >= first, or inf)
        last = RankStratum(edges[-1], NOT_RETRIEVED if self.last is None else self.last, 1).last
        object.__setattr__(self, "edges", edges)
        object.__setattr__(self, "last", last)
        object.__setattr__(self, "take", _check_take(self.take, len(edges)))
        object.__setattr__(self, "before", _check_before(self.before))
        if not isinstance(self.label, str) or not _LABEL.fullmatch(self.label):
            raise DesignError(
                "planned: label must be a word (letters, digits, '_', '.', '-'), "
                f"got {self.label!r}"
            )

    @classmethod
    def from_spec(cls, spec: str, budget):
        raise DesignError(
            f"{cls.kind}({spec}) is a planned design (fixed sample sizes per topic and stratum): "
            "it is read from its design file (irsample sample --design FILE), not from its name"
        )

    def file_block(self) -> str:
        return plan_json(self)

    @classmethod
    def from_file_block(cls, block, source: str, locate) -> Allocated:
        return read_plan(cls, block, source, locate)

    def judged_before(self) -> frozenset[tuple[str, str]]:
        return self.before

    def stratum_labels(self) -> tuple[str, ...]:
        return self.labels

    @property
    def labels(self) -> tuple[str, ...]:
        """Stratum labels, as RankStratum's: ``1-5``, ``6-20``, ``21-100`` (``21-`` if open)."""
        lasts = [e - 1 for e in self.edges[1:]] + [self.last]
        return tuple(RankStratum(first, last, 1).label for first, last in zip(self.edges, lasts))

    @property
    def total(self) -> int:
        """The planned sample sizes summed over topics and strata (before capping at N)."""
        return sum(sum(sizes) for _, sizes in self.take)

    @property
    def name(self) -> str:
        return f"{self.label}({','.join(self.labels)})@{self.total}"

    @property
    def depth(self) -> float:
        return self.last

    def select(self, units, *, rng) -> Sample:
        """Draw over a :class:`~irsample.design.frame.SamplingFrame` or a
        :class:`~irsample.design.pools.Pool`: the rows judged before plus the top-up SRS."""
        allocation = units.memo(self, lambda: self._allocate(units))
        sample = draw(allocation, rng)
        np.logical_or(sample.judged, allocation.already, out=sample.judged)
        return sample

    def _allocate(self, units) -> _PlannedAllocation:
        n_strata = len(self.edges)
        best = np.asarray(units.best_rank, dtype=np.float64)
        stratum = np.searchsorted(np.asarray(self.edges, dtype=np.float64), best, side="right") - 1
        stratum = np.where(best > self.last, -1, stratum).astype(np.int64)
        inside = stratum >= 0
        n_cells = units.n_topics * n_strata
        cell = units.topic * n_strata + stratum  # meaningful where inside
        size = np.bincount(cell[inside], minlength=n_cells)
        already = inside & self._judged_before(units)
        judged = np.bincount(cell[already], minlength=n_cells)
        planned = self._planned_sizes(units, size.reshape(-1, n_strata)).ravel()
        self._check_estimable(units, size, planned, judged)
        k = np.minimum(planned, size)
        top_up = np.maximum(k - judged, 0)
        rest = np.flatnonzero(inside & ~already)
        order = rest[np.argsort(cell[rest], kind="stable")]
        offsets = np.concatenate([[0], np.cumsum(size - judged)]).astype(np.int64)
        inclusion = np.zeros(len(stratum))
        rows = np.flatnonzero(inside)
        known, unknown = conditional_inclusion(size, judged, top_up)
        inclusion[rows] = np.where(already[rows], known[cell[rows]], unknown[cell[rows]])
        for shared in (stratum, inclusion, already):  # handed to every Sample: read-only
            shared.flags.writeable = False
        return _PlannedAllocation(
            stratum, self.labels, order, offsets, np.maximum(k - judged, 0), inclusion, already
        )

    def _judged_before(self, units) -> np.ndarray:
        """Per row, whether (topic, docno) is in ``before`` (matched through the collection)."""
        if not self.before:
            return np.zeros(len(units.topic), dtype=bool)
        qids, docnos = zip(*sorted(self.before))
        _, tdi = units.collection.lookup(binary_of(qids), binary_of(docnos))
        mark = np.zeros(units.collection.n_tdi, dtype=bool)
        mark[tdi[tdi >= 0]] = True
        return (units.tdi >= 0) & mark[np.maximum(units.tdi, 0)]

    def _planned_sizes(self, units, size: np.ndarray) -> np.ndarray:
        """k per (topic, stratum) of the units' collection; an error for a topic of the design's
        pool that has no planned sizes."""
        planned = np.zeros(size.shape, dtype=np.int64)
        index = {q: t for t, q in enumerate(units.collection.topics)}
        for qid, sizes in self.take:
            if qid in index:
                planned[index[qid]] = sizes
        given = {q for q, _ in self.take}
        missing = [
            q for t, q in enumerate(units.collection.topics) if q not in given and size[t].any()
        ]
        if missing:
            raise DesignError(
                f"{self.name}: no planned sample sizes for topic(s) {_shown(missing)} of "
                f"{getattr(units, 'source', 'the pool')}"
            )
        return planned

    def _check_estimable(self, units, size, planned, judged) -> None:
        empty = np.flatnonzero((size > 0) & (planned == 0) & (judged == 0))
        if len(empty):
            n_strata = len(self.edges)
            topics = units.collection.topics
            cells = [f"{topics[c // n_strata]}/{self.labels[c % n_strata]}" for c in empty]
            raise DesignError(
                f"{self.name}: {len(empty)} non-empty cell(s) (topic/stratum) plan no document "
                f"and have none judged: {_shown(cells)}; an empty stratum sample cannot be "
                "estimated"
            )


def conditional_inclusion(size, judged, top_up) -> tuple[np.ndarray, np.ndarray]:
    """Per cell, the inclusion probability of a document judged before and of one not judged
    before, given the earlier judgments (module docstring): (1, j/(N - m)) with a top-up j > 0
    or nothing left to judge (m = N); (m/N, m/N) for a cell with no top-up (m < N, j = 0)."""
    size, judged, top_up = (np.asarray(a, dtype=np.float64) for a in (size, judged, top_up))
    rest = size - judged
    topped = (top_up > 0) | (rest <= 0)
    unconditional = np.divide(judged, size, out=np.zeros_like(size), where=size > 0)
    known = np.where(topped, 1.0, unconditional)
    unknown = np.where(topped, np.divide(top_up, rest, out=np.zeros_like(size), where=rest > 0),
                       unconditional)
    return known, unknown


def allocated(
    edges: Sequence[int], last: float | None, take: Mapping[str, Sequence[int]],
    before: Iterable[tuple[str, str]] = (), label: str = "planned",
) -> Allocated:
    r"""A planned design (see :class:`Allocated`): fixed sample sizes per topic and stratum.

    Parameters
    ----------
    edges : sequence of int
        The first best rank of each stratum, strictly increasing from 1.
    last : float or None
        The last rank of the last stratum (None or inf: open-ended).
    take : mapping of str to sequence of int
        Topic id -> one sample size per stratum (documents judged ``before`` count towards it).
    before : iterable of (qid, docno), optional
        Documents already judged (a pilot), topped up rather than drawn again.
    label : str, default "planned"
        The name's prefix.

    Returns
    -------
    Allocated

    Raises
    ------
    DesignError
        Sizes that do not match the strata, or ``take`` not a mapping.

    Examples
    --------
    Two documents of ranks 1-2 and one of the four deeper ones:

    >>> from io import BytesIO
    >>> import irsample
    >>> from irsample.design import SamplingFrame, allocated
    >>> from irsample.io import load_qrels
    >>> qrels = load_qrels(BytesIO(b"7 0 a 1\n7 0 b 0\n7 0 c 0\n7 0 d 1\n7 0 e 0\n7 0 f 0\n"))
    >>> ranked = BytesIO(b"7 Q0 a 1 6 r\n7 Q0 b 2 5 r\n7 Q0 c 3 4 r\n"
    ...                 b"7 Q0 d 4 3 r\n7 Q0 e 5 2 r\n7 Q0 f 6 1 r\n")
    >>> frame = SamplingFrame.from_qrels(irsample.load(qrels, [ranked])[0], qrels)
    >>> design = allocated([1, 3], None, {"7": [2, 1]})
    >>> design.name
    'planned(1-2,3-)@3'
    >>> design.select(frame, rng=3).inclusion
    array([1.  , 1.  , 0.25, 0.25, 0.25, 0.25])
    """
    if not isinstance(take, Mapping):
        raise DesignError(f"planned: take must map topic ids to sizes, got {type(take).__name__}")
    return Allocated(tuple(edges), last, take, frozenset(before), label)


def _check_take(take, n_strata: int) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """Validated ``(qid, sizes)`` pairs, sorted by qid (one canonical value per plan)."""
    out = {}
    for entry in take.items() if isinstance(take, Mapping) else take:
        try:
            qid, sizes = entry
            sizes = tuple(sizes)
        except (TypeError, ValueError):
            raise DesignError(
                f"planned: take entries must be (topic, sizes), got {entry!r}"
            ) from None
        if not isinstance(qid, str):
            raise DesignError(f"planned: topic ids must be strings, got {qid!r}")
        if qid in out:
            raise DesignError(f"planned: topic {qid!r} is planned twice")
        if len(sizes) != n_strata:
            raise DesignError(
                f"planned: topic {qid!r} has {len(sizes)} sample sizes for {n_strata} strata"
            )
        if not all(_is_integer(k) and k >= 0 for k in sizes):
            raise DesignError(
                f"planned: sample sizes of topic {qid!r} must be integers >= 0, got {list(sizes)}"
            )
        out[qid] = tuple(int(k) for k in sizes)
    if not out:
        raise DesignError("planned: take plans no topic")
    return tuple(sorted(out.items()))


def _check_before(before) -> frozenset[tuple[str, str]]:
    pairs = frozenset(tuple(p) if isinstance(p, (tuple, list)) else p for p in before)
    for p in pairs:
        if not (isinstance(p, tuple) and len(p) == 2 and all(isinstance(v, str) for v in p)):
            raise DesignError(
                f"planned: judged documents must be (topic, docno) strings, got {p!r}"
            )
    return pairs


def _is_integer(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _shown(names: Sequence[str]) -> str:
    return ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")

