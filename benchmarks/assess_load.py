"""Load test of the assessment app: concurrent assessors on loopback under binding leases,
then a kill -9.

1. A design is drawn from the bundled Vaswani runs (``2strata``, seed ``--seed``) with as many
   documents as make ``--clients`` x ``--per-client`` judgments once ``--overlap`` of them are
   judged twice (20 x 100 by default: 1,818 documents, 182 of them by two assessors); the
   documents and topics shown are made up (their text does not matter here), so no ../shared
   is needed.
2. ``irsample assess serve`` runs in a subprocess on 127.0.0.1 (a free port) with a short
   ``--lease`` (3 s); each client is a thread with its own keep-alive connection looping
   ``GET /api/next`` + ``POST /api/judge`` until nothing is left or ``--seconds`` pass.
   Misbehaving on purpose: in ``--poach`` of its cycles a client first tries to judge a random
   document it was not handed (answered 409 unless it is a planned overlap document with room
   for a second assessor), and in ``--breaks`` of them it takes a coffee break longer than the
   lease before judging (its document may go to someone else meanwhile: then 409).
   Printed: judgments per second, the p50/p99 latency of a judgment (the POST, answered after
   the SQLite commit) and of a next+judge cycle, and what the misbehaviour got.
3. Checks: every acknowledged judgment is in the database; no document has more assessors
   than planned (1, or 2 for the overlap documents), so no refused judgment was stored; with
   everything judged, every document has exactly its planned number of judgments.
4. kill -9: a fresh database, the same load, the server killed with SIGKILL after a third of
   the documents are acknowledged, the acknowledged judgments checked in the database, the
   server restarted and the rest judged; then the same checks.

Usage: python benchmarks/assess_load.py [--clients 20] [--per-client 100] [--overlap 0.1]
       [--lease 3] [--poach 0.1] [--breaks 0.02] [--seconds 300] [--seed 1]
"""

from __future__ import annotations

import argparse
import atexit
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
from dataclasses import dataclass, field
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
    def __init__(self, design, docs, topics, db, *extra):
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "irsample.cli", "assess", "serve", "--design", str(design),
             "--docs", str(docs), "--topics", str(topics), "--db", str(db), "--port", "0",
             *map(str, extra)],
            stdout=subprocess.PIPE, text=True, env=env)
        atexit.register(self.stop)  # a benchmark that fails midway leaves no server behind
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
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait()


@dataclass
class Tally:
    """What the clients saw: acknowledged judgments, refusals, latencies."""

    acked: list = field(default_factory=list)  #: (item, assessor) answered 200
    refused: list = field(default_factory=list)  #: (item, assessor, time of the 409)
    poached: int = 0  #: attempts on a document not handed out
    poach_ok: int = 0  #: of those, accepted (a planned overlap document with room)
    breaks: int = 0  #: coffee breaks longer than the lease
    break_lost: int = 0  #: of those, the document went to someone else meanwhile (409)
    slow_lost: int = 0  #: own document gone without a break: next -> judge took over the lease
    judge_lat: list = field(default_factory=list)
    cycle_lat: list = field(default_factory=list)


def run_load(url, tokens, seconds, tally, *, n_items, lease, poach, breaks, seed, stop=None,
             quota=None):
    """Every token in its own thread judges until nothing is left, it made ``quota``
    acknowledged judgments, ``seconds`` pass or the server goes away, misbehaving as the module
    docstring says; fills ``tally``."""
    deadline = time.perf_counter() + seconds
    lock = threading.Lock()
    errors = []

    def post(http, csrf, item, grade=1):
        return http.post(url + "/api/judge", json={"item": item, "grade": grade},
                         headers={"X-CSRF-Token": csrf}, timeout=30)

    def work(k, name, token):
        rng = np.random.default_rng([seed, k])
        with lock:
            mine = {i for i, n in tally.acked if n == name}  # earlier runs' judgments count
        http = requests.Session()
        http.headers["Authorization"] = f"Bearer {token}"
        try:
            while time.perf_counter() < deadline:
                if quota is not None and len(mine) >= quota:
                    return
                t0 = time.perf_counter()
                data = http.get(url + "/api/next", timeout=30).json()
                item = data["next"]
                if item is None:
                    return
                if rng.random() < poach:  # a document not handed to us
                    other = int(rng.integers(1, n_items + 1))
                    if other != item["item"]:
                        r = post(http, data["csrf"], other)
                        with lock:
                            tally.poached += 1
                            if r.status_code == 200:
                                tally.poach_ok += 1
                                tally.acked.append((other, name))
                                mine.add(other)
                            elif r.status_code == 409:
                                tally.refused.append((other, name, time.time()))
                            else:
                                errors.append(f"poach: {r.status_code} {r.text}")
                away = rng.random() < breaks
                if away:
                    time.sleep(lease + 0.5)
                t1 = time.perf_counter()
                r = post(http, data["csrf"], item["item"])
                t2 = time.perf_counter()
                with lock:
                    tally.breaks += away
                    if r.status_code == 409:
                        tally.refused.append((item["item"], name, time.time()))
                        if away:
                            tally.break_lost += 1
                        else:  # the lease ran out between next and judge: a slow server
                            tally.slow_lost += 1
                        continue
                    if r.status_code != 200:
                        errors.append(f"{r.status_code} {r.text}")
                        return
                    tally.acked.append((item["item"], name))
                    mine.add(item["item"])
                    if not away:
                        tally.judge_lat.append(t2 - t1)
                        tally.cycle_lat.append(t2 - t0)
        except (requests.RequestException, ValueError):
            return  # the server was killed

    threads = [threading.Thread(target=work, args=(k, *kv))
               for k, kv in enumerate(tokens.items())]
    for t in threads:
        t.start()
    if stop is not None:
        stop()
    for t in threads:
        t.join()
    if errors:
        raise SystemExit(f"errors: {errors[:3]}")


def stored(db) -> tuple[set, dict, dict]:
    """The current judgments' (item, assessor) pairs, the assessors per item, and each
    item's planned number of judgments."""
    con = sqlite3.connect(db)
    rows = con.execute("SELECT j.item, a.name FROM judgments j JOIN assessors a "
                       "ON a.id = j.assessor WHERE j.current = 1").fetchall()
    required = dict(con.execute("SELECT id, required FROM items"))
    con.close()
    per_item: dict = {}
    for item, name in rows:
        per_item.setdefault(item, []).append(name)
    return set(rows), per_item, required


def refused_stored(db, refused) -> int:
    """Refused judgments found in the database: a row of that assessor and document written
    before the refusal was answered (a later row is a later, legitimate judgment)."""
    con = sqlite3.connect(db)
    first = dict(((i, n), at) for i, n, at in con.execute(
        "SELECT j.item, a.name, min(j.at) FROM judgments j JOIN assessors a ON a.id = "
        "j.assessor GROUP BY 1, 2"))
    con.close()
    return sum(first.get((i, n), float("inf")) <= t for i, n, t in refused)


def check(db, tally, *, complete: bool) -> list[str]:
    """Problems found (module docstring, step 3); empty if none."""
    pairs, per_item, required = stored(db)
    problems = []
    if set(tally.acked) - pairs:
        problems.append(f"{len(set(tally.acked) - pairs)} acknowledged judgments missing")
    over = [i for i, names in per_item.items() if len(names) > required[i]]
    if over:
        problems.append(f"{len(over)} documents judged by more assessors than planned")
    if refused_stored(db, tally.refused):
        problems.append("a refused judgment was stored")
    if complete and any(len(per_item.get(i, ())) != r for i, r in required.items()):
        problems.append("not every document has its planned number of judgments")
    return problems


def register(db, n) -> dict[str, str]:
    store = Store(db)
    tokens = {f"assessor{i:02d}": store.add_assessor(f"assessor{i:02d}") for i in range(n)}
    store.close()
    return tokens


def report(what: str, db, tally, n: int) -> list[str]:
    """Print what the database holds against the plan; returns the problems (:func:`check`)."""
    problems = check(db, tally, complete=True)
    pairs, per_item, required = stored(db)
    print(f"{what} {len(pairs)} judgments of {len(per_item)} documents (of {n}); documents "
          f"with more assessors than planned: "
          f"{sum(len(v) > required[i] for i, v in per_item.items())}; problems: "
          f"{problems or 'none'}")
    return problems


def main_(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--per-client", type=int, default=100)
    p.add_argument("--overlap", type=float, default=0.1)
    p.add_argument("--lease", type=float, default=3.0)
    p.add_argument("--poach", type=float, default=0.1)
    p.add_argument("--breaks", type=float, default=0.02)
    p.add_argument("--seconds", type=float, default=300.0)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    budget = round(args.clients * args.per_client / (1 + args.overlap))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        design, docs, topics = make_design(folder, budget, args.seed)
        n = len((design / "to_judge.tsv").read_text().splitlines()) - 1
        extra = ("--overlap", args.overlap, "--lease", args.lease)
        load = dict(n_items=n, lease=args.lease, poach=args.poach, breaks=args.breaks,
                    seed=args.seed)
        print(f"design: 2strata@{budget} on the bundled Vaswani runs, seed {args.seed}: {n} "
              f"documents, {round(args.overlap * n)} of them for two assessors; "
              f"{args.clients} clients on 127.0.0.1, lease {args.lease:g} s, poaching in "
              f"{args.poach:.0%} and coffee breaks in {args.breaks:.0%} of the cycles")

        db = folder / "load.db"
        tokens = register(db, args.clients)
        server = Server(design, docs, topics, db, *extra)
        tally = Tally()
        start = time.perf_counter()
        run_load(server.url, tokens, args.seconds, tally, quota=args.per_client, **load)
        elapsed = time.perf_counter() - start
        before = len(set(tally.acked))
        run_load(server.url, tokens, args.seconds, tally, **load)  # whatever quotas left open
        swept = len(set(tally.acked)) - before
        server.stop()
        judge_lat, cycle_lat = np.array(tally.judge_lat), np.array(tally.cycle_lat)
        per_client = np.bincount([int(name[8:]) for _, name in set(tally.acked)],
                                 minlength=args.clients)  # after the last pass
        print(f"judged {before} in {elapsed:.1f} s: {before / elapsed:.1f} judgments/s "
              f"(per client {per_client.min()}-{per_client.max()} with a quota of "
              f"{args.per_client}); left for a last pass without quotas: {swept}")
        print("latency of a judgment (POST, after commit): "
              f"p50 {np.percentile(judge_lat, 50) * 1e3:.1f} ms, "
              f"p99 {np.percentile(judge_lat, 99) * 1e3:.1f} ms")
        print(f"latency of next + judgment: p50 {np.percentile(cycle_lat, 50) * 1e3:.1f} ms, "
              f"p99 {np.percentile(cycle_lat, 99) * 1e3:.1f} ms")
        print(f"poaching: {tally.poached} attempts, {tally.poached - tally.poach_ok} refused "
              f"(409), {tally.poach_ok} accepted as a planned overlap's second judgment; "
              f"coffee breaks: {tally.breaks}, {tally.break_lost} of them found the document "
              f"gone (409); leases run out between next and judge without a break: "
              f"{tally.slow_lost}")
        print(f"slowest next + judgment cycles: {np.round(np.sort(cycle_lat)[-3:], 2)} s")
        problems = report("stored", db, tally, n)

        db = folder / "kill.db"
        tokens = register(db, args.clients)
        server = Server(design, docs, topics, db, *extra)
        tally = Tally()

        def kill_mid_load():
            while len(tally.acked) < n // 3:
                time.sleep(0.001)
            server.kill9()

        run_load(server.url, tokens, args.seconds, tally, stop=kill_mid_load, **load)
        pairs, _, _ = stored(db)
        lost = set(tally.acked) - pairs
        print(f"kill -9 after {len(set(tally.acked))} acknowledged judgments: {len(pairs)} in the "
              f"database, {len(lost)} acknowledged ones lost")
        server = Server(design, docs, topics, db, *extra)
        run_load(server.url, tokens, args.seconds, tally, **load)
        server.stop()
        after = report("after the restart:", db, tally, n)
        good = not lost and not problems and not after
        print("PASS" if good else "FAIL")
        return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main_())
