"""Benchmark: `irsample eval` vs pytrec_eval on all 129 TREC-8 ad hoc runs, whole processes.

Measures: trec_eval's official set + infAP + ndcg (bpref is in official already). Both tools run
as fresh processes, timed in turn (``--repeat`` rounds; the fastest of each is reported):

- irsample: ``python -m irsample.cli eval QRELS RUN... -m official -m infAP -m ndcg``, i.e.
  import + read 129 gz runs and the qrels + evaluate + format + write (to a pipe);
- pytrec_eval: a fresh Python that imports pytrec_eval, reads the same gz files into the dicts
  it needs, builds the evaluator and evaluates every run.

The ratio irsample / pytrec_eval is the target (<= 0.2): of the fastest runs, and of the
medians. Also printed: two fresh `irsample eval` processes of one run after the 129-run ones
(kernel cache and file cache warm: a start as a user sees it every day, not the first use after
an install, which ``irsample``'s compile notice times), the peak RSS of the 129-run process,
and the ratio as this benchmark measured it before it timed whole processes (up to commit
4c6e5f5): both tools called inside one Python process after a warm-up evaluation, so imports
and loading numba's kernels were not counted ("in-process, warm").

Usage: python benchmarks/eval_trec8.py [--shared ../shared] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

MEASURES = ["official", "infAP", "ndcg"]
PYTREC_MEASURES = {
    "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "infAP", "ndcg",
}


def irsample_cmd(qrels: Path, runs: list[Path]) -> list[str]:
    cmd = [sys.executable, "-m", "irsample.cli", "eval", str(qrels), *map(str, runs)]
    for m in MEASURES:
        cmd += ["-m", m]
    return cmd


PYTREC_FUNCTION = f"measures = {PYTREC_MEASURES!r}\n" + """
import gzip, sys, pytrec_eval
def read_and_evaluate(qrels, runs):
    judgments = {}
    with open(qrels) as fh:
        for line in fh:
            qid, _, doc, rel = line.split()
            judgments.setdefault(qid, {})[doc] = int(rel)
    evaluator = pytrec_eval.RelevanceEvaluator(judgments, measures)
    for path in runs:
        run = {}
        with gzip.open(path, "rt") as fh:
            for line in fh:
                f = line.split()
                run.setdefault(f[0], {})[f[2]] = float(f[4])
        evaluator.evaluate(run)
"""
PYTREC_SCRIPT = PYTREC_FUNCTION + "read_and_evaluate(sys.argv[1], sys.argv[2:])\n"

#: both tools inside one process, after a warm-up evaluation (the measure before 4c6e5f5)
IN_PROCESS_SCRIPT = PYTREC_FUNCTION + f"""
import contextlib, io, time
from irsample.cli import main
argv = ["eval", sys.argv[1], *sys.argv[2:]] + [a for m in {MEASURES!r} for a in ("-m", m)]
def ours():
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(argv) == 0
    return time.perf_counter() - start
def theirs():
    start = time.perf_counter()
    read_and_evaluate(sys.argv[1], sys.argv[2:])
    return time.perf_counter() - start
with contextlib.redirect_stdout(io.StringIO()):
    main(argv[:4] + argv[-6:])  # warm-up on two runs: imports and kernels
print(min(ours() for _ in range(3)), min(theirs() for _ in range(3)))
"""


def timed(cmd: list[str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system, all threads) of a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, check=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert out.returncode == 0, out.stderr
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def fresh_process(args: list[str]) -> tuple[float, int]:
    """Wall time and peak RSS (kB) of a fresh Python running the irsample CLI."""
    code = (
        "import resource, sys, time; t = time.perf_counter();"
        "from irsample.cli import main; import io, contextlib;"
        "buf = io.StringIO();\n"
        "with contextlib.redirect_stdout(buf): rc = main(sys.argv[1:])\n"
        "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, rc)"
    )
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    )
    wall = time.perf_counter() - start
    _, rss, rc = out.stdout.split()
    assert rc == "0", out.stderr
    return wall, int(rss)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    base = Path(args.shared) / "data" / "trec8-adhoc"
    qrels = base / "qrels.trec8.adhoc"
    runs = sorted((base / "runs").glob("input.*.gz"))
    assert len(runs) == 129, f"expected 129 runs under {base / 'runs'}"

    ours_cmd = irsample_cmd(qrels, runs)
    theirs_cmd = [sys.executable, "-c", PYTREC_SCRIPT, str(qrels), *map(str, runs)]
    out = subprocess.run(ours_cmd, capture_output=True, text=True, check=True)  # warm-up
    assert out.stdout.count("runid") == len(runs)
    ours, theirs = [], []
    load_before = os.getloadavg()[0]
    for _ in range(args.repeat):  # in turn, so both see the same machine load
        ours.append(timed(ours_cmd))
        theirs.append(timed(theirs_cmd))
    one = irsample_cmd(qrels, runs[:1])[3:]
    cold, _ = fresh_process(one)
    warm, _ = fresh_process(one)
    _, rss_all = fresh_process(ours_cmd[3:])
    in_ours, in_theirs = map(float, subprocess.run(
        [sys.executable, "-c", IN_PROCESS_SCRIPT, str(qrels), *map(str, runs)],
        capture_output=True, text=True, check=True).stdout.split())

    wall_ours, wall_theirs = min(t for t, _ in ours), min(t for t, _ in theirs)
    cpu_ours, cpu_theirs = min(c for _, c in ours), min(c for _, c in theirs)
    print(f"TREC-8 ad hoc, {len(runs)} runs, measures: {' '.join(MEASURES)}; whole processes, "
          f"best of {args.repeat}; load average {load_before:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after, {os.cpu_count()} CPUs")
    print(f"irsample eval (import + read + evaluate + write): {wall_ours:8.3f} s wall "
          f"{cpu_ours:8.3f} s CPU  (walls: {' '.join(f'{t:.2f}' for t, _ in ours)})")
    print(f"pytrec_eval (import + read + evaluate):           {wall_theirs:8.3f} s wall "
          f"{cpu_theirs:8.3f} s CPU  (walls: {' '.join(f'{t:.2f}' for t, _ in theirs)})")
    print(f"ratio irsample / pytrec_eval, wall time:          {wall_ours / wall_theirs:8.3f}  "
          "(target <= 0.2)")
    med_ours = statistics.median(t for t, _ in ours)
    med_theirs = statistics.median(t for t, _ in theirs)
    print(f"ratio of the medians, wall time:                  {med_ours / med_theirs:8.3f}  "
          f"({med_ours:.3f} s / {med_theirs:.3f} s)")
    print(f"ratio irsample / pytrec_eval, CPU time:           {cpu_ours / cpu_theirs:8.3f}")
    print(f"fresh process, 1 run (caches warm):               {cold:8.3f} s")
    print(f"another fresh process, 1 run:                     {warm:8.3f} s")
    print(f"peak RSS, fresh process, 129 runs:                {rss_all / 1024:8.1f} MiB")
    print(f"in-process, warm (best of 3): irsample {in_ours:.3f} s, pytrec_eval {in_theirs:.3f} s,"
          f" ratio {in_ours / in_theirs:.3f}  (the measure before whole processes were timed)")


if __name__ == "__main__":
    main()
