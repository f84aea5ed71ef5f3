"""The assessment app against a real server (uvicorn in a subprocess, ephemeral port): tokens,
CSRF, escaping, judging by form and by API, undo/skip, malformed requests (4xx, never 500),
overlap and agreement, export -> merge -> eval, and a small concurrent load with a kill -9.
(Helpers in :mod:`tests.test_assess_helpers`.)"""

from __future__ import annotations

import json
import re
import sqlite3
import time

import numpy as np
import pytest

requests = pytest.importorskip("requests")
pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("jinja2")

# imported after the optional dependencies are checked
from irsample.cli import main  # noqa: E402

from .test_assess_helpers import (  # noqa: E402
    SCRIPT,
    Api,
    Server,
    add_assessor,
    judge_all,
    load,
    sample,
    selected,
    tiny_data,
)

# --------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    folder = tmp_path_factory.mktemp("assess")
    data = tiny_data(folder / "data")
    design = sample(data["runs"], folder / "design")
    return data, design, folder


@pytest.fixture()
def served(setup, tmp_path):
    data, design, _ = setup
    db = tmp_path / "judgments.db"
    tokens = {name: add_assessor(db, name) for name in ("alice", "bob")}
    with Server(design, data["docs"], data["topics"], db) as server:
        yield server, tokens, db, data


# -------------------------------------------------------------------------------- the tests


ROUTES = [("GET", "/"), ("GET", "/judge"), ("POST", "/judge"), ("POST", "/skip"),
          ("POST", "/undo"), ("GET", "/progress"), ("GET", "/api/next"),
          ("POST", "/api/judge"), ("POST", "/api/skip"), ("POST", "/api/undo"),
          ("GET", "/api/progress"), ("GET", "/static/assess.js"), ("GET", "/login"),
          ("GET", "/mine"), ("GET", "/api/mine"), ("POST", "/api/renew"), ("GET", "/admin"),
          ("GET", "/api/admin"), ("POST", "/admin/person"), ("POST", "/admin/revoke"),
          ("POST", "/admin/reissue"), ("POST", "/admin/round")]


def test_every_route_needs_a_valid_token(served):
    server, tokens, _, _ = served
    assert requests.get(server.url + "/healthz").status_code == 200
    icon = requests.get(server.url + "/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"] == "image/x-icon"
    style = requests.get(server.url + "/static/assess.css")  # the error pages' style too
    assert style.status_code == 200 and style.headers["content-type"].startswith("text/css")
    assert requests.get(server.url + "/static/assess.js").status_code == 401
    for method, path in ROUTES:
        r = requests.request(method, server.url + path, allow_redirects=False)
        assert r.status_code == 401, (method, path, r.status_code)
        assert r.text.strip()
        bad = requests.request(
            method,
            server.url + path + ("?token=nope" if path == "/login" else ""),
            headers={"Authorization": "Bearer nope"},
            cookies={"irsample_assess": "nope"},
            allow_redirects=False,
        )
        assert bad.status_code == 403, (method, path, bad.status_code)


def test_login_cookie_and_judging_by_form(served):
    server, tokens, db, data = served
    browser = requests.Session()
    r = browser.get(f"{server.url}/login?token={tokens['alice']}", allow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/judge"
    cookie = r.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    page = browser.get(server.url + "/judge").text
    assert "default-src 'self'" in browser.get(server.url + "/judge").headers[
        "content-security-policy"]
    item = re.search(r'name="item" value="(\d+)"', page).group(1)
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    docno = re.search(r'<code id="docno">([^<]+)</code>', page).group(1)
    assert browser.post(server.url + "/judge", data={"item": item, "grade": "1"},
                        allow_redirects=False).status_code == 403  # no CSRF token
    assert browser.post(server.url + "/judge", data={"item": item, "grade": "1", "csrf": "x"},
                        allow_redirects=False).status_code == 403
    r = browser.post(server.url + "/judge", data={"item": item, "grade": "2", "csrf": csrf,
                                                  "note": "a note"}, allow_redirects=False)
    assert r.status_code == 303
    rows = sqlite3.connect(db).execute(
        "SELECT i.docno, j.grade, j.note FROM judgments j JOIN items i ON i.id = j.item").fetchall()
    assert rows == [(docno, 2, "a note")]
    page = browser.get(server.url + r.headers["location"]).text
    assert f"Saved: {docno} judged 2 (" in page and "You: 1 judgment &middot;" in page
    assert re.search(r'<code id="docno">([^<]+)</code>', page).group(1) != docno


def test_document_text_is_escaped_and_terms_highlighted(setup, tmp_path):
    data, design, folder = setup
    db = tmp_path / "x.db"
    token = add_assessor(db, "alice")
    pairs = selected(design)
    target = ("101", "D0-000")
    assert target in pairs  # ranked first by a run, so in the top stratum
    with Server(design, data["docs"], data["topics"], db, "--order", "topic") as server:
        api = Api(server.url, token)
        while True:
            item = api.next()
            if (item["topic"], item["docno"]) == target:
                break
            api.judge(item["item"], 0)
        page = api.http.get(server.url + "/judge").text
    assert SCRIPT not in page and "<b>bold</b>" not in page
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in page
    assert "<mark>topic101</mark>" in page and "<mark>words</mark>" in page


def test_undo_skip_and_repeated_judgments(served):
    server, tokens, db, data = served
    api = Api(server.url, tokens["alice"])
    first = api.next()
    assert api.judge(first["item"], 1) == "saved"
    assert api.judge(first["item"], 1) == "unchanged"  # a retried request doubles nothing
    second = api.next()
    assert second["item"] != first["item"]
    r = api.post("/api/undo", {})
    assert r.json()["undone"]["item"] == first["item"]
    assert api.next()["item"] == first["item"]  # the undone document comes back
    assert api.judge(first["item"], 2) == "saved"
    third = api.next()
    assert api.post("/api/skip", {"item": third["item"]}).status_code == 200
    assert api.next()["item"] != third["item"]
    con = sqlite3.connect(db)
    assert con.execute("SELECT item, grade FROM judgments WHERE current = 1").fetchall() == [
        (first["item"], 2)]
    assert con.execute("SELECT count(*) FROM judgments").fetchone() == (2,)  # the undone kept
    assert [a for (a,) in con.execute("SELECT action FROM log ORDER BY id")] == [
        "saved", "undo", "saved", "skip"]


BAD = [
    ("/api/judge", b"{not json", 400),
    ("/api/judge", b"[1, 2]", 400),
    ("/api/judge", b"{}", 400),
    ("/api/judge", b'{"item": "x", "grade": 1}', 400),
    ("/api/judge", b'{"item": 1.5, "grade": 1}', 400),
    ("/api/judge", b'{"item": 99999999999999999999999, "grade": 1}', 400),
    ("/api/judge", b'{"item": 999999, "grade": 1}', 404),
    ("/api/judge", b'{"item": MINE, "grade": 7}', 400),
    ("/api/judge", b'{"item": OTHER, "grade": 1}', 409),  # not leased to alice
    ("/api/renew", b'{"item": OTHER}', 409),
    ("/api/renew", b'{"item": MINE}', 200),
    ("/api/judge", b'{"item": MINE, "grade": "2"}', 200),
    ("/api/judge", b'{"item": MINE, "grade": true}', 400),
    ("/api/judge", b'{"item": MINE, "grade": 1, "note": 5}', 400),
    ("/api/judge", b'{"item": MINE, "grade": 1, "note": "' + b"n" * 3000 + b'"}', 400),
    ("/api/judge", b"\xff\xfe", 400),
    ("/api/judge", b"x" * 70000, 413),
    ("/api/skip", b'{"item": -3}', 404),
    ("/api/skip", b'{"item": null}', 400),
    ("/judge", b"item=1&item=2&grade=1", 400),
    ("/judge", b"item=1&grade=%ff", 400),
    ("/judge", b"===&&&", 400),
    ("/judge", b"item=&grade=1", 400),
]


def test_malformed_requests_get_4xx_with_a_message(served):
    server, tokens, _, _ = served
    api = Api(server.url, tokens["alice"])
    mine = api.next()["item"]
    other = Api(server.url, tokens["bob"]).next()["item"]
    for path, body, status in BAD:
        body = body.replace(b"MINE", b"%d" % mine).replace(b"OTHER", b"%d" % other)
        r = api.http.post(server.url + path, data=body, allow_redirects=False, headers={
            "X-CSRF-Token": api.csrf, "Content-Type": "application/json"})
        expect = 303 if status == 200 and not path.startswith("/api") else status
        assert r.status_code == expect, (path, body[:60], r.status_code, r.text)
        if status >= 400:
            message = r.json()["error"] if path.startswith("/api") else r.text
            assert message.strip(), (path, body[:60])
    for method, path, status in [("PUT", "/api/judge", 405), ("GET", "/nowhere", 404),
                                 ("DELETE", "/judge", 405), ("GET", "/static/../store.py", 404),
                                 ("GET", "/static/secret.txt", 404)]:
        r = api.http.request(method, server.url + path)
        assert r.status_code == status and r.text.strip(), (method, path, r.status_code)


def test_overlap_agreement_page_and_api(setup, tmp_path):
    from irsample.assess import agreement

    data, design, _ = setup
    db = tmp_path / "o.db"
    tokens = {n: add_assessor(db, n) for n in ("alice", "bob")}
    boss = add_assessor(db, "olga", role="organiser")
    rng = np.random.default_rng(1)
    with Server(design, data["docs"], data["topics"], db, "--overlap", "1", "--grades", "0-2",
                "--seed", "11") as server:
        apis = {n: Api(server.url, t) for n, t in tokens.items()}
        given = {}
        while True:
            progress = False
            for name, api in apis.items():
                item = api.next()
                if item is None:
                    continue
                progress = True
                truth = data["qrels"][(item["topic"], item["docno"])]
                grade = truth if name == "alice" or rng.random() < 0.7 else int(rng.integers(0, 3))
                api.judge(item["item"], grade)
                given.setdefault(item["item"], {})[name] = grade
            if not progress:
                break
        for path in ("/api/progress", "/progress", "/admin", "/api/admin"):  # blind
            assert apis["alice"].http.get(server.url + path).status_code == 403, path
        organiser = Api(server.url, boss)
        assert organiser.http.get(server.url + "/api/next").status_code == 403  # no judging
        report = organiser.http.get(server.url + "/api/progress").json()
        page = organiser.http.get(server.url + "/admin").text
    n = len(selected(design))
    assert len(given) == n and all(len(v) == 2 for v in given.values())
    a = [given[i]["alice"] for i in sorted(given)]
    b = [given[i]["bob"] for i in sorted(given)]
    pair = report["agreement"]["pairs"][0]
    expected = agreement.kappa_interval(a, b, rng=11)
    assert pair["kappa"]["estimate"] == pytest.approx(expected.estimate)
    assert pair["kappa"]["low"] == pytest.approx(expected.low)
    assert pair["items"] == n
    assert report["agreement"]["alpha"][0]["estimate"] == pytest.approx(
        agreement.krippendorff_alpha(np.array([a, b], float).T))
    assert "Cohen&#39;s kappa" in page or "Cohen's kappa" in page
    assert f"{expected.estimate:.3f} [{expected.low:.3f}, {expected.high:.3f}]" in page
    assert sum(r["judged"] for r in report["progress"]) == n
    assert f">{n} of {n} documents judged ({2 * n} judgments of {2 * n} needed" in page
    for r in report["progress"]:
        cells = [r["topic"], r["stratum"], r["items"], r["judged"], 0,
                 f"{r['judgments']} / {r['required']}"]
        labels = ["topic", "stratum", "documents", "judged", "to judge", "judgments"]
        assert "<tr>" + "".join(f'<td data-label="{k}">{v}</td>' for k, v in zip(labels, cells)) \
            + "</tr>" in page


def test_export_merge_eval_round_trip(setup, tmp_path, capsys):
    """sample -> assess (judged through the app from the qrels) -> export -> merge -> eval
    equals merging the qrels' own grades of the selected documents."""
    data, design, _ = setup
    db = tmp_path / "r.db"
    token = add_assessor(db, "alice")
    with Server(design, data["docs"], data["topics"], db) as server:
        assert judge_all(Api(server.url, token), data["qrels"]) == len(selected(design))
    exported = tmp_path / "judged.qrels"
    assert main(["assess", "export", "--db", str(db), "-o", str(exported)]) == 0
    lines = exported.read_text().splitlines()
    assert {tuple(x.split()) for x in lines} == {
        (q, "alice", d, str(data["qrels"][(q, d)])) for q, d in selected(design)}
    truth = tmp_path / "truth.qrels"
    truth.write_text("".join(f"{q} 0 {d} {data['qrels'][(q, d)]}\n" for q, d in selected(design)))
    outputs = {}
    for name, judged in (("app", exported), ("truth", truth)):
        merged = tmp_path / f"{name}.strata"
        assert main(["merge", str(design / "design.json"), str(judged), "--format", "strata",
                     "-o", str(merged)]) == 0
        capsys.readouterr()
        assert main(["eval", "--ci", "0.95", str(merged), *map(str, data["runs"]),
                     "-m", "xinfAP"]) == 0
        outputs[name] = capsys.readouterr().out
    assert outputs["app"] == outputs["truth"] and "xinfAP_low" in outputs["app"]


def test_concurrent_assessors_and_kill9_lose_nothing(setup, tmp_path):
    """Six assessors at once under a half-second lease, a fifth of their cycles spent trying to
    judge documents not handed to them, and a kill -9 in the middle: no acknowledged judgment
    is lost, no document gets more assessors than planned (25% planned for two), and after the
    restart every document has exactly its planned judgments."""
    data, _, folder = setup
    design = sample(data["runs"], tmp_path / "design", design="1-12:1")
    n = len(selected(design))
    db = tmp_path / "load.db"
    tokens = {f"a{i}": add_assessor(db, f"a{i}") for i in range(6)}
    acked: list = []
    refused: list = []
    extra = ("--lease", "0.5", "--overlap", "0.25")
    server = Server(design, data["docs"], data["topics"], db, *extra).start()

    def kill_mid_load():
        while len(acked) < n // 3:
            time.sleep(0.005)
        server.kill9()

    def stored():
        con = sqlite3.connect(db)
        pairs = set(con.execute("SELECT item, a.name FROM judgments j JOIN assessors a ON "
                                "a.id = j.assessor WHERE current = 1"))
        over = con.execute("SELECT count(*) FROM items WHERE judged > required").fetchone()[0]
        return pairs, over

    qrels = {pair: data["qrels"][pair] for pair in selected(design)}
    load(server.url, tokens, qrels, acked, kill_mid_load, poach=0.2, refused=refused)
    pairs, over = stored()
    assert 0 < len(acked) < n and set(acked) <= pairs and over == 0
    with Server(design, data["docs"], data["topics"], db, *extra) as server:
        load(server.url, tokens, qrels, acked, poach=0.2, refused=refused, seed=1)
    pairs, over = stored()
    assert set(acked) <= pairs and over == 0 and refused
    con = sqlite3.connect(db)
    first = {(i, n): at for i, n, at in con.execute(
        "SELECT item, a.name, min(at) FROM judgments j JOIN assessors a ON a.id = j.assessor "
        "GROUP BY 1, 2")}
    assert not [r for r in refused if first.get(r[:2], float("inf")) <= r[2]]  # none stored
    assert con.execute("SELECT count(*) FROM items WHERE judged != required").fetchone() == (0,)
    assert con.execute("SELECT sum(required), count(*) FROM items").fetchone() == (
        len(pairs), n)


def test_binds_to_loopback_by_default(served):
    server, _, _, _ = served
    assert server.url.startswith("http://127.0.0.1:")


def test_random_requests_never_get_a_500(served):
    """Random bodies, fields and paths (seeded): every answer is 2xx/3xx/4xx, never 5xx."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    server, tokens, _, _ = served
    api = Api(server.url, tokens["alice"])
    api.next()
    scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True),
                        st.text(max_size=30))
    bodies = st.one_of(
        st.binary(max_size=200),
        st.dictionaries(
            st.sampled_from(["item", "grade", "note", "csrf", "x"]), scalars, max_size=4
        ).map(lambda d: json.dumps(d).encode()),
        st.dictionaries(
            st.sampled_from(["item", "grade", "note", "csrf"]), st.text(max_size=20), max_size=4
        ).map(lambda d: "&".join(f"{k}={v}" for k, v in d.items()).encode()),
    )
    paths = st.sampled_from(["/api/judge", "/api/skip", "/api/undo", "/judge", "/skip", "/undo",
                             "/api/next", "/progress", "/login", "/static/x"])

    @settings(max_examples=150, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(paths, bodies, st.sampled_from(["GET", "POST"]), st.booleans(),
           st.text(max_size=20).filter(lambda s: "\n" not in s and "\r" not in s))
    def check(path, body, method, with_csrf, query):
        headers = {"X-CSRF-Token": api.csrf} if with_csrf else {}
        r = api.http.request(method, server.url + path, data=body, headers=headers,
                             params={"done": query, "token": query}, allow_redirects=False)
        assert r.status_code < 500, (method, path, body, r.status_code, r.text)

    check()


def test_adaptive_order_through_the_server(setup, tmp_path):
    """Two assessors judge a design in MTF order through the app: every selected document
    once, and the export merges."""
    data, design, _ = setup
    db = tmp_path / "mtf.db"
    tokens = {n: add_assessor(db, n) for n in ("alice", "bob")}
    acked: list = []
    with Server(design, data["docs"], data["topics"], db, "--order", "mtf", "--runs",
                *data["runs"]) as server:
        load(server.url, tokens, data["qrels"], acked)
    pairs = selected(design)
    assert len(acked) == len(pairs) == len(set(acked))
    out = tmp_path / "mtf.qrels"
    assert main(["assess", "export", "--db", str(db), "-o", str(out)]) == 0
    assert main(["merge", str(design / "design.json"), str(out), "--format", "trec",
                 "-o", str(tmp_path / "merged")]) == 0
