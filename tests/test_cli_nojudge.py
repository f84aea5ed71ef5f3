"""``irsample nojudge`` and ``irsample infer-qrels``: outputs on hand-made files, and bad input
(clear message, exit 1, nothing written)."""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pytest

from irsample.cli import main
from irsample.design.nojudge.infer import expected_ap

# topic 1: r1 a b c, r2 b c d, r3 a d e; topic 2: r1 x, r2 x (see test_nojudge.REF)
RUNS = {
    "r1": "1 Q0 a 1 3 r1\n1 Q0 b 2 2 r1\n1 Q0 c 3 1 r1\n2 Q0 x 1 1 r1\n",
    "r2": "1 Q0 b 1 3 r2\n1 Q0 c 2 2 r2\n1 Q0 d 3 1 r2\n2 Q0 x 1 1 r2\n",
    "r3": "1 Q0 a 1 3 r3\n1 Q0 d 2 2 r3\n1 Q0 e 3 1 r3\n",
}


@pytest.fixture
def runs(tmp_path):
    paths = []
    for name, text in RUNS.items():
        paths.append(tmp_path / name)
        paths[-1].write_text(text)
    return paths


def cli(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_nojudge_refcount_tsv_and_table(capsys, runs):
    rc, out, _ = cli(capsys, "nojudge", *runs, "--method", "refcount", "--depth", "2")
    assert rc == 0
    assert out == "run\tscore\trank\nr1\t1.5\t1\nr2\t1.0\t2\nr3\t0.5\t3\n"
    rc, out, _ = cli(
        capsys, "nojudge", *runs, "--method", "refcount", "--depth", "2", "--format", "table"
    )
    assert out.splitlines()[0] == "# refcount(depth=2)"
    assert out.splitlines()[2].split() == ["r1", "1.500000", "1"]


def test_nojudge_soboroff_and_condorcet(capsys, runs, tmp_path):
    argv = [
        "nojudge",
        *runs,
        "--method",
        "soboroff",
        "--mean",
        "0.3",
        "--sd",
        "0.1",
        "--trials",
        "5",
    ]
    rc, first, _ = cli(capsys, *argv, "--seed", "3")
    assert rc == 0 and first.splitlines()[0] == "run\tscore\trank" and len(first.splitlines()) == 4
    assert cli(capsys, *argv, "--seed", "3")[1] == first
    out = tmp_path / "scores.tsv"
    rc, printed, _ = cli(capsys, "nojudge", *runs, "--method", "condorcet", "--depth", "3",
                         "--fraction", "0.5", "-o", out)
    assert rc == 0 and printed == "" and out.read_text().startswith("run\tscore\trank\n")


def test_nojudge_errors_write_nothing(capsys, runs, tmp_path):
    out = tmp_path / "out.tsv"
    rc, _, err = cli(capsys, "nojudge", *runs, "--method", "soboroff", "-o", out)
    assert rc == 1 and "needs --mean and --sd" in err and not out.exists()
    rc, _, err = cli(
        capsys, "nojudge", *runs, "--method", "condorcet", "--fraction", "1.5", "-o", out
    )
    assert rc == 1 and "fraction" in err and not out.exists()
    rc, _, err = cli(capsys, "nojudge", tmp_path / "missing", "--method", "refcount", "-o", out)
    assert rc == 1 and "no such file" in err and not out.exists()
    with pytest.raises(SystemExit) as exc:
        main(["nojudge", str(runs[0]), "--method", "refcount", "--depth", "0"])
    assert exc.value.code == 2

@pytest.mark.parametrize("method, extra, named", [
    ("refcount", ["--mean", "0.05"], "--mean (--mean: soboroff)"),
    ("refcount", ["--measure", "P@10"], "--measure (--measure: soboroff, condorcet)"),
    ("condorcet", ["--weighted", "--trials", "3"],
     "--trials, --weighted (--trials: soboroff; --weighted: refcount)"),
    ("soboroff", ["--mean", ".3", "--sd", ".1", "--fraction", ".2"], "--fraction"),
])
def test_nojudge_refuses_options_its_method_does_not_read(capsys, runs, tmp_path, method, extra,
                                                          named):
    """``refcount --mean 0.05`` printed the ranking it prints without --mean, exit 0."""
    out = tmp_path / "out.tsv"
    rc, _, err = cli(capsys, "nojudge", *runs, "--method", method, *extra, "-o", out)
    assert rc == 1 and f"{method} does not read {named}" in err and not out.exists()


@pytest.mark.parametrize("measure, kind", [("runid", "a label"), ("num_rel", "a count")])
def test_nojudge_refuses_a_measure_that_is_not_a_score(capsys, runs, tmp_path, measure, kind):
    """``--measure runid`` scored every run 0 and ranked them by name."""
    rc, _, err = cli(capsys, "nojudge", *runs, "--method", "condorcet", "--measure", measure)
    assert rc == 1 and f"is {kind}, not a score of a run's ranking" in err



DOCS = ["a", "b", "c", "d", "e", "f"]
TRUTH = {"a": 1, "b": 0, "c": 1, "d": 0, "e": 0, "f": 1}


@pytest.fixture
def sample(tmp_path):
    """Thirty orders of six documents (one topic); a and b judged, the rest -1; the true
    relevant set is {a, c, f}, R = 3; ``estimates`` holds every run's true AP."""
    perms = list(itertools.permutations(DOCS))
    chosen = np.random.default_rng(0).choice(len(perms), 30, replace=False)
    runs, lines = [], []
    for k, c in enumerate(chosen):
        order = perms[c]
        path = tmp_path / f"run{k:02d}"
        path.write_text(
            "".join(f"1 Q0 {d} {i + 1} {10 - i} r{k:02d}\n" for i, d in enumerate(order))
        )
        runs.append(path)
        lines.append(f"r{k:02d}\t1\t{expected_ap([TRUTH[d] for d in order], 3.0)!r}\n")
    qrels = tmp_path / "sample.qrels"
    qrels.write_text("1 0 a 1\n1 0 b 0\n" + "".join(f"1 0 {d} -1\n" for d in "cdef"))
    estimates = tmp_path / "estimates.tsv"
    estimates.write_text("run\ttopic\tmeasure\tvalue\n" + "".join(
        line.replace("\t1\t", "\t1\tAP\t") for line in lines
    ) + "r00\tall\tAP\t0.5\n")
    return qrels, runs, estimates


def test_infer_qrels_with_estimates_recovers_the_truth(capsys, sample, tmp_path):
    qrels, runs, estimates = sample
    out = tmp_path / "inferred.qrels"
    rc, printed, _ = cli(capsys, "infer-qrels", qrels, *runs, "--estimates", estimates, "-o", out)
    assert rc == 0 and printed == ""
    assert out.read_text() == "".join(f"1 0 {d} {TRUTH[d]}\n" for d in DOCS)
    rc, printed, _ = cli(capsys, "infer-qrels", qrels, *runs, "--estimates", estimates)
    assert rc == 0 and printed == out.read_text()  # without -o: standard output, as documented


def test_infer_qrels_warns_of_missing_estimates_and_an_unused_estimator(capsys, sample,
                                                                        tmp_path):
    """An estimates file that leaves out a ranking with judgments, or --estimator given beside
    it, was read without a word."""
    qrels, runs, estimates = sample
    short = tmp_path / "short.tsv"
    short.write_text("".join(line for line in estimates.read_text().splitlines(True)
                             if not line.startswith("r03\t")))
    rc, _, err = cli(capsys, "infer-qrels", qrels, *runs, "--estimates", short,
                     "--estimator", "xinfAP", "-o", tmp_path / "out.qrels")
    assert rc == 0
    assert f"--estimator xinfAP not used: the AP estimates come from {short}" in err
    assert f"{short}: no estimate for 1 of 30 (run, topic) rankings with judgments (the " \
        "first: run r03, topic 1)" in err
    rc, _, err = cli(capsys, "infer-qrels", qrels, *runs, "--estimates", estimates, "-o",
                     tmp_path / "out2.qrels")
    assert rc == 0 and err == ""


def test_infer_qrels_from_the_sample(capsys, sample, tmp_path):
    """Estimates from the sample itself (infAP, R^ = 1 * 6 / 2 = 3): judged documents keep
    their grades and round(R^) - 1 = 2 unjudged documents become relevant (rounding top)."""
    qrels, runs, _ = sample
    out = tmp_path / "inferred.qrels"
    assert cli(capsys, "infer-qrels", qrels, *runs, "-o", out)[0] == 0
    rows = [line.split() for line in out.read_text().splitlines()]
    assert [r[2] for r in rows] == DOCS and rows[0][3] == "1" and rows[1][3] == "0"
    assert sum(int(r[3]) for r in rows[2:]) == 2


@pytest.mark.parametrize("text, message", [
    ("r00\t1\t0.5\nnope\t1\t0.2\n", ":2: unknown run 'nope'"),
    ("r00\t7\t0.5\n", ":1: unknown topic '7'"),
    ("r00\t1\tabc\n", "not a number"),
    ("r00\t1\t1.5\n", "in [0, 1]"),
    ("r00\t1\t0.5\nr00\t1\t0.4\n", "second estimate"),
    ("r00\t1\tAP\t0.5\nr01\t1\tinfAP\t0.4\n", "more than one measure"),
    ("run\ttopic\tmeasure\tvalue\nr00\t1\tP_10\t0.2\n",
     ":2: measure 'P_10' is not an estimate of AP"),
    ("r00\t1\tfoo\t0.5\n", ":1: measure 'foo' is not an estimate of AP (expected one of AP,"),
    ("r00 1\n", "expected 'run topic value'"),
    ("r00\tall\t0.5\n", "no AP estimate"),
])
def test_infer_qrels_bad_estimates(capsys, sample, tmp_path, text, message):
    qrels, runs, _ = sample
    bad = tmp_path / "bad.tsv"
    bad.write_text(text)
    out = tmp_path / "inferred.qrels"
    rc, _, err = cli(capsys, "infer-qrels", qrels, *runs, "--estimates", bad, "-o", out)
    assert rc == 1 and message in err and not out.exists()


def test_infer_qrels_exit_codes(sample, tmp_path):
    qrels, runs, _ = sample
    out = tmp_path / "inferred.qrels"
    base = [sys.executable, "-m", "irsample.cli", "infer-qrels"]
    missing = subprocess.run(base + [str(tmp_path / "none"), str(runs[0]), "-o", str(out)],
                             capture_output=True, text=True)
    assert missing.returncode == 1 and "no such file" in missing.stderr and not out.exists()
    printed = subprocess.run(base + [str(qrels), str(runs[0])], capture_output=True, text=True)
    assert printed.returncode == 0 and printed.stdout.startswith("1 0 ")  # standard output


def test_infer_qrels_refuses_prels_of_unequal_probabilities(capsys, sample, tmp_path):
    """Prels of a non-uniform sample (per-document pi, no strata) were read as one uniform
    stratum with exit 0; now an error naming the file, a document and the formats read.
    Prels of a uniform sample (pi = n / N) give the TREC qrels' result."""
    qrels, runs, estimates = sample
    prels = tmp_path / "sample.prels"
    prels.write_text("1 a 1 1 0.5\n1 b 0 1 0.25\n" + "".join(f"1 {d} -1 1 0.25\n" for d in "cdef"))
    out = tmp_path / "inferred.qrels"
    for extra in ([], ["--estimates", estimates], ["--qrels-format", "prels"]):
        rc, _, err = cli(capsys, "infer-qrels", prels, *runs, *extra, "-o", out)
        assert rc == 1 and f"{prels}: inclusion probabilities that are not" in err, err
        assert "document a: 0.5, where its topic, one stratum, judged 2 of 6" in err
        assert "stratified qrels" in err and "--format strata" in err and not out.exists()
    uniform = tmp_path / "uniform.prels"
    uniform.write_text("1 a 1 1 0.3333333333333333\n1 b 0 1 0.3333333333333333\n"
                       + "".join(f"1 {d} -1 1 0.3333333333333333\n" for d in "cdef"))
    expected = tmp_path / "expected.qrels"
    assert cli(capsys, "infer-qrels", qrels, *runs, "-o", expected)[0] == 0
    assert cli(capsys, "infer-qrels", uniform, *runs, "-o", out)[0] == 0
    assert out.read_text() == expected.read_text()


def test_nojudge_does_not_depend_on_the_order_of_the_runs(capsys, tmp_path):
    """Soboroff's draw keys on run names: the same runs in reverse give the same scores (it
    swapped two runs' ranks before); Condorcet with --select (equal biases: r0 and its copy
    r9) too."""
    rng = np.random.default_rng(3)
    paths = []
    for r in range(6):
        lines = [f"{t} Q0 d{d} {i + 1} {50 - i} r{r}\n" for t in (1, 2, 3)
                 for i, d in enumerate(rng.choice(25, 10, replace=False))]
        paths.append(tmp_path / f"run{r}")
        paths[-1].write_text("".join(lines))
    (tmp_path / "copy").write_text(paths[0].read_text().replace(" r0\n", " r9\n"))
    paths.append(tmp_path / "copy")  # r9 = r0: equal biases
    for options in (["--method", "soboroff", "--mean", "0.2", "--sd", "0.05", "--depth", "10",
                     "--trials", "4", "--seed", "1"],
                    ["--method", "condorcet", "--select", "0.5", "--depth", "10"]):
        out = [cli(capsys, "nojudge", *given, *options)[1] for given in (paths, paths[::-1])]
        assert out[0] == out[1] and out[0].startswith("run\tscore\trank\n")
