"""Command line: ``irsample eval``, ``irsample measures`` and the commands of :data:`COMMANDS`.

Thin by design: parse arguments, call the API, render, write. Output is built completely before
anything is written; ``-o FILE`` is checked before any work and written through a temporary
file (see :mod:`irsample.io.writers`), so a failure leaves no partial output. Errors print
``irsample: file:line: message`` and exit 1 (2 for usage).

Start-up stays lean: ``irsample --help`` lists the commands from :data:`COMMANDS` without
importing them, and only the chosen command's module is imported to build its parser.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from importlib import import_module

from . import __version__
from .errors import IrsampleError

#: every subcommand: name -> (module of :mod:`irsample.commands` whose ``add_parser(sub)``
#: registers it, or None for ``eval``/``measures`` defined here; its one-line help). The
#: module's parser carries ``set_defaults(run=handler)``; ``handler(args) -> str`` returns the
#: text to write (or writes files itself and returns a report).
COMMANDS: dict[str, tuple[str | None, str]] = {
    "eval": (None, "evaluate runs against qrels (trec_eval compatible)"),
    "measures": (None, "list every measure with its formula and citation"),
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
    "demo": ("demo", "judge 10%% of a pool, estimate MAP/nDCG with intervals, compare with the "
             "truth"),
    "simulate": ("simulate", "rerun a seed paper's experiment (recipe) and write a report"),
    "judge-report": ("judge_report", "agreement of automatic labels with the human sample, and "
                     "the runs they favour"),
    "compare": ("compare", "compare every pair of runs on one judged sample (ht measures)"),
    "assess": ("assess", "judge a design's documents in a browser (web app)"),
}

#: formats whose output has no per-topic lines (``-q`` is refused with them)
_SUMMARY_ONLY = ("latex", "table")
#: formats that can print exact doubles (``--places exact``)
_EXACT = ("tsv", "json")


def _places(text: str):
    """``--places``: an integer >= 0, or ``exact``."""
    if text == "exact":
        return text
    from .commands.arguments import number

    return number(int, minimum=0)(text)


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
        module = COMMANDS[command][0]
        if module is None:
            {"eval": _add_eval, "measures": _add_measures}[command](sub)
            built.add(command)
        else:
            before = set(sub.choices)
            import_module(f"irsample.commands.{module}").add_parser(sub)
            built |= set(sub.choices) - before
    for name, (_, help_text) in COMMANDS.items():
        if name not in built:
            sub.add_parser(name, help=help_text, add_help=False)
    return parser


def _add_eval(sub) -> None:
    from .commands.arguments import number
    from .formats import FORMATS
    from .io.strata import QRELS_FORMATS
    from .measures.base import DEFAULT_VARIANCE, VARIANCE_METHODS

    at_least_zero = number(int, minimum=0)
    ev = sub.add_parser(
        "eval",
        help=COMMANDS["eval"][1],
        description="Evaluate runs against qrels. Measure names: irsample (AP, P@10, nDCG@10), "
        "ir_measures or trec_eval syntax (map, P.5,10, ndcg_cut.10, ndcg.1=3,2=9), or the "
        "sets official / all_trec. Default: official.",
    )
    ev.add_argument("qrels", help="qrels file (plain, .gz, .parquet, or - for stdin)")
    ev.add_argument("runs", nargs="+", help="run files (plain, .gz, .parquet, or -)")
    ev.add_argument("-m", "--measure", action="append", default=None, metavar="MEASURE",
                    help="a measure; repeat the option for more, as in trec_eval "
                    "(-m map -m P.10)")
    ev.add_argument("-q", "--per-topic", action="store_true",
                    help="print per-topic values too (not with --format latex or table)")
    ev.add_argument(
        "-c", "--complete", action="store_true",
        help="average over all qrels topics (a topic missing from a run scores 0)",
    )
    ev.add_argument(
        "-J", "--judged-only", action="store_true",
        help="evaluate only judged documents (drop unjudged and unpooled ones from the ranking)",
    )
    ev.add_argument("-l", "--level", type=int, default=1, help="relevance level (default 1)")
    ev.add_argument("-M", "--max-docs", type=at_least_zero, default=None,
                    help="evaluate only the first N documents of each ranking")
    ev.add_argument("--format", choices=FORMATS, default="trec")
    ev.add_argument(
        "--qrels-format", choices=QRELS_FORMATS, default=None,
        help="judgments format (default: detected; 4 fields trec, 5 fields stratified qrels "
        "or, with fractional fifth fields, prels)",
    )
    ev.add_argument("--places", type=_places, default=None, metavar="N",
                    help="decimals of real values (default 4, trec_eval's, in every format), or "
                    "'exact' (tsv, json: the shortest text that reads back as the same double)")
    ev.add_argument("--compat", choices=("9.0.8", "10"), default="10",
                    help="trec_eval version whose iprec_at_recall/11pt_avg rounding to follow")
    ev.add_argument(
        "--ci", type=number(float, above=0.0, below=1.0), default=None, metavar="LEVEL",
        help="add confidence limits at this level (e.g. 0.95) for estimators with a variance "
        "(infAP, xinfAP, infNDCG, statAP): <name>_low/_high lines, or low/high columns",
    )
    ev.add_argument(
        "--variance", choices=VARIANCE_METHODS, default=DEFAULT_VARIANCE,
        help="variance estimator of infAP and xinfAP for --ci: jackknife (default; closest to "
        "nominal coverage on TREC-8), covariance (linearised, with the covariances of the "
        "precisions) or paper (Yilmaz, Kanoulas & Aslam 2008, precisions independent)",
    )
    ev.add_argument("--auto-labels", metavar="FILE|fusion", default=None,
                    help="automatic labels (topic Q0 docno value) for ppi(M) and auto(M), or "
                    "'fusion' for the built-in labeller fitted on the judged sample")
    ev.add_argument("-o", "--output", help="write to this file instead of standard output")
    ev.set_defaults(run=cmd_eval)


def _add_measures(sub) -> None:
    sub.add_parser("measures", help=COMMANDS["measures"][1]).set_defaults(run=cmd_measures)


def cmd_eval(args) -> str:
    from .api import measures_from
    from .commands.notices import warn_ignored_strata
    from .formats import render

    if args.per_topic and args.format in _SUMMARY_ONLY:
        raise IrsampleError(f"-q: --format {args.format} has no per-topic lines (use trec, tsv, "
                            "json or sample_eval)")
    if args.places == "exact" and args.format not in _EXACT:
        raise IrsampleError(f"--places exact: only with --format {' or '.join(_EXACT)}")
    default = ["sample_eval"] if args.format == "sample_eval" else ["official"]
    measures = measures_from(args.measure or default)
    options = dict(rel_level=args.level, judged_only=args.judged_only, max_docs=args.max_docs,
                   complete=args.complete, compat=args.compat, ci=args.ci,
                   variance=args.variance)
    if args.auto_labels is None:
        from .streaming import evaluate_in_batches

        ev = evaluate_in_batches(  # runs read and evaluated a batch at a time (bounded memory)
            args.qrels, args.runs, measures, qrels_format=args.qrels_format,
            judgments_hook=lambda judgments: warn_ignored_strata(measures, judgments), **options)
    else:  # automatic labels (the fusion labeller reads every run): all runs at once
        from .api import check_common_topics, load
        from .commands.judge_report import eval_labels
        from .evaluation import evaluate_collection

        collection, judgments = load(args.qrels, args.runs, qrels_format=args.qrels_format)
        check_common_topics(collection, judgments)
        warn_ignored_strata(measures, judgments)
        labels = eval_labels(args, measures, collection, judgments)
        ev = evaluate_collection(collection, judgments, measures, auto_labels=labels, **options)
    places = 4 if args.places is None else args.places  # trec_eval's precision in every format
    return render(ev, args.format, per_topic=args.per_topic,
                  places=None if places == "exact" else places)


def cmd_measures(args) -> str:
    from .measures import REGISTRY

    blocks = []
    for name in sorted(REGISTRY, key=str.lower):
        cls = REGISTRY[name]
        doc = textwrap.dedent(cls.__doc__ or "").strip()
        names = [cls.family] + ([cls.trec] if cls.trec and cls.trec != cls.family else [])
        head = " / ".join(names)
        blocks.append(f"{head}\n{textwrap.indent(doc, '    ')}\n    Source: {cls.citation}")
    return "\n\n".join(blocks) + "\n"


def _write(text: str, output: str | None) -> None:
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    from .io.writers import write_atomic

    write_atomic(output, text.encode())


def check_outputs(args) -> None:
    """Refuse bad outputs before any work: ``-o/--output`` and the files and folders a command
    names in ``set_defaults(output_files=(dest, ...), output_folders=(dest, ...))``."""
    files = [getattr(args, "output", None)]
    files += [getattr(args, dest, None) for dest in getattr(args, "output_files", ())]
    folders = [getattr(args, dest, None) for dest in getattr(args, "output_folders", ())]
    if not any(files) and not any(folders):
        return
    from .io.writers import check_output, check_output_folder

    for path in filter(None, files):
        check_output(path)
    for path in filter(None, folders):
        check_output_folder(path)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(chosen_command(argv)).parse_args(argv)
    from .commands.notices import announce_compilation

    announce_compilation()
    try:
        output = getattr(args, "output", None)
        check_outputs(args)
        text = args.run(args)
        _write(text, output)
    except IrsampleError as exc:
        print(f"irsample: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # pragma: no cover - e.g. `| head`
        return 0
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
