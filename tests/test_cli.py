"""The command line: trec_eval-compatible output, other formats, options and error handling.

Most tests call :func:`irsample.cli.main` in process; a few run ``python -m irsample.cli`` to
check exit codes. Inputs are tiny hand-made files (values computed by hand below) or the bundled
Vaswani example data; no ``../shared``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import irsample
from irsample.cli import main
from irsample.measures import REGISTRY

PACKAGE_ROOT = Path(irsample.__file__).resolve().parent
VASWANI = PACKAGE_ROOT / "data" / "vaswani"

# Topic 1: ranking d4 (pooled, -1), d1 (rel 1), d5 (unpooled), d3 (rel 2), d2 (rel 0);
#          d6 (rel 1) is judged but retrieved by no run, so R = 3 at level 1 and 1 at level 2.
# Topic 2: ranking e1 (rel 1), e2 (unpooled); R = 1.
# Topic 3: only in the qrels (counts with -c). Topic 4: only in the run (never evaluated).
QRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d3 2\n1 0 d4 -1\n1 0 d6 1\n2 0 e1 1\n3 0 f1 1\n"
RUN1 = (
    "1 Q0 d4 1 5 r1\n1 Q0 d1 2 4 r1\n1 Q0 d5 3 3 r1\n1 Q0 d3 4 2 r1\n1 Q0 d2 5 1 r1\n"
    "2 Q0 e1 1 2 r1\n2 Q0 e2 2 1 r1\n4 Q0 g1 1 1 r1\n"
)
# Topic 1: d1 only (AP 1/3, P_5 0.2). Topic 2: e2, e1 (AP 1/2, P_5 0.2).
RUN2 = "2 Q0 e1 1 0.5 r2\n1 Q0 d1 1 1 r2\n2 Q0 e2 2 1 r2\n"
# Topic 3, in the qrels alone, is left out of both runs' means without -c: said, as
# trec_eval 10 stops there
UNANSWERED = ("irsample: warning: run 'r1' (and 1 other run) has no ranking for 1 topic the "
              "judgments name (3): its means are over the topics it ranks, as trec_eval 9 "
              "averages (trec_eval 10 stops there); -c counts a topic a run lacks as 0\n")


@pytest.fixture
def files(tmp_path):
    out = {}
    for name, text in {"qrels": QRELS, "run1": RUN1, "run2": RUN2}.items():
        out[name] = tmp_path / name
        out[name].write_text(text)
    return out


def cli(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def line(measure, topic, value):
    return f"{measure:<22s}\t{topic}\t{value}"


def parse_tsv(text):
    lines = text.splitlines()
    assert lines[0] == "run\ttopic\tmeasure\tvalue"
    out = {}
    for row in lines[1:]:
        run, topic, measure, value = row.split("\t")
        assert (run, topic, measure) not in out
        out[(run, topic, measure)] = value
    return out


# ---- trec format ---------------------------------------------------------------------------------
def test_trec_format_exact_text_two_runs_per_topic(files, capsys):
    rc, out, err = cli(
        capsys,
        "eval", files["qrels"], files["run1"], files["run2"],
        "-q", "-m", "P.5", "-m", "num_rel_ret", "-m", "map", "-m", "runid", "-m", "num_ret",
    )
    assert rc == 0 and err == UNANSWERED
    expected = [
        # run r1, topics in order, then the summary starting with runid
        line("num_ret", "1", "5"),
        line("num_rel_ret", "1", "2"),
        line("map", "1", "0.3333"),
        line("P_5", "1", "0.4000"),
        line("num_ret", "2", "2"),
        line("num_rel_ret", "2", "1"),
        line("map", "2", "1.0000"),
        line("P_5", "2", "0.2000"),
        line("runid", "all", "r1"),
        line("num_ret", "all", "7"),
        line("num_rel_ret", "all", "3"),
        line("map", "all", "0.6667"),
        line("P_5", "all", "0.3000"),
        # run r2
        line("num_ret", "1", "1"),
        line("num_rel_ret", "1", "1"),
        line("map", "1", "0.3333"),
        line("P_5", "1", "0.2000"),
        line("num_ret", "2", "2"),
        line("num_rel_ret", "2", "1"),
        line("map", "2", "0.5000"),
        line("P_5", "2", "0.2000"),
        line("runid", "all", "r2"),
        line("num_ret", "all", "3"),
        line("num_rel_ret", "all", "2"),
        line("map", "all", "0.4167"),
        line("P_5", "all", "0.2000"),
    ]
    assert out == "\n".join(expected) + "\n"


def test_trec_format_summary_only(files, capsys):
    rc, out, _ = cli(
        capsys, "eval", files["qrels"], files["run1"], "-m", "map", "-m", "P.5", "-m", "num_q"
    )
    assert rc == 0
    assert out == (
        "num_q                 \tall\t2\n"
        "map                   \tall\t0.6667\n"
        "P_5                   \tall\t0.3000\n"
    )


def test_measures_in_trec_eval_order_whatever_the_m_order(files, capsys):
    _, a, _ = cli(capsys, "eval", files["qrels"], files["run1"], "-m", "P.10", "-m", "map")
    _, b, _ = cli(capsys, "eval", files["qrels"], files["run1"], "-m", "map", "-m", "P.10")
    assert a == b
    assert [ln.split("\t")[0].strip() for ln in a.splitlines()] == ["map", "P_10"]
    _, c, _ = cli(
        capsys, "eval", files["qrels"], files["run1"],
        "-m", "ndcg_cut.5", "-m", "recip_rank", "-m", "P.5", "-m", "bpref", "-m", "num_rel",
        "-m", "Rprec", "-m", "map", "-m", "runid",
    )
    names = [ln.split("\t")[0].strip() for ln in c.splitlines()]
    assert names == ["runid", "num_rel", "map", "Rprec", "bpref", "recip_rank", "P_5", "ndcg_cut_5"]


def test_cutoffs_in_increasing_order_as_trec_eval(files, capsys):
    """trec_eval sorts a measure's cut-offs (meas_init.c get_long_cutoffs: qsort increasing)."""
    _, out, _ = cli(capsys, "eval", files["qrels"], files["run1"], "-m", "P.10,5", "-m", "map")
    assert [ln.split("\t")[0].strip() for ln in out.splitlines()] == ["map", "P_5", "P_10"]


TREC_LINE = re.compile(r"^(?P<m>\S+ *)\t(?P<t>\S+)\t(?P<v>.+)$")


def test_trec_layout_on_bundled_data(capsys):
    runs = [VASWANI / "runs" / "bm25_k1.2_b0.75.run.gz", VASWANI / "runs" / "tf_raw.run.gz"]
    rc, out, err = cli(capsys, "eval", VASWANI / "qrels.gz", *runs, "-q")
    assert rc == 0 and err == ""
    lines = out.splitlines()
    topics_seen = []
    runids = []
    for ln in lines:
        m = TREC_LINE.match(ln)
        assert m, ln
        measure = m["m"].strip()
        assert len(m["m"]) == max(22, len(measure))  # %-22s
        if measure == "runid":
            runids.append(m["v"])
        elif measure.startswith("num_"):
            assert re.fullmatch(r"\d+", m["v"]), ln
        else:
            assert re.fullmatch(r" *\d+\.\d{4}", m["v"]) and len(m["v"]) >= 6, ln
        if m["t"] != "all" and (not topics_seen or topics_seen[-1] != m["t"]):
            topics_seen.append(m["t"])
    assert runids == ["bm25_k1.2_b0.75", "tf_raw"]
    # per-topic blocks in byte-wise topic order, once per run, each followed by its summary
    one_run = sorted({str(q) for q in range(1, 94)})
    assert topics_seen == one_run + one_run
    summary_start = [i for i, ln in enumerate(lines) if ln.startswith("runid ")]
    assert lines[summary_start[0] - 1].split("\t")[1] == one_run[-1]
    assert lines[summary_start[0] + 1].startswith("num_q ")
    assert lines[summary_start[0] + 1].endswith("\t93")


# ---- other formats -------------------------------------------------------------------------------
def test_tsv_format(files, capsys):
    rc, out, _ = cli(
        capsys, "eval", files["qrels"], files["run1"], files["run2"],
        "-q", "-m", "map", "-m", "P.5", "-m", "num_rel", "-m", "runid", "--format", "tsv",
        "--places", "exact",
    )
    assert rc == 0
    rows = parse_tsv(out)
    assert {r for r, _, _ in rows} == {"r1", "r2"}
    assert {t for _, t, _ in rows} == {"1", "2", "all"}
    assert {m for _, _, m in rows} == {"map", "P_5", "num_rel"}  # runid is not a value
    assert float(rows[("r1", "1", "map")]) == pytest.approx(1 / 3, abs=1e-15)
    assert float(rows[("r1", "all", "map")]) == pytest.approx(2 / 3, abs=1e-15)
    assert float(rows[("r2", "all", "map")]) == pytest.approx(5 / 12, abs=1e-15)
    assert float(rows[("r2", "2", "P_5")]) == pytest.approx(0.2, abs=1e-15)
    assert rows[("r1", "all", "num_rel")] == "4"
    assert rows[("r1", "1", "num_rel")] == "3"


def test_json_has_same_numbers_as_tsv(files, capsys):
    args = ["eval", files["qrels"], files["run1"], files["run2"], "-q", "-m", "map", "-m", "P.5,10",
            "-m", "ndcg", "-m", "num_ret", "-m", "recip_rank"]
    _, tsv, _ = cli(capsys, *args, "--format", "tsv")
    rc, js, _ = cli(capsys, *args, "--format", "json")
    assert rc == 0
    data = json.loads(js)
    flat = {
        (run, topic, measure): value
        for run, topics in data.items()
        for topic, values in topics.items()
        for measure, value in values.items()
    }
    rows = parse_tsv(tsv)
    assert set(flat) == set(rows)
    for key, text in rows.items():
        assert flat[key] == (int(text) if key[2] == "num_ret" else float(text)), key
    assert isinstance(flat[("r1", "all", "num_ret")], int)
    assert flat[("r1", "all", "num_ret")] == 7


def test_latex_format(files, capsys):
    rc, out, _ = cli(
        capsys, "eval", files["qrels"], files["run1"], files["run2"], "-m", "map", "-m", "P.5",
        "--format", "latex",
    )
    assert rc == 0
    lines = out.splitlines()
    assert lines[0].startswith(r"\begin{tabular}")
    assert lines[-1] == r"\end{tabular}"
    body = lines[lines.index(r"\midrule") + 1 : lines.index(r"\bottomrule")]
    assert body == [r"r1 & 0.6667 & 0.3000 \\", r"r2 & 0.4167 & 0.2000 \\"]
    assert r"map & P\_5 \\" in out


def test_latex_escapes_every_special_character_of_a_run_tag():
    """A run tag holding LaTeX's specials compiles: \\, ^ and ~ as text commands (an undefined
    control sequence, a math-mode error and a non-breaking space before)."""
    from irsample.formats import _latex_escape

    assert _latex_escape("a_b%&$#{}\\x^~") == (
        r"a\_b\%\&\$\#\{\}\textbackslash{}x\textasciicircum{}\textasciitilde{}")


def test_places(files, capsys):
    base = ["eval", files["qrels"], files["run1"], "-m", "map", "-m", "num_ret"]
    _, trec2, _ = cli(capsys, *base, "--places", "2")
    assert trec2 == line("num_ret", "all", "7") + "\n" + line("map", "all", "0.67") + "\n"
    _, trec6, _ = cli(capsys, *base, "--places", "6")
    assert line("map", "all", "0.666667") in trec6
    _, tsv, _ = cli(capsys, *base, "--format", "tsv", "--places", "3")
    assert parse_tsv(tsv) == {("r1", "all", "num_ret"): "7", ("r1", "all", "map"): "0.667"}
    _, latex, _ = cli(capsys, *base, "--format", "latex", "--places", "1")
    assert r"r1 & 7 & 0.7 \\" in latex
    _, js, _ = cli(capsys, *base, "--format", "json", "--places", "2")
    assert json.loads(js) == {"r1": {"all": {"num_ret": 7, "map": 0.67}}}


# ---- -c, -J, -l, -M on the hand-made example -----------------------------------------------------
EXPECTED = {
    # default: topics 1 and 2; map = (1/3 + 1)/2, P_2 = (1/2 + 1/2)/2, P_5 = (2/5 + 1/5)/2
    (): dict(num_q=2, num_ret=7, num_rel=4, num_rel_ret=3, map=2 / 3, P_2=0.5, P_5=0.3),
    # -J drops d4, d5, e2: topic 1 ranking d1 d3 d2 (AP 2/3, P_2 1); topic 2 e1 (P_2 1/2)
    ("-J",): dict(num_q=2, num_ret=4, num_rel=4, num_rel_ret=3, map=5 / 6, P_2=0.75, P_5=0.3),
    # -l 2: only d3 is relevant (AP 1/4, P_5 1/5); topic 2 has R = 0 (AP 0)
    ("-l", "2"): dict(num_q=2, num_ret=7, num_rel=1, num_rel_ret=1, map=0.125, P_2=0.0, P_5=0.1),
    # -M 2: topic 1 ranking d4 d1 (AP 1/6, P_5 1/5); topic 2 unchanged
    ("-M", "2"): dict(num_q=2, num_ret=4, num_rel=4, num_rel_ret=2, map=7 / 12, P_2=0.5, P_5=0.2),
    # -c: topic 3 (R = 1, not retrieved) scores 0 and is averaged in
    ("-c",): dict(num_q=3, num_ret=7, num_rel=5, num_rel_ret=3, map=4 / 9, P_2=1 / 3, P_5=0.2),
}


def summary(capsys, files, *options):
    rc, out, err = cli(
        capsys, "eval", files["qrels"], files["run1"], "--format", "tsv", "--places", "exact",
        "-m", "num_q", "-m", "num_ret", "-m", "num_rel", "-m", "num_rel_ret", "-m", "map",
        "-m", "P.2,5", *options,
    )
    assert rc == 0, err
    return {m: float(v) for (run, topic, m), v in parse_tsv(out).items() if topic == "all"}


@pytest.mark.parametrize("options", list(EXPECTED), ids=lambda o: " ".join(o) or "default")
def test_options_exact_values(files, capsys, options):
    got = summary(capsys, files, *options)
    want = EXPECTED[options]
    assert set(got) == set(want)
    for name, value in want.items():
        assert got[name] == pytest.approx(value, abs=1e-12), name


def test_options_directions(files, capsys):
    base = summary(capsys, files)
    judged_only = summary(capsys, files, "-J")
    assert judged_only["map"] > base["map"] and judged_only["num_ret"] < base["num_ret"]
    level2 = summary(capsys, files, "-l", "2")
    assert level2["map"] < base["map"] and level2["num_rel"] < base["num_rel"]
    cut = summary(capsys, files, "-M", "2")
    assert cut["map"] < base["map"] and cut["num_ret"] < base["num_ret"]
    complete = summary(capsys, files, "-c")
    assert complete["map"] < base["map"] and complete["num_q"] > base["num_q"]
    both = summary(capsys, files, "-c", "-J")
    assert both["num_q"] == 3 and both["map"] == pytest.approx((2 / 3 + 1 + 0) / 3, abs=1e-12)


def test_per_topic_with_complete_lists_missing_topic(files, capsys):
    _, out, _ = cli(capsys, "eval", files["qrels"], files["run1"], "-q", "-c", "-m", "map")
    assert out == (
        line("map", "1", "0.3333") + "\n"
        + line("map", "2", "1.0000") + "\n"
        + line("map", "3", "0.0000") + "\n"
        + line("map", "all", "0.4444") + "\n"
    )


# ---- output file and errors ----------------------------------------------------------------------
def test_output_file(files, capsys, tmp_path):
    args = ["eval", files["qrels"], files["run1"], files["run2"], "-q", "-m", "map", "-m", "P.5"]
    _, stdout_text, _ = cli(capsys, *args)
    target = tmp_path / "out" / "result.txt"
    target.parent.mkdir()
    rc, out, err = cli(capsys, *args, "-o", target)
    assert (rc, out, err) == (0, "", UNANSWERED)
    assert target.read_text() == stdout_text
    assert os.listdir(target.parent) == ["result.txt"]


def test_bad_second_run_leaves_no_output(files, capsys, tmp_path):
    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 d1 1 1 rb\n\n# comment\n1 Q0 d2 2 rb\n")
    outdir = tmp_path / "out"
    outdir.mkdir()
    target = outdir / "result.tsv"
    rc, out, err = cli(
        capsys, "eval", files["qrels"], files["run1"], bad, "--format", "tsv", "-o", target
    )
    assert rc != 0
    assert out == ""
    assert f"{bad}:4:" in err
    assert err.startswith("irsample: ")
    assert os.listdir(outdir) == []  # neither the output nor a temporary file


def test_failure_keeps_an_existing_output_file(files, capsys, tmp_path):
    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 d1 1 abc rb\n")
    target = tmp_path / "result.txt"
    target.write_text("previous\n")
    before = sorted(os.listdir(tmp_path))
    rc, out, err = cli(capsys, "eval", files["qrels"], files["run1"], bad, "-o", target)
    assert rc != 0 and out == ""
    assert f"{bad}:1:" in err
    assert target.read_text() == "previous\n"
    assert sorted(os.listdir(tmp_path)) == before


def test_bad_qrels_names_file_and_line(files, capsys, tmp_path):
    bad = tmp_path / "bad.qrels"
    bad.write_text("1 0 d1 1\n1 0 d2 1 5\n")
    rc, out, err = cli(capsys, "eval", bad, files["run1"])
    assert rc != 0 and out == ""
    assert err.startswith(f"irsample: {bad}:2: ")


def test_duplicate_document_in_run(files, capsys, tmp_path):
    bad = tmp_path / "dup.run"
    bad.write_text("1 Q0 d1 1 2 t\n1 Q0 d2 2 1 t\n1 Q0 d1 3 0 t\n")
    rc, out, err = cli(capsys, "eval", files["qrels"], files["run1"], bad)
    assert rc != 0 and out == ""
    assert f"{bad}:3:" in err


def test_run_sharing_no_topic_with_qrels(files, capsys, tmp_path):
    other = tmp_path / "other.run"
    other.write_text("7 Q0 d1 1 1 lonely\n8 Q0 d2 1 1 lonely\n")
    rc, out, err = cli(capsys, "eval", files["qrels"], files["run1"], other)
    assert rc != 0 and out == ""
    assert str(other) in err
    assert "no topic in common" in err
    assert "lonely" in err


def test_unknown_measure(files, capsys):
    rc, out, err = cli(
        capsys, "eval", files["qrels"], files["run1"], "-m", "map", "-m", "bogus_measure"
    )
    assert rc != 0 and out == ""
    assert "unknown measure" in err and "bogus_measure" in err


def test_missing_run_file(files, capsys, tmp_path):
    missing = tmp_path / "missing.run"
    rc, out, err = cli(capsys, "eval", files["qrels"], missing)
    assert rc != 0 and out == ""
    assert f"{missing}:" in err


def test_usage_error_exits_2(files, capsys):
    with pytest.raises(SystemExit) as info:
        main(["eval", str(files["qrels"])])  # no run
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        main(["eval", str(files["qrels"]), str(files["run1"]), "-M", "-3"])
    assert info.value.code == 2
    capsys.readouterr()


# ---- measures ------------------------------------------------------------------------------------
def test_measures_lists_every_family_with_citation(capsys):
    rc, out, err = cli(capsys, "measures")
    assert rc == 0 and err == ""
    blocks: dict[str, list[str]] = {}  # header line -> indented body lines
    for ln in out.splitlines():
        if ln and not ln[0].isspace():
            assert ln not in blocks, ln
            blocks[ln] = []
            current = blocks[ln]
        else:
            current.append(ln)
    assert len(REGISTRY) > 10
    groups = "map_avgjg / P_avgjg / Rprec_mult_avgjg (with -R qrels_jg)"
    assert "    Source: trec_eval m_map_avgjg.c, m_P_avgjg.c, m_Rprec_mult_avgjg.c" in (
        blocks.pop(groups))  # not registered: they exist only with -R qrels_jg
    assert len(blocks) == len(REGISTRY)
    by_family = {head.split(" / ")[0]: (head, body) for head, body in blocks.items()}
    assert set(by_family) == set(REGISTRY)
    for family, cls in REGISTRY.items():
        head, body = by_family[family]
        assert cls.citation, f"{family} has no citation"
        assert f"    Source: {cls.citation}" in body, family
        if cls.trec and cls.trec != family:
            assert head == f"{family} / {cls.trec}"
        else:
            assert head == family


# ---- the real command ----------------------------------------------------------------------------
def run_module(*args, cwd):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(PACKAGE_ROOT.parent)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    return subprocess.run(
        [sys.executable, "-m", "irsample.cli", *map(str, args)],
        capture_output=True, text=True, cwd=cwd, env=env, timeout=120,
    )


def test_subprocess_exit_codes(files, tmp_path):
    ok = run_module("eval", files["qrels"], files["run1"], "-m", "map", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout == line("map", "all", "0.6667") + "\n"

    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 d1 1 1 t\n1 Q0 d2 2 2\n")
    target = tmp_path / "never.txt"
    failed = run_module("eval", files["qrels"], files["run1"], bad, "-o", target, cwd=tmp_path)
    assert failed.returncode == 1
    assert failed.stdout == ""
    assert failed.stderr.startswith(f"irsample: {bad}:2: ")
    assert "Traceback" not in failed.stderr
    assert not target.exists()

    usage = run_module("eval", cwd=tmp_path)
    assert usage.returncode == 2
    assert "usage" in usage.stderr

    if os.path.exists("/dev/full"):  # standard output that cannot be written: said, exit 1
        env = dict(os.environ, PYTHONPATH=str(PACKAGE_ROOT.parent))
        with open("/dev/full", "w") as full:
            done = subprocess.run([sys.executable, "-m", "irsample.cli", "eval", "-m", "map",
                                   str(files["qrels"]), str(files["run1"])], stdout=full,
                                  stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env,
                                  timeout=120)
        assert done.returncode == 1 and "Traceback" not in done.stderr
        assert done.stderr.strip().endswith(
            "irsample: cannot write to standard output: No space left on device")


def test_a_topic_of_the_judgments_a_run_lacks_is_said_unless_c(files, capsys):
    """A run renamed topic 301 to 0301: eval averaged it over the other topics, exit 0, no
    word (trec_eval 10 stops with "result qid '301' not found in qrels")."""
    import warnings

    from irsample.errors import JudgmentWarning

    rc, _, err = cli(capsys, "eval", files["qrels"], files["run1"], "-m", "map")
    assert rc == 0 and err == UNANSWERED.replace(" (and 1 other run)", "")
    rc, _, err = cli(capsys, "eval", files["qrels"], files["run1"], "-m", "map", "-c")
    assert rc == 0 and err == ""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        irsample.evaluate(files["qrels"], [files["run1"]], ["map"])
    assert [str(w.message) for w in caught if w.category is JudgmentWarning] == [
        UNANSWERED.removeprefix("irsample: warning: ").replace(" (and 1 other run)", "")
        .rstrip("\n")]
