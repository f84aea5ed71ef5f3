"""Ctrl-C: one line on standard error, exit status 130, worker processes stopped within 2 s and
no output left behind, checked on real processes (the command runs in its own session and the
whole process group gets SIGINT, as a terminal sends it to its foreground group)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from irsample.commands.notices import COMPILE_NOTICE

psutil = pytest.importorskip("psutil")

DATA = Path(__file__).resolve().parents[1] / "irsample" / "data" / "vaswani"


def interrupt(args: list[str], ready, *, timeout: float = 120.0):
    """Start ``irsample ARGS``, wait until ``ready(process)`` is true, send SIGINT to its
    process group; return (exit status, stderr text, seconds from SIGINT to the exit of the
    command and of every process it started)."""
    proc = subprocess.Popen([sys.executable, "-m", "irsample", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=_as_from_a_terminal)
    parent = psutil.Process(proc.pid)
    deadline = time.monotonic() + timeout
    while not ready(parent):
        assert proc.poll() is None, proc.stderr.read().decode()
        assert time.monotonic() < deadline, "the command never got going"
        time.sleep(0.1)
    family = [parent] + parent.children(recursive=True)
    start = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    while any(running(member) for member in family):
        assert time.monotonic() - start < 30, "a process outlived the command by 30 s"
        time.sleep(0.01)
    return proc.returncode, err.decode(), time.monotonic() - start


def _as_from_a_terminal() -> None:
    """In the command's process before it starts: SIGINT at its default, as a terminal starts a
    foreground command. A test session launched as a background job of a non-interactive shell
    runs with SIGINT ignored, and an ignored signal stays ignored across exec, so the command
    would rightly ignore the test's Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def messages(err: str) -> list[str]:
    """The lines of standard error but the first-use compile notice, which a command prints
    where the kernel cache lacks its kernels (a fresh clone, before other tests compiled
    them)."""
    notice = COMPILE_NOTICE.split("{")[0]
    return [line for line in err.splitlines() if not line.startswith(notice)]


def running(process) -> bool:
    """Whether ``process`` still runs. A zombie does not: it has exited and only its status is
    left for its parent to collect. multiprocessing's resource tracker, which outlives the
    command by design, exits as soon as the command and its workers have, but once orphaned it
    is reaped by the machine's init process, on that process's own schedule (1-2 s on some)."""
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def workers_busy(parent) -> bool:
    """Two worker processes (besides multiprocessing's resource tracker) that have run tasks
    for a while: the collection is read (about 1 s) and trials are under way."""
    workers = [c for c in parent.children() if "resource_tracker" not in " ".join(c.cmdline())]
    return len(workers) >= 2 and all(time.time() - w.create_time() > 4.0 for w in workers)


@pytest.mark.parametrize("recipe, params", [
    ("infap-random", ["--param", "percents=10,20,30"]),  # the experiment runner's tasks
    ("residuals", ["--param", "runs=all", "--param", "sizes=50,200"]),  # its own trials
])
def test_simulate_with_two_workers_stops_at_once(tmp_path, recipe, params):
    out = tmp_path / "out"
    status, err, seconds = interrupt(
        ["simulate", recipe, "--qrels", str(DATA / "qrels.gz"), "--runs", str(DATA / "runs"),
         *params, "--trials", "5000", "--workers", "2", "--no-progress", "-o", str(out)],
        workers_busy)
    assert status == 130
    assert messages(err) == ["irsample: interrupted"]
    assert seconds < 2.0, f"workers stopped after {seconds:.1f} s"
    assert not out.exists() or not any(out.iterdir())  # nothing written, not even a part


def test_a_command_in_its_own_process(tmp_path):
    """Ctrl-C while a single-process command computes: 5000 trials in this process take minutes
    however fast the machine, so the signal always arrives mid-computation."""
    out = tmp_path / "out"
    status, err, seconds = interrupt(
        ["simulate", "infap-random", "--qrels", str(DATA / "qrels.gz"), "--runs",
         str(DATA / "runs"), "--param", "percents=10", "--trials", "5000", "--workers", "1",
         "--no-progress", "-o", str(out)],
        lambda p: time.time() - p.create_time() > 3.0)
    assert status == 130
    assert messages(err) == ["irsample: interrupted"]
    assert seconds < 2.0
    assert not out.exists() or not any(out.iterdir())
