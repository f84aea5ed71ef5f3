"""``irsample eval --auto-labels`` and ``irsample judge-report`` on the bundled Vaswani runs with a
simulated half-judged pool (no ../shared)."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

import irsample
from irsample.cli import main

VASWANI = Path(irsample.__file__).resolve().parent / "data" / "vaswani"
RUNS = [VASWANI / "runs" / "bm25_k1.2_b0.75.run.gz", VASWANI / "runs" / "tf_raw.run.gz",
        VASWANI / "runs" / "coord.run.gz"]


def _read(path):
    with gzip.open(path, "rt") as fh:
        return [line.split() for line in fh if line.strip()]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Sampled qrels (half of the depth-20 pool judged, -1 for the rest), true-grade labels, and
    labels that also call every top-5 document of tf_raw relevant."""
    out = tmp_path_factory.mktemp("ppi")
    relevant = {(q, d) for q, _, d, r in _read(VASWANI / "qrels.gz") if int(r) > 0}
    pool, tf_top = {}, set()
    for path in RUNS:
        for q, _, d, rank, *_ in _read(path):
            if int(rank) <= 20 and int(q) <= 30:
                pool.setdefault((q, d), int((q, d) in relevant))
            if path.name.startswith("tf_raw") and int(rank) <= 5 and int(q) <= 30:
                tf_top.add((q, d))
    rng = np.random.default_rng(0)
    keys = sorted(pool)
    judged = rng.random(len(keys)) < 0.5
    (out / "sample.qrels").write_text("".join(
        f"{q} 0 {d} {pool[(q, d)] if j else -1}\n" for (q, d), j in zip(keys, judged)))
    (out / "true.labels").write_text("".join(f"{q} Q0 {d} {pool[(q, d)]}\n" for q, d in keys))
    (out / "biased.labels").write_text("".join(
        f"{q} Q0 {d} {1 if (q, d) in tf_top else pool[(q, d)]}\n" for q, d in keys))
    (out / "prob.labels").write_text("".join(
        f"{q} Q0 {d} {0.9 if pool[(q, d)] else 0.2}\n" for q, d in keys))
    (out / "bad.labels").write_text("1 Q0 doc1 0.5\n1 Q0 doc2 7.5\n")
    return out


def cli(capsys, *argv):
    """The command line; the sample is a Bernoulli half of the pool in TREC qrels, which carry
    no inclusion probabilities: its design is stated with --assume uniform."""
    if argv[0] in ("eval", "judge-report"):
        argv = (*argv, "--assume", "uniform")
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_eval_with_true_labels_gives_the_pool_measure_with_a_zero_width_interval(files, capsys):
    rc, out, err = cli(capsys, "eval", files / "sample.qrels", *RUNS, "-m", "ppi(AP)", "-m", "P@10",
                       "--auto-labels", files / "true.labels", "--ci", "0.95")
    assert rc == 0, err
    values = {}
    for line in out.splitlines():
        name, _, value = line.split()
        if name not in ("runid", "assume") and not name.endswith("_status"):  # not numbers
            values.setdefault(name, []).append(float(value))
    assert len(values["ppi(AP)"]) == 3
    np.testing.assert_allclose(values["ppi(AP)_low"], values["ppi(AP)"])
    np.testing.assert_allclose(values["ppi(AP)_high"], values["ppi(AP)"])


def test_eval_auto_only_warns_that_it_is_uncorrected(files, capsys):
    rc, out, err = cli(capsys, "eval", files / "sample.qrels", *RUNS, "-m", "auto(AP)",
                       "--auto-labels", files / "biased.labels")
    assert rc == 0
    assert "uncorrected" in err and "auto(AP)" in out


def test_eval_with_fusion_labels(files, capsys):
    rc, out, err = cli(capsys, "eval", files / "sample.qrels", *RUNS, "-m", "ppi(nDCG@10)",
                       "--auto-labels", "fusion", "--ci", "0.9")
    assert rc == 0, err
    assert "ppi(nDCG@10)_low" in out


def test_ppi_without_labels_and_bad_labels_are_errors(files, capsys):
    rc, _, err = cli(capsys, "eval", files / "sample.qrels", *RUNS, "-m", "ppi(AP)")
    assert rc == 1 and "automatic labels" in err
    rc, out, err = cli(capsys, "eval", files / "sample.qrels", *RUNS, "-m", "ppi(AP)",
                       "--auto-labels", files / "bad.labels")
    assert rc == 1 and out == "" and f"{files / 'bad.labels'}:2" in err


def test_judge_report_agreement_and_flags(files, capsys):
    rc, out, err = cli(capsys, "judge-report", files / "sample.qrels", *RUNS,
                       "--auto-labels", files / "true.labels", "-m", "AP")
    assert rc == 0, err
    assert out.startswith("# assume uniform\n") and "cohen_kappa\t1.0000" in out
    assert "favoured" not in out.split("per run")[1]
    rc, out, err = cli(capsys, "judge-report", files / "sample.qrels", *RUNS,
                       "--auto-labels", files / "biased.labels", "-m", "AP", "-m", "P@10")
    assert rc == 0, err
    kappa = float(out.split("cohen_kappa\t")[1].split("\t")[0])
    assert kappa < 1.0
    lines = [line.split("\t") for line in out.split("per run")[1].splitlines()[2:]]
    flags = {(cells[0], cells[1]): cells[9] for cells in lines}
    assert {cells[10] for cells in lines} <= {"ok", "unreliable"}
    assert flags[("tf_raw", "P@10")] == "favoured"
    assert float(next(c for c in lines if c[:2] == ["tf_raw", "P@10"])[6]) > 0
    rc, evaluated, err = cli(capsys, "eval", files / "sample.qrels", *RUNS, "--auto-labels",
                             files / "biased.labels", "-m", "ppi(AP)", "-m", "ppi(P@10)",
                             "--ci", "0.95", "--format", "tsv")
    assert rc == 0, err
    limits = {(r, m): (v, lo, hi) for r, _, m, v, lo, hi, *_ in
              (x.split("\t") for x in evaluated.splitlines()[1:])}
    for cells in lines:  # ppi's interval is eval's (AP's on the logit scale: not symmetric)
        auto, est, lo, hi, diff, dlo, dhi = map(float, cells[2:9])
        v, elo, ehi = limits[(cells[0], f"ppi({cells[1]})")]
        assert (f"{est:.4f}", f"{lo:.4f}", f"{hi:.4f}") == tuple(
            f"{float(x):.4f}" for x in (v, elo, ehi))
        assert abs(dlo - (auto - hi)) < 2e-4 and abs(dhi - (auto - lo)) < 2e-4


def test_judge_report_says_how_probabilities_and_grades_are_folded(files, capsys):
    rc, out, err = cli(capsys, "judge-report", files / "sample.qrels", *RUNS,
                       "--auto-labels", files / "prob.labels", "-m", "AP")
    assert rc == 0, err
    assert ("confusion (rows: human grade >= 1 as 1, else 0; columns: labelled relevant as 1, "
            "else 0 (per topic the round(sum p) documents of highest p, as the estimators read "
            "the labels))") in out
    # p 0.9 on relevant documents, 0.2 on the others: round(sum p) a topic takes some of the
    # others too, as the estimators read these labels, so they do not agree perfectly
    assert float(out.split("cohen_kappa\t")[1].split("\t")[0]) < 1.0


def test_labels_of_no_pooled_document_are_warned_about(files, capsys, tmp_path):
    """A label file whose ids match no pooled document (another collection's) leaves every
    document labelled 0: ppi(M) is then ht(M), said on standard error."""
    stray = tmp_path / "stray.labels"
    stray.write_text("999 Q0 nodoc 1\n")
    rc, out, err = cli(capsys, "eval", files / "sample.qrels", *RUNS, "-m", "ppi(P@10)",
                       "--auto-labels", stray, "--ci", "0.95")
    assert rc == 0 and "ppi(P@10)" in out
    assert f"{stray}: no pooled document has a label" in err and "ppi(M) is ht(M)" in err
    rc, _, err = cli(capsys, "eval", files / "sample.qrels", *RUNS, "-m", "ppi(P@10)",
                     "--auto-labels", files / "true.labels", "--ci", "0.95")
    assert rc == 0 and "no pooled document has a label" not in err


def test_judge_report_warns_of_unmatched_labels_and_reads_the_level(files, capsys, tmp_path):
    """judge-report as eval: labels naming no pooled document are warned about; with -l 2 on
    binary judgments a warning says nothing is relevant, and the agreement is read at that
    level too (it compared the grades at level 1 while the per-run lines read level 2)."""
    stray = tmp_path / "stray.labels"
    stray.write_text("999 Q0 nodoc 1\n")
    rc, _, err = cli(capsys, "judge-report", files / "sample.qrels", *RUNS, "--auto-labels",
                     stray, "-m", "AP")
    assert rc == 0 and f"{stray}: no pooled document has a label" in err
    rc, out, err = cli(capsys, "judge-report", files / "sample.qrels", *RUNS, "--auto-labels",
                       files / "true.labels", "-m", "AP", "-l", "2")
    assert rc == 0 and "no judged document is graded 2 or more (-l 2)" in err
    assert "rows: human grade >= 2 as 1, else 0; columns: label >= 2" in out
    rc, out, err = cli(capsys, "judge-report", files / "sample.qrels", *RUNS, "--auto-labels",
                       files / "true.labels", "-m", "AP")
    assert rc == 0 and err == "" and "label >= " not in out
