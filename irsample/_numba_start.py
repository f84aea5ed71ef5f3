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
import sys

#: set by the command line before any kernel loads; library use leaves numba untouched
enabled = False


class _Refuse(importlib.abc.MetaPathFinder):
    """An import finder that refuses one package and its submodules."""

    def __init__(self, package: str):
        self.package = package

    def find_spec(self, name, path=None, target=None):
        if name == self.package or name.startswith(self.package + "."):
            raise ImportError(f"{name}: not imported while numba starts (irsample)")
        return None


def skip_blas_probe() -> None:
    """Import ``numba.np.arraymath`` without letting it import ``scipy.linalg`` (module doc)."""
    if not enabled or "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
        return
    finder = _Refuse("scipy.linalg")
    sys.meta_path.insert(0, finder)
    try:
        import numba.np.arraymath  # noqa: F401
    finally:
        sys.meta_path.remove(finder)
