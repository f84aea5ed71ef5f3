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
user set it, else ``$XDG_CACHE_HOME/irsample/numba/STAMP`` (``~/.cache/irsample/numba/STAMP``),
else (that folder cannot be written) ``irsample-UID/numba/STAMP`` in the temporary directory,
STAMP a fingerprint of the sources (:func:`source_stamp`: a changed module starts an empty
cache); numba's default writes ``__pycache__`` folders next to the installed sources, which
``pip uninstall`` leaves behind and which then shadow a later editable install of the package.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

__version__ = "0.1.0"


def numba_cache_dir() -> str:
    """The folder of irsample's compiled-kernel cache (module docstring)."""
    chosen = os.environ.get("NUMBA_CACHE_DIR")
    if chosen:
        return chosen
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return os.path.join(base, "irsample", "numba", source_stamp())


def source_stamp() -> str:
    """A fingerprint of irsample's sources (every module's path, size and modification time):
    the subfolder of the kernel cache. numba checks a cached kernel against its own file alone,
    while many kernels have helpers and constants of other modules compiled in (the score
    parser in the run scanner, the judgment codes in statAP): after a change to one of those
    (a ``git pull`` in an editable install) the callers kept their old code and printed numbers
    of the old sources, silently. A new fingerprint starts an empty cache instead (about 2 ms a
    start)."""
    import zlib  # hashlib's import alone took twice the walk

    root = os.path.dirname(os.path.abspath(__file__))
    digest = 0
    folders = [root]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:  # in any order: the files' checksums are added
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in ("__pycache__", "data"):
                        folders.append(entry.path)
                elif entry.name.endswith(".py"):
                    st = entry.stat()
                    digest += zlib.crc32(f"{entry.path}\0{st.st_size}\0{st.st_mtime_ns}"
                                         .encode())
    return f"{digest & 0xFFFFFFFF:08x}"


def _writable(folder: str) -> bool:
    """Whether ``folder`` exists (it is created if need be) and files can be written in it."""
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return False
    return os.access(folder, os.W_OK | os.X_OK)  # False on a read-only file system too


def _usable_cache_dir(folder: str) -> str:
    """``folder`` (:func:`numba_cache_dir`), or a private folder of the temporary directory when
    it cannot be written (a read-only home or container): numba would otherwise try the
    package's own folder, then its own per-user one, and stop every command with ``cannot cache
    function`` when none is writable."""
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
    spare = os.path.join(own, "numba", source_stamp())
    return spare if _writable(spare) else folder


#: caches of earlier sources kept beside the current one (the last branches switched between)
KEPT_STAMPS = 2


def _prune_earlier_stamps(folder: str) -> None:
    """Once, when the cache folder of new sources is made: remove the caches of earlier sources
    beside it (each 100 MB or so) but the :data:`KEPT_STAMPS` last used, and the folders of the
    layout before the fingerprint."""
    import shutil

    parent, current = os.path.split(folder)
    try:
        with os.scandir(parent) as entries:
            others = [e for e in entries if e.is_dir(follow_symlinks=False) and e.name != current]
        stamps = sorted((e for e in others if len(e.name) == 8), reverse=True,
                        key=lambda e: e.stat().st_mtime_ns)
    except OSError:
        return
    keep = {e.name for e in stamps[:KEPT_STAMPS]}
    for entry in others:
        if entry.name not in keep:
            shutil.rmtree(entry.path, ignore_errors=True)


def _use_cache_dir() -> None:
    chosen = numba_cache_dir()
    new = not os.environ.get("NUMBA_CACHE_DIR") and not os.path.isdir(chosen)
    folder = _usable_cache_dir(chosen)
    if new and os.path.isdir(folder):
        _prune_earlier_stamps(folder)
    os.environ["NUMBA_CACHE_DIR"] = folder  # the user's, ours, or the fallback (workers too)
    numba = sys.modules.get("numba")
    if numba is not None and numba.config.CACHE_DIR in ("", chosen):
        # numba was imported first and read its configuration without the variable (or with
        # an unwritable one): the locator reads config.CACHE_DIR when each kernel is
        # decorated, so set it there too
        numba.config.CACHE_DIR = folder


_use_cache_dir()

from . import _moved  # noqa: E402 (after the cache folder is set: it imports nothing heavy)
from ._lazy import lazy_exports  # noqa: E402 (likewise)

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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
