"""The experiment runner on a small collection written to files (tests/experiment_data.py):
identical tables whatever the executor, seeds that redraw any row alone, the run splits, the
frames' depths, the truth, and the written tables."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from irsample import evaluate
from irsample.design import Pool, stratified, uniform
from irsample.errors import InputError, MeasureError
from irsample.evaluation import evaluate_collection
from irsample.experiments import (
    CollectionFiles,
    Experiment,
    ExperimentResult,
    LeaveOneGroupOut,
    RandomHalves,
    derived_seed,
    load,
    read_pooled_flags,
    read_run_groups,
    strategy,
)
from irsample.experiments.data import parse_one, restrict_runs
from irsample.experiments.splits import run_info
from irsample.measures import parse_all

from .experiment_data import GROUPS, POOLED, write_collection

MEASURES = {"xinfAP": "AP", "infNDCG": "nDCG", "iP@10": "P@10"}


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    return write_collection(tmp_path_factory.mktemp("collection"))


@pytest.fixture(scope="module")
def files(paths):
    return CollectionFiles.of(paths["runs"], paths["qrels"], pooled=paths["pooled"],
                              groups=paths["groups"])


def grid(files, **options) -> Experiment:
    settings = dict(
        collection=files,
        strategies=[strategy("uniform", uniform, settings=[0.3, 0.6]),
                    strategy("2strata", stratified("1-5:1,6-20:0.3")),
                    strategy("pool10", stratified("1-10:1"))],
        measures=MEASURES, splits=["pooled", "logo", "halves"], trials=2, seed=11,
    )
    return Experiment(**(settings | options))


@pytest.fixture(scope="module")
def sequential(files):
    return grid(files).run(executor="sequential", progress=False)


def assert_same(a: ExperimentResult, b: ExperimentResult):
    pd.testing.assert_frame_equal(a.runs, b.runs, check_exact=True)
    pd.testing.assert_frame_equal(a.trials, b.trials, check_exact=True)
    assert a.settings == b.settings


def test_local_processes_give_the_sequential_tables(files, sequential):
    assert_same(sequential, grid(files).run(executor="processes", workers=2, progress=False))


@pytest.mark.dask
def test_dask_local_cluster_gives_the_sequential_tables(files, sequential):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        # by address, as for a remote scheduler: the runner connects and disconnects
        result = grid(files).run(executor="dask", scheduler=cluster.scheduler_address,
                                 progress=False)
    assert_same(sequential, result)
    assert result.execution["executor"] == "dask"


def test_tables_shape_and_columns(sequential):
    runs, trials = sequential.runs, sequential.trials
    # per trial: pooled (8 runs) + halves (8 runs) + logo (2 + 3 + 1 + 2 runs) = 24 runs rows
    assert len(runs) == 2 * 4 * 3 * 24
    assert len(trials) == 2 * 4 * 3 * (1 + 4 + 1)
    assert set(runs.strategy) == {"uniform", "2strata", "pool10"}
    assert list(runs.columns[:6]) == ["strategy", "setting", "design", "split", "trial", "seed"]
    assert runs.groupby(["strategy", "setting", "split", "trial"]).seed.nunique().eq(1).all()
    assert runs.seed.nunique() == 2 * 4 * 6  # one seed per cell, all distinct
    assert trials.kendall_tau.dropna().between(-1, 1).all() and (trials.rms >= 0).all()
    assert trials[trials.runs == 1].kendall_tau.isna().all()  # logo:g2 has one run
    # iP@10 has no variance estimator: no interval, no coverage
    assert runs[runs.measure == "iP@10"][["low", "high"]].isna().all().all()
    assert runs[runs.measure != "iP@10"][["low", "high"]].notna().all().all()
    classes = ["true_positive", "true_negative", "miss", "false_alarm", "inversion"]
    counted = trials[classes].sum(axis=1)
    assert (counted == trials.runs * (trials.runs - 1) / 2).all()


def test_seed_column_redraws_any_row_alone(files, sequential):
    data = load(files)
    rows = sequential.runs.query("strategy == '2strata' and split == 'halves' and trial == 1")
    row = rows.iloc[0]
    assert row.seed == derived_seed(11, "draw", "2strata", "-", "halves", 1)
    pool = RandomHalves().splits(data.info, trial=1, seed=11)[0].pool
    frame = data.frame(pool, 20)
    judgments = stratified("1-5:1,6-20:0.3").sample(frame, rng=np.random.default_rng(row.seed))
    ev = evaluate_collection(data.collection, judgments, [parse_one(row.measure)])
    assert ev.summary[data.info.names.index(row.run), 0] == row.estimate


def test_full_judgments_recover_the_truth(files):
    exp = Experiment(collection=files, strategies=[strategy("all", uniform(1.0), depth=math.inf)],
                     measures={"xinfAP": "AP", "infAP": "AP", "infNDCG": "nDCG", "iP@10": "P@10"},
                     seed=3)
    result = exp.run(executor="sequential", progress=False)
    runs = result.runs
    exact = runs.measure == "infNDCG"
    np.testing.assert_allclose(runs.estimate[exact], runs.truth[exact], rtol=1e-12)
    # infAP, xinfAP and iP@10 differ from AP and P@10 by their smoothing constants (1e-5) only
    np.testing.assert_allclose(runs.estimate[~exact], runs.truth[~exact], rtol=1e-4)
    assert (result.trials.judged == result.trials.pool_size).all()
    tau = result.trials.set_index("measure").kendall_tau
    # tau-b is 1 up to rounding; iP@10's smoothing breaks some ties of P@10
    np.testing.assert_allclose(tau.drop("iP@10"), 1.0, rtol=1e-12)
    assert (result.trials.accuracy == 1.0).all()
    assert (result.trials[["miss", "false_alarm", "inversion"]] == 0).all().all()
    # the truth is trec_eval's measure under the complete qrels
    ev = evaluate(str(files.qrels), list(files.runs), ["AP"])
    truth = result.runs[result.runs.measure == "xinfAP"].set_index("run").truth
    np.testing.assert_allclose(truth.loc[list(ev.run_names)], ev.summary[:, 0], rtol=0, atol=0)


def test_pooled_split_pools_the_flagged_runs(sequential, files):
    rows = sequential.runs[sequential.runs.split == "pooled"]
    flags = dict(zip(rows.run, rows.pooled))
    assert flags == {f"r{i}": p for i, p in enumerate(POOLED)}
    data = load(files)
    frame = data.frame(data.info.pooled_runs, 20)
    assert frame.runs == tuple(i for i, p in enumerate(POOLED) if p)
    assert len(frame) == len(data.qrels.rel)  # the qrels are exactly this depth-20 pool


def test_random_halves_partition_the_pooled_runs(files):
    info = load(files).info
    pooled = set(info.pooled_runs)
    halves = set()
    for trial in range(20):
        (split,) = RandomHalves().splits(info, trial=trial, seed=11)
        pool = set(split.pool)
        rest = pooled - pool
        assert pool <= pooled and len(pool) == len(pooled) // 2 and pool | rest == pooled
        assert split.evaluate == info.all_runs
        assert RandomHalves().splits(info, trial=trial, seed=11)[0] == split
        halves.add(split.pool)
    assert len(halves) > 3  # C(5, 2) = 10 possible halves
    # every strategy of a trial sees the same half; the frame's best ranks use only that half
    exp = grid(files, strategies=[strategy("a", uniform(0.5)), strategy("b", uniform(0.7))])
    for task in exp.tasks(info):
        if task.split.name == "halves":
            assert task.split == RandomHalves().splits(info, trial=task.trial, seed=11)[0]
            frame = load(files).frame(task.split.pool, 20)
            assert frame.runs == task.split.pool and np.all(frame.best_rank <= 20)


def test_leave_one_group_out_excludes_exactly_the_group(files, sequential):
    info = load(files).info
    splits = LeaveOneGroupOut().splits(info, trial=0, seed=0)
    assert [s.name for s in splits] == ["logo:g0", "logo:g1", "logo:g2", "logo:g3"]
    for split in splits:
        group = split.name.split(":", 1)[1]
        members = {r for r, g in enumerate(GROUPS) if g == group}
        assert set(split.evaluate) == members
        assert set(split.pool) == {r for r in info.pooled_runs if r not in members}
        rows = sequential.runs[sequential.runs.split == split.name]
        assert set(rows.run) == {f"r{r}" for r in members} and not rows.pooled.any()
    (only,) = LeaveOneGroupOut(groups=("g2",)).splits(info, trial=0, seed=0)
    assert only.evaluate == (5,)
    with pytest.raises(InputError, match="unknown groups"):
        LeaveOneGroupOut(groups=("nope",)).splits(info, trial=0, seed=0)


def test_strategy_depth_bounds_the_frame(files, sequential):
    pool10 = sequential.trials[sequential.trials.strategy == "pool10"]
    assert (pool10.judged == pool10.pool_size).all()  # one stratum judged completely
    uniform_rows = sequential.trials[(sequential.trials.strategy == "uniform")
                                     & (sequential.trials.split == "pooled")]
    # depth 100: the qrels (the pooled runs' depth-20 pool) plus the documents the pooled runs
    # rank 21-100, which the qrels do not list: non-relevant rows of the frame
    data = load(files)
    pool100 = Pool.from_runs(data.collection, list(data.info.pooled_runs), depth=100)
    assert (uniform_rows.pool_size == len(pool100)).all()
    frame = data.frame(data.info.pooled_runs, 100)
    assert len(frame) == len(pool100) > len(data.qrels.rel)
    assert frame.rel.sum() == data.qrels.rel.sum()  # every added row is non-relevant
    exp = grid(files)
    depths = {c.strategy: c.depth for c in exp.tasks(load(files).info)[0].cells}
    assert depths == {"uniform": 100.0, "2strata": 20.0, "pool10": 10.0}
    data = load(files)
    frame = data.frame(data.info.pooled_runs, 10)
    assert frame.best_rank.max() <= 10 and len(frame) < len(data.frame(data.info.pooled_runs, 20))


def test_restricted_collection_evaluates_like_the_full_one(files):
    data = load(files)
    runs = (6, 1, 3)
    sub = restrict_runs(data.collection, runs)
    measures = parse_all(["AP", "nDCG"])
    full = evaluate_collection(data.collection, data.judgments, measures)
    part = evaluate_collection(sub, data.judgments, measures)
    assert sub.run_names == ("r6", "r1", "r3")
    np.testing.assert_array_equal(part.values, full.values[list(runs)])


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_write_and_read(tmp_path, sequential, fmt):
    written = sequential.write(tmp_path / "out" / "exp", format=fmt)
    names = [f"exp.runs.{fmt}", f"exp.trials.{fmt}", "exp.settings.json"]
    assert [p.name for p in written] == names
    back = ExperimentResult.read(tmp_path / "out" / "exp", format=fmt)
    pd.testing.assert_frame_equal(back.trials, sequential.trials, check_exact=False)
    assert back.settings == json.loads(json.dumps(sequential.settings))
    assert back.settings["strategies"][1]["settings"] == {"-": "stratified(1-5:1,6-20:0.3)"}
    assert back.settings["seed"] == 11 and back.settings["trials"] == 2
    if fmt == "parquet":
        meta = pq.read_schema(written[0]).metadata[b"irsample.settings"]
        assert json.loads(meta) == back.settings


def test_readers_and_run_info(tmp_path, paths):
    assert read_pooled_flags(paths["pooled"])["r1"] is False
    assert read_run_groups(paths["groups"])["r4"] == "g1"
    (tmp_path / "pids").write_text("r0 alpha\n\nr1 beta\n")
    assert read_run_groups(tmp_path / "pids") == {"r0": "alpha", "r1": "beta"}
    (tmp_path / "bad").write_text("r0 judged\nr1 maybe\n")
    with pytest.raises(InputError, match=r"bad:2"):
        read_pooled_flags(tmp_path / "bad")
    with pytest.raises(InputError, match="do not name 1 runs: r2"):
        run_info(["r0", "r1", "r2"], pooled={"r0": True, "r1": False})
    with pytest.raises(InputError, match="r2; they name 1 that are not among the runs: r9"):
        run_info(["r0", "r1", "r2"], pooled={"r0": True, "r1": False, "r9": True})
    info = run_info(["a", "b"])
    assert info.pooled == (True, True) and info.groups == ("a", "b")


def test_qrels_of_other_topics_are_refused_naming_the_files(tmp_path, paths):
    (tmp_path / "other.qrels").write_text("z9 0 d1 1\n")
    with pytest.raises(InputError, match=r"r0\.txt: run 'r0' has no topic in common with the "
                       r"qrels \(.*other\.qrels; topic ids compare as text"):
        load(CollectionFiles.of(paths["runs"], tmp_path / "other.qrels"))


def test_experiment_validation(files):
    with pytest.raises(MeasureError, match="unknown measure"):
        grid(files, measures={"noSuchMeasure": "AP"})
    with pytest.raises(ValueError, match="distinct names"):
        grid(files, strategies=[strategy("a", uniform(0.5)), strategy("a", uniform(0.6))])
    with pytest.raises(ValueError, match="seed"):
        grid(files, seed=None)
    with pytest.raises(ValueError, match="unknown split"):
        grid(files, splits=["thirds"])
    with pytest.raises(ValueError, match="executor"):
        grid(files).run(executor="threads")
    with pytest.raises(TypeError):
        strategy("u", uniform)


@pytest.mark.shared
def test_trec8_splits_and_truth(shared):
    base = shared / "data" / "trec8-adhoc"
    files = CollectionFiles.of(base / "runs", base / "qrels.trec8.adhoc",
                               pooled=base / "run-pooled-flag.txt", groups=base / "runs-pids")
    data = load(files)
    info = data.info
    assert len(info.names) == 129 and len(info.pooled_runs) == 71 and len(set(info.groups)) == 41
    (half,) = RandomHalves().splits(info, trial=0, seed=2014)
    assert len(half.pool) == 35 and set(half.pool) <= set(info.pooled_runs)
    logo = LeaveOneGroupOut().splits(info, trial=0, seed=0)
    assert len(logo) == len({info.groups[r] for r in info.pooled_runs})
    assert sum(len(s.evaluate) for s in logo) == sum(
        1 for g in info.groups if g in {info.groups[r] for r in info.pooled_runs})
    # the qrels are the depth-100 pool of the 71 pooled runs; a half's pool is inside it
    assert len(data.frame(info.pooled_runs, 100)) == len(data.qrels.rel)
    assert 0 < len(data.frame(half.pool, 100)) < len(data.qrels.rel)
    # the truth is the official MAP
    lines = (base / "official-scores.map").read_text().splitlines()
    official = dict(line.split() for line in lines)
    truth = data.truth(("AP",)).summary[:, 0]
    worst = max(abs(truth[i] - float(official[n])) for i, n in enumerate(info.names))
    assert worst <= 5e-5
    # so the frame truth of the pooled runs' depth-100 pool is the qrels truth, exactly; a
    # half's pool misses relevant documents, so its frame truth differs
    measures = ("AP", "nDCG", "P@10")
    np.testing.assert_array_equal(data.frame_truth(info.pooled_runs, 100, measures).values,
                                  data.truth(measures).values)
    half_truth = data.frame_truth(half.pool, 100, ("AP",)).summary[:, 0]
    # (not run by run: a run outside the half loses relevant documents it ranks high)
    assert np.mean(half_truth - truth) > 0.001 and np.any(half_truth < truth)


def test_truth_is_the_frame_truth_and_the_qrels_truth_is_kept(files):
    """Halves: the truth is the measure on the qrels restricted to the half's pool (depth 100),
    for pooled and unpooled runs alike; ``truth_qrels`` is the complete qrels' measure, and a
    shallow pool strategy is judged against the depth-100 frame it samples, not its own pool."""
    exp = Experiment(collection=files, strategies=[strategy("pool5", stratified("1-5:1"))],
                     measures={"xinfAP": "AP", "infNDCG": "nDCG"}, splits=["halves"],
                     trials=3, seed=5, ci=None)
    result = exp.run(executor="sequential", progress=False)
    data = load(files)
    complete = data.truth(("AP", "nDCG")).summary
    differs = 0
    for task in exp.tasks(data.info):
        (cell,) = task.cells
        assert cell.depth == 5.0 and cell.truth_depth == 100.0
        frame = data.frame(task.split.pool, 100)
        expected = evaluate_collection(data.collection, frame.judgments(),
                                       parse_all(["AP", "nDCG"])).summary
        rows = result.runs[result.runs.trial == task.trial]
        for j, name in enumerate(("xinfAP", "infNDCG")):
            r = rows[rows.measure == name]
            index = [data.info.names.index(n) for n in r.run]
            np.testing.assert_allclose(r.truth, expected[index, j], rtol=0, atol=1e-15)
            np.testing.assert_allclose(r.truth_qrels, complete[index, j], rtol=0, atol=1e-15)
            differs += int(np.sum(np.abs(r.truth.to_numpy() - r.truth_qrels.to_numpy()) > 1e-9))
    assert differs > 0  # a half's pool misses relevant documents of the qrels
    tr = result.trials
    assert tr.accuracy.notna().all() and tr.accuracy_qrels.notna().all()
    assert tr.rms_qrels.notna().all() and tr.kendall_tau_qrels.notna().all()


@pytest.mark.parametrize("name", ["vaswani", "cacm"])
def test_bundled_frames_are_run_pools_graded_by_the_qrels(name):
    """Vaswani's and CACM's qrels list relevant documents only: the frame is the runs' depth-100
    pool (judged topics), unlisted documents non-relevant; its truth is above the qrels truth
    (relevant documents outside the pool count for the qrels only)."""
    from importlib import resources

    root = resources.files("irsample") / "data" / name
    files = CollectionFiles.of(str(root / "runs"), str(root / "qrels.gz"))
    data = load(files)
    frame = data.frame(data.info.pooled_runs, 100)
    pool = Pool.from_runs(data.collection, list(data.info.pooled_runs), depth=100)
    topic, _ = data.collection.lookup(data.qrels.qid, data.qrels.docno)
    judged_topics = np.unique(topic[topic >= 0])
    assert len(frame) == int(np.isin(pool.topic, judged_topics).sum())
    assert 0 < int((frame.rel > 0).sum()) < int((data.qrels.rel > 0).sum())
    framed = data.frame_truth(data.info.pooled_runs, 100, ("AP",)).summary[:, 0]
    complete = data.truth(("AP",)).summary[:, 0]
    assert np.all(framed >= complete) and 0.03 < np.mean(framed - complete) < 0.1
