"""Benchmark: peak memory of `irsample eval` on 1 and on 10 MS MARCO-sized runs.

`irsample eval` reads and evaluates runs a batch at a time, so its peak memory should not grow
with the number of runs: target 10 runs <= 1.5x 1 run. Each measurement is a fresh process,
whose peak resident set size is read with getrusage(RUSAGE_CHILDREN) in a wrapper process of
its own (so one measurement never sees another's peak).

Make the data first (not committed; about 2.9 GB for 10 runs):
    python benchmarks/make_msmarco_sized.py /tmp/msmarco-sized
Then:
    python benchmarks/eval_memory.py /tmp/msmarco-sized [--measures official]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

WRAPPER = (
    "import json, resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
    "wall = time.perf_counter() - t\n"
    "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "print(json.dumps({'code': code, 'wall': wall, 'rss_kib': rss}))\n"
)


def peak(qrels: Path, runs: list[Path], measures: list[str]) -> dict:
    """Wall time and peak RSS of one fresh `irsample eval` process."""
    cmd = [sys.executable, "-m", "irsample.cli", "eval", str(qrels), *map(str, runs)]
    for m in measures:
        cmd += ["-m", m]
    out = subprocess.run([sys.executable, "-c", WRAPPER, *cmd], capture_output=True, text=True,
                         check=True)
    result = json.loads(out.stdout)
    assert result["code"] == 0, out.stderr
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="folder written by make_msmarco_sized.py")
    parser.add_argument("--measures", nargs="+", default=["official"])
    args = parser.parse_args()
    qrels = args.data / "qrels.txt"
    runs = sorted(args.data.glob("run*.txt"))
    assert len(runs) >= 10, f"expected 10 runs in {args.data} (run make_msmarco_sized.py)"
    peak(qrels, runs[:1], args.measures)  # compile/cache warm-up, not reported
    one = peak(qrels, runs[:1], args.measures)
    ten = peak(qrels, runs[:10], args.measures)
    size = runs[0].stat().st_size / 2**20
    with open(runs[0], "rb") as f:
        topics = len({line.split(maxsplit=1)[0] for line in f})
    print(f"runs of {topics:,} topics ({size:.0f} MiB each; make_msmarco_sized.py's default: "
          "6,980 topics x 1,000 documents), "
          f"measures: {' '.join(args.measures)}")
    print(f" 1 run : {one['wall']:7.2f} s  peak RSS {one['rss_kib'] / 1024:8.1f} MiB")
    print(f"10 runs: {ten['wall']:7.2f} s  peak RSS {ten['rss_kib'] / 1024:8.1f} MiB")
    print(
        f"ratio 10 runs / 1 run (peak RSS): {ten['rss_kib'] / one['rss_kib']:.2f}  (target <= 1.5)"
    )


if __name__ == "__main__":
    main()
