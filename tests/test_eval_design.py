"""``irsample eval --design design.json JUDGED RUNS`` (and ``compare``, ``judge-report``): the
judgments of a design's selected documents read with the design's strata and inclusion
probabilities at once (``merge`` writes either, not both), so that the estimators see what the
design's draw in Python gives them, and ppi(M) on a planned design can draw the design again on
the labels (``centre="design"``)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import irsample
from irsample.comparison import compare_collection
from irsample.design import Pool, SamplingFrame, parse_design
from irsample.evaluation import evaluate_collection
from irsample.io import read_qrels
from irsample.io.labels import read_labels
from irsample.measures import EvalContext, parse_all
from irsample.measures.ppi.estimate import ppi_estimate
from irsample.measures.ppi.redraw import cell_design

from .test_cli_design import cli, files  # noqa: F401 - the shared synthetic files fixture
from .test_cli_plan import _judge


def _json_values(text):
    """{(run, topic, measure): value} of ``--format json -q`` output."""
    out = {}
    for run, topics in json.loads(text).items():
        for topic, values in topics.items():
            for name, value in values.items():
                out[run, topic, name] = value["value"] if isinstance(value, dict) else value
    return out


def _drawn(capsys, files, tmp_path, design="1-10:1,11-100:0.2"):  # noqa: F811
    """A design drawn by ``irsample sample`` (seed 5) and the truth's judgments of its selected
    documents: (design file, judged qrels, the same draw's Judgments in Python)."""
    collection, table, runs, _ = files
    out = tmp_path / "out"
    assert cli(capsys, "sample", *runs, "--design", design, "--seed", 5, "-o", out)[0] == 0
    judged = tmp_path / "judged.qrels"
    _judge(out / "to_judge.tsv", table, judged)
    frame = SamplingFrame.from_pool(Pool.from_runs(collection, depth=100), table)
    return out / "design.json", judged, parse_design(design).sample(frame, rng=5)


def test_design_gives_the_estimators_the_designs_own_draw(capsys, files, tmp_path):  # noqa: F811
    collection, _, runs, _ = files
    design, judged, sample = _drawn(capsys, files, tmp_path)
    names = ["ht(AP)", "ht(nDCG)", "xinfAP", "statAP"]
    rc, text, err = cli(capsys, "eval", judged, *runs, "--design", design,
                        *[a for n in names for a in ("-m", n)], "-q", "--format", "json",
                        "--places", "exact")
    assert rc == 0, err
    got = _json_values(text)
    direct = evaluate_collection(collection, sample, parse_all(names))
    compared = 0
    for r, run in enumerate(direct.run_names):
        for t, topic in enumerate(direct.topics):
            for k, m in enumerate(direct.measures):
                name = m.name
                if (run, topic, name) in got and np.isfinite(direct.values[r, t, k]):
                    assert got[run, topic, name] == pytest.approx(direct.values[r, t, k],
                                                                  rel=1e-12, abs=1e-15)
                    compared += 1
    assert compared == len(direct.run_names) * len(direct.topics) * len(names)


def test_planned_design_can_be_redrawn_from_the_design_file(capsys, files, tmp_path):  # noqa: F811
    collection, table, runs, qrels = files
    truth = read_qrels(qrels)
    judged = tmp_path / "judged.qrels"
    assert cli(capsys, "plan", *runs, "--budget", 150, "--pilot", 30, "-o",
               tmp_path / "pilot.json")[0] == 0
    assert cli(capsys, "sample", *runs, "--design", tmp_path / "pilot.json", "--seed", 1,
               "-o", tmp_path / "r1")[0] == 0
    _judge(tmp_path / "r1" / "to_judge.tsv", truth, judged)
    assert cli(capsys, "plan", *runs, "--budget", 150, "--design", tmp_path / "r1" / "design.json",
               "--judged", judged, "-o", tmp_path / "plan.json")[0] == 0
    assert cli(capsys, "sample", *runs, "--design", tmp_path / "plan.json", "--seed", 2, "-o",
               tmp_path / "r2")[0] == 0
    _judge(tmp_path / "r2" / "to_judge.tsv", truth, judged)
    labels = tmp_path / "labels"  # the truth with every grade-2 document called 1
    labels.write_text("".join(f"{q.decode()} Q0 {d.decode()} {min(int(r), 1)}\n" for q, d, r in
                              zip(truth.qid.to_pylist(), truth.docno.to_pylist(), truth.rel)))
    design = tmp_path / "r2" / "design.json"
    rc, text, err = cli(capsys, "eval", judged, *runs, "--design", design, "-m", "ppi(AP)",
                        "--auto-labels", labels, "--ci", "0.95", "--format", "json", "-q",
                        "--places", "exact")
    assert rc == 0, err
    got = _json_values(text)
    col, judgments = irsample.load(str(judged), [str(r) for r in runs], design=str(design))
    assert judgments.stratum_labels == tuple(sorted(set(
        json.loads(design.read_text())["strata"][i]["label"]
        for i in range(len(json.loads(design.read_text())["strata"])))))
    ctx = EvalContext(col, judgments)
    assert cell_design(ctx) is not None  # every pooled document's cell and pi
    auto = read_labels(str(labels), col)
    estimate = ppi_estimate(ctx, auto, "AP")
    centred = ppi_estimate(ctx, auto, "AP", centre="design")  # the design can be drawn again
    assert np.any(centred.value != estimate.value)
    # prels of the same judgments keep the probabilities but not the cells: no redraw
    prels = tmp_path / "s.prels"
    assert cli(capsys, "merge", design, judged, "--format", "prels", "-o", prels)[0] == 0
    assert cell_design(EvalContext(*irsample.load(str(prels), [str(r) for r in runs]))) is None
    seg = {(col.run_names[s // col.n_topics], col.topics[s % col.n_topics]): s
           for s in range(ctx.n_seg)}
    compared = 0
    for (run, topic, name), value in got.items():
        if name == "ppi(AP)" and (run, topic) in seg:
            assert value == pytest.approx(estimate.value[seg[run, topic]], rel=1e-12, abs=1e-15)
            compared += 1
    assert compared == ctx.n_seg


def test_compare_with_the_design_compares_on_the_designs_own_draw(capsys, files, tmp_path):  # noqa: F811
    collection, _, runs, _ = files
    design, judged, direct = _drawn(capsys, files, tmp_path)
    for measure in ("ht(AP)", "ht(nDCG)"):
        rc, text, err = cli(capsys, "compare", judged, *runs, "--design", design, "-m", measure,
                            "--format", "json")
        assert rc == 0, err
        got = [json.loads(line) for line in text.splitlines()]
        expected = compare_collection(collection, direct, measure)
        assert len(got) == len(expected) == 6  # every pair of the four runs
        for row, want in zip(got, expected.itertuples(index=False)):
            assert (row["run_a"], row["run_b"], row["status"]) == (want.run_a, want.run_b,
                                                                   want.status)
            for key in ("diff", "se", "low", "high", "p"):
                assert row[key] == pytest.approx(getattr(want, key), rel=1e-12, abs=1e-15)
    # the Python API takes the design as load does
    pairs = irsample.compare(str(judged), [str(r) for r in runs], "ht(AP)", design=str(design))
    assert np.allclose(pairs["diff"], compare_collection(collection, direct)["diff"],
                       rtol=1e-12, atol=1e-15)


def test_judge_report_with_the_design_reads_the_designs_own_draw(capsys, files, tmp_path):  # noqa: F811
    collection, table, runs, _ = files
    design, judged, direct = _drawn(capsys, files, tmp_path)
    labels = tmp_path / "labels"  # the truth with the grades of one topic turned over
    first = collection.topics[0]
    labels.write_text("".join(
        f"{q.decode()} Q0 {d.decode()} {int(r > 0) ^ (q.decode() == first)}\n"
        for q, d, r in zip(table.qid.to_pylist(), table.docno.to_pylist(), table.rel)))
    rc, text, err = cli(capsys, "judge-report", judged, *runs, "--design", design,
                        "--auto-labels", labels, "-m", "AP")
    assert rc == 0, err
    rows = [line.split("\t") for line in text.split("per run:")[1].splitlines()[2:]]
    auto = read_labels(str(labels), collection)
    ev = evaluate_collection(collection, direct, parse_all(["ppi(AP)"]), ci=0.95,
                             auto_labels=auto)
    assert [r[0] for r in rows] == list(collection.run_names)
    for r, row in enumerate(rows):
        assert float(row[3]) == pytest.approx(ev.summary[r, 0], abs=5e-5)  # printed to 4 places
        assert row[10] == ev.statuses.status[r, 0]


@pytest.mark.parametrize("command", ["eval", "compare", "judge-report"])
def test_design_takes_trec_qrels_only(capsys, files, tmp_path, command):  # noqa: F811
    """A judgment the design did not select: ``test_cli_design.py``, bad judgments."""
    _, _, runs, _ = files
    judged = tmp_path / "judged"
    judged.write_text("q0 0 d1 1\n")
    extra = ["--auto-labels", "fusion"] if command == "judge-report" else []
    rc, out, err = cli(capsys, command, judged, *runs, "--design", tmp_path / "design.json",
                       "--qrels-format", "strata", "-m", "ht(AP)" if command != "judge-report"
                       else "AP", *extra)
    assert rc == 1 and not out and "--design: QRELS are the assessors' TREC qrels" in err
