"""Helpers of the ``test_assess_*`` modules (no tests here): :func:`tiny_data` (runs, qrels,
documents and topics made up with a seed), :func:`sample`, :func:`add_assessor`, :class:`Server`
(``irsample assess serve`` in a subprocess on a free port) and :class:`Api` (a program judging
through the JSON API), :func:`judge_all` and :func:`load` (concurrent assessors)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

requests = pytest.importorskip("requests")

# imported after the optional dependencies are checked
from irsample.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = "<script>alert('x')</script>"



def tiny_data(folder: Path, *, n_topics=3, n_runs=4, depth=20, n_docs=40, seed=5) -> dict:
    """Runs, graded qrels (0-2), JSONL documents and TSV topics, made up with a seed; one
    document's text holds a <script> element."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    qrels, docs, runs = {}, {}, []
    for t in range(n_topics):
        q = str(101 + t)
        for d in range(n_docs):
            docno = f"D{t}-{d:03d}"
            qrels[(q, docno)] = int(rng.choice([0, 0, 0, 1, 2]))
            docs[docno] = f"document {docno} about topic{q} words and more words {d}"
    docs["D0-000"] += f"\n{SCRIPT} & <b>bold</b>"
    for r in range(n_runs):
        lines = []
        for t in range(n_topics):
            q = str(101 + t)
            ranked = rng.permutation(n_docs)[:depth]
            if r == 0 and t == 0:  # the <script> document at rank 1: every design selects it
                ranked = np.concatenate([[0], ranked[ranked != 0]])[:depth]
            for i, d in enumerate(ranked):
                lines.append(f"{q} Q0 D{t}-{d:03d} {i + 1} {100 - i} run{r}\n")
        runs.append(folder / f"run{r}.txt")
        runs[-1].write_text("".join(lines))
    (folder / "qrels").write_text(
        "".join(f"{q} 0 {d} {g}\n" for (q, d), g in sorted(qrels.items()))
    )
    (folder / "docs.jsonl").write_text("".join(json.dumps({"docno": k, "text": v}) + "\n"
                                               for k, v in docs.items()))
    (folder / "topics.tsv").write_text("qid\ttitle\tdescription\tnarrative\n" + "".join(
        f"{101 + t}\ttopic{101 + t} words\tFind documents on topic{101 + t}.\tRelevant: "
        f"anything about words.\n" for t in range(n_topics)))
    return {"runs": runs, "qrels": qrels, "qrels_file": folder / "qrels",
            "docs": folder / "docs.jsonl", "topics": folder / "topics.tsv", "folder": folder}


def tiny_design(folder: Path) -> tuple[dict, Path]:
    """:func:`tiny_data` in ``folder/data`` and its default :func:`sample` in ``folder/design``."""
    data = tiny_data(folder / "data")
    return data, sample(data["runs"], folder / "design")


def sample(runs, out: Path, design="1-5:1,6-20:0.5", seed=3) -> Path:
    assert main(["sample", *map(str, runs), "--design", design, "--seed", str(seed),
                 "-o", str(out)]) == 0
    return out


def add_assessor(db: Path, name: str, role: str = "assessor") -> str:
    """Register ``name`` as ``irsample assess add-assessor`` (``add-organiser``) does; returns
    the token."""
    from irsample.assess.store import Store

    store = Store(db)
    try:
        return store.add_person(name, role)
    finally:
        store.close()


def _env():
    return dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


class Server:
    """``irsample assess serve`` in a subprocess on a free port of 127.0.0.1."""

    def __init__(self, design, docs, topics, db, *extra):
        self.args = [sys.executable, "-m", "irsample.cli", "assess", "serve", "--design",
                     str(design), "--docs", str(docs), "--topics", str(topics), "--db", str(db),
                     "--port", "0", *map(str, extra)]
        self.proc = None
        self.url = None

    def start(self) -> Server:
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=_env())
        line = self.proc.stdout.readline()
        if not line.startswith("serving on "):
            self.proc.kill()
            raise AssertionError(f"server did not start: {line}{self.proc.stderr.read()}")
        self.url = re.search(r"http://\S+?(?=/ )", line).group(0)
        for _ in range(100):
            try:
                if requests.get(self.url + "/healthz", timeout=2).status_code == 200:
                    return self
            except requests.ConnectionError:
                time.sleep(0.05)
        raise AssertionError("server not healthy")

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


class Api:
    """A program judging through the JSON API with a bearer token."""

    def __init__(self, url, token):
        self.url, self.http = url, requests.Session()
        self.http.headers["Authorization"] = f"Bearer {token}"
        self.csrf = None

    def next(self):
        data = self.http.get(self.url + "/api/next", timeout=30).json()
        self.csrf = data["csrf"]
        return data["next"]

    def post(self, path, body):
        return self.http.post(self.url + path, json=body, headers={"X-CSRF-Token": self.csrf},
                              timeout=30)

    def judge(self, item, grade, note=""):
        r = self.post("/api/judge", {"item": item, "grade": grade, "note": note})
        assert r.status_code == 200, r.text
        return r.json()["status"]


def judge_all(api: Api, qrels: dict, limit=None) -> int:
    """Judge with the qrels' grades until nothing is left (or ``limit``); returns the count."""
    n = 0
    while limit is None or n < limit:
        item = api.next()
        if item is None:
            return n
        api.judge(item["item"], qrels[(item["topic"], item["docno"])])
        n += 1
    return n


def selected(design: Path) -> list[tuple[str, str]]:
    lines = (design / "to_judge.tsv").read_text().splitlines()[1:]
    return [tuple(x.split("\t")) for x in lines]


def load(url, tokens, qrels, acked, stop_after=None, *, poach=0.0, refused=None, seed=0):
    """Each token judges in its own thread until nothing is left; ``acked`` collects the
    (item, assessor) of every acknowledged judgment. With ``poach``, that share of the cycles
    first tries to judge a random document not handed out (``refused`` collects (item,
    assessor, time) of the 409s; one accepted, which the app refuses, would be counted as
    acknowledged)."""
    errors = []
    refused = [] if refused is None else refused
    n_items = len(qrels)

    def work(k, name, token):
        api = Api(url, token)
        rng = np.random.default_rng([seed, k])
        try:
            while True:
                item = api.next()
                if item is None:
                    return
                if rng.random() < poach:
                    other = int(rng.integers(1, n_items + 1))
                    if other != item["item"]:
                        r = api.post("/api/judge", {"item": other, "grade": 0})
                        if r.status_code == 200:
                            acked.append((other, name))
                        elif r.status_code == 409:
                            refused.append((other, name, time.time()))
                        elif r.status_code != 404:  # 404: no such item
                            errors.append(r.text)
                r = api.post("/api/judge", {"item": item["item"],
                                            "grade": qrels[(item["topic"], item["docno"])]})
                if r.status_code == 409:  # the lease ran out under load and the document left
                    refused.append((item["item"], name, time.time()))
                    continue
                assert r.status_code == 200, r.text
                acked.append((item["item"], name))
        except (requests.RequestException, json.JSONDecodeError):
            return  # the server was killed
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k, *kv))
               for k, kv in enumerate(tokens.items())]
    for t in threads:
        t.start()
    if stop_after is not None:
        stop_after()
    for t in threads:
        t.join(120)
    assert not errors, errors
