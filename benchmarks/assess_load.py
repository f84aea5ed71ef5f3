"""Load test of the assessment app: 20 concurrent assessors on loopback, then a kill -9.

1. A design is drawn from the bundled Vaswani runs (``2strata``, ``--budget`` judgments, seed
   ``--seed``); the documents and topics shown are made up (their text does not matter here),
   so no ../shared is needed.
2. ``irsample assess serve`` runs in a subprocess on 127.0.0.1 (a free port); ``--clients``
   assessors (default 20), each a thread with its own keep-alive connection, loop
   ``GET /api/next`` + ``POST /api/judge`` until nothing is left or ``--seconds`` pass (the
   test is bounded and stops by itself). Printed: judgments per second, and the p50/p99
   latency of a judgment (the POST, answered after the SQLite commit) and of a whole
   next+judge cycle.
3. Checks: every acknowledged judgment is in the database exactly once, and (with every
   document judged) there is exactly one judgment per document.
4. kill -9: a fresh database, the same load, the server killed with SIGKILL after a third of
   the documents are acknowledged, the acknowledged judgments checked in the database, the
   server restarted and the rest judged; then no judgment lost or doubled.

Usage: python benchmarks/assess_load.py [--clients 20] [--budget 2000] [--seconds 120] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# imported after the checkout is put on sys.path
from irsample.assess.store import Store  # noqa: E402
from irsample.cli import main  # noqa: E402


def make_design(folder: Path, budget: int, seed: int) -> tuple[Path, Path, Path]:
    runs = sorted((ROOT / "irsample" / "data" / "vaswani" / "runs").glob("*.gz"))
    design = folder / "design"
    assert main(["sample", *map(str, runs), "--design", "2strata", "--budget", str(budget),
                 "--seed", str(seed), "-o", str(design)]) == 0
    pairs = [x.split("\t") for x in (design / "to_judge.tsv").read_text().splitlines()[1:]]
    docs = folder / "docs.jsonl"
    docs.write_text("".join(json.dumps({"docno": d, "text": f"document {d} " * 40}) + "\n"
                            for d in sorted({d for _, d in pairs})))
    topics = folder / "topics.tsv"
    topics.write_text("".join(f"{q}\ttopic {q}\n" for q in sorted({q for q, _ in pairs})))
    return design, docs, topics


class Server:
    def __init__(self, design, docs, topics, db):
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "irsample.cli", "assess", "serve", "--design", str(design),
             "--docs", str(docs), "--topics", str(topics), "--db", str(db), "--port", "0"],
            stdout=subprocess.PIPE, text=True, env=env)
        line = self.proc.stdout.readline()
        self.url = re.search(r"http://\S+?(?=/ )", line).group(0)
        while True:
            try:
                requests.get(self.url + "/healthz", timeout=2)
                break
            except requests.ConnectionError:
                time.sleep(0.05)

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def run_load(url, tokens, seconds, acked, stop=None):
    """Every token in its own thread judges until nothing is left, ``seconds`` pass or the
    server goes away; returns (judge latencies, cycle latencies) in seconds."""
    judge_lat, cycle_lat, errors = [], [], []
    deadline = time.perf_counter() + seconds
    lock = threading.Lock()

    def work(name, token):
        http = requests.Session()
        http.headers["Authorization"] = f"Bearer {token}"
        try:
            while time.perf_counter() < deadline:
                t0 = time.perf_counter()
                data = http.get(url + "/api/next", timeout=30).json()
                item = data["next"]
                if item is None:
                    return
                t1 = time.perf_counter()
                r = http.post(url + "/api/judge", json={"item": item["item"], "grade": 1},
                              headers={"X-CSRF-Token": data["csrf"]}, timeout=30)
                t2 = time.perf_counter()
                if r.status_code != 200:
                    errors.append(f"{r.status_code} {r.text}")
                    return
                with lock:
                    acked.append((item["item"], name))
                    judge_lat.append(t2 - t1)
                    cycle_lat.append(t2 - t0)
        except (requests.RequestException, ValueError):
            return  # the server was killed

    threads = [threading.Thread(target=work, args=kv) for kv in tokens.items()]
    for t in threads:
        t.start()
    if stop is not None:
        stop()
    for t in threads:
        t.join()
    if errors:
        raise SystemExit(f"errors: {errors[:3]}")
    return np.array(judge_lat), np.array(cycle_lat)


def stored(db) -> list[tuple[int, str]]:
    con = sqlite3.connect(db)
    rows = con.execute("SELECT j.item, a.name FROM judgments j JOIN assessors a "
                       "ON a.id = j.assessor").fetchall()
    con.close()
    return rows


def register(db, n) -> dict[str, str]:
    store = Store(db)
    tokens = {f"assessor{i:02d}": store.add_assessor(f"assessor{i:02d}") for i in range(n)}
    store.close()
    return tokens


def main_(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--budget", type=int, default=2000)
    p.add_argument("--seconds", type=float, default=120.0)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        design, docs, topics = make_design(folder, args.budget, args.seed)
        n = len((design / "to_judge.tsv").read_text().splitlines()) - 1
        print(f"design: 2strata@{args.budget} on the bundled Vaswani runs, seed {args.seed}: "
              f"{n} documents; {args.clients} clients on 127.0.0.1")

        db = folder / "load.db"
        tokens = register(db, args.clients)
        server = Server(design, docs, topics, db)
        acked: list = []
        start = time.perf_counter()
        judge_lat, cycle_lat = run_load(server.url, tokens, args.seconds, acked)
        elapsed = time.perf_counter() - start
        server.stop()
        rows = stored(db)
        ok = sorted(rows) == sorted(acked) and len(set(rows)) == len(rows)
        items = {i for i, _ in rows}
        print(f"judged {len(acked)} in {elapsed:.1f} s: {len(acked) / elapsed:.1f} judgments/s")
        print(
            "latency of a judgment (POST, after commit): "
            f"p50 {np.percentile(judge_lat, 50) * 1e3:.1f} ms, "
            f"p99 {np.percentile(judge_lat, 99) * 1e3:.1f} ms"
        )
        print(f"latency of next + judgment: p50 {np.percentile(cycle_lat, 50) * 1e3:.1f} ms, "
              f"p99 {np.percentile(cycle_lat, 99) * 1e3:.1f} ms")
        print(f"acknowledged = stored, none doubled: {ok}; documents judged {len(items)} of {n} "
              f"(one judgment each: {len(items) == len(rows)})")

        db = folder / "kill.db"
        tokens = register(db, args.clients)
        server = Server(design, docs, topics, db)
        acked = []

        def kill_mid_load():
            while len(acked) < n // 3:
                time.sleep(0.001)
            server.kill9()

        run_load(server.url, tokens, args.seconds, acked, kill_mid_load)
        before = stored(db)
        lost = set(acked) - set(before)
        print(f"kill -9 after {len(acked)} acknowledged judgments: {len(before)} in the "
              f"database, {len(lost)} acknowledged ones lost")
        server = Server(design, docs, topics, db)
        run_load(server.url, tokens, args.seconds, acked)
        server.stop()
        rows = stored(db)
        items = [i for i, _ in rows]
        print(f"after the restart: {len(rows)} judgments of {len(set(items))} documents "
              f"(of {n}); doubled: {len(items) - len(set(items))}; acknowledged but missing: "
              f"{len(set(acked) - set(rows))}")
        good = not lost and len(set(items)) == n and len(items) == n and ok
        print("PASS" if good else "FAIL")
        return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main_())
