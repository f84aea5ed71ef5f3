"""trec_eval's habits (issue 11, item 4) and the stratified-qrels warning (item 7): ``-m``
takes one value and repeats; ``-q`` is honoured or refused in every format; 4 decimals in every
format unless ``--places``; infAP on stratified qrels warns once."""

from __future__ import annotations

import json

import pytest

from irsample.cli import main
from irsample.formats import FORMATS

QRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d3 1\n2 0 e1 1\n"
RUN = "1 Q0 d2 1 3 r1\n1 Q0 d1 2 2 r1\n1 Q0 d3 3 1 r1\n2 Q0 e1 1 1 r1\n"
# topic 1: AP = (1/2 + 2/3) / 2 = 7/12; topic 2: AP = 1; map = 19/24 = 0.791666...
# stratified qrels: two strata, one sampled fully, one half
STRATA = "1 0 d1 s1 1\n1 0 d2 s1 0\n1 0 d3 s2 1\n1 0 d4 s2 -1\n2 0 e1 s1 1\n"


@pytest.fixture
def files(tmp_path):
    for name, text in {"qrels": QRELS, "run": RUN, "strata": STRATA}.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def cli(capsys, *argv):
    rc = main([str(a) for a in argv])
    return (rc, *capsys.readouterr())


def test_m_all_trec_before_the_files(files, capsys):
    rc, out, err = cli(capsys, "eval", "-m", "all_trec", files / "qrels", files / "run")
    assert rc == 0, err
    names = {line.split("\t")[0].strip() for line in out.splitlines()}
    assert {"map", "P_10", "ndcg_cut_20", "set_F", "bpref"} <= names


def test_m_repeats_one_value_each(files, capsys):
    rc, out, _ = cli(capsys, "eval", "-m", "map", "-m", "P.1,2", files / "qrels", files / "run")
    assert rc == 0
    assert out == ("map                   \tall\t0.7917\nP_1                   \tall\t0.5000\n"
                   "P_2                   \tall\t0.5000\n")  # (1/2 + 1/2) / 2
    # a second value after -m is a file, as in trec_eval
    rc, out, err = cli(capsys, "eval", "-m", "map", "P.10", files / "qrels", files / "run")
    assert rc == 1 and "P.10" in err and out == ""


@pytest.mark.parametrize("fmt", FORMATS)
def test_q_is_honoured_or_refused_in_every_format(files, capsys, fmt):
    measure = "xinfAP" if fmt == "sample_eval" else "map"
    rc, out, err = cli(capsys, "eval", "-q", "-m", measure, "--format", fmt,
                       files / "qrels", files / "run")
    if fmt in ("latex", "table"):
        assert rc == 1 and out == ""
        assert err.startswith("irsample: -q: --format") and "no per-topic lines" in err
        return
    assert rc == 0, err
    if fmt == "json":
        assert set(json.loads(out)["r1"]) == {"1", "2", "all"}
    else:
        lines = out.splitlines()[1 if fmt in ("tsv", "csv") else 0:]  # tsv, csv: a header
        sep = "," if fmt == "csv" else "\t"
        topics = {[f for f in line.split(sep) if f][1].strip() for line in lines}
        assert {"1", "2", "all"} <= topics, out


@pytest.mark.parametrize("fmt, text", [
    ("trec", "0.7917"), ("tsv", "0.7917"), ("csv", "0.7917"), ("json", "0.7917"),
    ("table", "0.7917"), ("latex", "0.7917"),
])
def test_four_places_by_default_in_every_format(files, capsys, fmt, text):
    rc, out, _ = cli(capsys, "eval", "-m", "map", "--format", fmt, files / "qrels",
                     files / "run")
    assert rc == 0 and text in out and "0.79166" not in out


def test_places_override_and_exact(files, capsys):
    base = ["eval", "-m", "map", files / "qrels", files / "run"]
    _, tsv, _ = cli(capsys, *base, "--format", "tsv", "--places", "6")
    assert tsv.splitlines()[1] == "r1\tall\tmap\t0.791667"
    _, tsv, _ = cli(capsys, *base, "--format", "tsv", "--places", "exact")
    assert tsv.splitlines()[1] == f"r1\tall\tmap\t{19 / 24!r}"
    _, csv_, _ = cli(capsys, *base, "--format", "csv", "--places", "exact")
    assert csv_.splitlines()[1] == f"r1,all,map,{19 / 24!r}"
    _, js, _ = cli(capsys, *base, "--format", "json", "--places", "exact")
    assert json.loads(js)["r1"]["all"]["map"] == 19 / 24
    rc, out, err = cli(capsys, *base, "--places", "exact")
    assert rc == 1 and out == "" and "--places exact: only with --format tsv or csv or json" in err


def test_infap_on_stratified_qrels_warns_once(files, capsys):
    rc, out, err = cli(capsys, "eval", "-m", "infAP", "-m", "infAP(c=1.5)", "-m", "map",
                       files / "strata", files / "run")
    assert rc == 0 and out
    assert err == ("irsample: warning: infAP ignores the 2 strata of these stratified qrels "
                   "(it takes the sample as uniform); xinfAP estimates from stratified "
                   "samples\n")
    rc, _, err = cli(capsys, "eval", "-m", "xinfAP", files / "strata", files / "run")
    assert rc == 0 and err == ""
    rc, _, err = cli(capsys, "eval", "-m", "infAP", files / "qrels", files / "run")
    assert rc == 0 and err == ""  # plain qrels: one stratum


def test_strict_and_ci_need_a_place_to_show_intervals(files, capsys):
    """--strict reads the intervals' status, so it needs --ci; sample_eval's layout has no room
    for intervals, so --ci is refused there rather than dropped. Both before any output."""
    rc, out, err = cli(capsys, "eval", files / "strata", files / "run", "-m", "xinfAP",
                       "--strict")
    assert rc == 1 and out == "" and "--strict checks the status of intervals: give --ci" in err
    rc, out, err = cli(capsys, "eval", files / "strata", files / "run", "-m", "xinfAP",
                       "--ci", "0.95", "--format", "sample_eval")
    assert rc == 1 and out == "" and "--format sample_eval has no room for intervals" in err


def test_sample_eval_names_each_run_when_there_are_several(files, capsys):
    """sample_eval.pl evaluates one run and names none: one run keeps its layout exactly, and
    several are told apart by a ``## run <name>`` line heading each block."""
    (files / "run2").write_text(RUN.replace("r1", "r2"))
    rc, one, _ = cli(capsys, "eval", files / "qrels", files / "run", "-m", "map",
                     "--format", "sample_eval")
    assert rc == 0 and one == "map\t\tall\t\t0.7917\n"
    rc, two, _ = cli(capsys, "eval", files / "qrels", files / "run", files / "run2", "-m",
                     "map", "--format", "sample_eval")
    assert rc == 0
    assert two == "## run r1\n" + one + "## run r2\n" + one


def test_compare_with_one_run_names_it(files, capsys):
    rc, out, err = cli(capsys, "compare", files / "strata", files / "run")
    assert rc == 1 and out == ""
    assert f"compare needs at least two runs; one run file given ({files / 'run'})" in err


def test_standard_input_once(files, capsys):
    """`eval - -` read standard input for the qrels and found it empty for the run ("<stdin>:
    empty file"); it is refused before reading, naming the cause."""
    rc, out, err = cli(capsys, "eval", "-", "-")
    assert rc == 1 and out == ""
    assert "standard input (-) is given more than once" in err
    rc, out, err = cli(capsys, "eval", files / "qrels", "-", "-")
    assert rc == 1 and "given more than once" in err


def test_options_are_refused_with_their_names(files, capsys, tmp_path):
    """A negative seed was a NumPy traceback; run files given to the demo without --qrels were
    silently replaced by the bundled collection's; a bad --param value said "could not convert
    string to float"; max_rounds=0 ran one round. Each is refused now, naming the option, and
    an error with no file to name has no "<input>:" before it."""
    with pytest.raises(SystemExit) as exit_:  # argparse's usage error
        cli(capsys, "sample", files / "run", "--design", "uniform(0.5)", "--seed", "-1",
            "-o", tmp_path / "s")
    assert exit_.value.code == 2
    assert "--seed: must be an integer >= 0" in capsys.readouterr().err
    rc, out, err = cli(capsys, "demo", files / "run")
    assert rc == 1 and out == "" and err.startswith("irsample: run files (")
    assert "need --qrels" in err and "<input>" not in err
    rc, out, err = cli(capsys, "demo", "--plot", tmp_path / "figure.txt")
    assert rc == 1 and "a figure is written as png, pdf, svg" in err and "not .txt" in err
    for recipe, param, message in [
        ("ci-coverage", "percents=abc", "percents is a comma-separated list of numbers"),
        ("ci-coverage", "trials=x", "trials is an integer (default 100)"),
        ("rounds", "max_rounds=0", "--param max_rounds=0: at least 1 round"),
    ]:
        rc, out, err = cli(capsys, "simulate", recipe, "--qrels", files / "qrels", "--runs",
                           files / "run", "--trials", "1", "--param", param,
                           "-o", tmp_path / "sim")
        assert rc == 1 and message in err, err


@pytest.mark.parametrize("suffix, magic", [(".pdf", b"%PDF"), (".svg", b"<?xml"),
                                           (".png", b"\x89PNG"), ("", b"\x89PNG")])
def test_figures_are_written_in_the_format_their_suffix_names(tmp_path, suffix, magic):
    """A .pdf figure path received PNG bytes; the suffix names the format now."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from irsample.plots import save_figure

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    path = save_figure(fig, tmp_path / f"figure{suffix}", title="t")
    assert path.read_bytes().startswith(magic)


def test_ci_with_no_estimator_says_so_and_strict_refuses(files, capsys):
    """trec_eval's measures carry no interval: ``--ci`` alone warns that none is printed, and
    ``--strict`` (which would check nothing and pass) is an error before any output."""
    rc, out, err = cli(capsys, "eval", files / "qrels", files / "run", "-m", "map", "-m",
                       "P.10", "--ci", "0.95", "--strict")
    assert rc == 1 and out == ""
    assert "--strict: no interval to check: map, P_10 are computed from the judgments" in err
    rc, out, err = cli(capsys, "eval", files / "qrels", files / "run", "-m", "map",
                       "--ci", "0.95")
    assert rc == 0 and out == "map                   \tall\t0.7917\n"
    assert "warning: --ci: no interval to print: map is computed" in err
    rc, out, err = cli(capsys, "eval", files / "qrels", files / "run", "-m", "map", "-m",
                       "infAP", "--ci", "0.95", "--strict")
    assert rc == 0 and "infAP_status" in out and "no interval" not in err
