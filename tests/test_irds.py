"""ir_datasets ids as qrels (``irds:vaswani``), offline: the bundled Vaswani qrels are written
where ir_datasets keeps the dataset (``$IR_DATASETS_HOME/vaswani/qrels.txt``, in the layout of
the NPL archive's ``rlv-ass`` file that ir_datasets extracts there), so ir_datasets' own loading
code runs and finds its cache instead of downloading. Each command runs in a fresh process:
ir_datasets reads ``IR_DATASETS_HOME`` when it is imported."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import irsample

from .docs_fixtures import irds_home

pytest.importorskip("ir_datasets", reason="the optional extra irsample[irds] is not installed")

VASWANI = Path(irsample.__file__).resolve().parent / "data" / "vaswani"
RUN = VASWANI / "runs" / "bm25_k1.2_b0.75.run.gz"


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return irds_home(tmp_path_factory.mktemp("irds"))


def irsample_cli(home, *argv):
    env = dict(os.environ, IR_DATASETS_HOME=str(home))
    return subprocess.run([sys.executable, "-m", "irsample", *map(str, argv)], env=env,
                          capture_output=True, text=True, timeout=300)


def test_eval_reads_the_dataset_like_the_file(home):
    by_id = irsample_cli(home, "eval", "-q", "-m", "map", "-m", "P.10", "-m", "num_rel",
                         "irds:vaswani", RUN)
    by_file = irsample_cli(home, "eval", "-q", "-m", "map", "-m", "P.10", "-m", "num_rel",
                           VASWANI / "qrels.gz", RUN)
    assert by_id.returncode == 0, by_id.stderr
    assert by_id.stdout == by_file.stdout
    assert by_id.stdout.count("\n") > 3 * 93
    assert not (home / "vaswani" / "npl.tar.gz").exists()  # nothing was downloaded


def test_the_api_and_other_commands_take_ids(home):
    code = (f"import irsample; ev = irsample.evaluate('irds:vaswani', [{str(RUN)!r}], ['AP']); "
            "print(round(float(ev.summary[0, 0]), 4))")
    env = dict(os.environ, IR_DATASETS_HOME=str(home))
    api = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300)
    assert api.returncode == 0, api.stderr
    assert api.stdout.strip() == "0.2684"  # the README's MAP of this run
    demo = irsample_cli(home, "demo", "--qrels", "irds:vaswani", RUN,
                        VASWANI / "runs" / "tf_raw.run.gz", "--no-progress", "--plot",
                        home / "demo.png")
    assert demo.returncode == 0, demo.stderr


def test_unknown_ids_and_missing_qrels_are_clear_errors(home):
    result = irsample_cli(home, "eval", "irds:no-such-dataset", RUN)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == ("irsample: irds:no-such-dataset: ir_datasets has no dataset "
                             "'no-such-dataset'\n")
