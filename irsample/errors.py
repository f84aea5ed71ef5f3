"""Errors raised by irsample for bad input.

Every error about an input file names the file and, where there is one, the line, so that the
command line can print ``file:line: message`` and exit non-zero before writing anything.
"""

from __future__ import annotations


class IrsampleError(Exception):
    """Base class of all errors irsample raises on purpose.

    Examples
    --------
    >>> import irsample
    >>> try:
    ...     irsample.measures_from("nDCG@ten")
    ... except irsample.IrsampleError as error:
    ...     print(type(error).__name__, error)
    MeasureError unknown measure 'nDCG@ten' (see `irsample measures`)
    """


class _Located:
    """A message about input, located by ``source`` and (1-based) ``line``; printed as
    ``source:line: message`` (the message alone when there is no source: an option, not a
    file, is at fault)."""

    def __init__(self, message: str, source: str | None = None, line: int | None = None):
        self.message = message
        self.source = source
        self.line = line
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.source is None and self.line is None:
            return self.message
        where = self.source or "<input>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        return f"{where}: {self.message}"


class InputError(_Located, IrsampleError):
    """Malformed or inconsistent input, located by ``source`` and (1-based) ``line``.

    Examples
    --------
    >>> str(InputError("expected 6 fields, got 4", "run.txt", 12))
    'run.txt:12: expected 6 fields, got 4'
    """


class InputWarning(_Located, UserWarning):
    """Input that is used with part of it left out (e.g. prels records statAP skips), located
    by ``source`` and (1-based) ``line`` like :class:`InputError`."""


class JudgmentWarning(UserWarning):
    """Judgments and measures that fit together only in part (an estimator reading a stratified
    sample as uniform, pooled documents no estimate reaches, ...): :mod:`irsample.judgment_notes`.
    ``kind`` is ``"warning"`` or ``"note"`` (a caveat on what the numbers mean); the command line
    prints them as ``irsample: KIND: message``."""

    def __init__(self, message: str, kind: str = "warning"):
        super().__init__(message)
        self.kind = kind


class MeasureError(IrsampleError):
    """An unknown measure name or invalid measure parameters."""


class DesignError(IrsampleError, ValueError):
    """Invalid parameters of a judgment-sampling design, or a design that does not fit its frame."""


class UnreliableError(IrsampleError):
    """``--strict``: an interval the output would print is unreliable
    (:mod:`irsample.measures.reliability`); ``items`` are its (run, measure, reason)."""

    def __init__(self, items, shown: int = 3):
        self.items = list(items)
        lines = [f"--strict: {len(self.items)} interval{'s' if len(self.items) != 1 else ''} "
                 f"{'are' if len(self.items) != 1 else 'is'} unreliable, nothing written:"]
        lines += [f"  {run} {measure}: {reason}" for run, measure, reason in self.items[:shown]]
        if len(self.items) > shown:
            lines.append(f"  and {len(self.items) - shown} more")
        super().__init__("\n".join(lines))
