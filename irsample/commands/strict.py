"""``--strict`` and the notes on unreliable intervals, shared by the commands that print
intervals (``eval``, ``compare``, ``demo``, ``judge-report``).

Every interval of a run's mean (and of a pair's difference) carries a status, ``ok`` or
``unreliable`` with the reason (:mod:`irsample.measures.reliability`). With ``--strict`` an
unreliable interval among those the command would print is an error: nothing goes to standard
output and no ``-o`` file (or figure) is written, standard error names the first few runs,
measures and reasons, and the exit status is 1 (:class:`~irsample.errors.UnreliableError`).
"""

from __future__ import annotations

import sys


def add_strict(parser) -> None:
    """The ``--strict`` flag."""
    parser.add_argument("--strict", action="store_true",
                        help="an unreliable interval is an error: print nothing, exit 1 "
                        "(for scripts)")


def check_strict(args, items) -> None:
    """Raise :class:`~irsample.errors.UnreliableError` when ``args.strict`` and ``items``
    ((run, measure, reason) of the unreliable intervals to print) is not empty."""
    items = list(items)
    if getattr(args, "strict", False) and items:
        from ..errors import UnreliableError

        raise UnreliableError(items)


def warn_unreliable(items) -> None:
    """One line on standard error per unreliable interval (for outputs whose lines have no
    room for a reason, as trec_eval's three fields)."""
    for run, measure, reason in items:
        print(f"irsample: warning: unreliable interval: {run} {measure}: {reason}",
              file=sys.stderr)
