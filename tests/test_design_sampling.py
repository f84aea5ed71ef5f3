"""Sampling frames and the uniform / stratified designs: best ranks, sample sizes, inclusion
frequencies, reproducibility, the judgments they produce, and parameter errors."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from irsample.design import NOT_RETRIEVED, RankStratum, SamplingFrame, stratified, uniform
from irsample.design.sampling.cells import sample_size
from irsample.errors import DesignError
from irsample.evaluation import evaluate_collection
from irsample.io import load_qrels, load_runs
from irsample.io.trec import QrelsTable
from irsample.measures import parse_all
from irsample.model import JUDGED, POOLED, Collection, Judgments

from .synthetic import pooled_collection

STRATA = "1-10:1,11-40:0.4,41-:0.15"


def tiny():
    """Run A ranks x y z, run B ranks z w (topic 1); qrels add v, which no run retrieved."""
    runs = load_runs(pd.DataFrame({
        "qid": "1", "docno": ["x", "y", "z", "z", "w"], "score": [3.0, 2.0, 1.0, 5.0, 4.0],
        "tag": ["A", "A", "A", "B", "B"],
    }))
    table = load_qrels(pd.DataFrame({
        "qid": ["1"] * 5 + ["9"], "docno": ["v", "w", "x", "y", "z", "x"],
        "rel": [1, 0, 2, 0, 1, 1],
    }))
    return Collection.build(runs), table  # built without the qrels: v has tdi -1


def test_best_rank_over_all_runs_or_a_subset():
    col, table = tiny()
    frame = SamplingFrame.from_qrels(col, table)
    assert len(frame) == 5  # topic 9 is not in the collection
    best = dict(zip(table.docno.to_pylist(), frame.best_rank))
    assert best == {b"v": NOT_RETRIEVED, b"w": 2, b"x": 1, b"y": 2, b"z": 1}
    only_a = SamplingFrame.from_qrels(col, table, runs=[0])
    assert dict(zip(table.docno.to_pylist(), only_a.best_rank))[b"w"] == NOT_RETRIEVED
    assert frame.tdi[0] == -1 and frame.pool_size().tolist() == [5]


def test_frame_needs_complete_judgments_and_valid_runs():
    col, table = tiny()
    partial = QrelsTable("p", table.qid, table.docno, np.array([1, -1, 0, 0, 1, 1]), table.lineno)
    with pytest.raises(DesignError, match="not judged"):
        SamplingFrame.from_qrels(col, partial)
    with pytest.raises(DesignError, match="distinct run indices"):
        SamplingFrame.from_qrels(col, table, runs=[0, 0])
    with pytest.raises(DesignError, match="distinct run indices"):
        SamplingFrame.from_qrels(col, table, runs=[2])


@pytest.mark.parametrize(
    "rate, n, k",
    [(0.3, 10, 3), (0.25, 10, 3), (0.24, 10, 2), (0.1, 3, 1), (0.01, 5, 1), (1.0, 7, 7),
     (0.5, 0, 0)],
)
def test_sample_size_rounds_half_up_with_at_least_one(rate, n, k):
    assert sample_size(rate, np.array([n]))[0] == k


@pytest.fixture(scope="module")
def frame():
    collection, table = pooled_collection(7, n_topics=3)
    return SamplingFrame.from_qrels(collection, table)


@pytest.mark.parametrize("spec", ["uniform", STRATA])
def test_inclusion_frequencies_match_the_design(frame, spec):
    """Over 1,000 draws: every (topic, stratum) cell gets exactly k = round(rate N) documents;
    in every stratum the first half of each cell's rows (the order Algorithm S walks) is
    included at pi = k / N within 3 SE (of the per-draw share, which is random); and every
    document's frequency is within a Bonferroni bound (family-wise 0.1%) of its pi."""
    design = uniform(0.3) if spec == "uniform" else stratified(spec)
    rates = [0.3] if spec == "uniform" else [s.rate for s in design.strata]
    draws = 1000
    rng = np.random.default_rng(99)
    samples = np.array([design.select(frame, rng=rng).judged for _ in range(draws)])
    sample = design.select(frame, rng=0)
    cell = frame.topic * len(rates) + sample.stratum
    n_cells = frame.n_topics * len(rates)
    size = np.bincount(cell, minlength=n_cells)
    for s, rate in enumerate(rates):
        cells = np.flatnonzero((size > 0) & (np.arange(n_cells) % len(rates) == s))
        expected_k = sample_size(rate, size[cells])
        got = np.stack([np.bincount(cell[row], minlength=n_cells)[cells] for row in samples[:50]])
        assert np.all(got == expected_k)  # exact sample size per cell
        assert np.all(np.abs(expected_k / size[cells] - rate) <= 0.5 / size[cells] + 1e-12)
        first_half = np.zeros(len(frame), dtype=bool)
        for c in cells:
            rows = np.flatnonzero(cell == c)
            first_half[rows[: len(rows) // 2]] = True
        if not first_half.any():
            continue
        share = samples[:, first_half].mean(axis=1)
        target = sample.inclusion[first_half].mean()
        se = share.std(ddof=1) / np.sqrt(draws)
        if rate == 1:
            assert np.all(share == 1)
        else:
            assert se > 0 and abs(share.mean() - target) <= 3 * se, (spec, s, share.mean(), se)
    freq = samples.mean(axis=0)
    pi = sample.inclusion
    random = pi < 1
    z = (freq[random] - pi[random]) / np.sqrt(pi[random] * (1 - pi[random]) / draws)
    assert np.abs(z).max() <= NormalDist().inv_cdf(1 - 0.001 / (2 * random.sum()))
    assert np.all(freq[~random] == 1)


def test_same_seed_same_sample_on_any_machine():
    col, table = tiny()
    frame = SamplingFrame.from_qrels(col, table)
    a = uniform(0.5).select(frame, rng=42)
    b = uniform(0.5).select(frame, rng=np.random.default_rng(42))
    assert np.array_equal(a.judged, b.judged)
    # NumPy's PCG64 stream and Algorithm S are platform-independent: this is the sample, and
    # Algorithm S by hand over the topic's 5 rows (k = 3) with the same uniforms agrees
    assert a.judged.tolist() == [False, True, False, True, True]
    need, by_hand = 3, []
    for i, u in enumerate(np.random.default_rng(42).random(5)):
        by_hand.append(bool(u * (5 - i) < need))
        need -= by_hand[-1]
    assert by_hand == a.judged.tolist()
    many = {tuple(uniform(0.5).select(frame, rng=s).judged) for s in range(20)}
    assert len(many) > 1
    d = stratified("1-1:1,2-:0.5")
    assert d.select(frame, rng=7).judged.tolist() == d.select(frame, rng=7).judged.tolist()


def test_design_judgments_equal_judgments_read_from_qrels():
    """A sample turned into Judgments from arrays equals the same sample written as stratified
    prels-like qrels (strings) and read with from_qrels, including a document no run
    retrieved (tdi = -1)."""
    col, table = tiny()
    frame = SamplingFrame.from_qrels(col, table)
    assert_same(frame.judgments(), Judgments.from_qrels(col, table))
    for design in (uniform(0.5), stratified("1-1:1,2-:0.5")):
        for seed in range(5):
            sample = design.select(frame, rng=seed)
            got = design.sample(frame, rng=seed)
            keep = np.arange(5)  # the rows of topic 1 (frame rows are in qrels order)
            labels = [sample.labels[s].encode() for s in sample.stratum]
            text = QrelsTable(
                "s", table.qid.take(pa.array(keep)), table.docno.take(pa.array(keep)),
                np.where(sample.judged, frame.rel, -1), keep,
                stratum=pa.array(labels, pa.binary()), prob=np.asarray(sample.inclusion),
            )
            assert_same(got, Judgments.from_qrels(col, text))
            assert got.state[frame.tdi[frame.tdi >= 0]].tolist() == [
                JUDGED if j else POOLED for j, t in zip(sample.judged, frame.tdi) if t >= 0
            ]


def assert_same(a: Judgments, b: Judgments):
    for name in ("grade", "state", "has_topic", "grade_offsets", "judged_grades", "stratum",
                 "stratum_size", "stratum_sampled", "stratum_grades", "inclusion", "sampled_count",
                 "relevant_sampled_offsets", "relevant_sampled_prob", "relevant_sampled_tdi"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            np.testing.assert_array_equal(x, y, err_msg=name)
    assert a.stratum_labels == b.stratum_labels


def test_stat_and_sample_eval_estimate_the_same_r(frame):
    """With pi = k/N recorded, statAP's R^ (sum of 1/pi over sampled relevant documents) equals
    sample_eval's R^ (sum of r_s N_s / n_s): the inclusion probabilities are the design's."""
    judgments = stratified(STRATA).sample(frame, rng=3)
    measures = parse_all(["statnum_rel", "inum_rel", "statAP"])
    ev = evaluate_collection(frame.collection, judgments, measures)
    values = {m.trec_name: ev.values[..., i] for i, m in enumerate(ev.measures)}
    np.testing.assert_allclose(values["statnum_rel"], values["inum_rel"], rtol=1e-12)
    assert np.all(values["statAP"] > 0)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: uniform(0), r"fraction must be a number in \(0, 1\]"),
        (lambda: uniform(1.5), r"\(0, 1\]"),
        (lambda: uniform("0.3"), r"\(0, 1\]"),
        (lambda: uniform(True), r"\(0, 1\]"),
        (lambda: stratified("1-10:0"), r"rate must be a number in \(0, 1\]"),
        (lambda: stratified("1-10:x"), "not a number"),
        (lambda: stratified("1-10"), "cannot parse"),
        (lambda: stratified("10-1:0.5"), "last rank must be"),
        (lambda: stratified("0-10:0.5"), "first rank must be"),
        (lambda: stratified("1-10:1,5-20:0.5"), "disjoint and in increasing rank order"),
        (lambda: stratified("11-20:1,1-10:0.5"), "disjoint"),
        (lambda: stratified([]), "at least one stratum"),
        (lambda: RankStratum(1, 2.5, 0.5), "last rank must be"),
        (lambda: RankStratum(1, "x", 0.5), "last rank must be"),
    ],
)
def test_invalid_parameters_are_rejected(make, message):
    with pytest.raises(DesignError, match=message):
        make()


def test_designs_parse_and_name_canonically():
    d = stratified(" 1-10 : 1.0 , 11-30:0.5,31-:0.1 ")
    assert d.name == "stratified(1-10:1,11-30:0.5,31-:0.1)"
    assert [s.label for s in d.strata] == ["1-10", "11-30", "31-"]
    assert stratified([(1, 10, 1.0), (11, None, 0.5)]) == stratified("1-10:1,11-:0.5")
    assert uniform(0.25).name == "uniform(0.25)"


def test_strata_define_the_pool_and_leave_no_gap():
    """Documents beyond the last stratum are outside the design (unpooled in its judgments);
    documents before the first stratum or between strata are errors."""
    col, table = tiny()
    frame = SamplingFrame.from_qrels(col, table)
    sample = stratified("1-1:1,2-5:0.5").select(frame, rng=0)
    assert sample.stratum.tolist() == [-1, 1, 0, 1, 0]  # v: no run retrieved it
    assert sample.inclusion[0] == 0 and not sample.judged[0]
    judged = stratified("1-1:1,2-5:0.5").sample(frame, rng=0)
    assert judged.stratum_size.sum() == 4  # v is unpooled: not in R, not in any stratum
    assert judged.judged_grades.tolist() == [2, 1, 0]  # x, z and one of w, y (both rel 0)
    shallow = stratified("1-1:1").select(frame, rng=0)
    assert shallow.stratum.tolist() == [-1, -1, 0, -1, 0] and shallow.judged.sum() == 2
    with pytest.raises(DesignError, match="2 pool documents .* fall between strata .*best ranks 2"):
        stratified("1-1:1,3-:0.5").select(frame, rng=0)
    with pytest.raises(DesignError, match="between strata"):
        stratified("2-:0.5").select(frame, rng=0)


def test_rng_must_be_explicit_and_a_seed_or_generator():
    col, table = tiny()
    frame = SamplingFrame.from_qrels(col, table)
    for bad in (None, 0.5, "1"):
        with pytest.raises(DesignError, match="rng must be"):
            uniform(0.5).select(frame, rng=bad)
    uniform(0.5).select(frame, rng=np.random.SeedSequence(1))
    with pytest.raises(TypeError):
        uniform(0.5).select(frame, 1)  # keyword-only
