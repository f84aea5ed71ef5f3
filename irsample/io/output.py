"""Safe writing of every output file of the command line, with no heavy import (the command
line checks ``-o`` before it starts reading runs, and NumPy, Arrow or numba would delay that).

:func:`write_atomic` writes a regular file through a temporary file in the target's folder and
renames it over the target, so a failure never leaves a partial file and an existing file stays
intact; a symbolic link is followed (its target is written, the link stays); a character
device or FIFO (``/dev/null``, ``/dev/stdout`` on a terminal, file or pipe, a named pipe) is
written directly, never replaced, and ``-`` is standard output; a block device, socket or
folder is refused. A new file gets the mode of ``open()`` under the process's umask
(0666 & ~umask), an existing file keeps its mode. :func:`check_output` and
:func:`check_output_folder` apply the same rules before any work, so a command refuses a bad
``-o`` at once rather than after computing.
"""

from __future__ import annotations

import gzip
import os
import stat
import tempfile
from pathlib import Path

from ..errors import InputError

#: ``-o -``: standard output
STDOUT = "-"


def _target(path) -> Path:
    """``path`` with symbolic links followed (a dangling link: the file it names)."""
    return Path(os.path.realpath(path))


def _direct(mode: int) -> bool:
    """Whether a file of this mode is written in place (character devices, FIFOs)."""
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def _in_place(path) -> bool:
    """Whether ``path`` (links followed by the system, not resolved by name) is a character
    device or FIFO: ``/dev/stdout`` on a pipe resolves by name to ``pipe:[N]``, which does not
    exist, but opening the path reaches the pipe."""
    try:
        return _direct(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def check_output(path) -> None:
    """Raise :class:`InputError` (naming ``path``) unless ``path`` can be written as an output
    file: its folder exists and is writable, and it is not a folder, block device or socket;
    ``-`` is standard output."""
    shown = str(path)
    if shown == STDOUT:
        return
    if _in_place(path):
        if not os.access(path, os.W_OK):
            raise InputError("not writable", shown)
        return
    target = _target(path)
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror}", shown) from None
    if mode is not None:
        if stat.S_ISDIR(mode):
            raise InputError("is a folder, not a file", shown)
        if not stat.S_ISREG(mode):  # devices and FIFOs returned above (_in_place)
            raise InputError("not a regular file, character device or FIFO: refused", shown)
    folder = target.parent
    if not folder.is_dir():
        raise InputError(f"no such folder: {folder}", shown)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"folder not writable: {folder}", shown)


def check_output_folder(path) -> None:
    """Raise :class:`InputError` unless ``path`` is a writable folder or can be created as one
    (its nearest existing ancestor is a writable folder)."""
    shown = str(path)
    current = Path(os.path.abspath(path))
    if current.exists() and not current.is_dir():
        raise InputError("not a folder", shown)
    while not current.exists():
        if current.is_symlink():
            raise InputError(f"dangling symbolic link: {current}", shown)
        current = current.parent
    if not current.is_dir():
        raise InputError(f"not a folder: {current}", shown)
    if not os.access(current, os.W_OK | os.X_OK):
        raise InputError(f"folder not writable: {current}", shown)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path, data: bytes) -> None:
    """Write ``data`` to ``path`` (gzip-compressed if it ends in ``.gz``) or not at all (module
    docstring: links followed, devices and FIFOs written in place, mode from the umask); ``-``
    writes standard output."""
    check_output(path)
    if str(path).endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    if str(path) == STDOUT:
        import sys

        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    if _in_place(path):
        try:
            with open(path, "wb") as fh:
                fh.write(data)
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror or exc}", str(path)) from None
        return
    target = _target(path)
    try:
        current = os.stat(target)
    except FileNotFoundError:
        current = None
    try:
        _replace(target, data, current)
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror or exc}", str(path)) from None


def _replace(target: Path, data: bytes, current) -> None:
    mode = stat.S_IMODE(current.st_mode) if current is not None else 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fchmod(fh.fileno(), mode)
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
