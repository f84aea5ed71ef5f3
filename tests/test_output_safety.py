"""Safe output (issue 11, item 5): ``-o`` and output folders are checked before any work; a
symbolic link is written through; character devices and FIFOs are written in place, never
replaced; new files get their mode from the umask; a failed command leaves an existing file
intact. Tiny hand-made inputs; no ../shared."""

from __future__ import annotations

import os
import stat
import threading

import pytest

from irsample.cli import main
from irsample.errors import InputError
from irsample.io.output import check_output, check_output_folder, write_atomic

QRELS = "1 0 d1 1\n1 0 d2 0\n"
RUN = "1 Q0 d2 1 2 r1\n1 Q0 d1 2 1 r1\n"
MAP = "map                   \tall\t0.5000\n"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return tmp_path


def run_cli(capsys, *argv):
    rc = main([str(a) for a in argv])
    return (rc, *capsys.readouterr())


# ---- checked before any work ---------------------------------------------------------------
@pytest.mark.parametrize("where", ["missing folder", "a folder"])
def test_bad_output_refused_before_reading_anything(tmp_path, capsys, where):
    target = tmp_path / "no" / "out.txt" if where == "missing folder" else tmp_path
    # the inputs do not exist either: the error must be about -o, raised first
    rc, out, err = run_cli(capsys, "eval", "-m", "map", tmp_path / "nope.qrels",
                           tmp_path / "nope.run", "-o", target)
    assert rc == 1 and out == ""
    assert err.startswith(f"irsample: {target}: ")
    assert ("no such folder" if where == "missing folder" else "is a folder") in err
    assert "nope" not in err and "Traceback" not in err


@pytest.mark.parametrize("argv", [
    ["plan", "{missing}/run", "--budget", "10", "-o", "{tmp}/no/plan.json"],
    ["sample", "{missing}/run", "--design", "2strata", "--seed", "1", "-o", "{file}/sub"],
    ["judge", "{missing}/run", "--method", "mtf", "--budget", "5", "--state", "{file}"],
    ["demo", "--plot", "{tmp}/no/figure.png"],
    ["pool", "{missing}/run", "--depth", "5", "-o", "{tmp}"],
    ["nojudge", "{missing}/run", "--method", "refcount", "-o", "{tmp}/no/x"],
    ["infer-qrels", "{missing}/q", "{missing}/run", "-o", "{tmp}"],
    ["merge", "{missing}/d.json", "{missing}/q", "--format", "trec", "-o", "{tmp}/no/x"],
    ["simulate", "depth-pools", "--qrels", "{missing}/q", "--runs", "{missing}/r", "-o", "{file}"],
], ids=lambda a: a[0])
def test_every_command_checks_its_outputs_first(tmp_path, capsys, argv):
    (tmp_path / "file").write_text("keep")
    fill = {"missing": tmp_path / "missing", "tmp": tmp_path, "file": tmp_path / "file"}
    rc, out, err = run_cli(capsys, *[a.format(**fill) for a in argv])
    assert rc == 1, err
    assert "missing" not in err  # no input was opened: the output was refused first
    assert (tmp_path / "file").read_text() == "keep"


def test_check_output_folder_rules(tmp_path):
    check_output_folder(tmp_path / "new" / "deeper")  # creatable
    check_output_folder(tmp_path)
    (tmp_path / "f").write_text("")
    for bad in (tmp_path / "f", tmp_path / "f" / "sub"):
        with pytest.raises(InputError, match="not a folder"):
            check_output_folder(bad)


def test_an_output_naming_an_input_is_refused_by_every_command(files, capsys):
    """``-o`` naming a file the command reads is refused before any work, whatever the command
    (eval's qrels, pool's run; through a symbolic link too), and the input is left as it was."""
    link = files / "link"
    link.symlink_to(files / "run")
    for argv in (["eval", "-o", files / "qrels", files / "qrels", files / "run"],
                 ["pool", "--depth", "1", files / "run", "-o", files / "run"],
                 ["pool", "--depth", "1", files / "run", "-o", link]):
        rc, out, err = run_cli(capsys, *argv)
        assert rc == 1 and out == "" and "names an input of this command" in err, argv
    assert (files / "qrels").read_text() == QRELS and (files / "run").read_text() == RUN


# ---- links, devices, FIFOs -----------------------------------------------------------------
def test_symlink_is_written_through(files, capsys):
    target = files / "real.txt"
    target.write_text("old")
    link = files / "link.txt"
    link.symlink_to(target)
    rc, _, err = run_cli(capsys, "eval", "-m", "map", files / "qrels", files / "run", "-o", link)
    assert rc == 0, err
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == MAP


def test_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "made")
    write_atomic(link, b"x")
    assert link.is_symlink() and (tmp_path / "made").read_bytes() == b"x"


def test_fifo_is_written_in_place(files, capsys):
    fifo = files / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    rc, _, err = run_cli(capsys, "eval", "-m", "map", files / "qrels", files / "run", "-o", fifo)
    reader.join(timeout=60)
    assert rc == 0, err
    assert got == [MAP]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_dev_stdout_on_a_pipe_and_a_dash_write_standard_output(files, tmp_path):
    """``-o /dev/stdout`` where standard output is a pipe (its name resolves to ``pipe:[N]``,
    which does not exist: the command refused it) and ``-o -`` (it wrote a file named ``-``)
    both write standard output, in a child process whose output is a pipe."""
    import subprocess
    import sys

    for target in ("/dev/stdout", "-"):
        done = subprocess.run(
            [sys.executable, "-m", "irsample", "eval", "-m", "map", str(files / "qrels"),
             str(files / "run"), "-o", target], capture_output=True, cwd=tmp_path, timeout=300)
        assert done.returncode == 0, done.stderr
        assert done.stdout.decode() == MAP
    assert not (tmp_path / "-").exists()


def test_a_closed_standard_output_and_memory_running_out_are_said(files, tmp_path, capsys,
                                                                   monkeypatch):
    """``irsample eval ... >&-`` ended in an AttributeError traceback, and input larger than
    memory (``irsample eval q /dev/zero`` under a memory limit) in a MemoryError one."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "irsample", "eval", "-m", "map", str(files / "qrels"),
         str(files / "run")], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path,
        timeout=300, preexec_fn=lambda: os.close(1))
    assert done.returncode == 1 and b"Traceback" not in done.stderr
    assert b"standard output is closed: nothing can be written there (give -o FILE)" \
        in done.stderr

    def too_big(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr("irsample.design.pools.Pool.from_runs", too_big)
    rc, out, err = run_cli(capsys, "pool", files / "run", "--depth", 5)
    assert rc == 1 and out == "" and err.startswith("irsample: out of memory:")


def test_character_device_is_written_in_place(tmp_path):
    node = tmp_path / "null"
    try:  # a private null device (1, 3): never /dev/null itself, even if this test fails
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot make a device node here: {exc}")
    write_atomic(node, b"discarded")
    assert stat.S_ISCHR(os.stat(node).st_mode)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".null.")]


def test_socket_is_refused(tmp_path):
    import socket

    path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        with pytest.raises(InputError, match="refused"):
            check_output(path)


# ---- modes and failures --------------------------------------------------------------------
@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_new_file_mode_follows_the_umask(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        write_atomic(tmp_path / "out", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "out").st_mode) == mode


def test_existing_file_keeps_its_mode(tmp_path):
    path = tmp_path / "out"
    path.write_text("old")
    os.chmod(path, 0o640)
    write_atomic(path, b"new")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640 and path.read_bytes() == b"new"


def test_failed_command_leaves_existing_file_intact(files, capsys):
    out = files / "out.txt"
    out.write_text("precious")
    (files / "bad.run").write_text("1 Q0 d1 1 notanumber r1\n")
    rc, _, err = run_cli(capsys, "eval", "-m", "map", files / "qrels", files / "bad.run",
                         "-o", out)
    assert rc == 1 and "bad.run:1" in err
    assert out.read_text() == "precious"
    assert [p.name for p in files.iterdir() if p.name.startswith(".out")] == []


def test_gzip_output_by_name(tmp_path):
    import gzip

    write_atomic(tmp_path / "x.gz", b"hello")
    assert gzip.decompress((tmp_path / "x.gz").read_bytes()) == b"hello"
