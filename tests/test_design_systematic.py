"""Systematic sampling within rank strata (irsample.design.sampling.systematic): the exact pi and
pi_de of the selection rule, Monte-Carlo inclusion frequencies against the recorded pi, names,
and the way through `irsample sample`, the design file, `merge`, `eval -m ht(AP)` and
`irsample simulate`."""

from __future__ import annotations

import json
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irsample.design import DESIGNS, DesignRecord, Pool, SamplingFrame, parse_design
from irsample.design.sampling.cells import sample_size
from irsample.design.sampling.systematic import Systematic, select_systematic, systematic
from irsample.errors import DesignError
from irsample.evaluation import evaluate_collection
from irsample.io import load_qrels, load_runs
from irsample.measures import parse_all
from irsample.model import Collection, Judgments

from .synthetic import pooled_collection
from .test_cli_design import cli, files  # noqa: F401 - files is a fixture used below

SPEC = "1-10:1,11-40:0.3,41-:0.1"


@given(n=st.integers(1, 60), data=st.data())
@settings(max_examples=200, deadline=None)
def test_every_start_selects_k_and_each_row_for_k_of_the_n_starts(n, data):
    """Over all N starts r: every sample has exactly k rows, every row is selected for k starts
    (pi = k/N), and pairs are selected together for |A_d ∩ A_e| starts; when N/k is an integer
    a pair is together for k starts or none (pi_de = k/N or 0)."""
    k = data.draw(st.integers(1, n))
    offsets = np.array([0, n], dtype=np.int64)
    order = np.arange(n, dtype=np.int64)
    chosen = np.zeros((n, n), dtype=bool)
    for r in range(n):
        select_systematic(offsets, np.array([k]), order, np.array([r]), chosen[r])
    assert np.all(chosen.sum(axis=1) == k)
    assert np.all(chosen.sum(axis=0) == k)
    together = chosen.T.astype(int) @ chosen.astype(int)
    arcs = [{(i * k + j) % n for j in range(k)} for i in range(n)]
    expected = np.array([[len(a & b) for b in arcs] for a in arcs])
    assert np.array_equal(together, expected)
    if n % k == 0:
        off = together[~np.eye(n, dtype=bool)]
        assert set(np.unique(off)) <= {0, k}


@pytest.fixture(scope="module")
def frame():
    collection, table = pooled_collection(7, n_topics=3)
    return SamplingFrame.from_qrels(collection, table)


def test_inclusion_frequencies_match_the_recorded_pi(frame):
    """2,000 seeded draws: exactly k = round(rate N) per cell; pi = k/N of the cell; every
    document's frequency within a Bonferroni bound (family-wise 0.1%) of its pi."""
    design = systematic(SPEC)
    draws = 2000
    rng = np.random.default_rng(2024)
    samples = np.array([design.select(frame, rng=rng).judged for _ in range(draws)])
    sample = design.select(frame, rng=0)
    n_strata = len(design.strata)
    cell = frame.topic * n_strata + sample.stratum
    inside = sample.stratum >= 0
    size = np.bincount(cell[inside], minlength=frame.n_topics * n_strata)
    rates = np.tile([s.rate for s in design.strata], frame.n_topics)
    k = sample_size(rates, size)
    for row in samples[:50]:
        assert np.array_equal(np.bincount(cell[inside & row], minlength=len(size)), k)
    np.testing.assert_allclose(sample.inclusion[inside], (k / np.maximum(size, 1))[cell[inside]])
    freq = samples.mean(axis=0)
    pi = sample.inclusion
    random = inside & (pi < 1)
    z = (freq[random] - pi[random]) / np.sqrt(pi[random] * (1 - pi[random]) / draws)
    assert np.abs(z).max() <= NormalDist().inv_cdf(1 - 0.001 / (2 * random.sum()))
    assert np.all(freq[inside & (pi == 1)] == 1) and not samples[:, ~inside].any()


def test_the_sample_spreads_over_the_ranks_of_a_cell(frame):
    """The systematic sample of a cell has one document in every run of ~N/k consecutive
    documents in best-rank order: its ranks are more even than an SRS's can be."""
    design = systematic("1-10:1,11-:0.1")
    sample = design.select(frame, rng=5)
    for t in range(frame.n_topics):
        rows = np.flatnonzero((frame.topic == t) & (sample.stratum == 1))
        ranks = np.sort(frame.best_rank[rows])
        picked = np.sort(frame.best_rank[rows[sample.judged[rows]]])
        n, k = len(rows), len(picked)
        position = np.searchsorted(ranks, picked, side="left")  # first place of the rank
        step = n / k
        # the i-th pick lies within the i-th step of the order (up to ties in best rank)
        last = np.searchsorted(ranks, picked, side="right") - 1
        assert np.all(position <= np.floor((np.arange(k) + 1) * step))
        assert np.all(last >= np.floor(np.arange(k) * step) - 1)


def test_names_registry_and_errors():
    assert DESIGNS["systematic"] is Systematic
    for name in ("systematic(1-10:1,11-100:0.2)", "systematic(1-10:1,11-:0.05)@300",
                 "systematic(1-5:0.5)@4/topic"):
        design = parse_design(name)
        assert isinstance(design, Systematic) and design.name == name
        assert parse_design(design.name) == design
    assert parse_design("systematic(1-10:1,11-100:0.2)").depth == 100
    with pytest.raises(DesignError, match="disjoint"):
        parse_design("systematic(1-10:1,5-20:0.5)")
    with pytest.raises(DesignError, match=r"\(0, 1\]"):
        parse_design("systematic(1-10:0)")
    with pytest.raises(DesignError, match="systematic.*between strata"):
        systematic("1-5:1,8-:0.5").select(
            SamplingFrame.from_qrels(*pooled_collection(1, n_topics=1)), rng=0)


def test_same_seed_same_sample(frame):
    design = systematic(SPEC, budget=120)
    a, b = design.select(frame, rng=3), design.select(frame, rng=3)
    assert np.array_equal(a.judged, b.judged) and a.judged.sum() == 120
    assert not np.array_equal(a.judged, design.select(frame, rng=4).judged)


def _eval_ht(capsys, qrels, runs):
    rc, out, err = cli(capsys, "eval", qrels, *runs, "-m", "ht(AP)", "-q", "--format", "tsv")
    assert rc == 0, err
    rows = [line.split("\t") for line in out.splitlines()]
    return {(r[0], r[1]): float(r[-1]) for r in rows[1:]}


def test_sample_design_file_merge_and_ht_round_trip(capsys, files, tmp_path):  # noqa: F811
    collection, table, runs, _ = files
    design = "systematic(1-10:1,11-100:0.2)@150"
    out = tmp_path / "out"
    rc, report, err = cli(capsys, "sample", *runs, "--design", design, "--seed", 8, "-o", out)
    assert rc == 0, err
    assert report.startswith(f"{design}: depth-100 pool of 4 runs, seed 8")
    record = DesignRecord.read(out / "design.json")
    assert record.design == parse_design(design) and record.seed == 8
    assert json.loads((out / "design.json").read_text())["design"] == design
    # the file's rows are the draw of the same design over the same pool, pi = k/N per cell
    pool = Pool.from_runs(collection, depth=100)
    frame = SamplingFrame.from_pool(pool, table)
    drawn = parse_design(design).select(frame, rng=8)
    assert record.selected.sum() == 150 == drawn.judged.sum()
    assert sorted(zip(record.qid, record.docno, record.inclusion)) == sorted(
        zip(pool.qids(), pool.docnos(), drawn.inclusion))
    todo = [line.split("\t") for line in (out / "to_judge.tsv").read_text().splitlines()[1:]]
    truth = dict(zip(zip(table.qid.to_pylist(), table.docno.to_pylist()), table.rel.tolist()))
    judged = tmp_path / "judged"
    judged.write_text("".join(f"{q} 0 {d} {truth[q.encode(), d.encode()]}\n" for q, d in todo))
    direct = parse_design(design).sample(frame, rng=8)
    ms = parse_all(["ht(AP)", "xinfAP"])
    want = evaluate_collection(collection, direct, ms)
    merged = {}
    for fmt in ("strata", "prels"):
        merged[fmt] = tmp_path / f"merged.{fmt}"
        rc, _, err = cli(capsys, "merge", out / "design.json", judged, "--format", fmt,
                         "-o", merged[fmt])
        assert rc == 0, err
    # stratified qrels: the same judgments as the direct draw, so the same estimates
    got = load_qrels(str(merged["strata"]), "strata")
    col = Collection.build(load_runs([str(r) for r in runs]), [got])
    values = evaluate_collection(col, Judgments.from_qrels(col, got), ms).values
    np.testing.assert_allclose(values, want.values, rtol=1e-12)
    ht = _eval_ht(capsys, merged["strata"], runs)
    for r, run in enumerate(want.run_names):
        for t, topic in enumerate(want.topics):
            assert ht[run, topic] == pytest.approx(want.values[r, t, 0], abs=5e-5)
    # prels: every pool document with its pi = k/N, the unjudged as -1 (one stratum per
    # topic, so ht's pair approximation differs from the stratified file's; the first-order
    # pi are the same)
    prels = load_qrels(str(merged["prels"]), "prels")
    pi = dict(zip(zip(record.qid, record.docno), record.inclusion))
    keys = zip(prels.qid.to_pylist(), prels.docno.to_pylist())
    assert [pi[q.decode(), d.decode()] for q, d in keys] == pytest.approx(prels.prob.tolist())
    assert len(prels.qid) == len(record.qid) and (prels.rel >= 0).sum() == 150
    assert all(np.isfinite(list(_eval_ht(capsys, merged["prels"], runs).values())))


def test_simulate_names_the_design(capsys, tmp_path):
    """`irsample simulate designs` draws any registered design by name, systematic included."""
    from .experiment_data import write_collection

    paths = write_collection(tmp_path / "collection", n_topics=4, n_docs=200)
    out = tmp_path / "sim"
    rc, text, err = cli(capsys, "simulate", "designs", "--qrels", paths["qrels"], "--runs",
                        paths["runs"], "--pooled", paths["pooled"], "--trials", 3, "--seed", 1,
                        "--param", "designs=systematic(1-10:1,11-100:0.3);1-10:1,11-100:0.3",
                        "--param", "estimators=ht(AP),xinfAP", "--format", "csv", "-o", out)
    assert rc == 0, err
    report = (out / "report.md").read_text()
    assert "systematic(1-10:1,11-100:0.3)" in report and "stratified(1-10:1,11-100:0.3)" in report
    assert "coverage" in report and "ht(AP)" in report
