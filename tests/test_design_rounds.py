"""Judging in rounds (irsample/design/rounds.py): the union of the rounds is a stratified simple
random sample over the cells, so the relevant-document totals stay unbiased over rounds (Monte
Carlo, 1,500 draws); the allocation of one fold never reads that fold's judgments; cells keep
two judgments; topics rule 2 holds weak until judged whole are judged whole in the next round;
the recipe ``simulate rounds`` runs on a small collection."""

from __future__ import annotations

import numpy as np
import pytest

from irsample.design import Pool, SamplingFrame, stratified, uniform
from irsample.design.rounds import MIN_CELL, allocation, first_round, next_round
from irsample.errors import DesignError
from irsample.evaluation import evaluate_collection
from irsample.measures import parse

from .synthetic import pooled_collection

DRAWS = 1500


@pytest.fixture(scope="module")
def frame():
    collection, table = pooled_collection(5, n_topics=4, n_runs=4)
    return SamplingFrame.from_pool(Pool.from_runs(collection, depth=60), table)


def relevant_totals(frame, sample) -> np.ndarray:
    """Per topic: sum over judged relevant rows of 1/pi (the HT estimate of R)."""
    hit = sample.judged & (frame.rel > 0)
    return np.bincount(frame.topic[hit], weights=1.0 / sample.inclusion[hit],
                       minlength=frame.n_topics)


@pytest.mark.parametrize("design", [uniform(0.1), stratified("1-10:0.5,11-:0.05")],
                         ids=["uniform", "2strata"])
def test_totals_stay_unbiased_over_rounds(frame, design):
    """Round 1, then two rounds of 40 judgments each allocated from the other fold: the HT
    estimate of every topic's relevant count is unbiased after each round (z within 4)."""
    truth = np.bincount(frame.topic[frame.rel > 0], minlength=frame.n_topics)
    rng = np.random.default_rng(11)
    totals = np.zeros((3, DRAWS, frame.n_topics))
    for d in range(DRAWS):
        state = first_round(frame, design, rng)
        totals[0, d] = relevant_totals(frame, state.sample)
        for r in (1, 2):
            state = next_round(frame, state, 40, rng)
            totals[r, d] = relevant_totals(frame, state.sample)
            assert state.sample.judged.sum() == sum(state.spent)
    mean, se = totals.mean(axis=1), totals.std(axis=1, ddof=1) / np.sqrt(DRAWS)
    z = (mean - truth) / np.where(se > 0, se, 1.0)
    assert np.abs(z).max() < 4.0, z


def test_a_fold_is_allocated_from_the_other_fold_only(frame):
    """Changing the grades of one fold's topics (all made non-relevant) leaves that fold's
    allocation unchanged, and changes the other fold's."""
    state = first_round(frame, uniform(0.2), np.random.default_rng(3))
    take = allocation(frame, state, 60)
    fold0 = state.fold[frame.topic] == 0
    flipped = SamplingFrame(frame.collection, frame.topic, frame.tdi,
                            np.where(fold0, 0, frame.rel),
                            frame.best_rank, frame.runs, frame.source, frame.depth)
    again = allocation(flipped, state, 60)
    cells_of_fold0 = np.repeat(state.fold == 0, state.n_cells_per_topic)
    assert np.array_equal(take[cells_of_fold0], again[cells_of_fold0])
    assert not np.array_equal(take[~cells_of_fold0], again[~cells_of_fold0])


def test_cells_keep_two_judgments_and_probabilities_are_the_cells_shares(frame):
    state = next_round(frame, first_round(frame, uniform(0.05), np.random.default_rng(5)), 10,
                       np.random.default_rng(6))
    inside = state.cell >= 0
    size = np.bincount(state.cell[inside])
    done = np.bincount(state.cell[inside & state.sample.judged], minlength=len(size))
    used = size > 0
    assert np.all(done[used] >= np.minimum(size[used], MIN_CELL))
    pi = state.sample.inclusion[inside]
    assert np.allclose(pi, done[state.cell[inside]] / size[state.cell[inside]])


def test_round_one_must_be_simple_random_samples_per_stratum(frame):
    from irsample.design import importance

    with pytest.raises(DesignError, match="simple random samples"):
        first_round(frame, importance(0.2), np.random.default_rng(1))


def test_the_whole_pool_judged_gives_the_truth(frame):
    """Rounds until nothing is left: every estimate is the measure, with no variance."""
    c = frame.collection
    state = first_round(frame, uniform(0.3), np.random.default_rng(2))
    while state.open_documents():
        state = next_round(frame, state, 200, np.random.default_rng(state.rounds))
    measures = [parse(m)[0] for m in ("ht(AP)", "ht(nDCG)")]
    ev = evaluate_collection(c, state.judgments(frame), measures, ci=0.95)
    truth = evaluate_collection(c, frame.judgments(), [parse(m)[0] for m in ("AP", "nDCG")])
    assert np.allclose(ev.summary, truth.summary, atol=1e-12)
    assert np.allclose(np.nan_to_num(ev.summary_variance), 0.0, atol=1e-20)


def test_topics_the_rule_holds_weak_are_judged_whole_next():
    """A topic with 1-2 judged relevant documents and half or more of its pool judged (weak
    until judged whole: ``reliability.unsettled_topics``) gets the rest of its pool in the next
    round, inside the round's budget where it fits; the other topics are topped up as before,
    and the union stays a stratified simple random sample of the cells (a judged-whole topic's
    cells at pi = 1)."""
    from irsample.design.rounds import whole_topics
    from irsample.measures.reliability import unsettled_topics

    collection, table = pooled_collection(7, n_topics=6, n_runs=4, relevant=(2, 5))
    frame = SamplingFrame.from_pool(Pool.from_runs(collection, depth=30), table)
    rel = frame.rel > 0
    seen = 0
    for seed in range(40):
        state = first_round(frame, uniform(0.6), np.random.default_rng(seed))
        judged = state.sample.judged
        found = np.bincount(frame.topic[judged & rel], minlength=frame.n_topics)
        share = (np.bincount(frame.topic[judged], minlength=frame.n_topics)
                 / np.bincount(frame.topic, minlength=frame.n_topics))
        inside = state.cell >= 0
        size = np.bincount(state.cell[inside], minlength=frame.n_topics * state.n_cells_per_topic)
        done = np.bincount(state.cell[inside & judged], minlength=len(size))
        hits = np.bincount(state.cell[inside & judged & rel], minlength=len(size))
        whole = whole_topics(state, size, done, hits)
        assert np.array_equal(whole, unsettled_topics(found, share))
        if not whole.any():
            continue
        seen += 1
        take = allocation(frame, state, 5)
        owner = np.arange(len(size)) // state.n_cells_per_topic
        assert np.array_equal(take[whole[owner]], (size - done)[whole[owner]])
        after = next_round(frame, state, 5, np.random.default_rng(seed + 100), take=take)
        rows = np.isin(frame.topic, np.flatnonzero(whole))
        assert after.sample.judged[rows].all() and np.all(after.sample.inclusion[rows] == 1.0)
        assert after.spent[-1] == max(5, int(take[whole[owner]].sum()))
    assert seen >= 20, seen


def test_the_top_band_judged_whole_makes_every_p10_exact(frame):
    """Asked for the first band (``top=1``) with a budget that covers its open documents, the
    round judges every cell of best ranks 1-10 whole (the rest of the budget to the others as
    before, the floors kept): afterwards each run's ht(P@10) is its P@10 on the complete
    judgments, with no variance. With a budget short of them it is the round without."""
    from irsample.design.rounds import BANDS, band_of, cell_counts

    c = frame.collection
    state = first_round(frame, uniform(0.1), np.random.default_rng(4))
    size, done, _ = cell_counts(frame, state)
    n_bands = len(BANDS) + 1
    top = (np.arange(len(size)) % state.n_cells_per_topic % n_bands == 0) & (size > done)
    open_top = int((size - done)[top].sum())
    take = allocation(frame, state, open_top + 30, top=1)
    assert np.array_equal(take[top], (size - done)[top])
    assert take.sum() >= open_top + 30 - 1  # the rest of the budget spent elsewhere
    assert np.array_equal(allocation(frame, state, open_top - 1, top=1),
                          allocation(frame, state, open_top - 1))
    after = next_round(frame, state, open_top + 30, np.random.default_rng(5), take=take)
    rows = (band_of(frame.best_rank) == 0) & (after.cell >= 0)
    assert after.sample.judged[rows].all() and np.all(after.sample.inclusion[rows] == 1.0)
    ev = evaluate_collection(c, after.judgments(frame), parse("ht(P@10)"), ci=0.95)
    truth = evaluate_collection(c, frame.judgments(), parse("P@10"))
    assert np.allclose(ev.values, truth.values, atol=1e-12, equal_nan=True)
    assert np.allclose(np.nan_to_num(ev.summary_variance), 0.0, atol=1e-20)


def test_outside_bands_asks_for_the_bands_of_a_flagged_cutoff_outside_its_range():
    """A flagged run mean outside [0, 1] of a measure with a cut-off k asks for the bands up
    to k (P@10: 1; P@20 and P@30: 2; P@100: 3); none for a mean inside its range, an unflagged
    one, a measure without a cut-off (AP) or one cut past the bands (P@200)."""
    from types import SimpleNamespace

    from irsample.design.rounds import outside_bands

    def asked(name, mean, status="unreliable"):
        ev = SimpleNamespace(measures=parse(name), summary=np.array([[0.5], [mean]]),
                             statuses=SimpleNamespace(status=np.array([["ok"], [status]])))
        return outside_bands(ev)

    assert asked("ht(P@10)", 1.03) == 1
    assert asked("ht(P@10)", -0.01) == 1
    assert asked("ht(P@20)", 1.03) == asked("ht(P@30)", 1.03) == 2
    assert asked("ht(P@100)", 1.03) == 3
    assert asked("ht(P@10)", 0.97) == 0
    assert asked("ht(P@10)", 1.03, status="ok") == 0
    assert asked("ht(AP)", 1.03) == 0
    assert asked("ht(P@200)", 1.03) == 0
    assert outside_bands(SimpleNamespace(statuses=None)) == 0
