"""What the command line tells the user on standard error besides errors: a one-line notice when
numba compiles kernels (first use after install, or after the sources changed), progress bars
for long commands, and warnings about measures that ignore part of the input.

Progress bars (tqdm) are shown by default when standard error is a terminal, and never when it
is not (pipes, files, tests); ``--no-progress`` turns them off, ``--progress`` forces them on.
"""

from __future__ import annotations

import os
import sys

#: shown once per process when the first kernel of irsample is compiled rather than loaded
#: from numba's cache (:func:`irsample.numba_cache_dir`)
COMPILE_NOTICE = "irsample: compiling kernels on first use (once, ~30 s)..."

_announced = False


def announce_compilation(stream=None) -> None:
    """Print :data:`COMPILE_NOTICE` when numba starts compiling a kernel of irsample, once per
    process: to ``stream`` if given, else to standard error when it is a terminal (as progress
    bars; a pipe or log stays clean). numba fires its ``numba:compile`` event only on a cache
    miss, after trying the on-disk cache, so warm runs stay silent; only the kernels a command
    calls are compiled (none is compiled eagerly at import)."""
    from numba.core import event

    class Listener(event.Listener):
        def on_start(self, ev):
            global _announced
            dispatcher = (ev.data or {}).get("dispatcher")
            module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
            if _announced or not module.startswith("irsample"):
                return
            _announced = True
            out = stream or sys.stderr
            if stream is not None or _isatty(out):
                print(COMPILE_NOTICE, file=out, flush=True)

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


#: estimators that read a sample as one uniform stratum, and their stratified counterparts
STRATIFIED_COUNTERPART = {"infAP": "xinfAP"}


def warn_ignored_strata(measures, judgments, stream=None) -> list[str]:
    """Warn (once per measure family) on standard error when stratified qrels (more than one
    stratum) meet a measure that ignores the strata; returns the warnings."""
    if len(getattr(judgments, "stratum_labels", ())) <= 1:
        return []
    out = stream or sys.stderr
    warned = []
    for family in dict.fromkeys(m.family for m in measures):
        counterpart = STRATIFIED_COUNTERPART.get(family)
        if counterpart is None:
            continue
        text = (f"irsample: warning: {family} ignores the {len(judgments.stratum_labels)} strata "
                f"of these stratified qrels (it takes the sample as uniform); {counterpart} "
                "estimates from stratified samples")
        print(text, file=out)
        warned.append(text)
    return warned
