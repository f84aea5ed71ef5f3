"""Random generators and seeds: one home for every draw of the package.

Every function that draws takes a keyword ``rng`` read by :func:`generator` (a NumPy
``Generator`` used as is, or an int seed / ``SeedSequence``; never None, so every draw names
its seed); an experiment derives one independent seed per draw with :func:`derived_seed`. The
command line's ``--seed`` defaults to :data:`DEFAULT_SEED` in every command.
"""

from __future__ import annotations

import hashlib

import numpy as np

#: the seed of every command-line draw when ``--seed`` is not given
DEFAULT_SEED = 2008


def generator(rng, *, error=ValueError) -> np.random.Generator:
    """A NumPy Generator (PCG64) from ``rng``: a Generator (used as is), an int seed or a
    SeedSequence. ``None`` and other values raise ``error``: a draw must be reproducible, so
    the caller names its seed."""
    if isinstance(rng, np.random.Generator):
        return rng
    seeds = (int, np.integer, np.random.SeedSequence)
    if rng is None or isinstance(rng, bool) or not isinstance(rng, seeds):
        raise error(f"rng must be a numpy Generator, an int seed or a SeedSequence, not {rng!r}")
    return np.random.default_rng(rng)


def derived_seed(seed: int, *key) -> int:
    """A 63-bit seed for ``key`` (strings and ints) under the experiment ``seed``:
    ``SeedSequence(seed, spawn_key=blake2b(key))`` (NumPy's independent streams), so that the
    same (seed, key) gives the same draws on any machine, executor or worker count."""
    text = "\x1f".join(str(k) for k in key).encode("utf-8")
    digest = hashlib.blake2b(text, digest_size=16).digest()
    words = tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))
    state = np.random.SeedSequence(int(seed), spawn_key=words).generate_state(1, np.uint64)
    return int(state[0] >> np.uint64(1))
