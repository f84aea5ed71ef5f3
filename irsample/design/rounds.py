"""Judging in rounds: after round 1 (any design whose strata are simple random samples), each
round judges more documents until the intervals can be trusted; every round keeps the inclusion
probabilities exact, so the design-based estimators stay unbiased over the rounds.

**Cells.** A round-1 stratum of a topic is cut into bands by the document's best rank over the
runs (:data:`BANDS`: 1-10, 11-30, 31-100, deeper): cell h = (topic, round-1 stratum, band), N_h
documents. Given how many of a cell round 1 judged (m_h), those are a simple random sample of
the cell (a simple random sample of a stratum, restricted to a part of it, is one of that part
given its size). A round adds j_h documents drawn at random from the N_h - m_h left; the union
is then a simple random sample of m_h + j_h from the cell **provided j_h does not depend on
which documents of the cell were drawn** (only on counts). So every round's judgments are
recorded as a stratified simple random sample over the cells, pi = (m_h + j_h) / N_h, whose
second-order probabilities the estimators already read (``measures/ht/inclusion.py``).

**Cross-fitted allocation.** Where the next round judges is learned from the judgments, but a
topic's share may not depend on its own judgments: topping up the topics that look weak after
round 1 (few relevant documents found) and leaving the others as they are selects the others for
having looked good, and their estimates keep that bias (an exploratory run of that first
version, Vaswani, ht(AP), 2strata 10% in rounds to 42%: bias -0.042, coverage 0.09;
every topic topped up instead: +0.006; the first version is not kept). So the topics are split
into two folds at round 1, and the allocation of one fold is computed from the other fold's
judgments only: j_h is proportional to (N_h - m_h) sqrt(p (1 - p)) (Neyman allocation for the
count of relevant documents; Cochran, *Sampling Techniques*, 1977, §5.5), p the relevant share
the other fold's judgments show in the same round-1 stratum and band ((hits + 1/2) / (judged +
1)). Every cell keeps at least :data:`MIN_CELL` judged documents where it has them (a cell's
variance needs two; a floor that depends on the count m_h alone). From round 3 on the
independence is not whole: the other fold's judgments that set this fold's sizes were drawn in
sizes set by this fold's earlier judgments, so a cell's size depends on its own topic's earlier
draws at one remove (not measured apart; ``simulate rounds`` measures it with the rest). The
design-based estimators are unbiased for every total given the cells' sizes; what the rounds
cannot make exact is when they stop (a decision made from all topics' judgments), which
``irsample simulate rounds`` measures against the truth.

**Topics judged whole.** A topic the reliability rule keeps weak until it is judged whole (1
to 2 judged relevant documents with half or more of its pool judged:
``measures.reliability.unsettled_topics``) gets the rest of its pool in the next round, taken
from the round's budget (the round is larger where the budget does not cover it), and the
other topics share what is left as above. Its estimate is then exact, whatever chose it; the
choice reads the topic's own judgments, which the cross-fitted allocation otherwise avoids, so
the topics it passes over (none, or 3 or more, found at the same share) are selected, and
their estimates keep that bias (of the kind described above); measured small against the truth
(``simulate rounds``, 100 trials each start, seed 2525: CACM's depth-100 pool, final bias of the
run means -0.0001 to +0.0019, coverage 0.949-0.976; its depth-20 pool, +0.0006 to +0.0040,
0.944-0.972). Topped up with the rest instead, such a topic is judged whole only with the whole
pool: the rounds on CACM ran to 100% of both pools on every trial, where they stop at 71%
(60-90%) of the depth-100 pool and 90% (70-100%) of the depth-20 one this way (REPRODUCTION.md,
"Shallow pools").

**Top bands judged whole.** Where a run mean of a measure with a cut-off k (P@10, say) is
flagged because its estimate lies outside [0, 1] (rule 5 of ``measures.reliability``: a
Horvitz-Thompson total that weighted a few relevant documents of its top ranks by 1/pi), more
sampling only narrows the spread around a truth near 1 that the estimate keeps crossing: on
TREC-COVID round 5 208 of the 210 flags from round 2 on were such P@10 means, and the rounds
ran up to six. Every position a run ranks within k has best rank <= k, so judging the cells of the
best-rank bands up to k whole (:func:`outside_bands`) makes every run's P@k exact. The next
round does so, in every topic (counts alone: each such cell's take is all it has left), where
their open documents fit in the round's budget after the topics judged whole; the other cells
share what is left as above. The choice reads every topic's judgments, as stopping does.
Measured (``simulate rounds``, 100 trials each start, seed 2525): TREC-COVID's depth-100 rounds
stop at 24.6% (uniform start) and 23.7% (2strata) of the pool, at most 4 rounds and 40%, where
they stopped at 26.1% and 24.9%, up to 6 rounds and 60%; the trials that stop after round 2
keep their P@10 means' stopping bias (-0.021); CACM, Vaswani and TREC-COVID's depth-20 pool
(where the band is 54% of the pool) as before (REPRODUCTION.md, "Top bands judged whole").
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..errors import DesignError
from ..measures.reliability import FEW, SETTLED, unsettled_topics
from ..model.judgments import varies_within
from .frame import Sample, SamplingFrame, generator

#: upper ends of the best-rank bands a round-1 stratum is cut into (the last band: deeper)
BANDS = (10, 30, 100)
#: fewest judged documents a cell keeps where it has them (its variance needs two)
MIN_CELL = 2
#: folds of topics for the cross-fitted allocation
FOLDS = 2
#: the stream of a seed the folds are drawn from (not the draw's own)
FOLD_STREAM = 0xF01D


@dataclass(frozen=True)
class RoundState:
    """What is judged after some rounds: ``sample``, the union as a stratified simple random
    sample over the cells (after round 1: round 1's own draw, as its design recorded it);
    ``cell`` per frame row (-1 outside round 1's pool), ``fold`` per topic, and ``spent``, the
    new judgments per round (round 1 first); ``rel_level``, the grade from which a judged
    document counts as relevant where the allocation counts them (the estimates' ``-l``)."""

    sample: Sample
    cell: np.ndarray
    labels: tuple[str, ...]  #: per cell kind (cell % n_cells_per_topic): ``stratum/band``
    n_cells_per_topic: int
    fold: np.ndarray
    spent: tuple[int, ...]
    rel_level: int = 1

    @property
    def judged(self) -> int:
        return int(self.sample.judged.sum())

    @property
    def rounds(self) -> int:
        return len(self.spent)

    def judgments(self, frame: SamplingFrame, source: str = "rounds"):
        return frame.judgments(self.sample, source=source)

    def open_documents(self) -> int:
        """Documents of round 1's pool not judged yet."""
        return int(((self.cell >= 0) & ~self.sample.judged).sum())


def band_of(best_rank: np.ndarray) -> np.ndarray:
    """Per row: its best-rank band (index into :data:`BANDS`, or len(BANDS) for deeper)."""
    return np.searchsorted(np.asarray(BANDS, dtype=np.float64), best_rank, side="left")


def first_round(frame: SamplingFrame, design, rng, rel_level: int = 1) -> RoundState:
    """Round 1: a draw of ``design``, whose strata must be simple random samples (every row of
    a topic's stratum has the same inclusion probability: uniform and stratified designs)."""
    check_first_design(design)
    rng = generator(rng)
    fold_rng, draw_rng = rng.spawn(2)
    sample = design.select(frame, rng=draw_rng)
    fold = fold_rng.permutation(frame.n_topics) % FOLDS
    return start(frame.topic, frame.best_rank, sample, fold, design.name, rel_level=rel_level)


def start(topic: np.ndarray, best_rank: np.ndarray, sample: Sample, fold: np.ndarray,
          what: str, spent: tuple[int, ...] | None = None, *, rel_level: int = 1) -> RoundState:
    """The state after round 1: ``sample`` (a draw whose strata are simple random samples,
    checked: :class:`DesignError` naming ``what`` otherwise) over rows of topics ``topic`` with
    best ranks ``best_rank``, its strata cut into the best-rank bands; ``fold`` per topic."""
    check_simple_random(topic, sample.stratum, sample.inclusion, len(sample.labels), what)
    inside = sample.stratum >= 0
    n_bands = len(BANDS) + 1
    per_topic = len(sample.labels) * n_bands
    cell = np.where(inside, topic * per_topic + np.maximum(sample.stratum, 0) * n_bands
                    + band_of(best_rank), -1)
    labels = tuple(f"{s}/{b}" for s in sample.labels for b in band_names())
    spent = (int(sample.judged.sum()),) if spent is None else tuple(spent)
    return RoundState(sample, cell, labels, per_topic, np.asarray(fold), spent, rel_level)


def check_first_design(design) -> None:
    """Raise :class:`DesignError` for a round-1 design whose strata have equal probabilities
    without being simple random samples: a systematic sample (one random start through each
    cell in best-rank order) restricted to a band is no simple random sample of the band given
    its size, and its pairs are not those of one, so the union of the rounds would not be."""
    if getattr(design, "kind", None) == "systematic":
        raise DesignError(f"rounds need a round 1 whose strata are simple random samples; "
                          f"{design.name} is a systematic sample (draw round 1 with the "
                          "strata spec itself)")


def check_simple_random(topic, stratum, pi, n_labels: int, what: str) -> None:
    """Raise :class:`DesignError` unless every (topic, stratum) has one inclusion probability:
    a design whose strata are simple random samples (else its cells are no SRS of their part
    of the stratum and a round's top-up would not make the union one)."""
    inside = stratum >= 0
    key = topic[inside] * max(n_labels, 1) + stratum[inside]
    if varies_within(key, pi[inside], int(key.max(initial=-1)) + 1, floor=1.0):
        raise DesignError(f"rounds need a round 1 whose strata are simple random samples (equal "
                          f"inclusion probabilities within a topic's stratum); {what} "
                          "has unequal ones: draw round 1 with strata of equal rates (`irsample "
                          "sample --design 2strata`, uniform(F) or a strata spec), or go on "
                          "with a planned design's own batches (`irsample plan --design FILE "
                          "--judged QRELS --budget N`)")


def fold_of(qids, seed: int) -> dict[str, int]:
    """Per topic id: its fold for the cross-fitted allocation, from ``seed`` alone (the topics
    sorted, then a random permutation): a design file records the seed, so every later round
    of a campaign reuses the folds, whatever the judgments say."""
    topics = sorted(set(qids))
    order = np.random.default_rng([int(seed), FOLD_STREAM]).permutation(len(topics))
    return {q: int(k) % FOLDS for q, k in zip(topics, order)}


def allocation(frame: SamplingFrame, state: RoundState, budget: int,
               top: int = 0) -> np.ndarray:
    """Per cell: the next round's new judgments (module docstring): the rest of the topics
    :func:`whole_topics` names first, then the rest of the cells of the ``top`` first
    best-rank bands where it fits in what ``budget`` leaves (:func:`top_cells`; ``top`` from
    :func:`outside_bands`), then the floors, then ``budget`` less those shared
    between the folds by their documents left (counts only), and within a fold in proportion
    to its cells' Neyman weights, which the other fold's judgments give. ``frame.rel`` is
    read on the judged rows only (``state.sample.judged``): a campaign without complete
    judgments passes a frame whose other rows hold anything (``design/rounds_files.py`` fills
    them with 0), and the allocation is the same."""
    n_cells = frame.n_topics * state.n_cells_per_topic
    size, done, hits = cell_counts(frame, state)
    left = size - done
    whole = np.where(np.repeat(whole_topics(state, size, done, hits),
                               state.n_cells_per_topic), left, 0)
    left = left - whole
    budget = max(budget - int(whole.sum()), 0)
    bands = np.where(top_cells(state, left, budget, top), left, 0)
    whole, left, budget = whole + bands, left - bands, budget - int(bands.sum())
    floor = np.minimum(left, np.maximum(MIN_CELL - done, 0))
    room = left - floor
    kind = np.arange(n_cells) % state.n_cells_per_topic  # the round-1 stratum and band
    fold = np.repeat(state.fold, state.n_cells_per_topic)
    rest = max(budget - int(floor.sum()), 0)
    shares = _proportional(rest, np.bincount(fold, weights=room, minlength=FOLDS),
                           np.bincount(fold, weights=room, minlength=FOLDS).astype(np.int64))
    take = floor.copy()
    for k in range(FOLDS):
        other, mine = fold != k, fold == k
        seen = np.bincount(kind[other], weights=done[other], minlength=state.n_cells_per_topic)
        found = np.bincount(kind[other], weights=hits[other], minlength=state.n_cells_per_topic)
        p = (found + 0.5) / (seen + 1.0)
        weight = room[mine] * np.sqrt(p * (1.0 - p))[kind[mine]]
        take[mine] += _proportional(int(shares[k]), weight, room[mine])
    return take + whole


def top_cells(state: RoundState, left: np.ndarray, budget: int, top: int) -> np.ndarray:
    """Per cell: whether the next round judges the rest of it as one of the ``top`` first
    best-rank bands (module docstring, "Top bands judged whole"): all such cells with
    documents ``left``, where these add up to at most ``budget``; none otherwise."""
    cells = in_top_bands(state, len(left), top) & (left > 0)
    return cells if 0 < int(left[cells].sum()) <= budget else np.zeros(len(left), dtype=bool)


def in_top_bands(state: RoundState, n_cells: int, top: int) -> np.ndarray:
    """Per cell (``n_cells`` of them): whether its best-rank band is one of the ``top``
    first."""
    return np.arange(n_cells) % state.n_cells_per_topic % (len(BANDS) + 1) < top


def outside_bands(evaluation) -> int:
    """How many of the first best-rank bands the next round should judge whole: for a
    flagged run mean (``evaluation.statuses``) estimated outside [0, 1] of a measure with a
    cut-off k (``inner.k``: P@k, nDCG@k) within the bands' edges, the bands up to k (module
    docstring, "Top bands judged whole"); 0 where there is none."""
    if evaluation.statuses is None:
        return 0
    top = 0
    flagged = evaluation.statuses.status == "unreliable"
    for j, m in enumerate(evaluation.measures):
        k = getattr(getattr(m, "inner", m), "k", None)
        if k is None or k > BANDS[-1]:
            continue
        mean = evaluation.summary[:, j]
        if (flagged[:, j] & ((mean > 1.0 + 1e-9) | (mean < -1e-9))).any():
            top = max(top, int(band_of(np.array([float(k)]))[0]) + 1)
    return top


def cell_counts(frame: SamplingFrame, state: RoundState):
    """Per cell: its documents, those judged and those judged relevant (``frame.rel`` read
    on the judged rows only, relevant from ``state.rel_level``)."""
    n_cells = frame.n_topics * state.n_cells_per_topic
    inside = state.cell >= 0
    judged = state.sample.judged & inside
    return (np.bincount(state.cell[inside], minlength=n_cells),
            np.bincount(state.cell[judged], minlength=n_cells),
            np.bincount(state.cell[judged & (frame.rel >= state.rel_level)], minlength=n_cells))


def judged_whole_next(frame: SamplingFrame, state: RoundState,
                      take: np.ndarray) -> tuple[np.ndarray, int]:
    """The topics (indices) the next round judges whole (:func:`whole_topics`) and how many of
    ``take`` (its :func:`allocation`) their rest is."""
    whole = np.flatnonzero(whole_topics(state, *cell_counts(frame, state)))
    return whole, int(take.reshape(-1, state.n_cells_per_topic)[whole].sum())


def judged_whole_note(frame: SamplingFrame, state: RoundState, take: np.ndarray,
                      top: int = 0) -> str:
    """What a plan says of the topics the next round judges whole (:func:`judged_whole_next`,
    topic ids from ``frame.collection``) and of the ``top`` first best-rank bands: judged
    whole (:func:`top_cells`), or how many open documents they hold where they do not fit:
    ``"; topics 36, 59 judged whole, 412 of the judgments (...)"``, or ``""`` when there is
    nothing to say."""
    whole, rest = judged_whole_next(frame, state, take)
    note = ""
    if len(whole):
        ids = ", ".join(str(frame.collection.topics[t]) for t in whole)
        note = (f"; topic{'s' if len(whole) > 1 else ''} {ids} judged whole, {rest} of the "
                f"judgments (1 to {FEW} relevant documents judged with {SETTLED:.0%} or more "
                "of the pool judged: weak until all of it is)")
    if top <= 0:
        return note
    left = _top_left(frame, state, take, top, whole)
    bands = _judged_whole(take, left)
    if bands.any():
        note += (f"; best ranks 1-{BANDS[top - 1]} judged whole in every topic, "
                 f"{int(take[bands].sum())} of the judgments (a run mean of a measure with "
                 "that cut-off estimated outside [0, 1]; judged whole, every run's value "
                 "there is exact)")
    elif left.any():
        note += (f"; best ranks 1-{BANDS[top - 1]} not judged whole: their "
                 f"{int(left.sum())} open documents do not fit in this round (a run mean of "
                 "a measure with that cut-off is estimated outside [0, 1]; a round that holds "
                 "them would make every run's value there exact)")
    return note


def top_judged_whole(frame: SamplingFrame, state: RoundState, take: np.ndarray,
                     top: int) -> np.ndarray:
    """Per cell: whether ``take`` judges the rest of it as one of the ``top`` first best-rank
    bands (:func:`top_cells` applied; none where it was not), outside the topics judged whole
    (:func:`judged_whole_next`)."""
    return _judged_whole(take, _top_left(frame, state, take, top))


def _judged_whole(take: np.ndarray, left: np.ndarray) -> np.ndarray:
    """The cells with documents ``left`` where ``take`` takes all of them in every such cell
    (:func:`top_cells` applied); none where it takes less in one."""
    bands = left > 0
    applied = bands.any() and np.array_equal(take[bands], left[bands])
    return bands if applied else np.zeros(len(take), dtype=bool)


def _top_left(frame: SamplingFrame, state: RoundState, take: np.ndarray, top: int,
              whole: np.ndarray | None = None) -> np.ndarray:
    """Per cell of the ``top`` first best-rank bands, outside the topics judged whole
    (``whole``, indices; :func:`judged_whole_next` where None): its documents not judged yet
    before the round (0 elsewhere)."""
    if whole is None:
        whole = judged_whole_next(frame, state, take)[0]
    size, done, _ = cell_counts(frame, state)
    inside = ~np.isin(np.arange(len(take)) // state.n_cells_per_topic, whole)
    return np.where(inside & in_top_bands(state, len(take), top), size - done, 0)


def whole_topics(state: RoundState, size: np.ndarray, done: np.ndarray,
                 hits: np.ndarray) -> np.ndarray:
    """Per topic: the next round judges the rest of it (module docstring, "Topics judged
    whole"): the reliability rule keeps it weak until it is judged whole (1 to ``FEW`` judged
    relevant documents with half or more of its pool judged: ``reliability.unsettled_topics``),
    from the cells' ``size``, judged (``done``) and judged relevant (``hits``) counts."""
    n_topics = len(state.fold)
    owner = np.arange(len(size)) // state.n_cells_per_topic
    pool = np.bincount(owner, weights=size, minlength=n_topics)
    judged = np.bincount(owner, weights=done, minlength=n_topics)
    found = np.bincount(owner, weights=hits, minlength=n_topics)
    share = np.where(pool > 0, judged / np.maximum(pool, 1), 1.0)
    return unsettled_topics(found, share)


def _proportional(total: int, weight: np.ndarray, room: np.ndarray) -> np.ndarray:
    """``total`` units over cells in proportion to ``weight``, at most ``room`` each (largest
    remainders; what a full cell cannot take goes to the others)."""
    out = np.zeros(len(weight), dtype=np.int64)
    total = min(total, int(room.sum()))
    while total > 0:
        open_ = room - out > 0
        w = np.where(open_, weight, 0.0)
        if w.sum() <= 0:
            w = open_.astype(np.float64)
        ideal = total * w / w.sum()
        add = np.minimum(np.floor(ideal).astype(np.int64), room - out)
        short = total - int(add.sum())
        if short > 0:
            order = np.argsort(-(ideal - np.floor(ideal)), kind="stable")
            for c in order[: 4 * short + 16]:
                if short == 0:
                    break
                if open_[c] and out[c] + add[c] < room[c]:
                    add[c] += 1
                    short -= 1
        if add.sum() == 0:
            add[np.flatnonzero(open_)[:total]] = 1
        out += add
        total -= int(add.sum())
    return out


def next_round(frame: SamplingFrame, state: RoundState, budget: int, rng,
               take: np.ndarray | None = None) -> RoundState:
    """Judge about ``budget`` more documents (more where cells need their floors); the state
    after the round, its inclusion probabilities those of the union (module docstring).
    ``take``: :func:`allocation` of ``budget``, where the caller has it already."""
    if budget < 0:
        raise DesignError(f"a round's budget must be >= 0, not {budget}")
    rng = generator(rng)
    take = allocation(frame, state, budget) if take is None else take
    judged = state.sample.judged.copy()
    inside = state.cell >= 0
    order = np.argsort(state.cell, kind="stable")
    order = order[inside[order]]
    starts = np.searchsorted(state.cell[order], np.arange(len(take) + 1))
    for c in np.flatnonzero(take):
        rows = order[starts[c]:starts[c + 1]]
        open_rows = rows[~judged[rows]]
        judged[rng.choice(open_rows, int(take[c]), replace=False)] = True
    size = np.bincount(state.cell[inside], minlength=len(take))
    done = np.bincount(state.cell[inside & judged], minlength=len(take))
    pi = np.zeros(len(judged))
    pi[inside] = done[state.cell[inside]] / size[state.cell[inside]]
    stratum = np.where(inside, state.cell % state.n_cells_per_topic, -1)
    sample = Sample(judged, stratum, state.labels, pi)
    return replace(state, sample=sample, spent=state.spent + (int(take.sum()),))


@dataclass(frozen=True)
class Round:
    """One round of :func:`judge_in_rounds`: what is judged (``state``), the evaluation of the
    measures on it with 95% intervals (``evaluation``, ``low``, ``high``), which run means'
    intervals are ``flagged`` (runs x measures), the next round's allocation per cell
    (``plan``; None after the last round) and the first best-rank bands it asks to judge whole
    (``top``, :func:`outside_bands`; judged whole where :func:`top_cells` lets them)."""

    state: RoundState
    evaluation: object
    low: np.ndarray
    high: np.ndarray
    flagged: np.ndarray
    plan: np.ndarray | None = None
    top: int = 0


def judge_in_rounds(collection, frame: SamplingFrame, design, budget: int, max_rounds: int,
                    rng, measures, *, source: str = "rounds", rel_level: int = 1) -> list[Round]:
    """Round 1 drawn with ``design``, then rounds of ``budget`` while some interval of
    ``measures`` (evaluated with 95% intervals on the judgments so far) is flagged by the
    reliability rule, up to ``max_rounds`` rounds or the whole pool: the rounds in order.
    ``rng`` (a Generator, or a seed) draws every round, in order; ``rel_level``: the grade
    from which a document is relevant, for the estimates and the allocation."""
    from ..evaluation import evaluate_collection

    rng = generator(rng)
    state = first_round(frame, design, rng, rel_level)
    out = []
    while True:
        ev = evaluate_collection(collection, state.judgments(frame, source=source), measures,
                                 ci=0.95, rel_level=rel_level)
        low, high = ev.interval()
        flagged = ev.statuses.status == "unreliable"
        more = flagged.any() and state.rounds < max_rounds and state.open_documents() > 0
        top = outside_bands(ev) if more else 0
        plan = allocation(frame, state, budget, top) if more else None
        out.append(Round(state, ev, low, high, flagged, plan, top))
        if not more:
            return out
        state = next_round(frame, state, budget, rng, take=plan)


def band_names() -> tuple[str, ...]:
    """The best-rank bands' names, ``1-10``, ``11-30``, ``31-100``, ``>100``."""
    edges = (0, *BANDS)
    return tuple(f"{a + 1}-{b}" for a, b in zip(edges, BANDS)) + (f">{BANDS[-1]}",)
