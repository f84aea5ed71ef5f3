"""A package's public names, imported from its modules on first use (PEP 562).

``import irsample`` and each room of :mod:`irsample.measures` load none of their modules (numba,
pandas, the kernels) until a name is asked for: the package's ``__init__`` keeps a table of
public name -> defining module and takes its ``__getattr__`` and ``__dir__`` from
:func:`lazy_exports`.
"""

from __future__ import annotations

import sys
from importlib import import_module


def lazy_exports(package: str, exports: dict[str, str]):
    """``(__getattr__, __dir__)`` for ``package`` (its ``__name__``), whose public names are
    defined in its modules as ``exports`` maps them (name -> module relative to ``package``).
    A name is imported on first use and then kept on the package, so later look-ups are plain
    attribute reads; an unknown name raises :class:`AttributeError` as a module would."""

    def __getattr__(name: str):
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f".{module}", package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return __getattr__, __dir__
