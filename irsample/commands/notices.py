"""What the command line tells the user on standard error besides errors: a one-line notice when
numba compiles kernels (first use after install, or after the sources changed), with the time
that command's compilation takes, progress bars for long commands, and the notices on judgments
and measures (:mod:`irsample.judgment_notes`), printed by :func:`print_notes`.

Progress bars (tqdm) are shown by default when standard error is a terminal, and never when it
is not (pipes, files, tests); ``--no-progress`` turns them off, ``--progress`` forces them on.
"""

from __future__ import annotations

import os
import sys

#: shown once per process, on standard error (a terminal or not), when a command starts
#: compiling a kernel of irsample that numba's cache (:func:`irsample.numba_cache_dir`) lacks
COMPILE_NOTICE = "irsample: compiling kernels on first use (once, about {seconds} s)..."

#: seconds the first use of a command spends compiling its kernels: CPU seconds (what one of 2
#: cores takes when nothing else runs) of runs with an empty kernel cache (issue 27), rounded.
#: ``eval``: one of trec_eval's measures (``-m map`` on trec_eval's test file: 8.0-8.3 s, 8.6-9.0 s
#: in a fresh venv and cache on a quiet machine, wall 9.1 s), 0.05 s per further family of
#: trec_eval's (the default ``official``, 12 families: 9.6 s) and 1.2 s per family of estimators
#: (``--ci 0.95`` with xinfAP, infAP, ht(AP), ht(nDCG), infNDCG: 14.1-14.7 s; ``all_trec``, 32
#: families and 2 of estimators: 11.1 s). ``demo`` (in rounds): 15.2 s wall on a fresh venv and
#: cache. ``pool``: 7.2 s. Commands not listed compile the readers and the collection's kernels and
#: a few of their own.
FIRST_USE_SECONDS = {"eval": 9, "demo": 15, "pool": 7}
SECONDS_PER_FAMILY = 0.05
SECONDS_PER_ESTIMATOR = 1.2
DEFAULT_FIRST_USE_SECONDS = 10


def first_use_seconds(args=None) -> int:
    """The compilation time :data:`COMPILE_NOTICE` announces for the command of ``args`` (the
    parsed command line; None: the default)."""
    command = getattr(args, "command", None)
    seconds = FIRST_USE_SECONDS.get(command, DEFAULT_FIRST_USE_SECONDS)
    if command == "eval":
        families, estimators = _kinds(getattr(args, "measure", None))
        seconds += SECONDS_PER_FAMILY * max(families - 1, 0) + SECONDS_PER_ESTIMATOR * estimators
    return round(seconds)


def _kinds(names) -> tuple[int, int]:
    """Of the measures named (default: ``official``): how many families are trec_eval's, and
    how many are not (estimators)."""
    from ..measures import parse

    try:
        measures = [m for name in (names or ["official"]) for m in _as_list(parse(name))]
    except Exception:  # noqa: BLE001 - a bad name is reported by the command itself
        return 1, 0
    ours = [type(m).__module__.startswith("irsample.measures.trec_eval") for m in measures]
    families = {m.family for m, trec in zip(measures, ours) if trec}
    return len(families), len({m.family for m, trec in zip(measures, ours) if not trec})


def _as_list(parsed):
    return list(parsed) if isinstance(parsed, (list, tuple)) else [parsed]


def compile_notice(args=None) -> str:
    """:data:`COMPILE_NOTICE` with the estimate for the command of ``args``."""
    return COMPILE_NOTICE.format(seconds=first_use_seconds(args))


_announced = False


def announce_compilation(stream=None, args=None) -> None:
    """Print :func:`compile_notice` when numba starts compiling a kernel of irsample, once per
    process, to ``stream`` (default: standard error, a terminal, pipe or log alike). numba
    fires its ``numba:compile`` event only on a cache miss, after trying the on-disk cache,
    and before it compiles, so the notice comes before the wait and warm runs stay silent;
    only the kernels a command calls are compiled (none is compiled eagerly at import)."""
    from numba.core import event

    class Listener(event.Listener):
        def on_start(self, ev):
            global _announced
            dispatcher = (ev.data or {}).get("dispatcher")
            module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
            if _announced or not module.startswith("irsample"):
                return
            _announced = True
            print(compile_notice(args), file=stream or sys.stderr, flush=True)

        def on_end(self, ev):
            pass

    if not getattr(announce_compilation, "installed", False):
        event.register("numba:compile", Listener())
        announce_compilation.installed = True


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed or replaced stream
        return False


def add_progress_option(parser) -> None:
    """``--progress`` / ``--no-progress`` (default: a bar when standard error is a terminal)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--progress", dest="progress", action="store_true", default=None,
                       help="show progress bars on standard error (default: when it is a "
                       "terminal)")
    group.add_argument("--no-progress", dest="progress", action="store_false",
                       help="no progress bars")


def progress_enabled(args) -> bool:
    """Whether to draw progress bars: ``--progress``/``--no-progress``, else whether standard
    error is a terminal."""
    chosen = getattr(args, "progress", None)
    return bool(chosen) if chosen is not None else _isatty(sys.stderr)


def bar(enabled: bool, **kwargs):
    """A tqdm bar on standard error (disabled: a no-op bar, tqdm not even imported)."""
    if not enabled:
        return _NoBar()
    from tqdm import tqdm

    try:  # a terminal that reports no size (0 x 0) gets 80 x 24 (tqdm hides bars below row 0)
        sized = os.get_terminal_size(sys.stderr.fileno()).columns > 0
    except (AttributeError, OSError, ValueError):
        sized = False
    size = {"dynamic_ncols": True} if sized else {"ncols": 80, "nrows": 24}
    return tqdm(file=sys.stderr, leave=False, **size, **kwargs)


class Steps:
    """Progress through the named stages of a command: ``with Steps([...], enabled) as s:``,
    then ``s.next()`` before each stage (the bar shows the stage and the elapsed time)."""

    def __init__(self, names, enabled: bool):
        self.names = list(names)
        self.enabled = enabled
        self._bar = None
        self._i = -1

    def __enter__(self):
        self._bar = bar(self.enabled, total=len(self.names), unit="step",
                        bar_format="{desc} [{n_fmt}/{total_fmt}, {elapsed}]")
        return self

    def next(self) -> None:
        if self._i >= 0:
            self._bar.update(1)
        self._i += 1
        self._bar.set_description_str(self.names[self._i])

    def __exit__(self, *exc):
        self._bar.close()
        return False


class _NoBar:
    def update(self, n=1):
        pass

    def set_description_str(self, text):
        pass

    def set_postfix_str(self, text):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def print_notes(notes) -> None:
    """Print :mod:`irsample.judgment_notes`' notices on standard error, one line each."""
    for note in notes:
        print(note, file=sys.stderr)
