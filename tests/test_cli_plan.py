"""``irsample plan``: pilot -> sample -> judge -> plan -> sample -> merge -> eval, the batch and
target modes, and errors that write nothing."""

from __future__ import annotations

import json

import numpy as np
import pytest

from irsample.design import DesignRecord, Pool
from irsample.design.planner.plan import pilot as pilot_design
from irsample.io import read_qrels

from .test_cli_design import cli, files  # noqa: F401 - the shared synthetic files fixture


def _judge(to_judge, truth, out):
    """Append the true grades of a to-judge list to the qrels file ``out``."""
    grade = {(q.decode(), d.decode()): int(r)
             for q, d, r in zip(truth.qid.to_pylist(), truth.docno.to_pylist(), truth.rel)}
    lines = to_judge.read_text().splitlines()[1:]
    with open(out, "a") as f:
        for line in lines:
            q, d = line.split("\t")
            f.write(f"{q} 0 {d} {grade.get((q, d), 0)}\n")
    return len(lines)


def test_pilot_plan_sample_merge_eval(capsys, files, tmp_path):  # noqa: F811
    collection, table, runs, qrels = files
    truth = read_qrels(qrels)
    judged = tmp_path / "judged.qrels"
    rc, out, err = cli(capsys, "plan", *runs, "--budget", 150, "--pilot", 30,
                       "-o", tmp_path / "pilot.json")
    assert rc == 0, err
    assert "pilot of 30 judgments" in out
    rc, out, err = cli(capsys, "sample", *runs, "--design", tmp_path / "pilot.json", "--seed", 1,
                       "-o", tmp_path / "r1")
    assert rc == 0, err
    assert _judge(tmp_path / "r1" / "to_judge.tsv", truth, judged) == 30
    rc, out, err = cli(capsys, "plan", *runs, "--budget", 150, "--design",
                       tmp_path / "r1" / "design.json", "--judged", judged, "--batch", 50,
                       "-o", tmp_path / "plan2.json")
    assert rc == 0, err
    assert "judged: 30 documents" in out and "plan for xinfAP: 80 judgments" in out
    # the plan names the estimator whose intervals are measured to be calibrated (or none)
    assert "\nintervals: report " in out and "benchmarks/demo_coverage.py" in out
    record = DesignRecord.read(tmp_path / "plan2.json")
    assert record.design.total == 80 and len(record.design.before) == 30
    assert 11 in record.design.edges  # the pilot's boundary is kept
    rc, out, err = cli(capsys, "sample", *runs, "--design", tmp_path / "plan2.json", "--seed", 2,
                       "-o", tmp_path / "r2")
    assert rc == 0, err
    assert _judge(tmp_path / "r2" / "to_judge.tsv", truth, judged) == 50
    rc, out, err = cli(capsys, "plan", *runs, "--budget", 150, "--design",
                       tmp_path / "r2" / "design.json", "--judged", judged, "-o",
                       tmp_path / "plan3.json")
    assert rc == 0, err
    rc, _, err = cli(capsys, "sample", *runs, "--design", tmp_path / "plan3.json", "--seed", 3,
                     "-o", tmp_path / "r3")
    assert _judge(tmp_path / "r3" / "to_judge.tsv", truth, judged) == 70
    rc, _, err = cli(capsys, "merge", tmp_path / "r3" / "design.json", judged, "--format",
                     "strata", "-o", tmp_path / "final.strata")
    assert rc == 0, err
    rc, out, err = cli(capsys, "eval", tmp_path / "final.strata", *runs, "-m", "xinfAP",
                       "--ci", "0.95")
    assert rc == 0, err
    values = {line.split()[0]: float(line.split()[2]) for line in out.splitlines()
              if not line.startswith("runid")  # several runs: each block starts with runid
              and "_status" not in line}
    assert 0 <= values["xinfAP_low"] <= values["xinfAP"] <= values["xinfAP_high"] <= 1
    rows = json.loads((tmp_path / "r3" / "design.json").read_text())["rows"]
    assert sum(row[5] for row in rows) == 150


def test_target_halfwidth_and_prior_plan(capsys, files, tmp_path):  # noqa: F811
    _, _, runs, _ = files
    rc, out, err = cli(capsys, "plan", *runs, "--target-halfwidth", 0.05, "--pilot", 0,
                       "--measure", "infNDCG", "-o", tmp_path / "t.json")
    assert rc == 0, err
    assert "target half-width 0.05" in out and "relevance from the runs-only prior" in out
    planned = DesignRecord.read(tmp_path / "t.json").design
    rc, out, err = cli(capsys, "plan", *runs, "--budget", planned.total, "--pilot", 0,
                       "--measure", "infNDCG", "-o", tmp_path / "b.json")
    half = float(out.split("mean infNDCG: ")[1].split()[0])
    assert half <= 0.05
    rc, out, err = cli(capsys, "plan", *runs, "--budget", 40, "--target-halfwidth", 0.0001,
                       "--pilot", 0, "-o", tmp_path / "c.json")
    assert rc == 0 and "more than the budget of 40: planned the budget" in out
    assert DesignRecord.read(tmp_path / "c.json").design.total == 40


@pytest.mark.parametrize("argv, message", [
    ((), "give --budget N"),
    (("--budget", 100, "--judged", "x.qrels"), "--design and --judged go together"),
    (("--budget", 1), "a pilot needs between"),
    (("--budget", 0), "must be an integer >= 1"),
    (("--budget", 100, "--measure", "infAP"), "invalid choice"),
])
def test_errors_write_nothing(capsys, files, tmp_path, argv, message):  # noqa: F811
    _, _, runs, _ = files
    out = tmp_path / "p.json"
    with pytest.raises(SystemExit) if "invalid" in message or ">=" in message else _nothing():
        rc, _, err = cli(capsys, "plan", *runs, *argv, "-o", out)
        assert rc != 0 and message in err
    if "invalid" in message or ">=" in message:
        assert message in capsys.readouterr().err
    assert not out.exists()


def test_unjudged_selected_documents_are_refused(capsys, files, tmp_path):  # noqa: F811
    collection, table, runs, qrels = files
    rc, _, err = cli(capsys, "plan", *runs, "--budget", 100, "--pilot", 20, "-o",
                     tmp_path / "pilot.json")
    cli(capsys, "sample", *runs, "--design", tmp_path / "pilot.json", "--seed", 1, "-o",
        tmp_path / "r1")
    partial = tmp_path / "partial.qrels"
    _judge(tmp_path / "r1" / "to_judge.tsv", read_qrels(qrels), partial)
    partial.write_text("".join(partial.read_text().splitlines(keepends=True)[:-3]))
    rc, _, err = cli(capsys, "plan", *runs, "--budget", 100, "--design",
                     tmp_path / "r1" / "design.json", "--judged", partial, "-o",
                     tmp_path / "p.json")
    assert rc == 1 and "3 documents the design selected have no judgment" in err
    assert "design.json" in err and not (tmp_path / "p.json").exists()


def test_batch_alone_plans_b_more_after_the_judged(capsys, files, tmp_path):  # noqa: F811
    """`plan --batch B --design D --judged J` plans B judgments more than J holds, without a
    budget (it said 'give --budget N, --target-halfwidth W, or both'); --batch without a
    design to add to is still refused, naming --batch."""
    _, table, runs, qrels = files
    cli(capsys, "plan", *runs, "--budget", 100, "--pilot", 20, "-o", tmp_path / "pilot.json")
    cli(capsys, "sample", *runs, "--design", tmp_path / "pilot.json", "--seed", 1, "-o",
        tmp_path / "r1")
    judged = tmp_path / "judged.qrels"
    _judge(tmp_path / "r1" / "to_judge.tsv", read_qrels(qrels), judged)
    n = len(judged.read_text().splitlines())
    rc, out, err = cli(capsys, "plan", *runs, "--batch", 30, "--design",
                       tmp_path / "r1" / "design.json", "--judged", judged, "-o",
                       tmp_path / "b.json")
    assert rc == 0, err
    assert DesignRecord.read(tmp_path / "b.json").design.total == n + 30
    rc, _, err = cli(capsys, "plan", *runs, "--batch", 30, "-o", tmp_path / "c.json")
    assert rc == 1 and "--batch B with --design and --judged" in err


def test_pilot_design_keeps_equal_shares(files):  # noqa: F811
    collection, _, _, _ = files
    pool = Pool.from_runs(collection, depth=100)
    design = pilot_design(pool, 31)
    per_topic = [sum(k) for _, k in design.take]
    assert sum(per_topic) == 31 and max(per_topic) - min(per_topic) <= 1
    sample = design.select(pool, rng=np.random.default_rng(0))
    assert int(sample.judged.sum()) == 31


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_ci_sets_the_confidence_level_and_level_is_the_relevance_level(capsys, files, tmp_path):  # noqa: F811
    """``plan --ci`` is the confidence level of the predicted half-width (as ``eval --ci``);
    ``-l/--level`` is the relevance level, as in ``eval`` (judging in rounds reads it), so a
    confidence level given there is refused."""
    from irsample.stats import z

    _, _, runs, _ = files
    halves = {}
    for level in (None, 0.5):
        extra = () if level is None else ("--ci", level)
        rc, out, err = cli(capsys, "plan", *runs, "--budget", 60, "--pilot", 0, *extra,
                           "-o", tmp_path / f"{level}.json")
        assert rc == 0, err
        halves[level] = float(out.split("mean xinfAP: ")[1].split()[0])
    assert "predicted 50% half-width" in out
    assert halves[0.5] == pytest.approx(halves[None] * z(0.5) / z(0.95), rel=2e-3)  # 4 places
    with pytest.raises(SystemExit):
        cli(capsys, "plan", *runs, "--budget", 60, "--level", 0.9, "-o", tmp_path / "x.json")
    assert "argument -l/--level: not an integer: '0.9'" in capsys.readouterr().err
