"""Arrow arrays to and from NumPy through their buffers.

pyarrow's own conversions (``pa.array`` from NumPy or Python values, ``Array.to_numpy``,
``fill_null``) import pandas on first use (about 0.2 s); these helpers build and read the
buffers directly, so the plain file path of ``irsample eval`` never loads pandas. Only what
the readers and :mod:`irsample.model` need: primitive numbers and binary strings.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

_NUMBERS = {
    pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64,
    pa.uint8(): np.uint8, pa.uint16(): np.uint16, pa.uint32(): np.uint32,
    pa.uint64(): np.uint64, pa.float32(): np.float32, pa.float64(): np.float64,
}


def numbers(values: pa.Array | pa.ChunkedArray, missing=None) -> np.ndarray:
    """A numeric Arrow array as a NumPy array (a read-only view when it has no nulls).

    Nulls become ``missing``; a null without ``missing`` is a :class:`ValueError`.
    """
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    dtype = _NUMBERS.get(values.type)
    if dtype is None:
        raise TypeError(f"not a primitive number array: {values.type}")
    n, offset = len(values), values.offset
    validity, data = values.buffers()
    if n == 0 or data is None:
        return np.zeros(0, dtype)
    out = np.frombuffer(data, dtype)[offset : offset + n]
    if values.null_count:
        if missing is None:
            raise ValueError("array has nulls and no value was given for them")
        bits = np.unpackbits(np.frombuffer(validity, np.uint8), bitorder="little")
        out = np.where(bits[offset : offset + n].astype(bool), out, missing).astype(dtype)
    return out


def number_array(values: np.ndarray) -> pa.Array:
    """A NumPy array of numbers as an Arrow array sharing its memory (no nulls)."""
    values = np.ascontiguousarray(values)
    return pa.Array.from_buffers(
        pa.from_numpy_dtype(values.dtype), len(values), [None, pa.py_buffer(values)]
    )


def binary_from(offsets: np.ndarray, data: np.ndarray) -> pa.Array:
    """An Arrow binary array over ``offsets`` (int32, or int64 for large_binary) and ``data``."""
    typ = pa.large_binary() if offsets.dtype == np.int64 else pa.binary()
    return pa.Array.from_buffers(
        typ, len(offsets) - 1, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )


def binary_of(values) -> pa.Array:
    """An Arrow binary array of Python ``str`` (UTF-8, surrogate escapes kept) or ``bytes``."""
    raw = [v.encode("utf-8", "surrogateescape") if isinstance(v, str) else bytes(v)
           for v in values]
    offsets = np.zeros(len(raw) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(v) for v in raw], dtype=np.int64)
    large = offsets[-1] >= 2**31
    data = np.frombuffer(b"".join(raw), np.uint8) if raw else np.zeros(0, np.uint8)
    return binary_from(offsets if large else offsets.astype(np.int32), data)
