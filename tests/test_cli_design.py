"""``irsample pool / sample / merge``: outputs, errors that write nothing, and the round trip
sample -> judge with the true qrels -> merge -> estimators = the estimators of the Judgments the
design draws directly (``design.sample(frame)``)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from irsample.cli import main
from irsample.design import Pool, SamplingFrame, parse_design
from irsample.evaluation import evaluate_collection
from irsample.io import load_qrels, load_runs, write_qrels
from irsample.measures import parse_all
from irsample.model import Collection, Judgments

from .synthetic import pooled_collection


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Four synthetic runs (3 topics, 200 deep) and their complete depth-100 qrels as files."""
    collection, table = pooled_collection(3, n_topics=3, n_runs=4)
    folder = tmp_path_factory.mktemp("synthetic")
    runs = []
    for r, name in enumerate(collection.run_names):
        lines = []
        for t, topic in enumerate(collection.topics):
            s = r * collection.n_topics + t
            a, b = collection.rank_offsets[s], collection.rank_offsets[s + 1]
            for i, doc in enumerate(collection.ranking(r, t)):
                lines.append(
                    f"{topic} Q0 {doc} {i + 1} {float(collection.rank_score[a + i])!r} {name}\n"
                )
            assert len(lines) and b - a == len(collection.ranking(r, t))
        runs.append(folder / f"{name}.run")
        runs[-1].write_text("".join(lines))
    qrels = folder / "qrels"
    write_qrels(table, qrels)
    return collection, table, runs, qrels


def cli(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_pool_lists_and_counts(capsys, files, tmp_path):
    collection, table, runs, _ = files
    rc, out, err = cli(capsys, "pool", *runs, "--depth", 100)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == "topic\tdocno\tbest_rank\truns" and len(lines) - 1 == len(table)
    groups = tmp_path / "groups"
    groups.write_text("r0 g1\nr1 g1\nr2 g2\nr3 g2\n")
    flags = tmp_path / "flags"
    flags.write_text("r0 judged\nr1 notjudged\nr2 judged\nr3 judged\n")
    rc, out, _ = cli(capsys, "pool", *runs, "--depth", 10, "--groups", groups, "--stats", "summary")
    summary = [line.split("\t") for line in out.splitlines()]
    assert summary[0] == ["topic", "size", "unique_run", "unique_group"] and summary[-1][0] == "all"
    pool = Pool.from_runs(
        collection, depth=10, groups={"r0": "g1", "r1": "g1", "r2": "g2", "r3": "g2"}
    )
    assert int(summary[-1][1]) == len(pool) and int(summary[-1][3]) == int(
        (pool.n_groups == 1).sum()
    )
    groups.write_text("r0 g1\nr1 g1\nr2 g2\n")  # r3 has none: the error names the map's file
    rc, out, err = cli(capsys, "pool", *runs, "--depth", 10, "--groups", groups)
    assert rc == 1 and out == "" and f"{groups}: no group for run(s) r3" in err
    rc, out, _ = cli(capsys, "pool", *runs, "--depth", 5, "--runs-from", flags, "--stats", "depth")
    rows = [line.split("\t") for line in out.splitlines()]
    assert rows[0] == ["topic", "depth", "size"] and len(rows) == 1 + 3 * 5
    three = Pool.from_runs(collection, ["r0", "r2", "r3"], depth=5)
    assert int(rows[5][2]) == int(three.pool_size()[0])


@pytest.mark.parametrize("design, formats", [
    ("2strata", ("strata", "prels", "trec")),
    ("terabyte(5)@120", ("strata", "trec")),
    ("uniform(0.3)@25/topic", ("strata", "prels", "trec")),
    ("importance(0.2)", ("prels", "trec")),
])
def test_sample_judge_merge_round_trip(capsys, files, tmp_path, design, formats):
    collection, table, runs, qrels = files
    out = tmp_path / "out"
    rc, report, err = cli(capsys, "sample", *runs, "--design", design, "--seed", 11, "-o", out)
    assert rc == 0, err
    assert report.startswith(f"{parse_design(design).name}: depth-100 pool of 4 runs, seed 11")
    todo = [line.split("\t") for line in (out / "to_judge.tsv").read_text().splitlines()[1:]]
    truth = dict(zip(zip(table.qid.to_pylist(), table.docno.to_pylist()), table.rel.tolist()))
    judged = tmp_path / "judged"
    judged.write_text("".join(f"{q} 0 {d} {truth[q.encode(), d.encode()]}\n" for q, d in todo))
    # the same draw in Python: a frame over the same pool, the same seed
    pool = Pool.from_runs(collection, depth=100)
    frame = SamplingFrame.from_pool(pool, table)
    chosen = parse_design(design).select(frame, rng=11).judged
    assert sorted(map(tuple, todo)) == sorted(
        (q, d) for q, d, j in zip(pool.qids(), pool.docnos(), chosen) if j
    )
    direct = parse_design(design).sample(frame, rng=11)
    measures = {"strata": ["xinfAP", "infNDCG"], "prels": ["statAP"], "trec": ["infAP"]}
    for fmt in formats:
        merged = tmp_path / f"merged.{fmt}"
        rc, _, err = cli(
            capsys, "merge", out / "design.json", judged, "--format", fmt, "-o", merged
        )
        assert rc == 0 and err.startswith("merge: "), err
        if fmt == "trec":  # the format drops the probabilities: a warning unless uniform
            kind = "note" if design.startswith("uniform") else "warning"
            assert err.splitlines()[1].startswith(f"irsample: {kind}: the trec format drops")
        if fmt == "prels" and design == "2strata":  # the strata are dropped: a note
            assert err.splitlines()[1].startswith("irsample: note: prels keep each document's")
        assert len(err.splitlines()) == 1 + (fmt == "trec" or (fmt, design) == ("prels",
                                                                               "2strata"))
        ms = parse_all(measures[fmt])
        got = load_qrels(str(merged), fmt)
        col = Collection.build(load_runs([str(r) for r in runs]), [got])
        a = evaluate_collection(col, Judgments.from_qrels(col, got), ms)  # infAP on trec
        b = evaluate_collection(collection, direct, ms)
        assert a.run_names == b.run_names and a.topics == b.topics
        np.testing.assert_allclose(a.values, b.values, rtol=1e-12, atol=1e-15, err_msg=fmt)
        assert np.isfinite(a.values).all()


def test_a_design_file_can_be_drawn_again(capsys, files, tmp_path):
    _, _, runs, _ = files
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"format": "irsample-design", "version": 1, "design": "3strata",
                                "runs": ["r1", "r3"], "depth": 50}))
    rc, report, err = cli(capsys, "sample", *runs, "--design", plan, "--budget", 40,
                          "--per-topic", "--seed", 1, "-o", tmp_path / "a")
    assert rc == 0, err
    assert report.startswith("3strata@40/topic: depth-50 pool of 2 runs, seed 1")
    data = json.loads((tmp_path / "a" / "design.json").read_text())
    assert data["runs"] == ["r1", "r3"] and data["depth"] == 50
    assert sum(row[5] for row in data["rows"]) == 3 * 40
    rc, _, err = cli(capsys, "sample", *runs, "--design", tmp_path / "a" / "design.json",
                     "--seed", 1, "-o", tmp_path / "b")
    assert rc == 0, err
    assert (tmp_path / "a" / "design.json").read_text() == (
        tmp_path / "b" / "design.json"
    ).read_text()


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--design", "2strata", "--budget", 100000],
            "budget of 100000 judgments is larger than the pool",
        ),
        (["--design", "1-10:1,11-:1.5"], r"rate must be a number in \(0, 1\]"),
        (["--design", "uniform(0.2)", "--per-topic"], "--per-topic needs --budget"),
        (  # the budget silently replaced the @5 before
            ["--design", "2strata@5", "--budget", 10],
            r"--design 2strata@5 sets a budget already \(@5\), and --budget 10 would override",
        ),
        (["--design", "2strata@5/topic", "--budget", 10, "--per-topic"], "sets a budget already"),
        (["--design", "nonsense"], "cannot read design"),
        # the planner judges as it goes: it asked for a budget, then named a SamplingFrame
        (["--design", "plan(statAP)", "--budget", 700], "plan a sample with `irsample plan`"),
        (["--design", "plan(xinfAP)@700"], "the planner judges as it goes"),
    ],
)
def test_bad_samples_fail_and_write_nothing(capsys, files, tmp_path, args, message):
    _, _, runs, _ = files
    out = tmp_path / "out"
    rc, _, err = cli(capsys, "sample", *runs, *args, "--seed", 1, "-o", out)
    assert rc == 1 and re.search(message, err), err
    assert not out.exists()


def test_unknown_runs_are_located(capsys, files, tmp_path):
    _, _, runs, _ = files
    flags = tmp_path / "flags"
    flags.write_text("# none of these is given\nr9 judged\nr8\n")
    rc, _, err = cli(capsys, "sample", *runs, "--design", "2strata", "--runs-from", flags,
                     "--seed", 1, "-o", tmp_path / "out")
    assert rc == 1 and f"{flags}:2: unknown run 'r9': the list names none of the runs given" \
        in err and not (tmp_path / "out").exists()
    roster = tmp_path / "roster"  # a roster of more runs than are given: those given are pooled
    roster.write_text("r0\nr9 judged\n")
    rc, out, err = cli(capsys, "pool", *runs, "--depth", 5, "--runs-from", roster)
    assert rc == 0 and out
    assert f"irsample: warning: {roster}:2: 1 of the 2 runs listed are not among the runs " \
        "given, so not pooled: r9" in err
    assert out == cli(capsys, "pool", runs[0], "--depth", 5)[1]
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"format": "irsample-design", "version": 1, "design": "2strata",
                                "runs": ["r0", "rX"]}))
    rc, _, err = cli(capsys, "sample", *runs, "--design", plan, "--seed", 1, "-o", tmp_path / "o")
    assert rc == 1 and f"{plan}: unknown run(s) in the design: rX" in err
    rc, _, err = cli(capsys, "pool", *runs, "--depth", 5, "--runs-from", flags)
    assert rc == 1 and "flags:2: unknown run 'r9'" in err


def test_bad_judgments_fail_and_write_nothing(capsys, files, tmp_path):
    _, _, runs, _ = files
    out = tmp_path / "out"
    assert cli(capsys, "sample", *runs, "--design", "pool5", "--seed", 1, "-o", out)[0] == 0
    first = (out / "to_judge.tsv").read_text().splitlines()[1].split("\t")
    judged = tmp_path / "judged"
    judged.write_text(f"{first[0]} 0 {first[1]} 1\n{first[0]} 0 not-a-pooled-doc 0\n")
    merged = tmp_path / "merged"
    rc, _, err = cli(capsys, "merge", out / "design.json", judged, "--format", "trec", "-o", merged)
    assert rc == 1 and f"{judged}:2: document 'not-a-pooled-doc'" in err and not merged.exists()
    rc, _, err = cli(capsys, "eval", judged, *runs, "--design", out / "design.json", "-m",
                     "ht(AP)", "-o", merged)  # eval --design merges as merge does
    assert rc == 1 and f"{judged}:2: document 'not-a-pooled-doc'" in err and not merged.exists()
    judged.write_text(f"{first[0]} 0 {first[1]} -2\n")  # was read as -1, not judged yet
    rc, _, err = cli(capsys, "merge", out / "design.json", judged, "--format", "strata", "-o",
                     merged)
    assert rc == 1 and f"{judged}:1: grade -2 of document" in err and not merged.exists()
    judged.write_text(f"{first[0]} 0 {first[1]} 1\n")  # partial: fine, reported
    rc, text, err = cli(capsys, "merge", out / "design.json", judged, "--format", "trec")
    assert rc == 0 and len(err.splitlines()) == 1
    assert "selected documents not judged yet (first: " in err
    assert text.count(" -1\n") == len(text.splitlines()) - 1
    rc, _, verbose = cli(capsys, "merge", out / "design.json", judged, "--format", "trec", "-v")
    assert rc == 0 and verbose.splitlines()[0] == "topic\tpool\tselected\tjudged\tunjudged"
    assert "selected documents are not judged yet" in verbose


def test_partly_judged_importance_prels_warn(capsys, files, tmp_path):
    """An importance sample's prels keep the design's pi, so selected documents not judged yet
    are read as not sampled and the estimates are biased (CACM importance(0.1), half judged:
    ht(num_rel) 232 against 597): merge says so, which it did not (only the summary line)."""
    _, table, runs, _ = files
    grade = {(q, d): r for q, d, r in zip(table.qid.to_pylist(), table.docno.to_pylist(),
                                           table.rel.tolist())}
    for design, warned in (("importance(0.5)", True), ("2strata", False)):
        out = tmp_path / design
        assert cli(capsys, "sample", *runs, "--design", design, "--seed", 1, "-o", out)[0] == 0
        rows = [line.split("\t") for line in (out / "to_judge.tsv").read_text().splitlines()[1:]]
        lines = [f"{q} 0 {d} {grade[q.encode(), d.encode()]}\n" for q, d in rows]
        judged = tmp_path / f"{design}.qrels"
        judged.write_text("".join(lines[::2]))  # half of the selection
        rc, _, err = cli(capsys, "merge", out / "design.json", judged, "--format", "prels")
        assert rc == 0 and ("are not judged yet; the prels keep" in err) == warned, err
        judged.write_text("".join(lines))
        rc, _, err = cli(capsys, "merge", out / "design.json", judged, "--format", "prels")
        assert rc == 0 and "the prels keep" not in err


def test_sample_names_the_floor_where_statap_leaves_deep_documents_unseen(capsys, tmp_path):
    """statAP's design at 10% of CACM's pool leaves some deep documents' pi below a tenth of
    their topic's rate: ``sample`` says so on standard error and names the floored design,
    which it does not say of that design (every pi about a tenth of the rate at least) nor of
    a stratified one."""
    from irsample.commands.demo import bundled

    _, runs = bundled("cacm")
    for design, noted in (("importance(0.1)", True), ("importance(0.1,floor=0.1)", False),
                          ("2strata", False)):
        rc, out, err = cli(capsys, "sample", *runs, "--design", design, "-o", tmp_path / design)
        assert rc == 0 and out.startswith(design), err
        assert ("--design 'importance(0.1,floor=0.1)' keeps every probability" in err) == noted
        if noted:
            record = json.loads((tmp_path / design / "design.json").read_text())
            pi = np.array([row[4] for row in record["rows"]])
            assert f"(the smallest {pi[pi > 0].min():.4f})" in err


def test_eval_notes_judgments_sampled_thinly_and_not_the_floored_designs(capsys, tmp_path):
    """statAP's design gives some deep pool documents a pi below 1/11 of the topic's judged
    share (CACM at 10%, seed 3: 70, none of them drawn): ``eval --ci`` and ``compare`` with
    ht(M) say so on standard error (the count, the smallest pi, the floored design), from the
    prels listing the pool or from the design file; for the floored design, and eval without
    intervals, they do not."""
    from irsample.commands.demo import bundled
    from irsample.io import read_qrels

    qrels, runs = bundled("cacm")
    table = read_qrels(qrels)
    grade = dict(zip(zip(table.qid.to_pylist(), table.docno.to_pylist()), table.rel.tolist()))
    for design, noted in (("importance(0.1)", True), ("importance(0.1,floor=0.1)", False)):
        out = tmp_path / design
        assert cli(capsys, "sample", *runs, "--design", design, "--seed", 3, "-o", out)[0] == 0
        rows = [line.split("\t") for line in (out / "to_judge.tsv").read_text().splitlines()[1:]]
        judged = tmp_path / f"{design}.qrels"
        judged.write_text("".join(f"{q} 0 {d} {grade.get((q.encode(), d.encode()), 0)}\n"
                                  for q, d in rows))
        prels = tmp_path / f"{design}.prels"
        assert cli(capsys, "merge", out / "design.json", judged, "--format", "prels", "-o",
                   prels)[0] == 0
        record = json.loads((out / "design.json").read_text())
        topic = np.array([row[0] for row in record["rows"]])
        pi = np.array([row[4] for row in record["rows"]])
        share = {t: np.mean([row[5] for row in record["rows"] if row[0] == t])
                 for t in set(topic)}  # n_t / N_t: selected (all judged) over the pool
        thin = int(((pi > 0) & (pi < np.array([share[t] for t in topic]) / 11)).sum())
        assert (thin > 0) == noted
        for args in (("--qrels-format", "prels", prels), ("--design", out / "design.json",
                                                           judged)):
            rc, text, err = cli(capsys, "eval", "-m", "ht(AP)", "--ci", 0.95, *args, *runs)
            assert rc == 0 and text, err
            assert ("sampled with an inclusion probability below 1/11" in err) == noted, err
            if noted:
                assert f": {thin} of {len(pi)} pooled documents are sampled" in err
                assert f"(the smallest {pi[pi > 0].min():.4f};" in err
                assert "importance(F,floor=0.1) keep every probability at that share" in err
        rc, _, err = cli(capsys, "eval", "-m", "ht(AP)", "--qrels-format", "prels", prels, *runs)
        assert rc == 0 and "below 1/11" not in err
        rc, _, err = cli(capsys, "compare", "--qrels-format", "prels", prels, *runs[:2])
        assert rc == 0 and ("below 1/11" in err) == noted, err


def test_a_design_file_given_through_a_pipe_is_read_as_a_file(capsys, files, tmp_path):
    """``sample --design <(cat design.json)`` took the path for a design name ("expected a
    strata spec like ..."): only regular files were read as design files."""
    import os
    import subprocess
    import threading

    _, _, runs, _ = files
    assert cli(capsys, "sample", *runs, "--design", "2strata", "--seed", 1, "-o",
               tmp_path / "d1")[0] == 0
    assert cli(capsys, "sample", *runs, "--design", tmp_path / "d1" / "design.json", "-o",
               tmp_path / "d2")[0] == 0
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"cat {tmp_path / 'd1' / 'design.json'} > {fifo}"])
    done = []  # in a daemon thread: a reader that opens the FIFO twice waits for ever
    worker = threading.Thread(daemon=True, target=lambda: done.append(cli(
        capsys, "sample", *runs, "--design", fifo, "-o", tmp_path / "d3")[0]))
    worker.start()
    worker.join(120)
    writer.kill()
    assert done == [0]
    assert (tmp_path / "d3" / "to_judge.tsv").read_text() == \
        (tmp_path / "d2" / "to_judge.tsv").read_text()
