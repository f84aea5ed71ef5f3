"""What long commands tell the user on standard error (issue 11, items 2 and 7): a one-line
notice while kernels compile on first use, and progress bars by default on a terminal (never in
a pipe; ``--no-progress`` / ``--progress``). A pseudo-terminal stands in for the user's."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from argparse import Namespace
from pathlib import Path

import pytest

import irsample
from irsample.commands.notices import Steps, compile_notice, progress_enabled

ROOT = Path(irsample.__file__).resolve().parents[1]

# topic 1: r1 a b c, r2 b c d, r3 a d e; a and d judged, b c e pooled but not judged (-1)
RUNS = {
    "r1": "1 Q0 a 1 3 r1\n1 Q0 b 2 2 r1\n1 Q0 c 3 1 r1\n",
    "r2": "1 Q0 b 1 3 r2\n1 Q0 c 2 2 r2\n1 Q0 d 3 1 r2\n",
    "r3": "1 Q0 a 1 3 r3\n1 Q0 d 2 2 r3\n1 Q0 e 3 1 r3\n",
}
SAMPLE = "1 0 a 1\n1 0 b -1\n1 0 c -1\n1 0 d 0\n1 0 e -1\n"


@pytest.fixture
def sample(tmp_path):
    for name, text in RUNS.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "sample.qrels").write_text(SAMPLE)
    return tmp_path


def run_on_terminal(argv, *, cwd, env=None) -> tuple[int, str, str]:
    """Run ``python -m irsample ARGV`` with standard error on a pseudo-terminal: (exit status,
    standard output, what the terminal showed)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    proc = subprocess.Popen([sys.executable, "-m", "irsample", *argv], cwd=cwd, env=full_env,
                            stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    shown = b""
    while True:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                chunk = b""
            if chunk:
                shown += chunk
                continue
        if proc.poll() is not None and not ready:
            break
        if ready and not chunk:
            break
    out = proc.stdout.read().decode()
    proc.wait(timeout=600)
    os.close(master)
    return proc.returncode, out, shown.decode(errors="replace")


def test_progress_default_follows_the_terminal(monkeypatch):
    class Stream:
        def __init__(self, tty):
            self.tty = tty

        def isatty(self):
            return self.tty

    monkeypatch.setattr(sys, "stderr", Stream(True))
    assert progress_enabled(Namespace(progress=None))
    assert not progress_enabled(Namespace(progress=False))
    monkeypatch.setattr(sys, "stderr", Stream(False))
    assert not progress_enabled(Namespace(progress=None))
    assert progress_enabled(Namespace(progress=True))
    assert not progress_enabled(Namespace())  # a command without the option


def test_disabled_steps_import_no_tqdm():
    code = ("import sys\nfrom irsample.commands.notices import Steps\n"
            "with Steps(['a', 'b'], False) as s:\n    s.next(); s.next()\n"
            "print('tqdm' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.stdout == "False\n", done.stderr


def test_infer_qrels_shows_progress_on_a_terminal_only(sample):
    argv = ["infer-qrels", "sample.qrels", "r1", "r2", "r3", "-o", "out.qrels"]
    rc, out, shown = run_on_terminal(argv, cwd=sample)
    assert rc == 0, shown
    assert "fitting" in shown and "topic" in shown  # tqdm's bar over the topics
    assert "reading runs and judgments" in shown or "estimating AP" in shown
    expected = (sample / "out.qrels").read_text()
    rc, out, shown = run_on_terminal([*argv, "--no-progress"], cwd=sample)
    assert rc == 0 and "fitting" not in shown and "%" not in shown
    assert (sample / "out.qrels").read_text() == expected
    piped = subprocess.run([sys.executable, "-m", "irsample", *argv], cwd=sample,
                           capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert piped.returncode == 0 and piped.stderr == ""  # a pipe or log: nothing


@pytest.mark.parametrize("command", ["simulate", "infer-qrels", "judge", "plan", "nojudge",
                                     "demo"])
def test_long_commands_take_the_progress_options(command):
    from irsample.cli import build_parser

    parser = build_parser(command)
    action = next(a for a in parser._subparsers._group_actions[0].choices[command]._actions
                  if "--no-progress" in a.option_strings)
    assert action.dest == "progress"


def test_compile_notice_once_on_first_use_then_silent(sample, tmp_path):
    """A fresh kernel cache: the first eval compiles (one notice line, on the terminal as in a
    pipe: tests/test_first_use.py); the second loads the cache and prints nothing."""
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "fresh-cache")}
    argv = ["eval", "-m", "num_ret", "sample.qrels", "r1"]
    rc, out, shown = run_on_terminal(argv, cwd=sample, env=env)
    assert rc == 0 and out.endswith("\t3\n"), shown
    assert shown.replace("\r", "") == compile_notice(Namespace(command="eval",
                                                               measure=["num_ret"])) + "\n"
    rc, out, shown = run_on_terminal(argv, cwd=sample, env=env)
    assert rc == 0 and shown == ""
    assert list((tmp_path / "fresh-cache").rglob("*.nbi"))  # the index of the cached kernels


def test_steps_show_each_stage_with_elapsed_time(monkeypatch):
    import io

    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    with Steps(["reading runs", "pooling"], True) as steps:
        steps.next()
        steps.next()
    shown = err.getvalue()
    assert "reading runs [0/2, 00:00]" in shown and "pooling [1/2, 00:00]" in shown
    err.truncate(0)
    with Steps(["reading runs"], False) as steps:  # disabled: silent
        steps.next()
    assert err.getvalue() == ""
