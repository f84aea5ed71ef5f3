"""numba's start-up without the BLAS probe: about 0.2 s off every command that runs a kernel.

``numba.np.arraymath``, which numba imports when the first kernel compiles or loads from its
cache, probes at import whether ``np.dot`` may call BLAS by importing ``scipy.linalg`` (which in
turn imports ``numpy.f2py`` through scipy's array-API layer): the largest single part of a
short ``irsample eval``. No irsample kernel calls ``np.dot``, ``np.vdot`` or ``@``, so
:func:`skip_blas_probe` imports that module while ``scipy.linalg`` is refused; numba then
records "no BLAS" and would compute a dot product in a kernel with its own loop (same formula,
no library). ``scipy.linalg`` stays importable afterwards, and numba's ``np.linalg`` functions
still import it when a kernel uses them. If ``scipy.linalg`` or ``numba.np.arraymath`` is
already imported, nothing changes.

The same process also skips two things numba does for every program when its first kernel
loads (:func:`import_numba`): the search of every installed package's entry points for numba
extensions (``numba.core.entrypoints.init_all``: 15-40 ms in an environment of a few hundred
packages, plus 13 ms to import ``importlib.metadata``), and the events numba emits around each
call into LLVM (about 280 calls per cached kernel loaded) for its compile-time statistics.
No irsample kernel uses an extension's types, and the events have no listener.

Only a process irsample owns skips the probe: :func:`irsample.cli.main` sets :data:`enabled`;
a program that imports irsample as a library keeps numba's own start-up (its kernels may use
BLAS or extensions).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
import types

#: set by the command line before any kernel loads; library use leaves numba untouched
enabled = False


class _Refuse(importlib.abc.MetaPathFinder):
    """An import finder that refuses some packages and their submodules."""

    def __init__(self, *packages: str):
        self.packages = [p for p in packages if p not in sys.modules]

    def find_spec(self, name, path=None, target=None):
        if any(name == p or name.startswith(p + ".") for p in self.packages):
            raise ImportError(f"{name}: not imported while numba starts (irsample)")
        return None


def _refusing(*packages: str):
    finder = _Refuse(*packages)
    sys.meta_path.insert(0, finder)
    return finder


def import_numba() -> None:
    """Import numba without the modules it imports only to check or offer things irsample
    does not use (TREC-8 eval: 20 ms): ``scipy`` (numba checks its version; numba's linear
    algebra imports it when a kernel uses it) and ``yaml`` (read only for a
    ``.numba_config.yaml`` in the current folder: then it is imported as usual); then skip
    the extension search and the LLVM lock events (module doc)."""
    if not enabled or "numba" in sys.modules:
        return
    refused = ["scipy"] + ([] if os.path.exists(".numba_config.yaml") else ["yaml"])
    finder = _refusing(*refused)
    metadata = _lazy_module("importlib.metadata")  # numba reads it only to find extensions
    try:
        import numba  # noqa: F401
    finally:
        sys.meta_path.remove(finder)
        _forget_if_unused("importlib.metadata", metadata)
    _skip_extensions_and_llvm_events()


def _lazy_module(name: str) -> types.ModuleType | None:
    """Put module ``name`` in ``sys.modules`` unexecuted (the standard library's
    :class:`importlib.util.LazyLoader` runs it on its first attribute access); None if it is
    imported already."""
    if name in sys.modules:
        return None
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:  # pragma: no cover - always found in CPython
        return None
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    parent, _, child = name.rpartition(".")
    setattr(sys.modules[parent], child, module)
    return module


def _forget_if_unused(name: str, module: types.ModuleType | None) -> None:
    """Take a lazy module nobody used out of ``sys.modules`` (and off its parent), so that the
    next import of ``name`` runs it as usual; one that ran (a plain module now) stays."""
    if module is None or type(module) is types.ModuleType or sys.modules.get(name) is not module:
        return
    del sys.modules[name]
    parent, _, child = name.rpartition(".")
    if getattr(sys.modules[parent], child, None) is module:
        delattr(sys.modules[parent], child)


def _skip_extensions_and_llvm_events() -> None:
    """Mark numba's extension entry points as loaded (none is looked for) and unregister the
    callbacks numba put on llvmlite's lock, which only emit ``numba:llvm_lock`` events (the
    lock itself stays). Anything missing in another numba version leaves numba as it is."""
    try:
        import llvmlite.binding.ffi as ffi
        import numba.core.base  # noqa: F401 - registers the callbacks on import
        import numba.core.entrypoints as entrypoints

        entrypoints._already_initialized = True
        for acquire, release in list(ffi.lib._lock._cblist):
            ffi.unregister_lock_callback(acquire, release)
    except (ImportError, AttributeError, ValueError):  # pragma: no cover - another numba
        pass


def skip_blas_probe() -> None:
    """Import ``numba.np.arraymath`` without letting it import ``scipy.linalg`` (module doc),
    and numba's cffi typing without ``cffi`` (numba imports it when the first kernel loads, to
    type cffi functions, which no irsample kernel calls: 10-20 ms)."""
    if not enabled or "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
        return
    finder = _refusing("scipy", "scipy.linalg", "cffi")
    try:
        import numba.core.typing.cffi_utils  # noqa: F401
        import numba.np.arraymath  # noqa: F401
    finally:
        sys.meta_path.remove(finder)
