"""Kernels run on several cores without numba's ``parallel=True``.

A ``parallel=True`` kernel compiles three to five times slower than the same loop compiled
serially (numba outlines the ``prange`` body into a gufunc, compiles it and the scheduler glue,
and loads its threading layer): on a fresh install that was most of the first command's time
(issue 27). A serial kernel compiled with ``nogil=True`` releases the interpreter lock while it
runs, so the same work shares the cores just as well when Python threads call it on disjoint
parts of the input. The two kernels every command runs (:func:`irsample._build.intern_topic_docs`
and :func:`irsample._rank.rank_runs`) are written that way: one serial compile serves a
three-line run and all of TREC-8.

:func:`parallel_when_large` serves the other ``prange`` kernels (the measures' walks): it
compiles the serial version for inputs below :data:`LARGE` elements (a test file, the demo's
Vaswani and CACM collections, any simulation, which runs one thread per process) and the
``parallel=True`` version only when an input that large meets more than one thread. The two
versions never share a cache entry (the parallel one is compiled from a copy of the function
named ``<name>_parallel``). No kernel so wrapped reduces across ``prange`` iterations: each
iteration writes its own outputs, so both versions give the same bits.
"""

from __future__ import annotations

import contextlib
import functools
import os
import types
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

#: an input of at least this many elements (its largest array) is large: TREC-8's 129 runs, a
#: third of them at a time (2.2M ranked documents), are; Vaswani's 11 runs (0.5M) are not
LARGE = 2**20

#: rows of a collection from which :func:`parts` shares its topics among threads
THREADED_ROWS = 2**16

_pool: ThreadPoolExecutor | None = None
_scale = 1.0


def threads() -> int:
    """numba's thread count (``NUMBA_NUM_THREADS``, :func:`numba.set_num_threads`): the
    experiments set it to 1 in their workers, and the threads here obey it too."""
    import numba

    return max(1, numba.get_num_threads())


def parts(weights: np.ndarray, wanted: int) -> np.ndarray:
    """Bounds of at most ``wanted`` consecutive parts of ``len(weights)`` items with about
    equal total weight (as the ``prange`` chunking they replace: item ``i`` goes to the part
    holding weight ``cumsum[i - 1]``); always at least one part."""
    n = len(weights)
    k = min(max(n, 1), max(1, wanted))
    before = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(weights, out=before[1:])
    bounds = np.searchsorted(before[:-1], before[-1] * np.arange(k, dtype=np.int64) // k)
    bounds = np.append(bounds, n).astype(np.int64)
    bounds[0] = 0
    return bounds


def run_parts(kernel, bounds: np.ndarray, *args) -> list:
    """``kernel(*args, bounds[i], bounds[i + 1])`` for every part, the first in the calling
    thread (which compiles the kernel on a fresh cache while the others wait for it), the rest
    in a pool of threads; results in part order."""
    global _pool
    n = len(bounds) - 1
    if n <= 1:
        return [kernel(*args, bounds[0], bounds[-1])]
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2))
    rest = [_pool.submit(kernel, *args, bounds[i], bounds[i + 1]) for i in range(1, n)]
    first = kernel(*args, bounds[0], bounds[1])
    return [first] + [f.result() for f in rest]


def _largest(args) -> int:
    return max((a.size for a in args if isinstance(a, np.ndarray)), default=0)


@contextlib.contextmanager
def expect(scale: float):
    """Within the block, :func:`parallel_when_large` kernels choose as for inputs ``scale``
    times larger than they are given: a warm-up on a three-line run
    (:func:`irsample.streaming.load_kernels`) then loads the versions the real input, about
    ``scale`` times larger, will use."""
    global _scale
    before, _scale = _scale, scale
    try:
        yield
    finally:
        _scale = before


def parallel_when_large(func=None, **options):
    """``njit(cache=True, nogil=True, **options)`` that runs ``parallel=True`` code only on a
    large input (module doc). The returned function calls the serial or the parallel
    dispatcher (``.serial``, ``.parallel``); the parallel one is compiled on first use."""
    if func is None:
        return functools.partial(parallel_when_large, **options)
    serial = njit(cache=True, nogil=True, **options)(func)
    twin = types.FunctionType(func.__code__, func.__globals__, func.__name__ + "_parallel",
                              func.__defaults__, func.__closure__)
    twin.__qualname__ = func.__qualname__ + "_parallel"
    twin.__module__ = func.__module__
    parallel = njit(cache=True, nogil=True, parallel=True, **options)(twin)

    @functools.wraps(func)
    def call(*args):
        if _largest(args) * _scale >= LARGE and threads() > 1:
            return parallel(*args)
        return serial(*args)

    call.serial = serial
    call.parallel = parallel
    return call
