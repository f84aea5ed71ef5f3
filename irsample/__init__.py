"""irsample: evaluation of retrieval runs with complete or sampled relevance judgments.

The Python API (see :mod:`irsample.api`)::

    import irsample
    ev = irsample.evaluate("qrels.txt", ["run.gz"], ["AP", "P@10", "nDCG@10"])
    ev.frame()   # tidy table: run, topic, measure, value
    est = irsample.estimate("sampled.qrels", ["run.gz"], ["infAP", "xinfAP"], ci=0.95)
    est.frame()  # ... plus variance, low, high

The names below are imported on first use (PEP 562), so ``import irsample`` and the command line
start without loading numba, pandas or the measures.

numba's on-disk cache of compiled kernels goes to a per-user folder, ``$NUMBA_CACHE_DIR`` if the
user set it, else ``$XDG_CACHE_HOME/irsample/numba`` (``~/.cache/irsample/numba``), else (that
folder cannot be written) ``irsample-UID/numba`` in the temporary directory; numba's
default writes ``__pycache__`` folders next to the installed sources, which ``pip uninstall``
leaves behind and which then shadow a later editable install of the package.
"""

from __future__ import annotations

import os
import stat
import sys
from importlib import import_module
from pathlib import Path

__version__ = "0.1.0"


def numba_cache_dir() -> str:
    """The folder of irsample's compiled-kernel cache (module docstring)."""
    chosen = os.environ.get("NUMBA_CACHE_DIR")
    if chosen:
        return chosen
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return os.path.join(base, "irsample", "numba")


def _writable(folder: str) -> bool:
    """Whether ``folder`` exists (it is created if need be) and files can be written in it."""
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return False
    return os.access(folder, os.W_OK | os.X_OK)  # False on a read-only file system too


def _usable_cache_dir() -> str:
    """:func:`numba_cache_dir`, or a private folder of the temporary directory when that one
    cannot be written (a read-only home or container): numba would otherwise try the package's
    own folder, then its own per-user one, and stop every command with ``cannot cache
    function`` when none is writable."""
    folder = numba_cache_dir()
    if _writable(folder) or not hasattr(os, "getuid"):
        return folder
    import tempfile

    # numba's cache files are pickles: only a folder this user owns, which nobody else may
    # write in (the temporary directory is shared)
    own = os.path.join(tempfile.gettempdir(), f"irsample-{os.getuid()}")
    try:
        os.makedirs(own, mode=0o700, exist_ok=True)
        st = os.lstat(own)
    except OSError:
        return folder
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        return folder
    spare = os.path.join(own, "numba")
    return spare if _writable(spare) else folder


def _use_cache_dir() -> None:
    chosen, folder = numba_cache_dir(), _usable_cache_dir()
    os.environ["NUMBA_CACHE_DIR"] = folder  # the user's, ours, or the fallback (workers too)
    numba = sys.modules.get("numba")
    if numba is not None and numba.config.CACHE_DIR in ("", chosen):
        # numba was imported first and read its configuration without the variable (or with
        # an unwritable one): the locator reads config.CACHE_DIR when each kernel is
        # decorated, so set it there too
        numba.config.CACHE_DIR = folder


_use_cache_dir()

from . import _moved  # noqa: E402 (after the cache folder is set: it imports nothing heavy)

_moved.install()

#: public name -> module defining it
_EXPORTS = {
    "compare": "comparing", "compare_table": "comparing",
    "estimate": "api", "evaluate": "api", "load": "api", "measures_from": "api",
    "InputError": "errors", "IrsampleError": "errors", "MeasureError": "errors",
    "Evaluation": "evaluation", "Measure": "measures", "parse": "measures",
    "Collection": "model", "Judgments": "model",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'irsample' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
