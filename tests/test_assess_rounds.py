"""A campaign over several rounds, against a real server: one server per database (a second
``serve`` and ``next-round`` refuse while it runs, naming it); the organiser's button plans and
loads round 2 from a partly judged round 1 (its unjudged documents leave the judging set, the
new design keeps the judged ones with probability 1); the live estimates stay on round 1 while
round 2 is in progress and move to round 2 once it is complete, equal to ``irsample eval`` on
the export; ``irsample assess next-round`` loads round 3, which a restarted server hands out.
"""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

requests = pytest.importorskip("requests")
pytest.importorskip("starlette")

from irsample.cli import main  # noqa: E402

from .test_assess_helpers import Api, Server, add_assessor, sample, tiny_data  # noqa: E402


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def judge(api, qrels, limit):
    n = 0
    while n < limit and (item := api.next()) is not None:
        api.judge(item["item"], qrels[(item["topic"], item["docno"])])
        n += 1
    return n


def admin(server, token):
    """The dashboard's JSON once the estimates of the current judgments are computed."""
    http = requests.Session()
    http.headers["Authorization"] = f"Bearer {token}"
    for _ in range(600):
        data = http.get(server.url + "/api/admin").json()
        if not data["computing"] and data["estimates"] is not None:
            again = http.get(server.url + "/api/admin").json()
            if not again["computing"]:
                return again
        time.sleep(0.1)
    raise AssertionError("estimates not computed")


def check_equal_to_eval(estimates, tmp_path, capsys):
    """The dashboard's numbers are those of its own command lines, exactly."""
    for line in estimates["commands"]:
        argv = [a.strip("'") for a in line.split()[1:]]
        argv = [str(tmp_path / a) if a.startswith(("judged.", "merged.")) else a for a in argv]
        if argv[0] == "eval":
            argv += ["--format", "tsv", "--places", "exact"]
        rc, out, err = run(capsys, *argv)
        assert rc == 0, err
    expected = {(r, m): (*map(float, v[:3]), *v[3:]) for r, _, m, *v in
                (x.split("\t") for x in out.splitlines()[1:])}
    got = {(row["run"], m): (c["value"], c["low"], c["high"], c["status"], c["reason"])
           for row in estimates["runs"] for m, c in row.items() if m != "run"}
    assert got == expected


def test_rounds_one_server_and_estimates(tmp_path, capsys):
    data = tiny_data(tmp_path / "data")
    design = sample(data["runs"], tmp_path / "design")
    db = tmp_path / "c.db"
    alice = add_assessor(db, "alice")
    boss = add_assessor(db, "olga", role="organiser")
    serve = [design, data["docs"], data["topics"], db, "--runs", *data["runs"]]
    capsys.readouterr()
    with Server(*serve) as server:
        rc, _, err = run(capsys, "assess", "serve", "--design", design, "--docs", data["docs"],
                         "--topics", data["topics"], "--db", db, "--port", "0")
        pid = server.proc.pid
        assert rc == 1 and f"another irsample assess serve is using this database (process " \
            f"{pid} at {server.url}/" in err and f"lock file {db}.lock" in err
        rc, _, err = run(capsys, "assess", "next-round", "--db", db, "--runs", *data["runs"],
                         "--batch", "10")
        assert rc == 1 and f"(process {pid} at" in err
        rc, out, err = run(capsys, "assess", "add-assessor", "--db", db, "carl")
        assert rc == 0 and out.startswith(f"carl\t{server.url}/login?token="), (out, err)

        api = Api(server.url, alice)
        assert judge(api, data["qrels"], 50) == 50  # round 1 (81 documents) stopped early
        held = api.next()  # alice holds a document of round 1 when round 2 is loaded
        first = admin(server, boss)
        assert first["estimates"]["basis"]["round"] == 1 and not first["estimates"]["error"]
        check_equal_to_eval(first["estimates"], tmp_path, capsys)

        organiser = Api(server.url, boss)
        organiser.csrf = sqlite3.connect(db).execute(
            "SELECT csrf FROM assessors WHERE name='olga'").fetchone()[0]
        r = organiser.http.post(server.url + "/admin/round", data={"batch": "40"},
                                headers={"X-CSRF-Token": organiser.csrf})
        assert r.status_code == 200 and "Round 2 loaded: 40 judgments planned" in r.text, r.text
        round2 = json.loads((tmp_path / "c.db.round2" / "design.json").read_text())
        judged = {(q, d) for q, _, d, _ in (x.split() for x in export(db, tmp_path))}
        rows = {(r[0], r[1]): r for r in round2["rows"]}
        assert all(rows[k][4] == 1.0 and rows[k][5] == 1 for k in judged)  # pi 1: known
        con = sqlite3.connect(db)
        assert con.execute("SELECT count(*) FROM items WHERE round=1 AND active=1 AND "
                           "judged=0").fetchone() == (0,)  # round 1's rest left the set
        now = api.next()  # the document alice held left with it: she gets one still to judge
        assert con.execute("SELECT active FROM items WHERE id=?", (now["item"],)).fetchone() \
            == (1,)
        if con.execute("SELECT active FROM items WHERE id=?", (held["item"],)).fetchone()[0] == 0:
            assert now["item"] != held["item"]

        assert judge(api, data["qrels"], 5) == 5  # round 2 in progress: round 1's estimates
        middle = admin(server, boss)["estimates"]
        assert middle["basis"]["round"] == 1 and "Round 2 is in progress" in \
            middle["basis"]["note"]
        judge(api, data["qrels"], 10_000)
        last = admin(server, boss)["estimates"]
        assert last["basis"]["round"] == 2 and last["basis"]["format"] == "prels"
        check_equal_to_eval(last, tmp_path, capsys)
    rc, out, err = run(capsys, "assess", "next-round", "--db", db, "--runs", *data["runs"],
                       "--batch", "15")
    assert rc == 0 and "round 3:" in out, err
    with Server(*serve) as server:
        item = Api(server.url, alice).next()
        assert item is not None
        assert sqlite3.connect(db).execute("SELECT round FROM items WHERE id=?",
                                           (item["item"],)).fetchone() == (3,)


def test_a_round_asked_for_more_than_the_pool_has_left_says_what_it_judges(tmp_path):
    """Judged in rounds, a round asked for more judgments than the pool has left plans the rest
    of the pool: the dashboard and the message after loading say how many, not the number
    asked for."""
    data = tiny_data(tmp_path / "data")
    design = sample(data["runs"], tmp_path / "design", design="1-5:1,6-20:0.6")
    pool = len(json.loads((design / "design.json").read_text())["rows"])
    db = tmp_path / "c.db"
    alice = add_assessor(db, "alice")
    boss = add_assessor(db, "olga", role="organiser")
    with Server(design, data["docs"], data["topics"], db, "--runs", *data["runs"]) as server:
        first = judge(Api(server.url, alice), data["qrels"], 10_000)  # round 1, all of it
        assert pool - first < first  # the dashboard plans a round as large as round 1
        admin(server, boss)
        organiser = Api(server.url, boss)
        organiser.csrf = sqlite3.connect(db).execute(
            "SELECT csrf FROM assessors WHERE name='olga'").fetchone()[0]
        page = organiser.http.get(server.url + "/admin").text.replace("&#39;", "'")
        assert (f"What would be judged next: {pool - first} more judgments on top of the "
                f"{first} judged of round 1 (judged in rounds") in page, page
        r = organiser.http.post(server.url + "/admin/round", data={"batch": "1000"},
                                headers={"X-CSRF-Token": organiser.csrf})
        assert f"Round 2 loaded: {pool - first} judgments planned ({pool - first} judgments, " \
            "not the 1000 asked for: only" in r.text, r.text
    assert sqlite3.connect(db).execute("SELECT count(*) FROM items WHERE round=2").fetchone() \
        == (pool - first,)


def export(db, tmp_path) -> list[str]:
    out = tmp_path / "all.qrels"
    assert main(["assess", "export", "--db", str(db), "-o", str(out)]) == 0
    return out.read_text().splitlines()
