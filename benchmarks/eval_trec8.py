"""Benchmark: `irsample eval` vs pytrec_eval on all 129 TREC-8 ad hoc runs.

Measures: trec_eval's official set + infAP + ndcg + bpref (bpref is in official already).
Prints, for the same machine and process:

- irsample: the whole `irsample eval` (read 129 gz runs + qrels, build, evaluate, format);
- pytrec_eval: read the same gz files into the dicts it needs, build the evaluator, evaluate;
  and its evaluation alone;
- the ratio (target <= 0.2);
- cold start: a fresh `irsample eval` process on one run (import + first evaluation), with the
  numba cache as it is and once more warm (target <= 3 s);
- peak memory (max RSS) of a fresh process evaluating all runs.

Usage: python benchmarks/eval_trec8.py [--shared ../shared] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gzip
import io
import subprocess
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path

MEASURES = ["official", "infAP", "ndcg"]
#: one -m per measure, as in trec_eval
MEASURE_ARGS = [arg for m in MEASURES for arg in ("-m", m)]
PYTREC_MEASURES = {
    "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "infAP", "ndcg",
}


def irsample_eval(qrels: Path, runs: list[Path]) -> float:
    from irsample.cli import main

    start = time.perf_counter()
    with redirect_stdout(io.StringIO()) as out:
        code = main(["eval", str(qrels), *map(str, runs), *MEASURE_ARGS])
    elapsed = time.perf_counter() - start
    assert code == 0 and out.getvalue().count("runid") == len(runs)
    return elapsed


def pytrec_eval_run(qrels: Path, runs: list[Path]) -> tuple[float, float]:
    import pytrec_eval

    start = time.perf_counter()
    judgments: dict = {}
    with open(qrels) as fh:
        for line in fh:
            qid, _, doc, rel = line.split()
            judgments.setdefault(qid, {})[doc] = int(rel)
    evaluator = pytrec_eval.RelevanceEvaluator(judgments, PYTREC_MEASURES)
    evaluating = 0.0
    for path in runs:
        run: dict = {}
        with gzip.open(path, "rt") as fh:
            for line in fh:
                f = line.split()
                run.setdefault(f[0], {})[f[2]] = float(f[4])
        t = time.perf_counter()
        evaluator.evaluate(run)
        evaluating += time.perf_counter() - t
    return time.perf_counter() - start, evaluating


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
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    _, rss, rc = out.stdout.split()
    assert rc == "0", out.stderr
    return wall, int(rss)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    base = Path(args.shared) / "data" / "trec8-adhoc"
    qrels = base / "qrels.trec8.adhoc"
    runs = sorted((base / "runs").glob("input.*.gz"))
    assert len(runs) == 129, f"expected 129 runs under {base / 'runs'}"

    irsample_eval(qrels, runs[:2])  # JIT/cache warm-up, not timed
    ours = min(irsample_eval(qrels, runs) for _ in range(args.repeat))
    theirs_total, theirs_eval = min(pytrec_eval_run(qrels, runs) for _ in range(args.repeat))
    cold, _ = fresh_process(["eval", str(qrels), str(runs[0]), *MEASURE_ARGS])
    warm, _ = fresh_process(["eval", str(qrels), str(runs[0]), *MEASURE_ARGS])
    _, rss_all = fresh_process(["eval", str(qrels), *map(str, runs), *MEASURE_ARGS])

    print(f"TREC-8 ad hoc, {len(runs)} runs, measures: {' '.join(MEASURES)}")
    print(f"irsample eval (read + evaluate + format): {ours:8.3f} s")
    print(f"pytrec_eval (read + evaluate):             {theirs_total:8.3f} s")
    print(f"pytrec_eval (evaluate only):               {theirs_eval:8.3f} s")
    print(f"ratio irsample / pytrec_eval total:        {ours / theirs_total:8.3f}  (target <= 0.2)")
    print(f"ratio irsample / pytrec_eval evaluate:     {ours / theirs_eval:8.3f}")
    print(f"cold start, fresh process, 1 run:          {cold:8.3f} s  (target <= 3 s)")
    print(f"second fresh process, 1 run:               {warm:8.3f} s")
    print(f"peak RSS, fresh process, 129 runs:         {rss_all / 1024:8.1f} MiB")


if __name__ == "__main__":
    main()
