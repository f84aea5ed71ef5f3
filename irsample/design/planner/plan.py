"""The design planner: strata over best rank, and sample sizes per topic and stratum, that
minimise the predicted variance of the mean estimate for a judging budget.

Yilmaz, Kanoulas & Aslam (paper 000) end with this open problem: use the estimators' variance
to choose the sampling design and the number of judgments; Voorhees (paper 002) shows that the
design decides the collection's quality, and that topics with many relevant documents need more
judgments. The planner answers it with classical survey design (Cochran, *Sampling Techniques*,
3rd ed., §5.5 and §5A.9; Neyman 1934):

1. **Model.** A :class:`~irsample.design.planner.relevance_model.RelevanceModel` fitted to what is
  judged
   (a pilot, :func:`pilot`, when nothing is) predicts every pool document's relevance;
   :class:`~irsample.design.planner.variance_model.VarianceModel` turns it into each cell's weight
   W_c = N_c^2 S_c^2 / T^2, averaged over the pool's runs, for the target estimator.
2. **Allocation.** For given strata the sizes minimising sum_c W_c (1/n_c - 1/N_c) under
   sum_c n_c = B and lo_c <= n_c <= hi_c are Neyman's n_c = clip(lambda sqrt(W_c), lo_c, hi_c),
   lambda found by bisection (bounds below); the integer
   sizes are the floors plus one more judgment at a time where it lowers the variance most
   (optimal for a separable convex objective: Fox 1966). Topics whose pools hold more (and more
   uncertain) relevant documents get larger W_c, hence more judgments: paper 002's observation.
3. **Strata.** Every set of at most ``max_strata`` strata whose first ranks come from
   :data:`EDGE_GRID` (and include ``required`` edges: those of earlier batches, so earlier
   samples stay SRS within the new cells) is tried with its Neyman allocation; the least
   predicted variance wins. With a band (below), strata whose mean cell would expect fewer
   than :data:`MIN_TOP_UP` judgments at the band's least rate are skipped (only the required
   strata are kept when none is wide enough).

**Bounds.** lo_c: the m_c documents already judged plus :data:`MIN_TOP_UP` (2) more where the
cell has them, so every cell's unjudged documents have a known positive inclusion probability
given the earlier judgments and the top-up's variance can be estimated
(:mod:`irsample.design.sampling.allocated`).

**Band.** When the least-variance plan's sample is expected to hold fewer than :data:`SPARSE`
(5.5) relevant documents in the median topic among the documents it samples below certainty
(:func:`sampled_relevant`: per topic, each cell the plan does not judge whole adds its model's
expected relevant documents times its sampling fraction; AP targets, whose estimate is the ratio
N^ / R^), or its predicted second-order ratio bias of the runs' means
(:meth:`VarianceModel.cells_and_bias`; :attr:`Plan.relative_bias`) exceeds :data:`BIAS_LIMIT`
(1.5) of their predicted standard error, the plan is searched again with every cell's size in
the band [floor(f N_c / rho), ceil(rho f N_c)], f = B / pool size (``spread`` rho,
:data:`SPREAD` = 1.5; the forced minimum wins where they disagree). Why: a ratio such as
AP = N / R is estimated per topic from its few sampled relevant documents, and when they are
few the ratio tends to their pi-weighted mean instead of the plain one (with one sampled
relevant document, it is that document's value with probability proportional to its pi). The
variance-only optimum for xinfAP judges the top ranks almost completely and the rest thinly
(Vaswani, 10% judged: ranks 1-2 at 91%, 11-100 at 5.6%), and ht(AP) then had a bias of +0.10
and 95% intervals covering 3% of the time (``benchmarks/ht_coverage.py --designs planned``);
with rho = 1.5, +0.014 and 95%. The band keeps the planner's gains where they are safe: across
topics, and within a factor rho^2 across strata. Where the free optimum's sampled strata still
hold many relevant documents it is both more precise and unbiased, and the band costs coverage:
it caps the best-ranked stratum at rho f, so a topic whose few relevant documents all sit there
is found about once (TREC-8 topic 430 at 10%) and ht(AP)'s bias moves with the pilot.

Which test decides was measured (``benchmarks/planned_pilot_bias.py``, a pilot of 5% of the
budget; REPRODUCTION.md, "The band's switch"): with 40 pilots a cell at 5-30% (``--trials 0``,
seed 11) the free plan's median topic samples 0.3-4.5 relevant documents below certainty on
Vaswani and CACM, 6.9-22 on TREC-8 and 25-69 on TREC-COVID (:data:`SPARSE` between the two
groups), and given 6 pilots a cell (``--plan free|band --trials 10``) the free plan's ht(AP)
intervals cover a small share of the truths on the first two and as many as the banded plan's
on the others. The predicted bias, the switch before (at 0.5), ranged over 0.15-6.5 SE on the
sparse collections and 0.14-1.08 on TREC-8, where it banded pilots whose banded plans covered
less than their free ones: it is second order and rests on the pilot's model of R, which a
pilot of two judgments per topic can overstate or understate. It stays as a guard, at a level
no plan of the four collections with enough sampled relevant documents reached.
``spread=None`` gives the unconstrained optimum.

The predicted variance of run r's mean estimate is V_r = sum_c W_{r,c} (1/n_c - 1/N_c) and the
predicted half-width of its interval z_{(1+level)/2} sqrt(V_r); :attr:`Plan.halfwidth` is
z sqrt(mean_r V_r), the runs' root-mean-square half-width (the mean variance is the objective).
:func:`budget_for_halfwidth` finds the smallest budget whose plan meets a half-width by
bisection (without the band the optimum's variance falls as B grows; the band moves with B,
and the switch can flip as B grows: a larger free plan judges more cells whole and may sample
fewer relevant documents below certainty).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import numpy as np

from ...errors import DesignError
from ...stats.intervals import z
from ..sampling.allocated import Allocated, allocated
from .allocation import continuous_neyman, neyman
from .bounds import MIN_TOP_UP, SPREAD, floor_sizes, lower_sizes, upper_sizes, wide_enough
from .relevance_model import RelevanceModel
from .variance_model import VarianceModel, pool_depth

#: first ranks of strata the planner tries (with rank 1 always first)
EDGE_GRID = (2, 3, 4, 6, 11, 16, 21, 26, 31, 41, 51, 61, 76)
PILOT_EDGE = 11  #: the pilot's strata are ranks 1-10 and 11-depth
BIAS_LIMIT = 1.5  #: predicted ratio bias / standard error above which the band applies
#: relevant documents the free plan is expected to sample below certainty in the median topic,
#: below which the band applies (:func:`sampled_relevant`)
SPARSE = 5.5


@dataclass(frozen=True, eq=False)
class Plan:
    """A planned design: strata starting at ``edges`` (up to ``depth``), and per topic and
    stratum the pool size ``size``, the documents already judged ``judged`` and the planned
    sample size ``take`` (all ``(T, S)``); ``variance[r]`` the predicted variance of run r's
    mean estimate; ``level`` the confidence level of :attr:`halfwidth`."""

    estimator: str
    edges: tuple[int, ...]
    depth: int
    topics: tuple[str, ...]
    size: np.ndarray
    judged: np.ndarray
    take: np.ndarray
    variance: np.ndarray
    level: float = 0.95
    bias: np.ndarray | None = None  #: predicted second-order ratio bias of each run's mean
    #: why the plan's rates are held to the band (module docstring, "Band"); "" when they are not
    banded: str = ""

    @property
    def relative_bias(self) -> float:
        """Root mean square over runs of the predicted bias / predicted standard error (0 where
        the plan predicts no error)."""
        if self.bias is None or not len(self.variance):
            return 0.0
        se = np.sqrt(self.variance)
        ratio = np.divide(self.bias, se, out=np.zeros_like(se), where=se > 0)
        return float(np.sqrt(np.mean(ratio * ratio)))

    @property
    def budget(self) -> int:
        return int(self.take.sum())

    @property
    def labels(self) -> tuple[str, ...]:
        ends = list(self.edges[1:]) + [self.depth + 1]
        return tuple(f"{a}-{b - 1}" for a, b in zip(self.edges, ends))

    @property
    def halfwidth(self) -> float:
        """Predicted interval half-width of a run's mean estimate, z sqrt(mean_r V_r): the
        root-mean-square over runs (the mean variance is what the plan minimises)."""
        return float(z(self.level) * np.sqrt(np.mean(self.variance))) if len(self.variance) else 0.0

    def design(self, before=frozenset(), label: str = "planned") -> Allocated:
        """The :class:`~irsample.design.sampling.allocated.Allocated` design drawing this plan;
        ``before`` the (qid, docno) already judged."""
        take = {q: tuple(int(k) for k in row) for q, row in zip(self.topics, self.take)}
        return allocated(self.edges, float(self.depth), take, before=before, label=label)

    def summary(self) -> str:
        """A readable table: per stratum pool size, judged so far, planned and rate."""
        largest = float(z(self.level) * np.sqrt(self.variance.max())) if len(self.variance) else 0
        lines = [
            f"plan for {self.estimator}: {self.budget} judgments over {len(self.topics)} "
            f"topics, strata {', '.join(self.labels)} of the depth-{self.depth} pool",
            f"predicted {self.level:.0%} half-width of a run's mean {self.estimator}: "
            f"{self.halfwidth:.4f} (root mean square over {len(self.variance)} runs; largest "
            f"{largest:.4f})",
            "stratum\tpool\tjudged\tplanned\trate\ttopic rates (min-max)",
        ]
        for s, label in enumerate(self.labels):
            n, k = self.size[:, s], self.take[:, s]
            rates = (k / np.maximum(n, 1))[n > 0]
            span = f"{rates.min():.3f}-{rates.max():.3f}" if len(rates) else "-"
            lines.append(f"{label}\t{int(n.sum())}\t{int(self.judged[:, s].sum())}\t"
                         f"{int(k.sum())}\t{k.sum() / max(n.sum(), 1):.4f}\t{span}")
        per_topic = self.take.sum(axis=1)
        lines.append(f"per topic: {int(per_topic.min())}-{int(per_topic.max())} judgments "
                     f"(median {float(np.median(per_topic)):g})")
        if self.banded:
            lines.append(self.banded)
        return "\n".join(lines) + "\n"


def candidate_edges(depth: int, max_strata: int, required=()) -> list[tuple[int, ...]]:
    """Every edge set: rank 1, the ``required`` edges and up to ``max_strata`` - 1 - len(required)
    more from :data:`EDGE_GRID` (edges above ``depth`` dropped)."""
    required = tuple(sorted({int(e) for e in required if 1 < e <= depth}))
    grid = [e for e in EDGE_GRID if e <= depth and e not in required]
    free = max_strata - 1 - len(required)
    if free < 0:
        raise DesignError(
            f"{len(required) + 1} strata are fixed already; max_strata is {max_strata}"
        )
    out = []
    for k in range(free + 1):
        for extra in itertools.combinations(grid, k):
            out.append((1,) + tuple(sorted(required + extra)))
    return out


def plan(units, model: RelevanceModel, budget: int, *, estimator: str = "xinfAP",
         judged: np.ndarray | None = None, required=(), max_strata: int = 4,
         edges: tuple[int, ...] | None = None, level: float = 0.95, min_take: int = 1,
         spread: float | None = SPREAD) -> Plan:
    """The least-variance plan of ``budget`` judgments (documents already judged included) over
    the pool rows of ``units`` (module docstring). ``judged``: mask of rows already judged;
    ``edges``: fixed strata instead of the search; ``min_take``: least sample per non-empty
    cell."""
    vm = VarianceModel.build(units, model, estimator)
    return plan_with(vm, units, budget, estimator=estimator, judged=judged, required=required,
                     max_strata=max_strata, edges=edges, level=level, min_take=min_take,
                     spread=spread)


def plan_with(vm: VarianceModel, units, budget: int, *, estimator: str, judged=None,
              required=(), max_strata: int = 4, edges=None, level: float = 0.95,
              min_take: int = 1, spread: float | None = SPREAD) -> Plan:
    """:func:`plan` with a prebuilt :class:`VarianceModel` (budget searches reuse it): the
    least-variance plan, or, if it samples too few relevant documents in the median topic or
    its predicted ratio bias exceeds :data:`BIAS_LIMIT` of its standard error and ``spread`` is
    given, the least-variance plan within the band (module docstring, "Band")."""
    judged = np.zeros(len(units.topic), bool) if judged is None else np.asarray(judged, bool)
    choices = (
        [tuple(edges)] if edges is not None else candidate_edges(vm.depth, max_strata, required)
    )
    args = (vm, units, budget, judged, choices, min_take, estimator, level)
    free = _search(*args, band=None)
    reason = "" if spread is None else band_reason(vm, free)
    if not reason:
        return free
    return replace(_search(*args, band=spread), banded=f"rates held within 1/{spread:g} to "
                   f"{spread:g} times the judged fraction: {reason}")


def sampled_relevant(vm: VarianceModel, plan: Plan) -> np.ndarray:
    """(T,) per topic the relevant documents ``plan`` is expected to sample below certainty
    under ``vm``'s relevance model: sum over the topic's cells with n_c < N_c of
    (n_c / N_c) E[R_c], E[R_c] the model's expected relevant pool documents of the cell; NaN for
    a topic the plan judges whole (no ratio left to estimate) or where the model expects none."""
    size, take = plan.size, plan.take
    open_cells = (size > 0) & (take < size)
    share = np.where(open_cells, take / np.maximum(size, 1), 0.0)
    out = (share * vm.cell_relevant(plan.edges)).sum(axis=1)
    return np.where(open_cells.any(axis=1) & (vm.relevant > 0), out, np.nan)


def band_reason(vm: VarianceModel, free: Plan) -> str:
    """Why the free plan ``free`` is to be held to the band, "" if it is not: it is expected to
    sample fewer than :data:`SPARSE` relevant documents below certainty in the median topic
    (:func:`sampled_relevant`; AP targets only), too few for the ratio's bias to be small or
    its second-order prediction to be trusted; or that prediction exceeds :data:`BIAS_LIMIT`."""
    found = sampled_relevant(vm, free) if vm.ratio else np.array([])
    found = found[np.isfinite(found)]
    if len(found) and np.median(found) < SPARSE:
        return (f"the least-variance plan would sample {np.median(found):.1f} relevant documents "
                f"below certainty in the median topic (fewer than {SPARSE:g}), too few for a "
                f"ratio such as AP")
    if free.relative_bias > BIAS_LIMIT:
        return (f"the least-variance plan predicts a ratio bias of {free.relative_bias:.2f} "
                f"standard errors (more than {BIAS_LIMIT:g})")
    return ""


def _search(vm, units, budget, judged, choices, min_take, estimator, level, *, band) -> Plan:
    best = None
    judged_rows = _judged_rows(units, judged, vm)  # the same for every candidate
    # strata too narrow for the band only where no others are left (the fixed ones, choices[0]);
    # fewer forced top-ups only if nothing fits
    for top_up, strict in itertools.product(range(MIN_TOP_UP, -1, -1), (True, False)):
        for cand in choices if strict else choices[:1]:
            size, weight, bias = vm.cells_and_bias(cand)
            if strict and not wide_enough(size, budget, band, top_up):
                continue
            done = _judged_cells(judged_rows, cand, vm)
            lo = lower_sizes(size, done, min_take, top_up)
            hi = upper_sizes(size, lo, budget, band)
            lo = np.minimum(np.maximum(lo, floor_sizes(size, budget, band)), hi)
            if budget < lo.sum() or budget > hi.sum():
                continue
            mean_w = weight.mean(axis=0)
            real = continuous_neyman(mean_w.ravel(), hi.ravel().astype(float),
                               lo.ravel().astype(float), budget).reshape(size.shape)
            value = float(np.sum(mean_w * (1 / np.maximum(real, 1e-12) - 1 / np.maximum(size, 1))
                                 * (size > 0)))
            if best is None or value < best[0] - 1e-15:
                best = (value, cand, size, weight, bias, lo, hi, done)
        if best is not None:
            break
    if best is None:
        raise DesignError(f"no plan fits a budget of {budget} judgments (the pool has "
                          f"{int(vm.cum_rows[0, :, -1].sum())} documents; each stratum of each "
                          "topic needs one, and judged documents count)")
    _, cand, size, weight, bias, lo, hi, done = best
    take = neyman(weight.mean(axis=0), hi, lo, budget)
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(size > 0, 1 / np.maximum(take, 1) - 1 / np.maximum(size, 1), 0.0)
    variance = (weight * factor[None]).sum(axis=(1, 2))
    topics = tuple(units.collection.topics)
    return Plan(estimator, cand, vm.depth, topics, size, done, take, variance, level,
                (bias * factor[None]).sum(axis=(1, 2)))


def _judged_rows(units, judged, vm) -> tuple[np.ndarray, np.ndarray]:
    """(topic, best rank) of the rows already judged within the pool's depth."""
    rank = units.best_rank
    inside = judged & np.isfinite(rank) & (rank <= vm.depth)
    return units.topic[inside], rank[inside]


def _judged_cells(judged_rows, edges, vm) -> np.ndarray:
    """m[t, s]: rows already judged (:func:`_judged_rows`) per topic and stratum."""
    topic, rank = judged_rows
    stratum = np.searchsorted(np.array(edges), rank, side="right") - 1
    n_strata = len(edges)
    counts = np.bincount(topic * n_strata + stratum, minlength=vm.n_topics * n_strata)
    return counts.reshape(vm.n_topics, n_strata).astype(np.int64)


def budget_for_halfwidth(units, model: RelevanceModel, target: float, *,
                         estimator: str = "xinfAP", judged=None, required=(),
                         max_strata: int = 4, level: float = 0.95,
                         spread: float | None = SPREAD) -> Plan:
    """The plan of the smallest budget whose predicted half-width (:attr:`Plan.halfwidth`) is
    at most ``target`` (judging the whole pool, a census, always meets it). Without a
    ``spread`` the half-width falls with the budget and the bisection finds the smallest; the
    band moves with the budget and the switch can flip with it, so with it the budget found
    meets the target and is the smallest up to those steps."""
    if not target > 0:
        raise DesignError(f"target half-width must be > 0, got {target!r}")
    vm = VarianceModel.build(units, model, estimator)
    kw = dict(estimator=estimator, judged=judged, required=required, max_strata=max_strata,
              level=level, spread=spread)
    total = int(vm.cum_rows[0, :, -1].sum())
    full = plan_with(vm, units, total, **kw)  # a census: predicted variance 0
    lo = int(np.count_nonzero(vm.cum_rows[0, :, -1]))  # one per topic: below any plan
    if judged is not None:
        lo = max(lo, int(np.count_nonzero(judged)))
    hi, best = total, full
    while hi - lo > max(1, total // 1000):  # to 0.1% of the pool
        mid = (lo + hi) // 2
        try:
            cand = plan_with(vm, units, mid, **kw)
        except DesignError:
            lo = mid
            continue
        if cand.halfwidth <= target:
            hi, best = mid, cand
        else:
            lo = mid
    return best


def pilot(units, size: int, *, edge: int = PILOT_EDGE) -> Allocated:
    """A pilot of ``size`` judgments to fit the relevance model: equal shares per topic (by
    largest remainders), each half in ranks 1..edge-1 and half below, moved to the other
    stratum where one runs out. Later plans keep ``edge`` as a stratum boundary."""
    depth = pool_depth(units)
    edges = (1, edge) if edge <= depth else (1,)
    topic, rank = units.topic, units.best_rank
    inside = np.isfinite(rank) & (rank <= depth)
    stratum = np.searchsorted(np.array(edges), rank[inside], side="right") - 1
    n_topics = units.collection.n_topics
    cells = np.zeros((n_topics, len(edges)), dtype=np.int64)
    np.add.at(cells, (topic[inside], stratum), 1)
    active = cells.sum(axis=1) > 0
    need = int(np.sum(cells > 0))
    if size < need or size > cells.sum():
        raise DesignError(f"a pilot needs between {need} and {int(cells.sum())} judgments "
                          f"(one per non-empty stratum of each topic .. the pool), got {size}")
    share = np.zeros(n_topics)
    share[active] = size / active.sum()
    per_topic = np.floor(share).astype(np.int64)
    extra = np.argsort(-(share - per_topic), kind="stable")[: size - int(per_topic.sum())]
    per_topic[extra] += 1
    take = np.zeros_like(cells)
    for t in np.flatnonzero(active):
        want = np.full(len(edges), per_topic[t] // len(edges))
        want[: per_topic[t] % len(edges)] += 1
        take[t] = _fit_cells(want, cells[t])
    # what capped cells could not take goes to the topics with the fewest judgments and room;
    # what the one-per-stratum minimums took beyond a topic's share comes back from the topics
    # with the most (every cell keeps one)
    while take.sum() < size:
        t = int(np.argmin(np.where((take < cells).any(axis=1), take.sum(axis=1), np.inf)))
        take[t, np.argmin(np.where(take[t] < cells[t], take[t], np.inf))] += 1
    while take.sum() > size:
        t = int(np.argmax(np.where((take > 1).any(axis=1), take.sum(axis=1), -1)))
        take[t, np.argmax(take[t])] -= 1
    topics = units.collection.topics
    return allocated(edges, float(depth), {topics[t]: tuple(int(k) for k in take[t])
                                           for t in range(n_topics)}, label="pilot")


def _fit_cells(want: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """``want`` capped at ``cells`` and at least one per non-empty cell, the excess moved to
    cells with room."""
    take = np.minimum(np.maximum(want, cells > 0), cells)
    spare = int(want.sum() - take.sum())
    for s in range(len(cells)):
        move = min(max(spare, 0), int(cells[s] - take[s]))
        take[s] += move
        spare -= move
    return take
