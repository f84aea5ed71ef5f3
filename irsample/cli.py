"""Command line: ``irsample eval``, ``irsample measures`` and the commands of :data:`COMMANDS`.

Thin by design: parse arguments, call the API, render, write. Output is built completely before
anything is written; ``-o FILE`` is written through a temporary file and renamed, so a failure
leaves no partial output. Errors print ``irsample: file:line: message`` and exit 1 (2 for usage).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import textwrap

from .errors import IrsampleError
from .commands.arguments import number
from .io.writers import write_atomic


#: further subcommands: modules of :mod:`irsample.commands`, each with ``add_parser(sub)``
#: registering its parser(s) with ``set_defaults(run=handler)``; ``handler(args) -> str`` returns
#: the text to write (or writes files itself and returns a report).
COMMANDS: tuple[str, ...] = (
    "compare", "demo", "design", "judge", "judge_report", "nojudge", "plan", "simulate"
)


_positive_int = number(int, minimum=0)
_level = number(float, above=0.0, below=1.0)  # a confidence level in (0, 1)


def build_parser() -> argparse.ArgumentParser:
    from .formats import FORMATS
    from .io import QRELS_FORMATS
    from .measures.base import DEFAULT_VARIANCE, VARIANCE_METHODS

    parser = argparse.ArgumentParser(
        prog="irsample",
        description="Evaluate retrieval runs, exactly like trec_eval, and beyond.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    ev = sub.add_parser(
        "eval",
        help="evaluate runs against qrels (trec_eval compatible)",
        description="Evaluate runs against qrels. Measure names: irsample (AP, P@10, nDCG@10), "
        "ir_measures or trec_eval syntax (map, P.5,10, ndcg_cut.10, ndcg.1=3,2=9), or the "
        "sets official / all_trec. Default: official.",
    )
    ev.add_argument("qrels", help="qrels file (plain, .gz, .parquet, or - for stdin)")
    ev.add_argument("runs", nargs="+", help="run files (plain, .gz, .parquet, or -)")
    ev.add_argument("-m", "--measure", action="extend", nargs="+", default=None, metavar="MEASURE")
    ev.add_argument("-q", "--per-topic", action="store_true", help="print per-topic values too")
    ev.add_argument(
        "-c", "--complete", action="store_true",
        help="average over all qrels topics (a topic missing from a run scores 0)",
    )
    ev.add_argument(
        "-J", "--judged-only", action="store_true",
        help="evaluate only judged documents (drop unjudged and unpooled ones from the ranking)",
    )
    ev.add_argument("-l", "--level", type=int, default=1, help="relevance level (default 1)")
    ev.add_argument("-M", "--max-docs", type=_positive_int, default=None,
                    help="evaluate only the first N documents of each ranking")
    ev.add_argument("--format", choices=FORMATS, default="trec")
    ev.add_argument(
        "--qrels-format", choices=QRELS_FORMATS, default=None,
        help="judgments format (default: detected; 4 fields trec, 5 fields stratified qrels "
        "or, with fractional fifth fields, prels)",
    )
    ev.add_argument("--places", type=_positive_int, default=None, help="decimals of real values")
    ev.add_argument("--compat", choices=("9.0.8", "10"), default="10",
                    help="trec_eval version whose iprec_at_recall/11pt_avg rounding to follow")
    ev.add_argument(
        "--ci", type=_level, default=None, metavar="LEVEL",
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

    sub.add_parser("measures", help="list every measure with its formula and citation")
    for name in COMMANDS:
        importlib.import_module(f"irsample.commands.{name}").add_parser(sub)
    return parser


def cmd_eval(args) -> str:
    from .api import check_common_topics, load, measures_from
    from .evaluation import evaluate_collection
    from .formats import render

    default = ["sample_eval"] if args.format == "sample_eval" else ["official"]
    measures = measures_from(args.measure or default)
    collection, judgments = load(args.qrels, args.runs, qrels_format=args.qrels_format)
    check_common_topics(collection, judgments)
    from .commands.judge_report import eval_labels

    labels = eval_labels(args, measures, collection, judgments)
    ev = evaluate_collection(
        collection,
        judgments,
        measures,
        rel_level=args.level,
        judged_only=args.judged_only,
        max_docs=args.max_docs,
        complete=args.complete,
        compat=args.compat,
        ci=args.ci,
        variance=args.variance,
        auto_labels=labels,
    )
    return render(ev, args.format, per_topic=args.per_topic, places=args.places)


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
    write_atomic(output, text.encode())


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    commands = {"eval": cmd_eval, "measures": cmd_measures}
    try:
        handler = getattr(args, "run", None) or commands[args.command]
        text = handler(args)
        _write(text, getattr(args, "output", None))
    except IrsampleError as exc:
        print(f"irsample: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # pragma: no cover - e.g. `| head`
        return 0
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
