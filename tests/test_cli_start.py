"""Start-up of the command line (issue 11, items 1, 2 and 4): the numba cache folder, lazy
subcommands, which modules the plain ``eval`` path imports, ``--version`` and
``python -m irsample``. Not timings: which modules a process holds, and what it prints."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest

import irsample
from irsample.cli import COMMANDS, build_parser

ROOT = Path(irsample.__file__).resolve().parents[1]

QRELS = "1 0 d1 1\n1 0 d2 0\n2 0 e1 1\n"
RUN = "1 Q0 d2 1 2 r1\n1 Q0 d1 2 1 r1\n2 Q0 e1 1 1 r1\n"

#: never imported by `irsample eval -m map QRELS RUN` (scipy itself is imported by numba,
#: whatever irsample does: numba/__init__.py; scipy.linalg, numba's BLAS probe, is skipped by
#: irsample._numba_start)
HEAVY = ("matplotlib", "scipy.linalg", "scipy.stats", "scipy.optimize", "scipy.special", "tqdm",
         "dask",
         "irsample.design", "irsample.experiments", "irsample.plots",
         # irsample.stats itself is numpy-only (intervals, seeds); these parts import scipy.stats
         "irsample.stats.correlation", "irsample.stats.tests",
         "irsample.commands.demo", "irsample.commands.demo_text", "irsample.commands.design",
         "irsample.commands.judge",
         "irsample.commands.nojudge", "irsample.commands.plan", "irsample.commands.simulate")


def python(code: str, *, env=None, cwd=None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    base["PYTHONPATH"] = os.pathsep.join([str(ROOT), base.get("PYTHONPATH", "")])
    base.update(env or {})
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=base, cwd=cwd, timeout=600)


def modules_after(argv, *, cwd) -> tuple[set[str], str]:
    code = (
        "import json, sys\n"
        "from irsample.cli import main\n"
        "try:\n"
        f"    rc = main({argv!r})\n"
        "except SystemExit as exc:\n"
        "    rc = exc.code\n"
        "sys.stderr.write(json.dumps([rc, sorted(sys.modules)]))\n"
    )
    done = python(code, cwd=cwd)
    rc, modules = json.loads(done.stderr.splitlines()[-1])
    assert rc == 0, done.stderr
    return set(modules), done.stdout


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return tmp_path


def test_help_lists_every_command_without_importing_any(tmp_path):
    modules, out = modules_after(["--help"], cwd=tmp_path)
    for name, (_, _help_text) in COMMANDS.items():
        assert name in out
    assert not {m for m in modules if m.startswith("irsample.commands.") and
                m != "irsample.commands"}
    assert not {"numba", "pandas", "pyarrow", "scipy", "irsample.measures"} & modules


def test_plain_eval_imports_no_heavy_module(files):
    modules, out = modules_after(["eval", "-m", "map", str(files / "qrels"), str(files / "run")],
                                 cwd=files)
    assert out == "map                   \tall\t0.7500\n"  # (1/2 + 1) / 2
    assert not set(HEAVY) & modules
    assert "numba" in modules  # the kernels


def test_plain_eval_imports_no_pandas(files):
    """pyarrow imports pandas inside pa.array, Array.to_numpy and fill_null: the readers and
    the model go through the buffers instead (irsample.io.arrow)."""
    modules, _ = modules_after(["eval", "-m", "map", str(files / "qrels"), str(files / "run")],
                               cwd=files)
    assert "pandas" not in modules


def test_measures_listing_imports_no_scipy(tmp_path):
    """`irsample measures` reads the families' docstrings: the estimators that fit a logistic
    model (ht, ppi) import scipy's optimiser when they fit it, not when they are listed."""
    modules, out = modules_after(["measures"], cwd=tmp_path)
    assert "\nht\n" in out and "\nppi\n" in out
    assert not {"scipy.optimize", "scipy.special", "pandas"} & modules


def test_table_of_commands_matches_the_modules():
    """Each command module registers exactly the subcommands the table assigns to it, with the
    table's help line: `irsample --help` (built from the table alone) tells the truth."""
    import argparse

    by_module = {}
    for name, (module, help_text) in COMMANDS.items():
        by_module.setdefault(module, {})[name] = help_text
    for module, names in by_module.items():
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers()
        import_module(f"irsample.commands.{module}").add_parser(sub)
        assert set(sub.choices) == set(names), module
        helps = {a.dest: a.help for a in sub._choices_actions}
        assert helps == names, module


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_command_builds_alone(name):
    parser = build_parser(name)
    with pytest.raises(SystemExit) as exc:
        parser.parse_args([name, "--help"])
    assert exc.value.code == 0


def test_version_and_python_dash_m(tmp_path):
    done = subprocess.run([sys.executable, "-m", "irsample", "--version"], capture_output=True,
                          text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0
    assert done.stdout == f"irsample {irsample.__version__}\n"


def test_numba_cache_goes_to_a_per_user_folder(tmp_path):
    """Not next to the installed sources (site-packages), where `pip uninstall` leaves the
    folders behind to shadow a later editable install."""
    code = "import irsample, numba; print(numba.config.CACHE_DIR)"
    stamped = tmp_path / "irsample" / "numba" / irsample.source_stamp()
    done = python(code, env={"XDG_CACHE_HOME": str(tmp_path)})
    assert done.stdout.strip() == str(stamped)
    done = python(code, env={"NUMBA_CACHE_DIR": str(tmp_path / "mine")})
    assert done.stdout.strip() == str(tmp_path / "mine")  # the user's choice wins
    # numba imported before irsample: the kernels still go to the per-user folder
    done = python("import numba, irsample.measures.kernels as k; print(numba.config.CACHE_DIR)",
                  env={"XDG_CACHE_HOME": str(tmp_path)})
    assert done.stdout.strip() == str(stamped), done.stderr


def test_changed_sources_get_a_cache_of_their_own(tmp_path):
    """numba checks a cached kernel against its own file only, and kernels compile in helpers
    of other modules: after a change to such a helper the callers kept the old code (a
    reviewer flipped the score parser's sign in io/_scan.py; map read 0.3333 from the stale
    cache against 1.0000 fresh). The cache folder is named by a fingerprint of every module's
    path, size and modification time; making a new one removes the caches of earlier sources
    but the last two, and the folders of the layout before the fingerprint."""
    copy = tmp_path / "src" / "irsample"
    shutil.copytree(ROOT / "irsample", copy, ignore=shutil.ignore_patterns("__pycache__"))
    code = "import irsample, numba; print(numba.config.CACHE_DIR)"
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(copy.parent)}
    base = tmp_path / "cache" / "irsample" / "numba"
    base.mkdir(parents=True)
    (base / "scan_0123abcd").mkdir()  # the layout before the fingerprint
    seen = []
    for step in range(4):
        helper = copy / "io" / "_scan.py"
        helper.write_text(helper.read_text() + f"\n# change {step}\n")
        os.utime(helper, ns=(10**18 + step, 10**18 + step))  # a new modification time
        done = python(code, env=env, cwd=tmp_path)  # not this checkout's folder first
        folder = Path(done.stdout.strip())
        assert folder.parent == base and len(folder.name) == 8, done.stderr
        os.utime(folder, ns=((1 + step) * 10**18,) * 2)  # last used in this order
        seen.append(folder.name)
    assert len(set(seen)) == 4  # every change, a fresh cache
    assert sorted(p.name for p in base.iterdir()) == sorted(seen[1:])  # the last two kept


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX owners")
def test_unwritable_numba_cache_falls_back_to_a_private_temporary_folder(tmp_path):
    """A cache folder that cannot be written (read-only home or container) must not stop every
    command: numba raises 'cannot cache function' at import when none of its folders is
    writable. The fallback is a folder of the temporary directory that only the user owns."""
    (tmp_path / "file").write_text("")
    unwritable = str(tmp_path / "file" / "cache")  # under a file: cannot be created
    (tmp_path / "tmp").mkdir()
    code = ("import irsample, numba, os\n"
            "print(numba.config.CACHE_DIR, os.environ['NUMBA_CACHE_DIR'])")
    env = {"NUMBA_CACHE_DIR": unwritable, "TMPDIR": str(tmp_path / "tmp")}
    done = python(code, env=env)
    spare = tmp_path / "tmp" / f"irsample-{os.getuid()}" / "numba" / irsample.source_stamp()
    assert done.stdout.split() == [str(spare)] * 2, done.stderr
    assert (spare.parent.parent.stat().st_mode & 0o777) == 0o700
    done = python(code, env={"XDG_CACHE_HOME": unwritable, "TMPDIR": str(tmp_path / "tmp")})
    assert done.stdout.split() == [str(spare)] * 2, done.stderr
    # numba imported first, with the unwritable folder in its configuration
    done = python("import numba, irsample; print(numba.config.CACHE_DIR)", env=env)
    assert done.stdout.strip() == str(spare), done.stderr
    # a folder of that name that others may write in (cache files are pickles) is not used
    (tmp_path / "shared").mkdir()
    planted = tmp_path / "shared" / f"irsample-{os.getuid()}"
    planted.mkdir()
    planted.chmod(0o777)
    done = python(code, env={**env, "TMPDIR": str(tmp_path / "shared")})
    assert done.stdout.split() == [unwritable] * 2, done.stderr


def test_importing_every_module_compiles_no_kernel():
    """Kernels compile on first call only (no signatures given to @njit, no warm-up calls):
    a command compiles the kernels it runs and no others."""
    from numba.core import event

    seen = []

    class Record(event.Listener):
        def on_start(self, ev):
            seen.append(ev.data["dispatcher"].py_func.__qualname__)

        def on_end(self, ev):
            pass

    listener = Record()
    event.register("numba:compile", listener)
    try:
        for path in sorted((ROOT / "irsample").rglob("*.py")):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            if name.endswith("__main__"):
                continue
            import_module(name.removesuffix(".__init__"))
    finally:
        event.unregister("numba:compile", listener)
    assert seen == []


@pytest.mark.parametrize("output", [[], ["-o", "out.txt"]])
def test_eval_starts_reading_before_numpy(files, output):
    """The reading threads start before NumPy (and so numba and Arrow) is imported: building
    eval's parser and checking ``-o`` import none of them (TREC-8: reading starts 60-200 ms
    earlier)."""
    argv = ["eval", "-m", "map", *output, str(files / "qrels"), str(files / "run")]
    code = (
        "import json, sys\n"
        "import irsample.io.ahead as ahead\n"
        "seen = []\n"
        "start = ahead.ReadAhead.__init__\n"
        "def init(self, *a, **k):\n"
        "    seen.append(sorted(m for m in ('numpy', 'numba', 'pyarrow') if m in sys.modules))\n"
        "    start(self, *a, **k)\n"
        "ahead.ReadAhead.__init__ = init\n"
        "from irsample.cli import main\n"
        f"rc = main({argv!r})\n"
        "sys.stderr.write(json.dumps([rc, seen]))\n"
    )
    done = python(code, cwd=files)
    rc, seen = json.loads(done.stderr.splitlines()[-1])
    assert rc == 0, done.stderr
    assert seen == [[]]


@pytest.mark.parametrize("command, quick", [("eval", True), ("measures", False)])
def test_eval_ends_without_teardown_after_its_output(files, command, quick):
    """``irsample eval`` ends at once after its output is flushed (no interpreter teardown:
    atexit handlers do not run); other commands exit as usual. The output is complete either
    way, through a pipe too."""
    argv = (["eval", "-m", "map", str(files / "qrels"), str(files / "run")]
            if command == "eval" else ["measures"])
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: sys.stderr.write('teardown ran'))\n"
        f"sys.argv = ['irsample', *{argv!r}]\n"
        "from irsample.cli import run\n"
        "run()\n"
    )
    done = python(code, cwd=files)
    assert done.returncode == 0, done.stderr
    assert ("teardown ran" in done.stderr) is not quick
    if quick:
        assert done.stdout == "map                   \tall\t0.7500\n"
    else:
        assert done.stdout.strip()


NUMBA_STATE = (
    "import importlib, sys\n"
    "import llvmlite.binding.ffi as ffi\n"
    "import numba.core.entrypoints as entrypoints\n"
    "state = ['importlib.metadata' in sys.modules, entrypoints._already_initialized,\n"
    "         len(ffi.lib._lock._cblist)]\n"
    "import importlib.metadata\n"  # importable as usual afterwards
    "state.append(importlib.metadata.version('numba') == __import__('numba').__version__)\n"
    "sys.stderr.write(json.dumps(state))\n"
)


def test_eval_skips_numba_extension_search_and_llvm_events(files):
    """The command line's numba starts without searching installed packages for extensions
    (nor importing importlib.metadata to do so) and without numba's LLVM lock events; a
    program using irsample as a library keeps numba's own start-up."""
    args = ["eval", "-m", "map", str(files / "qrels"), str(files / "run")]
    ours = python(f"import json\nfrom irsample.cli import main\nmain({args!r})\n" + NUMBA_STATE,
                  cwd=files)
    assert json.loads(ours.stderr.splitlines()[-1]) == [False, True, 0, True], ours.stderr
    library = python(
        "import json\nfrom irsample.io.trec import read_qrels\n"
        f"read_qrels({str(files / 'qrels')!r})\n" + NUMBA_STATE, cwd=files)
    state = json.loads(library.stderr.splitlines()[-1])
    assert state[1] is True and state[2] > 0 and state[3], library.stderr  # numba's own init ran


def test_eval_loads_one_signature_per_kernel_and_dtype(files):
    """Every signature of a kernel is a kernel of its own to load (or compile on first use):
    strided or read-only arguments must not add signatures beside the contiguous ones."""
    (files / "qrels5").write_text("1 0 d1 1 s1\n1 0 d2 0 s1\n")  # detection reads a 5th field
    # a long mantissa takes the reader's second float parser, which gathers its tokens
    (files / "run").write_text(RUN.replace(" 2 r1", " 1.0203721250066107000000 r1", 1))
    code = (
        "import json, sys\nfrom irsample.cli import main\n"
        f"main(['eval', '-m', 'official', '-m', 'ndcg', {str(files / 'qrels')!r}, "
        f"{str(files / 'run')!r}])\n"
        f"main(['eval', '-m', 'map', {str(files / 'qrels5')!r}, {str(files / 'run')!r}])\n"
        "from irsample.io._scan import gather_spans\n"
        "from irsample.measures.kernels import segment_last_below\n"
        "sys.stderr.write(json.dumps([[str(s) for s in k.signatures]\n"
        "                             for k in (gather_spans, segment_last_below)]))\n"
    )
    done = python(code, cwd=files)
    spans, last_below = json.loads(done.stderr.splitlines()[-1])
    assert len(spans) == 1, spans
    assert len(last_below) == 2, last_below  # integer and float running values
