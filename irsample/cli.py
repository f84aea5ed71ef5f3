"""Command line: the dispatcher of the commands of :data:`COMMANDS`.

Thin by design: pick the command, build its parser (importing only that command's module of
:mod:`irsample.commands`), run it, write the text it returns. Output is built completely before
anything is written; ``-o FILE`` is checked before any work and written through a temporary file
(see :mod:`irsample.io.output`), so a failure leaves no partial output. Errors print
``irsample: file:line: message`` and exit 1 (2 for usage). Ctrl-C (SIGINT) anywhere prints the
one line ``irsample: interrupted`` and exits 130 (128 + SIGINT, as shells report it); commands
that run worker processes stop them first (:mod:`irsample.experiments.executors`), and no output
file is left half-written (outputs are written whole, at the end).

Start-up stays lean: ``irsample --help`` lists the commands from :data:`COMMANDS` without
importing them, and only the chosen command's module is imported to build its parser. A command
may set ``start`` (``set_defaults(start=f)``, ``f(args)``): work that needs no heavy module,
begun before numba is imported (``eval`` starts decompressing its runs in background threads).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import warnings
from importlib import import_module

from . import __version__, _numba_start
from .errors import InputWarning, IrsampleError, JudgmentWarning

#: every subcommand: name -> (module of :mod:`irsample.commands` whose ``add_parser(sub)``
#: registers it; its one-line help). The module's parser carries ``set_defaults(run=handler)``;
#: ``handler(args) -> str`` returns the text to write (or writes files itself and returns a
#: report).
COMMANDS: dict[str, tuple[str, str]] = {
    "eval": ("eval", "evaluate runs against qrels (trec_eval compatible)"),
    "measures": ("measures", "list every measure with its formula and citation"),
    "pool": ("design", "the depth-k pool of runs, or its statistics"),
    "sample": ("design", "draw the documents to judge from a pool"),
    "merge": ("design", "merge judgments back into a design"),
    "plan": ("plan", "plan strata and sample sizes for a judging budget"),
    "judge": ("judge", "choose documents to judge adaptively (move-to-front, Hedge): simulate "
              "with qrels, or judge by hand in resumable batches"),
    "nojudge": ("nojudge", "rank runs without relevance judgments (Soboroff, reference count, "
                "Condorcet)"),
    "infer-qrels": ("nojudge", "infer the relevance of a sample's unjudged documents (Aslam & "
                    "Yilmaz 2007)"),
    "demo": ("demo", "judge a pool in rounds until the intervals can be trusted, compare with "
             "the truth"),
    "simulate": ("simulate", "rerun a seed paper's experiment (recipe) and write a report"),
    "judge-report": ("judge_report", "agreement of automatic labels with the human sample, and "
                     "the runs they favour"),
    "compare": ("compare", "compare every pair of runs on one judged sample (ht measures)"),
    "assess": ("assess", "judge a design's documents in a browser (web app)"),
}


def chosen_command(argv: list[str]) -> str | None:
    """The subcommand named by ``argv`` (its first argument, as the top-level parser has only
    the options ``-h`` and ``--version``), or None."""
    return argv[0] if argv and argv[0] in COMMANDS else None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; only ``command``'s module is imported (the others get a stub parser carrying
    their help line, enough for ``irsample --help``)."""
    parser = argparse.ArgumentParser(
        prog="irsample",
        description="Evaluate retrieval runs, exactly like trec_eval, and beyond.",
    )
    parser.add_argument("--version", action="version", version=f"irsample {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    built: set[str] = set()
    if command is not None:
        before = set(sub.choices)
        import_module(f"irsample.commands.{COMMANDS[command][0]}").add_parser(sub)
        built |= set(sub.choices) - before
    for name, (_, help_text) in COMMANDS.items():
        if name not in built:
            sub.add_parser(name, help=help_text, add_help=False)
    return parser


def _write(text: str, output: str | None) -> None:
    if output is None:
        if sys.stdout is None:  # started with standard output closed (`>&-`)
            if text:
                raise IrsampleError("standard output is closed: nothing can be written there "
                                    "(give -o FILE)")
            return
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:  # a full disk, a closed terminal: said, not a traceback
            _discard_stdout()
            raise IrsampleError(f"cannot write to standard output: {exc.strerror or exc}") \
                from None
        return
    from .io.output import write_atomic

    write_atomic(output, text.encode())


def _discard_stdout() -> None:
    """Point standard output at the null device, so that the flush at exit does not fail
    again on what the buffer still holds (Python's advice for a closed pipe)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no file descriptor (captured, replaced)
        pass


def check_outputs(args) -> None:
    """Refuse bad outputs before any work: ``-o/--output`` and the files and folders a command
    names in ``set_defaults(output_files=(dest, ...), output_folders=(dest, ...))``; an output
    file that is one of the command's input files too (``eval -o QRELS RUN1 RUN2``, typed from
    trec_eval's ``-o``, which takes no value) would be overwritten by it."""
    dests = ("output", *getattr(args, "output_files", ()))
    files = {dest: getattr(args, dest, None) for dest in dests}
    folders = [getattr(args, dest, None) for dest in getattr(args, "output_folders", ())]
    if not any(files.values()) and not any(folders):
        return
    from .io.output import check_output, check_output_folder

    for dest, path in files.items():
        if path:
            check_output(path)
            _check_not_an_input(args, dest, path, {*dests, *getattr(args, "output_folders", ())})
    for path in filter(None, folders):
        check_output_folder(path)


def _check_not_an_input(args, dest: str, path, outputs) -> None:
    """Raise :class:`InputError` when the output file ``path`` (option ``dest``) exists and is
    a file the command reads: any other argument naming an existing file."""
    if not os.path.isfile(path):
        return
    for name, value in vars(args).items():
        if name in outputs:
            continue
        for given in value if isinstance(value, (list, tuple)) else (value,):
            if (isinstance(given, (str, os.PathLike)) and str(given) != "-"
                    and os.path.isfile(given) and os.path.samefile(path, given)):
                from .errors import InputError

                option = "-o" if dest == "output" else f"--{dest.replace('_', '-')}"
                raise InputError(f"{option} names an input of this command ({given}), which "
                                 "the output would overwrite; name another file", str(path))


#: set by :func:`run`: this process is the command line's, which tells on standard error when
#: it compiles kernels (:func:`irsample.commands.notices.announce_compilation`); a program or
#: test that calls :func:`main` keeps its standard error to itself
_notice = False

#: set by :func:`_main` when the command that ran asked to end without the interpreter's
#: teardown (``set_defaults(quick_exit=True)``) and its output is written
_quick_exit = False


#: the exit status after Ctrl-C: 128 + SIGINT's number, what a shell reports for it
INTERRUPTED = 130


def run() -> None:
    """The console entry point (``irsample``, ``python -m irsample``): :func:`main`, then exit
    with its status. After a command that asks for it (``eval``), once its output is flushed
    the process ends at once (``os._exit``): the interpreter's teardown would only free
    memory (numba's and the measures' million objects, the arrays of the last batch) that the
    system reclaims anyway (TREC-8 eval: 20-30 ms). Commands with background services or
    files to close (``assess``, ``simulate`` on Dask) exit as usual, but for Ctrl-C: by the
    time :func:`main` returns ``INTERRUPTED`` every ``finally`` and ``with`` block has run
    (workers stopped, temporary files removed, clients closed), and the teardown would only
    delay the exit the user asked for (a second or more on a loaded machine)."""
    global _notice
    _notice = True
    status = main()
    if _quick_exit or status == INTERRUPTED:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except OSError:  # e.g. a closed pipe: nothing more can be written
            pass
        os._exit(status)
    sys.exit(status)


def _show_input_warning(shown):
    """A ``warnings.showwarning`` that prints the input warnings of any command
    (:class:`~irsample.errors.InputWarning`: ``FILE:LINE: message``) as ``irsample: warning:
    ...``, as the readers' own paths do, the API's notices on judgments
    (:class:`~irsample.errors.JudgmentWarning`) as ``irsample: KIND: ...``, and leaves the
    others to ``shown``: whichever path read the file, no Python warning machinery (its module
    path and source line) reaches the user."""
    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, JudgmentWarning):
            print(f"irsample: {getattr(message, 'kind', 'warning')}: {message}",
                  file=file or sys.stderr)
        elif issubclass(category, InputWarning):
            print(f"irsample: warning: {message}", file=file or sys.stderr)
        else:
            shown(message, category, filename, lineno, file, line)

    return show


def main(argv: list[str] | None = None) -> int:
    """Run the command line on ``argv`` (default ``sys.argv[1:]``); the exit status."""
    global _quick_exit
    _quick_exit = False  # said again by each command that runs
    gc.unfreeze()  # called again in one process (tests, scripts): collect as usual meanwhile
    thresholds = gc.get_threshold()
    shown = warnings.showwarning
    warnings.showwarning = _show_input_warning(shown)
    try:
        with warnings.catch_warnings():  # every command says its notices (not once a process)
            warnings.simplefilter("always", JudgmentWarning)
            return _main(argv)
    except KeyboardInterrupt:  # Ctrl-C, wherever it fell (imports, reading, a kernel, workers)
        print("irsample: interrupted", file=sys.stderr)
        return INTERRUPTED
    finally:
        warnings.showwarning = shown
        # The process usually ends now: the objects still alive go to the collector's permanent
        # generation, so the full collection at exit skips them (numba's and the measures'
        # million objects: 0.1-0.2 s at the end of `irsample eval`). A caller that goes on
        # gets its collector's thresholds back.
        gc.set_threshold(*thresholds)
        gc.freeze()


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # Start-up (imports, numba's cached kernels) creates about a million long-lived objects and
    # hardly any garbage cycles; with Python's default thresholds (700, 10, 10) the collector
    # traverses them again and again (0.15-0.25 s of `irsample eval` on TREC-8). Young cycles
    # are still collected, every 10,000 allocations.
    gc.set_threshold(10_000, 50, 1000)
    _numba_start.enabled = True  # this process is ours: numba may start without its BLAS probe
    args = build_parser(chosen_command(argv)).parse_args(argv)
    try:
        output = getattr(args, "output", None)
        check_outputs(args)
        if getattr(args, "start", None) is not None:
            args.start(args)  # work that needs no heavy module (eval: reading runs) starts now
        _numba_start.import_numba()
        if _notice:  # the command line's own process (:func:`run`), not a caller of main()
            from .commands.notices import announce_compilation

            announce_compilation(args=args)  # imports numba (imported above in our process)
        text = args.run(args)
        _write(text, output)
        global _quick_exit
        _quick_exit = bool(getattr(args, "quick_exit", False))
    except IrsampleError as exc:
        print(f"irsample: {exc}", file=sys.stderr)
        return 1
    except MemoryError:  # input larger than memory (an endless pipe, a device): said, no trace
        print("irsample: out of memory: the input does not fit in this machine's memory (runs "
              "and judgments are read whole, runs a batch at a time)", file=sys.stderr)
        return 1
    except BrokenPipeError:  # pragma: no cover - e.g. `| head`
        return 0
    return 0


if __name__ == "__main__":  # pragma: no cover
    run()
