"""Per-topic AP estimates from a file (``irsample infer-qrels --estimates``).

One estimate a line, white-space separated: ``run topic value`` or ``run topic measure value``
(``irsample eval -q`` output), the measure the same on every line and an AP measure as
``irsample eval`` names it (:data:`AP_MEASURES`: ``AP``/``map``, ``infAP``, ``xinfAP``,
``statAP``, ``ht(AP)``, ``ppi(AP)``; any other, such as ``P_10``, is refused with its line);
blank lines, ``#`` comments,
a ``run topic ...`` header and ``all`` summary lines are skipped. Values are AP estimates, so
they must lie in [0, 1]; each (run, topic) at most once; runs and topics must be the
collection's.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError
from .trec import read_bytes

#: the measure names an AP estimate may carry: trec_eval's and irsample's names of AP and of its
#: estimators from samples, as ``irsample eval --format tsv -q`` writes them
AP_MEASURES = frozenset({"AP", "map", "infAP", "xinfAP", "statAP", "ht(AP)", "ht(map)",
                         "ppi(AP)", "ppi(map)"})


def read_estimates(path: str, collection) -> np.ndarray:
    """AP estimates ``[run, topic]`` of ``collection``'s runs and topics (NaN where absent)
    from the file ``path`` (see the module docstring); :class:`InputError` with the file and
    line on bad content, or if no line names a run and topic of the collection."""
    runs = {name: i for i, name in enumerate(collection.run_names)}
    topics = {name: i for i, name in enumerate(collection.topics)}
    out = np.full((collection.n_runs, collection.n_topics), np.nan)
    measure = None
    text = read_bytes(path).tobytes().decode("utf-8", "replace")
    for lineno, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields or line.startswith("#") or fields[:2] == ["run", "topic"]:
            continue
        if len(fields) not in (3, 4):
            raise InputError(
                "expected 'run topic value' or 'run topic measure value'", path, lineno
            )
        if fields[1] == "all":
            continue
        if len(fields) == 4:
            if fields[2] not in AP_MEASURES:
                raise InputError(
                    f"measure {fields[2]!r} is not an estimate of AP (expected one of "
                    f"{', '.join(sorted(AP_MEASURES))})", path, lineno,
                )
            if measure not in (None, fields[2]):
                raise InputError(f"more than one measure ({measure}, {fields[2]})", path, lineno)
            measure = fields[2]
        if fields[0] not in runs:
            raise InputError(f"unknown run {fields[0]!r}", path, lineno)
        if fields[1] not in topics:
            raise InputError(f"unknown topic {fields[1]!r}", path, lineno)
        try:
            value = float(fields[-1])
        except ValueError:
            raise InputError(f"not a number: {fields[-1]!r}", path, lineno) from None
        if not math.isfinite(value) or not 0.0 <= value <= 1.0:
            raise InputError(f"an AP estimate is in [0, 1], got {fields[-1]}", path, lineno)
        r, t = runs[fields[0]], topics[fields[1]]
        if not np.isnan(out[r, t]):
            raise InputError(
                f"second estimate for run {fields[0]!r}, topic {fields[1]!r}", path, lineno
            )
        out[r, t] = value
    if np.isnan(out).all():
        raise InputError("no AP estimate for any run and topic of the collection", path)
    return out
