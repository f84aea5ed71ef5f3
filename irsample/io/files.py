"""Files as bytes: :func:`read_raw` reads a whole file (path, ``-`` for standard input, or a
binary stream), decompressing gzip (detected by its magic bytes) with Intel ISA-L when installed
(the same format, 2-4x faster than zlib; it releases the interpreter lock while it works).

Light on purpose (no NumPy, Arrow or numba at import), so that :mod:`.ahead` can start
decompressing runs before the command line imports the heavy modules.
"""

from __future__ import annotations

import os
import sys
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

from ..errors import InputError

try:  # Intel ISA-L: the same gzip format, 2-4x faster to decompress than zlib
    from isal import igzip as _gzip
    from isal.isal_zlib import error as _deflate_error
except ImportError:  # pragma: no cover - isal is a dependency; zlib is the fallback
    import gzip as _gzip

    _deflate_error = zlib.error

Source = str | os.PathLike | BinaryIO

#: the judgments formats :func:`irsample.io.load_qrels` reads: trec_eval's qrels, sample_eval's
#: stratified qrels, statAP's prels
QRELS_FORMATS = ("trec", "strata", "prels")

GZIP_MAGIC = b"\x1f\x8b"


def source_name(source: Source) -> str:
    """The name used in messages: the path, ``<stdin>`` for ``-``, or the stream's name."""
    if isinstance(source, (str, os.PathLike)):
        return "<stdin>" if str(source) == "-" else str(source)
    return str(getattr(source, "name", "<stream>"))


def read_once(source: Source) -> Source:
    """``source`` as it can be read more than once: standard input and paths that are not
    regular files (a pipe, ``<(...)``, a FIFO, a device) read now into a named in-memory
    stream (their data come once: a reader that peeks first, to detect a format, left the
    next one the rest, or waited for a writer long gone); anything else as it is."""
    import io
    import stat

    if not isinstance(source, (str, os.PathLike)):
        return source
    if str(source) != "-":
        try:
            if stat.S_ISREG(os.stat(source).st_mode) or os.path.isdir(source):
                return source
        except OSError:
            return source  # the reader names the problem
    stream = io.BytesIO(read_raw(source))
    stream.name = source_name(source)
    return stream


def read_raw(source: Source) -> bytes:
    """A whole file as bytes, decompressed when it starts with gzip's magic bytes."""
    name = source_name(source)
    try:
        if isinstance(source, (str, os.PathLike)):
            if str(source) == "-":
                raw = sys.stdin.buffer.read()
            else:
                raw = Path(source).read_bytes()
        else:
            raw = source.read()
            if isinstance(raw, str):
                raw = raw.encode()
    except FileNotFoundError:
        raise InputError("no such file", name) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a file", name) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", name) from None
    if raw[:2] == GZIP_MAGIC:
        try:
            raw = _gzip.decompress(raw)
        except (OSError, EOFError, ValueError, zlib.error, _deflate_error) as exc:
            raise InputError(f"corrupt gzip data ({exc}): its text reads whole up to the "
                             "line before this one", name, _broken_line(raw)) from None
    return raw


def _broken_line(raw: bytes, chunk: int = 256) -> int:
    """The 1-based line of the decompressed text of corrupt or truncated gzip data ``raw``
    before which every line reads whole: decompressed in small pieces until the data fail
    (the failing piece's output is lost, so the fault lies in this line or after it) or end."""
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    lines = 0
    for start in range(0, len(raw), chunk):
        try:
            lines += inflate.decompress(raw[start:start + chunk]).count(b"\n")
        except zlib.error:
            break
        if inflate.eof:  # a member ended; what follows is what failed
            break
    return lines + 1


def check_sources(sources: Sequence) -> None:
    """Refuse no run at all, and standard input (``-``) named twice."""
    if not sources:
        raise InputError("no run given")
    if sum(1 for s in sources if isinstance(s, (str, os.PathLike)) and str(s) == "-") > 1:
        raise InputError("standard input ('-') can be read only once")
