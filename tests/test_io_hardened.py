"""Hardened input (issue: everyday use, item 6): each bad input stops with file:line and exit 1,
and odd-but-valid input (BOM, huge grades, non-UTF-8 docnos) is read correctly."""

from __future__ import annotations

import gzip
import warnings
import zlib

import numpy as np
import pytest

from irsample.api import evaluate
from irsample.cli import main
from irsample.errors import InputError, InputWarning
from irsample.io import load_qrels, read_prels, read_qrels, read_run, read_strata_qrels
from irsample.io.lists import read_group_map, read_run_list
from irsample.model import Collection, Judgments

RUN = b"1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 c 3 1 t\n2 Q0 d 1 5 t\n"
QRELS = b"1 0 a 1\n1 0 c 0\n2 0 d 0\n2 0 e 1\n"


def write(path, data: bytes):
    path.write_bytes(data)
    return path


def cli(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_bom_is_stripped(tmp_path, capsys):
    plain = write(tmp_path / "q", QRELS)
    bom = write(tmp_path / "qb", b"\xef\xbb\xbf" + QRELS)
    run = write(tmp_path / "r", b"\xef\xbb\xbf" + RUN)
    assert read_qrels(bom).qid.to_pylist() == read_qrels(plain).qid.to_pylist()
    assert read_run(run).qid.to_pylist()[0] == b"1"
    _, expected, _ = cli(capsys, "eval", plain, write(tmp_path / "r0", RUN), "-q")
    code, out, _ = cli(capsys, "eval", bom, run, "-q")
    assert code == 0 and out == expected  # no phantom topic, same num_ret and map


@pytest.mark.parametrize("score", [b"inf", b"-inf", b"nan", b"NaN", b"1e999", b"Infinity"])
def test_non_finite_scores_refused(tmp_path, capsys, score):
    run = write(tmp_path / "r", RUN.replace(b"2 Q0 d 1 5 t", b"2 Q0 d 1 " + score + b" t"))
    code, out, err = cli(capsys, "eval", write(tmp_path / "q", QRELS), run)
    assert code == 1 and out == ""
    assert f"{run}:4: score is not a finite number" in err


@pytest.mark.parametrize("reader,line", [
    (read_qrels, b"1 0 b 1.5\n"),
    (read_strata_qrels, b"1 0 b s 1.5\n"),
    (read_prels, b"1 b 1.5 1 0.5\n"),
])
def test_fractional_relevance_refused(tmp_path, reader, line):
    good = {
        read_qrels: b"1 0 a 1\n",
        read_strata_qrels: b"1 0 a s 1\n",
        read_prels: b"1 a 1 1 0.5\n",
    }
    path = write(tmp_path / "q", good[reader] + line)
    with pytest.raises(InputError, match=r":2: relevance must be a whole number, not '1.5'"):
        reader(path)
    assert reader(
        write(tmp_path / "ok", good[reader] + line.replace(b"1.5", b"2.0"))
    ).rel.tolist() == [1, 2]


def test_relevance_range_messages(tmp_path):
    low = write(tmp_path / "low", b"1 0 a -2147483648\n")
    assert read_qrels(low).rel.tolist() == [-(2**31)]  # the whole 32-bit range is accepted
    for value in (b"2147483648", b"-2147483649", b"99999999999999999999999"):
        path = write(tmp_path / "q", b"1 0 a 1\n1 0 b " + value + b"\n")
        with pytest.raises(InputError, match=r"q:2: relevance -?\d+ does not fit in 32 bits "
                                             r"\(allowed: -2147483648 to 2147483647\)"):
            read_qrels(path)


@pytest.mark.parametrize("grade", [10**9, 2**31 - 1])
def test_huge_grades_cost_no_memory(tmp_path, capsys, grade):
    qrels = write(tmp_path / "q", QRELS.replace(b"1 0 a 1", b"1 0 a %d" % grade))
    run = write(tmp_path / "r", RUN)
    ev = evaluate(qrels, run, ["map", "P@2", "bpref", "infAP"])
    assert ev.table().loc["t", "map"] == pytest.approx(0.5)  # topic 1: AP 1; topic 2: AP 0
    table = load_qrels(qrels)
    coll = Collection.build([read_run(run)], [table])
    j = Judgments.from_qrels(coll, table)
    sizes = [v.size for v in vars(j).values() if isinstance(v, np.ndarray)]
    assert max(sizes) <= 16 and j.max_grade == grade and j.max_grade_line == 1
    code, out, err = cli(capsys, "eval", qrels, run, "-m", "ndcg")
    assert code == 1 and out == ""
    assert f"{qrels}:1: relevance grade {grade} is too large for nDCG" in err


def test_non_utf8_topic_ids_reported(tmp_path, capsys):
    qrels = write(tmp_path / "q", QRELS + b"3\xff 0 x 1\n")
    code, out, err = cli(capsys, "eval", qrels, write(tmp_path / "r", RUN))
    assert code == 1 and out == "" and "traceback" not in err.lower()
    assert f"{qrels}:5: topic id is not UTF-8 text: '3\\\\xff'" in err
    run = write(tmp_path / "r2", RUN + b"\xfe Q0 a 1 1 t\n")
    with pytest.raises(InputError, match=r"r2:5: topic id is not UTF-8 text"):
        read_run(run)
    with pytest.raises(InputError, match=r"r3:4: run tag is not UTF-8 text"):
        read_run(write(tmp_path / "r3", RUN.replace(b"5 t\n", b"5 t\xc3\n")))
    with pytest.raises(InputError, match=r"s:2: stratum label is not UTF-8 text"):
        read_strata_qrels(write(tmp_path / "s", b"1 0 a s 1\n1 0 b \xff 1\n"))
    with pytest.raises(InputError, match=r"l:2: line is not UTF-8 text"):
        read_run_list(write(tmp_path / "l", b"run1\nrun\xff2\n"))
    with pytest.raises(InputError, match=r"g:1: line is not UTF-8 text"):
        read_group_map(write(tmp_path / "g", b"run\xff g\n"))


def test_non_utf8_docnos_are_binary_safe(tmp_path):
    # docnos are compared byte-wise (trec_eval's strcmp) and never printed by eval
    run = write(tmp_path / "r", b"1 Q0 a\xff 1 3 t\n1 Q0 b 2 2 t\n")
    qrels = write(tmp_path / "q", b"1 0 a\xff 1\n1 0 b 0\n")
    assert evaluate(qrels, run, ["map"]).table().loc["t", "map"] == 1.0


def test_stratified_detection_with_non_utf8_bytes(tmp_path):
    path = write(tmp_path / "s", b"1 0 a\xff s 1\n1 0 b s -1\n")
    assert load_qrels(path).stratum is not None  # detected without decoding the bytes


def test_prels_outside_unit_interval_skipped_with_one_warning(tmp_path):
    path = write(tmp_path / "p", b"1 a 1 1 0.5\n1 b 1 1 0\n1 c 0 1 -0.2\n1 d 1 1 1.5\n1 e 1 1 1\n"
                                 b"1 f -999 1 0.5\n")
    with pytest.warns(InputWarning) as caught:
        table = read_prels(path)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert message.startswith(
        f"{path}:2: skipped 3 record(s) whose inclusion probability is outside (0, 1]"
    )
    assert table.docno.to_pylist() == [b"a", b"e"] and table.prob.tolist() == [0.5, 1.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # rel -999 alone is the format's own mark: no warning
        read_prels(write(tmp_path / "p2", b"1 a 1 1 0.5\n1 f -999 1 0.5\n"))


def test_cli_prints_the_prels_warning_once(tmp_path, capsys):
    prels = write(tmp_path / "p", b"1 a 1 1 0.5\n1 b 1 1 0\n1 c 0 1 0.25\n")
    code, out, err = cli(
        capsys, "eval", prels, write(tmp_path / "r", b"1 Q0 a 1 3 t\n"), "-m", "statAP"
    )
    assert code == 0 and out.startswith("statAP")
    assert err == (f"irsample: warning: {prels}:2: skipped 1 record(s) whose inclusion probability "
                   "is outside (0, 1] (as statAP does), the first: 0\n")


def test_truncated_gzip_names_the_line_it_breaks_off_in(tmp_path, capsys):
    """A gzip file cut short (a download stopped half-way) is an error naming the line of the
    text in which it breaks off, with exit 1 and nothing on standard output."""
    lines = b"".join(b"1 Q0 doc%05d %d %d t\n" % (i, i + 1, 10000 - i) for i in range(4000))
    whole = gzip.compress(lines)
    cut = write(tmp_path / "cut.run.gz", whole[: len(whole) // 2])
    code, out, err = cli(capsys, "eval", write(tmp_path / "q", QRELS), cut, "-m", "map")
    assert code == 1 and out == ""
    line = int(err.split(f"{cut}:")[1].split(":")[0])
    complete = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(whole[: len(whole) // 2])
    assert line == complete.count(b"\n") + 1 and 1 < line < 4000
    assert "corrupt gzip data" in err and "reads whole up to the line before this one" in err


@pytest.mark.parametrize("reader,line", [
    (read_run, b"1 Q0 a 1 2.5 t"), (read_qrels, b"1 0 a 1"), (read_strata_qrels, b"1 0 a s 1"),
    (read_prels, b"1 a 1 1 0.5"),
])
def test_lines_ended_by_a_carriage_return_alone_are_refused(tmp_path, reader, line):
    """Classic Mac OS line endings (CR alone) make one long line: a run's reader, which skips
    what follows a record's sixth field as trec_eval does, would read the first record alone
    and give wrong numbers with no error. Refused, naming the file; CRLF and a single line
    ending in CR are read."""
    cr = write(tmp_path / "cr", line + b"\r" + line.replace(b" a ", b" b ") + b"\r")
    with pytest.raises(InputError, match="carriage return alone") as caught:
        reader(str(cr))
    assert caught.value.source == str(cr)
    assert len(reader(str(write(tmp_path / "crlf", line + b"\r\n" + line.replace(
        b" a ", b" b ") + b"\r\n"))).qid) == 2
    assert len(reader(str(write(tmp_path / "one", line + b"\r"))).qid) == 1
    utf16 = write(tmp_path / "u16", (line.decode() + "\n").encode("utf-16"))
    with pytest.raises(InputError, match="UTF-16"):
        reader(str(utf16))


@pytest.mark.parametrize("reader,line", [
    (read_run, b"1 Q0 a 1 2.5 t"), (read_qrels, b"1 0 a 1"), (read_strata_qrels, b"1 0 a s 1"),
    (read_prels, b"1 a 1 1 0.5"),
])
def test_a_nul_byte_is_refused_with_its_line(tmp_path, reader, line):
    """A NUL in a qrels topic id made a new topic ("1\\0", counted by -c, printed raw); in a
    run's docno it was read as part of the id. trec_eval refuses such qrels."""
    path = write(tmp_path / "nul", line + b"\n" + line.replace(b"1 ", b"1\x00 ", 1) + b"\n")
    with pytest.raises(InputError, match="a NUL byte: binary data, not text") as caught:
        reader(str(path))
    assert caught.value.line == 2 and caught.value.source == str(path)


def test_stratified_qrels_with_a_fractional_grade_say_why_they_read_as_prels(tmp_path):
    """A stratified file with 1.5 as line 3's grade was detected as prels, and the error named
    line 1 with its docno as the relevance, saying nothing of why."""
    path = write(tmp_path / "st", b"1 0 a s1 1\n1 0 b s1 0\n1 0 c s2 1.5\n")
    with pytest.raises(InputError, match=r"read as prels, some line's fifth field having a "
                       r"fraction; for stratified qrels, pass --qrels-format strata"):
        load_qrels(str(path))
    with pytest.raises(InputError, match="relevance must be a whole number") as caught:
        load_qrels(str(path), "strata")
    assert caught.value.line == 3


def test_group_maps_refuse_a_third_field_and_errors_show_a_glimpse_of_binary_lines(tmp_path):
    """'run group x' was read as group 'group' (run lists refused a third field); a line of
    binary data was echoed whole in the error (2.5 KB)."""
    groups = write(tmp_path / "groups", b"r1 g1\nr2 g2 extra\n")
    with pytest.raises(InputError, match=r"groups:2: expected 'run group' or 'run:group:...', "
                       r"found 'r2 g2 extra'"):
        read_group_map(str(groups))
    garbage = write(tmp_path / "list", b"\xff" * 3000 + b"\n")
    with pytest.raises(InputError, match="list:1: line is not UTF-8 text") as caught:
        read_run_list(str(garbage))
    assert len(caught.value.message) < 400
