"""``irsample judge``: simulation with qrels, and a person judging through the state directory
in resumable batches (partially filled judgments, errors with file:line, nothing written on bad
input). Runs and qrels are tiny files written here."""

from __future__ import annotations

from pathlib import Path

import pytest

from irsample.cli import main

# Topic 1: A ranks a b c d, B ranks c e a f; topic 2: A ranks x y, B ranks y z.
RUN_A = "1 Q0 a 1 10 A\n1 Q0 b 2 9 A\n1 Q0 c 3 8 A\n1 Q0 d 4 7 A\n2 Q0 x 1 3 A\n2 Q0 y 2 2 A\n"
RUN_B = "1 Q0 c 1 10 B\n1 Q0 e 2 9 B\n1 Q0 a 3 8 B\n1 Q0 f 4 7 B\n2 Q0 y 1 3 B\n2 Q0 z 2 2 B\n"
QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 1\n1 0 d 0\n1 0 e 2\n1 0 f 0\n2 0 x 0\n2 0 y 0\n2 0 z 1\n"
GRADE = {(q, d): int(g) for q, _, d, g in (line.split() for line in QRELS.splitlines())}


@pytest.fixture
def files(tmp_path):
    for name, text in {"runA": RUN_A, "runB": RUN_B, "qrels": QRELS}.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def judge(capsys, files, *options):
    rc = main(["judge", str(files / "runA"), str(files / "runB"), *map(str, options)])
    out, err = capsys.readouterr()
    return rc, out, err


def rows(path: Path) -> list[list[str]]:
    return [line.split("\t") for line in path.read_text().splitlines()[1:]]


def snapshot(directory: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(directory.iterdir())}


def test_simulation_writes_the_judged_qrels_and_the_order(capsys, files):
    state = files / "sim"
    rc, out, err = judge(capsys, files, "--method", "mtf", "--budget", "6", "--state", state,
                         "--qrels", files / "qrels")
    assert rc == 0 and err == ""
    # budget 6 over 6 + 3 candidates: 3 per topic, round robin. Topic 1 (keys: A first): a
    # relevant, b not -> B: c relevant. Topic 2: x not -> B: y not -> A: y judged, not -> z.
    assert rows(state / "order.tsv") == [
        ["1", "1", "a", "1"], ["2", "2", "x", "0"], ["3", "1", "b", "0"], ["4", "2", "y", "0"],
        ["5", "1", "c", "1"], ["6", "2", "z", "1"]]
    assert (state / "qrels").read_text() == "1 0 a 1\n2 0 x 0\n1 0 b 0\n2 0 y 0\n1 0 c 1\n2 0 z 1\n"
    assert "6 of 6 documents judged, 3 relevant" in out and "not in" not in out
    again = snapshot(state)
    assert judge(capsys, files, "--method", "mtf", "--budget", "6", "--state", state,
                 "--qrels", files / "qrels")[0] == 0
    assert snapshot(state) == again  # deterministic: the same session rewritten identically


def test_the_simulation_judges_only_the_topics_the_qrels_name(capsys, files):
    """Topic 3, ranked by run A but absent from the qrels, gets no judgment (it took budget
    and counted as non-relevant); the head counts the topics judged, not the qrels' own."""
    (files / "runA").write_text(RUN_A + "3 Q0 p 1 5 A\n3 Q0 q 2 4 A\n")
    (files / "qrels2").write_text(QRELS + "4 0 w 1\n")  # a topic no run ranks
    state = files / "sim"
    rc, out, err = judge(capsys, files, "--method", "mtf", "--budget", "20", "--state", state,
                         "--qrels", files / "qrels2")
    assert rc == 0 and err == ""
    assert {r[1] for r in rows(state / "order.tsv")} == {"1", "2"}
    assert "9 of 9 documents judged" in out and "(2 topics, 2 runs)" in out


def test_a_run_sharing_no_topic_with_the_qrels_is_named_with_both_sides_ids(capsys, files):
    (files / "qrels3").write_text("7 0 a 1\n8 0 b 0\n")
    state = files / "sim"
    rc, out, err = judge(capsys, files, "--method", "mtf", "--budget", "4", "--state", state,
                         "--qrels", files / "qrels3")
    assert rc == 1 and out == "" and not state.exists()
    assert "run 'A' has no topic in common with the qrels" in err
    assert "the run's 1, 2, the qrels' 7, 8)" in err


def test_a_person_judges_in_batches_and_resumes_from_partial_judgments(capsys, files):
    state = files / "human"
    args = ("--method", "hedge", "--budget", "7", "--batch", "3", "--state", state)
    rc, out, _ = judge(capsys, files, *args)
    assert rc == 0 and "3 documents to judge" in out
    batch = rows(state / "batch.tsv")
    assert len(batch) == 3 and not (state / "judgments").exists()
    # first invocation done; the person judges only the first two documents of the batch
    (state / "judgments").write_text("".join(f"{q} 0 {d} {GRADE[q, d]}\n" for q, d in batch[:2]))
    rc, out, _ = judge(capsys, files, *args)
    assert rc == 0 and "2 of 7 documents judged" in out
    assert rows(state / "batch.tsv") == batch[2:]  # the missing one again, nothing new
    assert [r[3] for r in rows(state / "order.tsv")] == [str(GRADE[q, d]) for q, d in batch[:2]] + [
        ""
    ]
    for _ in range(5):  # judge whatever is handed out until the budget is spent
        with (state / "judgments").open("a") as fh:
            fh.writelines(f"{q} 0 {d} {GRADE[q, d]}\n" for q, d in rows(state / "batch.tsv"))
        rc, out, _ = judge(capsys, files, *args)
        assert rc == 0
        if "done" in out:
            break
    assert "7 of 7 documents judged" in out and rows(state / "batch.tsv") == []
    simulated = files / "sim"
    judge(capsys, files, *args[:-1], simulated, "--qrels", files / "qrels")
    assert rows(state / "order.tsv") == rows(simulated / "order.tsv")
    assert (state / "qrels").read_text() == (simulated / "qrels").read_text()


def test_judgments_of_documents_never_handed_out_are_rejected_with_file_and_line(capsys, files):
    state = files / "human"
    args = ("--method", "mtf-global", "--budget", "4", "--batch", "2", "--state", state)
    assert judge(capsys, files, *args)[0] == 0
    q, d = rows(state / "batch.tsv")[0]
    (state / "judgments").write_text(f"# grades\n{q} 0 {d} 1\n2 0 z 1\n")
    before = snapshot(state)
    rc, out, err = judge(capsys, files, *args)
    assert rc == 1 and out == ""
    assert err == (f"irsample: {state / 'judgments'}:3: document 'z' of topic '2' was never "
                   "handed out for judging\n")
    assert snapshot(state) == before
    (state / "judgments").write_text(f"{q} 0 {d} high\n")
    rc, _, err = judge(capsys, files, *args)
    assert rc == 1 and f"{state / 'judgments'}:1: relevance is not an integer" in err


def test_bad_state_options_or_input_write_nothing(capsys, files):
    state = files / "human"
    args = ("--method", "hedge", "--budget", "4", "--state", state)
    assert judge(capsys, files, *args)[0] == 0
    before = snapshot(state)
    rc, _, err = judge(capsys, files, "--method", "hedge", "--budget", "5", "--state", state)
    assert rc == 1 and "other options: budget differs (4 in the session, 5 given);" in err
    rc, _, err = judge(capsys, files, *args, "--beta", "0.2")  # was "(method differ)"
    assert rc == 1 and "other options: beta differs (0.1 in the session, 0.2 given);" in err
    rc, _, err = judge(capsys, files, *args, "--qrels", files / "qrels")
    assert rc == 1 and "assessor" in err
    assert snapshot(state) == before
    order = (state / "order.tsv").read_text()
    (state / "order.tsv").write_text(order.replace("step\t", "Step\t"))
    rc, _, err = judge(capsys, files, *args)
    assert rc == 1 and f"{state / 'order.tsv'}:1: expected the header" in err
    (state / "order.tsv").write_text(order.replace("\t1\t", "\t9\t", 1))
    rc, _, err = judge(capsys, files, *args)
    assert rc == 1 and f"{state / 'order.tsv'}:2: document" in err and "not in the runs" in err
    fresh = files / "fresh"
    rc, _, err = judge(capsys, files, "--method", "mtf", "--beta", "0.5", "--budget", "3",
                       "--state", fresh)
    assert rc == 1 and "beta is a parameter of hedge" in err and not fresh.exists()
    rc = main(
        ["judge", str(files / "missing"), "--method", "mtf", "--budget", "3", "--state", str(fresh)]
    )
    assert rc == 1 and not fresh.exists()
    assert "no such file" in capsys.readouterr().err


def test_grade_minus_one_means_not_judged_yet_other_negatives_and_repeats_are_errors(capsys, files):
    state = files / "human"
    args = ("--method", "depth", "--budget", "4", "--batch", "2", "--state", state)
    assert judge(capsys, files, *args)[0] == 0
    (q1, d1), (q2, d2) = rows(state / "batch.tsv")
    (state / "judgments").write_text(f"{q1} 0 {d1} 1\n{q2} 0 {d2} -1\n")
    rc, out, _ = judge(capsys, files, *args)
    assert rc == 0 and "1 of 4 documents judged" in out and rows(state / "batch.tsv") == [[q2, d2]]
    (state / "judgments").write_text(f"{q1} 0 {d1} 1\n{q2} 0 {d2} -3\n")  # was "not judged"
    rc, _, err = judge(capsys, files, *args)
    assert rc == 1 and (f"{state / 'judgments'}:2: grade -3 of document {d2!r}: a grade is an "
                        "integer >= 0, or -1 for a document not judged yet") in err
    order = (state / "order.tsv").read_text()
    (state / "order.tsv").write_text(order + f"3\t{q1}\t{d1}\t\n")
    rc, _, err = judge(capsys, files, *args)
    assert (
        rc == 1
        and f"{state / 'order.tsv'}:4: document {d1!r} of topic {q1!r} is handed out twice" in err
    )


def _random_runs(directory: Path, n_runs: int = 8, n_topics: int = 4, n_docs: int = 30):
    """``n_runs`` random rankings of 15 of ``n_docs`` documents per topic (run names r0..,
    written to files named so that the argument order differs from the name order) and qrels
    with about a third of the documents relevant."""
    import numpy as np

    rng = np.random.default_rng(7)
    paths = []
    for r in range(n_runs):
        lines = []
        for t in range(1, n_topics + 1):
            docs = rng.choice(n_docs, 15, replace=False)
            lines += [f"{t} Q0 d{d} {i + 1} {100 - i} r{r}\n" for i, d in enumerate(docs)]
        paths.append(directory / f"file{(r * 5) % n_runs}")
        paths[-1].write_text("".join(lines))
    (directory / "qrels").write_text("".join(
        f"{t} 0 d{d} {int(rng.random() < 0.35)}\n"
        for t in range(1, n_topics + 1) for d in range(n_docs)))
    return paths


@pytest.mark.parametrize("method", ["mtf", "mtf-global", "hedge", "depth"])
def test_the_order_of_the_run_files_does_not_matter(capsys, tmp_path, method):
    """Ties are broken on run names, not argument positions: the same runs in reverse give the
    same judging order (mtf and mtf-global gave other documents: TREC-8, 12 runs, 20 per topic,
    574 relevant found against 569). A session also continues with the runs reordered."""
    paths = _random_runs(tmp_path)
    orders = []
    for name, given in (("forward", paths), ("reverse", paths[::-1])):
        state = tmp_path / name
        rc, _, err = main(["judge", *map(str, given), "--method", method, "--budget", "17",
                           "--state", str(state), "--qrels", str(tmp_path / "qrels"),
                           "--batch", "2", "--no-progress"]), *capsys.readouterr()
        assert rc == 0, err
        orders.append(snapshot(state))
    assert orders[0] == orders[1]
    state = tmp_path / "human"
    for given in (paths, paths[::-1]):
        rc = main(["judge", *map(str, given), "--method", method, "--budget", "5",
                   "--per-topic", "--state", str(state), "--no-progress"])
        assert rc == 0, capsys.readouterr().err


def test_the_judged_set_is_said_not_to_be_a_probability_sample(capsys, files):
    """Evaluated as qrels the adaptive judged set is a census of itself: ht(AP) on it printed
    0.5062 [0.5062, 0.5062] ok on CACM (hedge, 10 per topic) against 0.3622 on the complete
    qrels, and the command did not say that its judgments are no sample."""
    rc, out, err = judge(capsys, files, "--method", "hedge", "--budget", "4", "--state",
                         files / "sim-note", "--qrels", files / "qrels")
    assert rc == 0 and err == ""
    assert "not drawn as a probability sample" in out and "ht(M) and ppi(M)" in out
