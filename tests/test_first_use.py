"""The first command after install (issue 27, item 1): with an empty kernel cache, ``irsample
eval -m map`` compiles the kernels it runs and no others, each once, none with numba's
``parallel=True``, and says so in one line on standard error even when that is a pipe; the
second run loads them and is silent. One cold compilation (about 9 s) serves every check."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import irsample
from irsample import _threads
from irsample.commands.notices import compile_notice, first_use_seconds

ROOT = Path(irsample.__file__).resolve().parents[1]

QRELS = "1 0 d1 1\n1 0 d2 0\n2 0 e1 1\n"
RUN = "1 Q0 d2 1 2 r1\n1 Q0 d1 2 1 r1\n2 Q0 e1 1 1 r1\n"

#: the command line, with every compilation of a kernel recorded: (qualname, depth, parallel,
#: signature) written as JSON to the file named by $COMPILED
RECORDING = """
import json, os, sys
from numba.core import event
seen, depth = [], [0]
class Record(event.Listener):
    def on_start(self, ev):
        d = ev.data["dispatcher"]
        seen.append([d.py_func.__module__ + "." + d.py_func.__qualname__, depth[0],
                     bool(d.targetoptions.get("parallel")), str(ev.data["args"])])
        depth[0] += 1
    def on_end(self, ev):
        depth[0] -= 1
event.register("numba:compile", Record())
def write(_status=None):
    with open(os.environ["COMPILED"], "w") as fh:
        json.dump(seen, fh)
exit_now = os._exit
os._exit = lambda status: (write(), exit_now(status))
sys.argv = ["irsample", *sys.argv[1:]]
from irsample.cli import run
try:
    run()
finally:
    write()
"""

#: what `eval -m map` runs: the qrels and run readers, the collection's interning and ranking,
#: and AP's two kernels (with their judged-pair gather)
MAP_KERNELS = {
    "irsample.io._scan.scan_fields", "irsample.io._scan.gather_spans",
    "irsample.io._scan.parse_int_fields", "irsample.io._scan_run.scan_run",
    "irsample._build.intern_strings", "irsample._rank.group_rows",
    "irsample._build._intern_topic_part", "irsample._build.gather_strings",
    "irsample._rank._rank_part", "irsample.measures.kernels.gather_pair",
    "irsample.measures.trec_eval.average_precision._precision_at_relevant_cumsum",
    "irsample.measures.kernels.segment_last_below",
}


@pytest.fixture(scope="module")
def first_use(tmp_path_factory):
    """``eval -m map`` twice on a fresh kernel cache, standard error a pipe: (compilations of
    the first run, its standard error, the second run's standard error)."""
    folder = tmp_path_factory.mktemp("first-use")
    (folder / "qrels").write_text(QRELS)
    (folder / "run").write_text(RUN)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_CACHE_DIR": str(folder / "cache"),
           "COMPILED": str(folder / "compiled.json")}
    argv = [sys.executable, "-c", RECORDING, "eval", "-m", "map", "qrels", "run"]
    runs = []
    for _ in range(2):
        done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr
        assert done.stdout == "map                   \tall\t0.7500\n"
        runs.append((json.loads((folder / "compiled.json").read_text()), done.stderr))
    return runs[0][0], runs[0][1], runs[1][0], runs[1][1]


def test_eval_map_compiles_only_the_kernels_it_runs(first_use):
    compiled, _, _, _ = first_use
    ours = [c for c in compiled if c[0].startswith("irsample.")]
    assert {name for name, depth, _, _ in ours if depth == 0} == MAP_KERNELS
    assert not [c for c in ours if c[2]], "a parallel=True kernel compiled for a small input"
    top = [name for name, depth, _, _ in ours if depth == 0]
    assert len(top) == len(set(top)), "a kernel compiled with two signatures"


def test_first_use_says_so_once_on_a_pipe_and_the_second_run_is_silent(first_use):
    _, err, compiled_again, err_again = first_use
    assert err == compile_notice(_eval_map_args()) + "\n"
    assert f"about {first_use_seconds(_eval_map_args())} s" in err
    assert compiled_again == [] and err_again == ""


def _eval_map_args():
    from irsample.cli import build_parser

    return build_parser("eval").parse_args(["eval", "-m", "map", "q", "r"])


def test_estimate_depends_on_the_command():
    from irsample.cli import build_parser

    estimators = build_parser("eval").parse_args(["eval", "-m", "ht(AP)", "q", "r"])
    assert first_use_seconds(estimators) > first_use_seconds(_eval_map_args())
    assert first_use_seconds(build_parser("demo").parse_args(["demo"])) > first_use_seconds(
        _eval_map_args())


def test_parallel_when_large_gives_the_serial_kernels_bits():
    """The two versions of a wrapped kernel compute the same bits (each segment is its own
    iteration), and the size of the input chooses between them."""
    from irsample.measures.trec_eval.gain_tables import cumulative_dcg

    rng = np.random.default_rng(7)
    offsets = np.array([0, 5, 5, 40], dtype=np.int64)
    gain = rng.random(40)
    serial = cumulative_dcg.serial(offsets, gain)
    with _threads.expect(_threads.LARGE):
        chosen = cumulative_dcg(offsets, gain)
    assert serial.tobytes() == chosen.tobytes()
    assert _threads.parts(np.array([5, 5, 5, 5]), 2).tolist() == [0, 2, 4]
    assert _threads.parts(np.zeros(0), 4).tolist() == [0, 0]


def test_ranking_fallback_sorts_as_numpy_did():
    """The ranking's own sort (heap sort, compiled in a fraction of numba's argsorts' time)
    orders a shuffled segment as ``argsort(-score, kind="mergesort")`` of the entries in
    descending docno order did: score descending in NumPy's order (NaN last, 0.0 == -0.0),
    ties by docno descending."""
    from irsample._rank import _sort_segment

    rng = np.random.default_rng(3)
    for n in (40, 257):
        score = rng.integers(0, 5, n).astype(np.float64)
        score[rng.random(n) < 0.1] = np.nan
        score[rng.random(n) < 0.1] = -0.0
        score = np.sort(score)  # ascending: past the insertion sort's budget
        tdi = rng.permutation(3 * n)[:n].astype(np.int32)
        out = np.empty(n, dtype=np.int64)
        _sort_segment(score, tdi, out)
        by_doc = np.argsort(-tdi.astype(np.int64))
        assert out.tolist() == by_doc[np.argsort(-score[by_doc], kind="mergesort")].tolist()
