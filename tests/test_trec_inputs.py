"""trec_eval's -Z (z-scores), -R qrels_jg (judgment groups) and the runid line of several runs.

Oracles: trec_eval's own expected outputs of its test suite (``shared``: out.test.aqZ and
out.test.qrels_jg, byte for byte), pytrec_eval (trec_eval 9.0.8 in process) per judgment group
on random collections, and hand-computed z-scores. The readers are fuzzed with hypothesis.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irsample.cli import main
from irsample.errors import InputError
from irsample.io.trec_extra import read_qrels_jg, read_zscores

pytrec_eval = pytest.importorskip("pytrec_eval")

# Topic 1: run ranks a (rel 1), b (rel 0), c (rel 1); topic 2: d (rel 0), e (rel 1).
QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 1\n2 0 d 0\n2 0 e 1\n"
RUN = "1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 c 3 1 r\n2 Q0 d 1 2 r\n2 Q0 e 2 1 r\n"


def cli(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def write(tmp_path, **texts):
    paths = {}
    for name, text in texts.items():
        paths[name] = tmp_path / name
        paths[name].write_text(text)
    return paths


def test_zscores_by_hand(tmp_path, capsys):
    # AP: topic 1 (1 + 2/3) / 2 = 0.8333, topic 2 1/2; num_ret 3 and 2.
    f = write(tmp_path, qrels=QRELS, run=RUN,
              z="1 map 0.5 0.25\n2 map 0.5 0\n1 num_ret 3 0\n")
    rc, out, _ = cli(capsys, "eval", "-q", "-m", "map", "-m", "num_ret", "-m", "num_q",
                     "-Z", f["z"], f["qrels"], f["run"])
    assert rc == 0
    lines = [ln.split("\t") for ln in out.splitlines()]
    got = {(n.strip(), t): float(v) if n.strip() != "runid" else v for n, t, v in lines}
    assert got[("Znum_ret", "1")] == 0.0  # stddev 0 and the value is the mean
    assert got[("Znum_ret", "2")] == -1000000.0  # no reference for topic 2
    assert got[("Zmap", "1")] == pytest.approx(round((5 / 6 - 0.5) / 0.25, 4))
    assert got[("Zmap", "2")] == 0.0  # stddev 0, value equal to the mean
    assert got[("Zmap", "all")] == pytest.approx(round((4 / 3) / 2, 4))
    assert got[("Znum_ret", "all")] == -1000000.0  # summed, as num_ret is
    assert got[("Znum_q", "all")] == 2.0  # the number of topics, never z-scored
    assert out.splitlines()[0] == "Znum_ret               \t1\t0.0000"  # Z, name padded to 22


def test_zscores_refused_where_they_cannot_be_printed(tmp_path, capsys):
    f = write(tmp_path, qrels=QRELS, run=RUN, z="1 map 0.5 0.25\n")
    for extra in (["--format", "tsv"], ["--ci", "0.95"]):
        rc, out, err = cli(capsys, "eval", "-Z", f["z"], *extra, f["qrels"], f["run"])
        assert rc == 1 and out == "" and "-Z" in err


def test_prefs_formats_are_a_listed_difference(tmp_path, capsys):
    f = write(tmp_path, qrels=QRELS, run=RUN)
    for fmt in ("prefs", "qrels_prefs"):
        rc, out, err = cli(capsys, "eval", "-R", fmt, f["qrels"], f["run"])
        assert rc == 1 and out == ""
        assert "Differences from trec_eval" in err


def _random_groups(rng, n_topics=4, n_docs=25):
    """qrels_jg lines of 2-3 groups (not every group judges every topic) and two runs."""
    lines, runs = [], {"ra": [], "rb": []}
    for t in range(1, n_topics + 1):
        for g in rng.choice(3, size=rng.integers(1, 4), replace=False):
            for d in rng.choice(n_docs, size=12, replace=False):
                lines.append((str(t), str(g), f"D{d}", int(rng.choice([-1, 0, 0, 1, 2]))))
        for name, run in runs.items():
            for rank, d in enumerate(rng.choice(n_docs, size=15, replace=False)):
                run.append((str(t), f"D{d}", rank + 1, float(rng.random()), name))
    return lines, runs


@pytest.mark.parametrize("seed", range(6))
def test_judgment_groups_average_pytrec_eval_per_group(tmp_path, capsys, seed):
    lines, runs = _random_groups(np.random.default_rng(seed))
    qrels = tmp_path / "qrels_jg"
    qrels.write_text("".join(f"{q} {g} {d} {r}\n" for q, g, d, r in lines))
    paths = []
    for name, rows in runs.items():
        paths.append(tmp_path / name)
        paths[-1].write_text("".join(f"{q} Q0 {d} {k} {s!r} {n}\n" for q, d, k, s, n in rows))
    rc, out, _ = cli(capsys, "eval", "-R", "qrels_jg", "-q", "-m", "map_avgjg",
                     "-m", "P_avgjg.5,10", "-m", "Rprec_mult_avgjg.0.5,1.0", qrels, *paths)
    assert rc == 0
    printed = {}
    run = None
    for row in out.splitlines():
        name, topic, value = (x.strip() for x in row.split("\t"))
        if name == "runid":
            run = value
            continue
        printed.setdefault(topic, {})[name] = float(value)
    assert run == "rb"  # several runs: each block is named
    # the last block (run rb) against pytrec_eval, one evaluation per group
    per_group: dict = {}
    for q, g, d, r in lines:
        per_group.setdefault(g, {}).setdefault(q, {})[d] = r
    run_dict = {}
    for q, d, _, s, _ in runs["rb"]:
        run_dict.setdefault(q, {})[d] = s
    measures = {"map", "P.5,10", "Rprec_mult.0.5,1.0"}
    values: dict = {}
    for qrels_g in per_group.values():
        result = pytrec_eval.RelevanceEvaluator(qrels_g, measures).evaluate(run_dict)
        for q, row in result.items():
            for name, v in row.items():
                values.setdefault(q, {}).setdefault(name, []).append(v)
    for q, row in values.items():
        for name, vs in row.items():
            family, _, cut = name.partition("_") if name.startswith("P_") else (name, "", "")
            if name.startswith("Rprec_mult_"):
                family, cut = "Rprec_mult", name.removeprefix("Rprec_mult_")
            shown = f"{family}_avgjg" + (f"_{cut}" if cut else "")
            assert printed[q][shown] == pytest.approx(round(np.mean(vs), 4), abs=1e-12), (q, name)


def test_several_runs_are_named_in_trec_format(tmp_path, capsys):
    f = write(tmp_path, qrels=QRELS, run=RUN, run2=RUN.replace(" r\n", " s\n"))
    _, out, _ = cli(capsys, "eval", "-m", "map", f["qrels"], f["run"], f["run2"])
    runid, ap = f"{'runid':<22s}\tall\t", f"{'map':<22s}\tall\t0.6667"
    assert out.splitlines() == [runid + "r", ap, runid + "s", ap]
    _, one, _ = cli(capsys, "eval", "-m", "map", f["qrels"], f["run"])
    assert one == "map                   \tall\t0.6667\n"  # one run: trec_eval's bytes


def test_bad_lines_name_file_and_line(tmp_path):
    cases = {
        "1 map 0.5\n": "expected exactly 4 fields",
        "1 map 0.5 0.1\n1 map x 0.1\n": ":2",
        "1 map 0.5 0.1\n\n1 map 0.4 0.1\n": "repeated z-score",
    }
    for text, expected in cases.items():
        with pytest.raises(InputError, match=expected):
            read_zscores(io.BytesIO(text.encode()))
    with pytest.raises(InputError, match="duplicate judgment in group 'u1'"):
        read_qrels_jg(io.BytesIO(b"1 u1 a 1\n1 u2 a 0\n1 u1 a 0\n"))
    with pytest.raises(InputError, match="relevance"):
        read_qrels_jg(io.BytesIO(b"1 u1 a 1.5\n"))


# a line starting with '#' is a comment, as in every irsample reader
token = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1,
                max_size=6).filter(lambda s: not s.startswith("#"))


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.tuples(token, token),
                       st.tuples(st.floats(-1e6, 1e6), st.floats(0, 1e3)), min_size=1))
def test_zscores_read_back(table):
    text = "".join(f"{q}\t{m}  {mean!r} {sd!r}\n" for (q, m), (mean, sd) in table.items())
    assert read_zscores(io.BytesIO(text.encode())) == table


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.tuples(token, token, token), st.integers(-5, 5), min_size=1))
def test_qrels_jg_read_back(judgments):
    text = "".join(f"{q} {g} {d} {r}\n" for (q, g, d), r in judgments.items())
    groups = read_qrels_jg(io.BytesIO(text.encode()))
    assert list(groups) == sorted({g for _, g, _ in judgments}, key=str.encode)
    back = {(q.decode(), g, d.decode()): int(r) for g, t in groups.items()
            for q, d, r in zip(t.qid.to_pylist(), t.docno.to_pylist(), t.rel)}
    assert back == judgments


@pytest.mark.shared
@pytest.mark.parametrize("argv, expected", [
    (["-m", "all_trec", "-q", "-Z", "zscores_file", "qrels.test", "results.test"], "out.test.aqZ"),
    (["-m", "qrels_jg", "-q", "-R", "qrels_jg", "qrels.123", "results.test"], "out.test.qrels_jg"),
])
def test_trec_eval_expected_outputs(shared, capsys, argv, expected):
    folder = shared / "data" / "trec_eval_tests"
    argv = [str(folder / a) if (folder / a).exists() else a for a in argv]
    rc, out, _ = cli(capsys, "eval", *argv)
    assert rc == 0
    assert out == (folder / expected).read_text()
