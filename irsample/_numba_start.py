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

Only a process irsample owns skips the probe: :func:`irsample.cli.main` sets :data:`enabled`;
a program that imports irsample as a library keeps numba's own start-up (its kernels may use
BLAS).
"""

from __future__ import annotations

import importlib.abc
import os
import sys

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
    ``.numba_config.yaml`` in the current folder: then it is imported as usual)."""
    if not enabled or "numba" in sys.modules:
        return
    refused = ["scipy"] + ([] if os.path.exists(".numba_config.yaml") else ["yaml"])
    finder = _refusing(*refused)
    try:
        import numba  # noqa: F401
    finally:
        sys.meta_path.remove(finder)


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
