"""``irsample assess`` on the command line: add-assessor, export (resolving doubly judged
documents, details), errors that stop serve before it listens, and two planner rounds
(plan -> sample -> assess -> export -> plan --judged -> sample -> assess -> merge)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("jinja2")

from irsample.assess.session import Session
from irsample.cli import main

from .test_assess_helpers import sample, selected, tiny_data


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    return tiny_data(folder / "data"), folder


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def judge_everything(session: Session, qrels, names=("a",), flip=None):
    ids = {n: session.store.assessor_by_token(session.store.add_assessor(n)).id for n in names}
    busy = True
    while busy:
        busy = False
        for name, a in ids.items():
            item = session.next_item(a)
            if item is None:
                continue
            busy = True
            grade = qrels[(item.topic, item.docno)]
            session.judge(a, item.id, flip(grade) if flip and name == names[-1] else grade)


def test_add_assessor_and_export(data, tmp_path, capsys):
    d, folder = data
    design = sample(d["runs"], tmp_path / "design")
    capsys.readouterr()
    db = tmp_path / "j.db"
    rc, out, _ = run(capsys, "assess", "add-assessor", "--db", db, "alice", "--url",
                     "http://127.0.0.1:9000/")
    assert rc == 0 and out.startswith("alice\thttp://127.0.0.1:9000/login?token=")
    rc, _, err = run(capsys, "assess", "add-assessor", "--db", db, "alice")
    assert rc == 1 and "called 'alice' exists already" in err and "reissue" in err
    old_token = out.split("token=")[1].strip()
    rc, out, _ = run(capsys, "assess", "reissue", "--db", db, "alice")
    assert rc == 0 and out.startswith("alice\thttp://127.0.0.1:8765/login?token=")
    from irsample.assess.store import Store

    store = Store(db)
    assert store.assessor_by_token(old_token) is None
    assert store.assessor_by_token(out.split("token=")[1].strip()).name == "alice"
    store.close()
    rc, _, err = run(capsys, "assess", "revoke", "--db", db, "alice")
    assert rc == 0 and "revoked alice's link" in err
    rc, out, _ = run(capsys, "assess", "add-organiser", "--db", db, "olga")
    assert rc == 0 and out.startswith("olga\t")
    rc, out, _ = run(capsys, "assess", "people", "--db", db)
    assert out.splitlines()[1:] == ["alice\tassessor\trevoked\t0\t0\t0",
                                    "olga\torganiser\tactive\t0\t0\t0"]
    rc, _, err = run(capsys, "assess", "revoke", "--db", db, "nobody")
    assert rc == 1 and "no assessor or organiser called 'nobody' (known: alice, olga)" in err
    rc, _, err = run(capsys, "assess", "export", "--db", tmp_path / "none.db", "-o", tmp_path / "x")
    assert rc == 1 and "no such judging database" in err and not (tmp_path / "x").exists()
    rc, _, err = run(capsys, "assess", "export", "--db", db, "-o", tmp_path / "x")
    assert rc == 1 and "no judgments to export" in err and not (tmp_path / "x").exists()

    session = Session.open(design, d["docs"], d["topics"], db, overlap=1.0, grades=(0, 1, 2))
    judge_everything(session, d["qrels"], names=("b", "c"), flip=lambda g: 2 - g)
    pairs = selected(design)
    for resolve, pick in (("first", lambda g: g), ("max", lambda g: max(g, 2 - g)),
                          ("min", lambda g: min(g, 2 - g))):
        out = tmp_path / f"{resolve}.qrels"
        rc, _, err = run(capsys, "assess", "export", "--db", db, "-o", out, "--resolve", resolve,
                         "--details", tmp_path / "details.tsv")
        assert rc == 0, err
        assert f"{2 * len(pairs)} judgments of {len(pairs)} documents; {len(pairs)} judged by " \
               f"several assessors" in err
        grades = {
            (q, d_): int(g) for q, _, d_, g in (x.split() for x in out.read_text().splitlines())
        }
        assert grades == {p: pick(d["qrels"][p]) for p in pairs}
    assert {x.split()[1] for x in (tmp_path / "first.qrels").read_text().splitlines()} <= {"b", "c"}
    details = (tmp_path / "details.tsv").read_text().splitlines()
    assert details[0] == "topic\tdocno\tstratum\tassessor\tgrade\ttime\tstate\tnote"
    assert len(details) == 2 * len(pairs) + 1
    # a note's tabs and newlines come out escaped (they were flattened to spaces)
    who = session.store.assessor_by_token(session.store.add_assessor("e")).id
    item = session.store.items()[0]
    session.store.db.execute("INSERT INTO judgments(item, assessor, grade, note, at, current) "
                             "VALUES (?, ?, 1, ?, 0, 1)", (item.id, who, "a\tb\nc\\d"))
    assert run(capsys, "assess", "export", "--db", db, "-o", tmp_path / "e.qrels", "--details",
               tmp_path / "details.tsv")[0] == 0
    noted = [x for x in (tmp_path / "details.tsv").read_text().splitlines() if "\te\t" in x]
    assert len(noted) == 1 and noted[0].split("\t")[-1] == "a\\tb\\nc\\\\d"


def test_serve_stops_on_bad_input_before_listening(data, tmp_path, capsys):
    d, folder = data
    design = sample(d["runs"], tmp_path / "design")
    capsys.readouterr()
    base = ["assess", "serve", "--design", design, "--docs", d["docs"], "--topics", d["topics"],
            "--db", tmp_path / "s.db", "--port", "0"]

    def fails(*args, message):
        rc, out, err = run(capsys, *args)
        assert rc == 1 and message in err and "serving on" not in out, (args, err)

    fails(*base[:2], "--design", tmp_path / "nothing", *base[4:], message="no such file")
    fails(*base[:4], "--docs", tmp_path / "nothing", *base[6:], message="no such file or folder")
    other = tmp_path / "few.jsonl"
    other.write_text('{"docno": "D0-000", "text": "x"}\n')
    fails(*base[:4], "--docs", other, *base[6:], message="documents of the design are not in")
    topics = tmp_path / "topics.tsv"
    topics.write_text("101\tone\n")
    fails(*base[:6], "--topics", topics, *base[8:], message="topics of the design are not in")
    fails(*base, "--order", "hedge", message="needs the design's runs (--runs)")
    fails(*base, "--overlap", "1.5", message="--overlap is a share in [0, 1]")
    fails(*base, "--grades", "0-12", message="grades must be at least two single digits")
    fails(*base, "--grades", "0-2", "-l", "3",
          message="-l 3 is above every grade offered (0-2): no judgment could count")
    fails(*base, "--runs", tmp_path / "nothing", message="no such file")
    stranger = tmp_path / "stranger.run"  # a run of another collection: none of its topics
    stranger.write_text("999 Q0 X-1 1 2.0 other\n")
    fails(*base, "--runs", stranger, message="run 'other' ranks none of the design's")
    twice = tmp_path / "twice.jsonl"  # the dashboard failed on these after the first judgment
    twice.write_text(Path(d["docs"]).read_text() + '{"docno": "D0-000", "text": "other"}\n')
    fails(*base[:4], "--docs", twice, *base[6:],
          message="document 'D0-000' appears twice with different texts (first at")
    assert not (tmp_path / "s.db").exists()
    with pytest.raises(SystemExit):
        run(capsys, *base[:-1], "65536")  # was taken as a port modulo 65536
    Session.open(design, d["docs"], d["topics"], tmp_path / "s.db")
    fails(*base, "--overlap", "0.5",
          message="other settings (overlap: 0.0 in the database, 0.5 given)")
    fresh = tmp_path / "fresh.db"
    rc, _, err = run(capsys, "assess", "add-assessor", "--db", fresh, "bad name")
    assert rc == 1 and "assessor names" in err and not fresh.exists()
    for name, rc_wanted in (("Ann", 0), ("ann", 1)):
        rc, _, err = run(capsys, "assess", "add-assessor", "--db", tmp_path / "s.db", name)
        assert rc == rc_wanted, err
    assert "'Ann' exists already, and 'ann' differs from it only in case" in err


def test_two_planner_rounds_through_the_app(data, tmp_path, capsys):
    d, folder = data
    runs = [str(r) for r in d["runs"]]
    rc, _, err = run(capsys, "plan", *runs, "--budget", "60", "--depth", "20", "-o",
                     tmp_path / "plan1.json")
    assert rc == 0, err
    assert main(["sample", *runs, "--design", str(tmp_path / "plan1.json"), "--seed", "1",
                 "-o", str(tmp_path / "round1")]) == 0
    session = Session.open(tmp_path / "round1", d["docs"], d["topics"], tmp_path / "r1.db")
    judge_everything(session, d["qrels"])
    capsys.readouterr()
    rc, _, err = run(
        capsys, "assess", "export", "--db", tmp_path / "r1.db", "-o", tmp_path / "r1.qrels"
    )
    assert rc == 0, err
    rc, _, err = run(capsys, "plan", *runs, "--budget", "60", "--design",
                     tmp_path / "round1" / "design.json", "--judged", tmp_path / "r1.qrels",
                     "-o", tmp_path / "plan2.json")
    assert rc == 0, err
    assert main(["sample", *runs, "--design", str(tmp_path / "plan2.json"), "--seed", "2",
                 "-o", str(tmp_path / "round2")]) == 0
    session = Session.open(tmp_path / "round2", d["docs"], d["topics"], tmp_path / "r2.db")
    first = set(selected(tmp_path / "round1"))
    second = {(it.topic, it.docno) for it in session.store.items()}
    assert second == set(selected(tmp_path / "round2")) and not second & first
    judge_everything(session, d["qrels"])
    capsys.readouterr()
    assert main(["assess", "export", "--db", str(tmp_path / "r2.db"), "-o",
                 str(tmp_path / "r2.qrels")]) == 0
    both = tmp_path / "both.qrels"
    both.write_text((tmp_path / "r1.qrels").read_text() + (tmp_path / "r2.qrels").read_text())
    rc, out, err = run(capsys, "merge", tmp_path / "round2" / "design.json", both,
                       "--format", "strata")
    assert rc == 0, err
    assert "# " not in err  # every selected document of round 2's design is judged
    assert sum(1 for x in out.splitlines() if x.split()[-1] != "-1") == len(first) + len(second)
