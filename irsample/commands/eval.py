"""``irsample eval``: evaluate runs against qrels, as trec_eval does, and with estimators.

``irsample eval QRELS RUN... [-m MEASURE]... [-q] [--format FORMAT]`` (trec, tsv, csv, json,
latex, table, sample_eval) reads the qrels once and the runs in bounded batches
(:mod:`irsample.streaming`), so memory stays flat whatever the number of runs; with
``--auto-labels`` every run is held at once (the fusion labeller reads them all). The measures
are parsed by :func:`irsample.api.measures_from` and the output is rendered by
:mod:`irsample.formats`.
"""

from __future__ import annotations

import os
import sys

# NumPy's OpenBLAS starts a worker thread per extra core when NumPy is imported (the next
# import), and each spins for a while (TREC-8 eval: 65 ms of a core the reading threads need);
# no kernel of the evaluation calls BLAS, so one thread does. A value the user set wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from ..errors import IrsampleError  # noqa: E402 (after the variable above)
from .arguments import add_assume, add_design, check_design, number  # noqa: E402
from .strict import add_strict  # noqa: E402

#: formats whose output has no per-topic lines (``-q`` is refused with them)
SUMMARY_ONLY = ("latex", "table")
#: formats that can print exact doubles (``--places exact``)
EXACT = ("tsv", "csv", "json")
#: trec_eval's -R formats: the ones read, then the ones refused with a reason
REL_INFO_FORMATS = ("qrels", "qrels_jg", "prefs", "qrels_prefs")


def places(text: str):
    """``--places``: an integer >= 0, or ``exact``."""
    if text == "exact":
        return text
    return number(int, minimum=0)(text)


def add_parser(sub) -> None:
    from ..formats import FORMATS
    from ..io.files import QRELS_FORMATS
    from ..measures.variance_methods import DEFAULT_VARIANCE, VARIANCE_METHODS

    at_least_zero = number(int, minimum=0)
    ev = sub.add_parser(
        "eval",
        help="evaluate runs against qrels (trec_eval compatible)",
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
        help="evaluate only judged documents (drop unjudged and unpooled ones from the ranking); "
             "not with ht(M) or ppi(M), which weigh documents at their place in the whole ranking",
    )
    ev.add_argument("-l", "--level", type=at_least_zero, default=1,
                    help="relevance level (default 1)")
    ev.add_argument("-M", "--max-docs", type=at_least_zero, default=None,
                    help="evaluate only the first N documents of each ranking")
    ev.add_argument("--format", choices=FORMATS, default="trec",
                    help="trec (trec_eval's lines, the default), tsv, csv (the tsv's rows, "
                    "comma-separated), json, latex, table (summaries, one row per run) or "
                    "sample_eval (sample_eval.pl's layout)")
    ev.add_argument(
        "--qrels-format", choices=QRELS_FORMATS, default=None,
        help="judgments format (default: detected; 4 fields trec, 5 fields stratified qrels "
        "or, with fractional fifth fields, prels)",
    )
    ev.add_argument("--places", type=places, default=None, metavar="N",
                    help="decimals of real values (default 4, trec_eval's, in every format), or "
                    "'exact' (tsv, csv, json: the shortest text that reads back as the same "
                    "double)")
    ev.add_argument("--compat", choices=("9.0.8", "10"), default="10",
                    help="trec_eval version whose habits to follow: its iprec_at_recall/"
                    "11pt_avg rounding, and scores kept in single precision for 9.0.8 (ties of "
                    "scores equal as C floats go by docno)")
    ev.add_argument(
        "--ci", type=number(float, above=0.0, below=1.0), default=None, metavar="LEVEL",
        help="add confidence limits at this level (e.g. 0.95) for estimators with a variance "
        "(infAP, xinfAP, infNDCG, statAP, ht, ppi): <name>_low/_high/_status lines, or "
        "low/high/status columns; an unreliable interval is marked (trec: its reason on "
        "standard error)",
    )
    ev.add_argument(
        "--variance", choices=VARIANCE_METHODS, default=DEFAULT_VARIANCE,
        help="variance estimator of infAP and xinfAP for --ci: jackknife (default; closest to "
        "nominal coverage on TREC-8), covariance (linearised, with the covariances of the "
        "precisions) or paper (Yilmaz, Kanoulas & Aslam 2008, precisions independent)",
    )
    add_assume(ev)
    add_design(ev)
    ev.add_argument("--auto-labels", metavar="FILE|fusion", default=None,
                    help="automatic labels (topic Q0 docno value) for ppi(M) and auto(M), or "
                    "'fusion' for the built-in labeller fitted on the judged sample")
    ev.add_argument("-R", "--rel-info-format", choices=REL_INFO_FORMATS, default="qrels",
                    help="trec_eval's -R: qrels (default; --qrels-format tells which kind) or "
                    "qrels_jg (qid jg docno rel: judgments per group, measures map_avgjg, "
                    "P_avgjg, Rprec_mult_avgjg, the set qrels_jg); prefs and qrels_prefs are "
                    "not supported (see docs/usage.md, differences from trec_eval)")
    ev.add_argument("-Z", "--zscores", metavar="FILE", default=None,
                    help="trec_eval's -Z: print each value as a z-score against the 'qid "
                    "measure mean stddev' lines of FILE (-1000000 where FILE has none); "
                    "--format trec only")
    ev.add_argument("-o", "--output", help="write to this file instead of standard output")
    add_strict(ev)
    ev.set_defaults(run=cmd_eval, start=start_reading, quick_exit=True)


def keep_freed_memory() -> None:
    """glibc's allocator: keep freed memory for the next allocations instead of handing it back
    to the system (arrays up to 1 GiB come from the heap, which is not trimmed below 2 GiB of
    free space). Reading and evaluating one batch allocates and frees arrays of similar sizes
    over and over (run text, per-position arrays); mapped afresh, each page costs a fault and
    zeroing (TREC-8: 243,000 faults, 185,000 with this). Only for a single batch: over several
    batches the kept memory fragments and the peak grows (10 MS MARCO-sized runs: 1.0 -> 1.4
    GB), so there memory goes back between batches as by default. Nothing happens off glibc."""
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        return
    m_trim_threshold, m_mmap_threshold = -1, -3  # malloc.h
    mallopt(m_mmap_threshold, 1 << 30)
    mallopt(m_trim_threshold, 1 << 31)


def start_reading(args) -> None:
    """Check the options, then start decompressing and parsing the first run files in
    background threads (``args.ahead``), before the command line imports numba and the
    measures: the second core reads while the first one imports."""
    if args.per_topic and args.format in SUMMARY_ONLY:
        raise IrsampleError(f"-q: --format {args.format} has no per-topic lines (use trec, tsv, "
                            "csv, json or sample_eval)")
    if args.strict and args.ci is None:
        raise IrsampleError("--strict checks the status of intervals: give --ci LEVEL (e.g. "
                            "--ci 0.95)")
    if args.ci is not None and args.format == "sample_eval":
        raise IrsampleError("--ci: --format sample_eval has no room for intervals "
                            "(sample_eval.pl's layout); use trec, tsv, csv, json, latex or "
                            "table")
    if args.places == "exact" and args.format not in EXACT:
        raise IrsampleError(f"--places exact: only with --format {' or '.join(EXACT)}")
    if [str(args.qrels), *map(str, args.runs)].count("-") > 1:
        raise IrsampleError("standard input (-) is given more than once: it can be read once "
                            "(give the other files by name)")
    check_trec_inputs(args)
    check_design(args)
    if (args.auto_labels is None and args.rel_info_format == "qrels" and args.design is None
            and not design_based(args.measure)):  # else: all runs at once
        from ..io.ahead import ReadAhead, run_batches

        # numba's OpenMP workers sleep when a parallel kernel ends instead of spinning: the
        # reading threads need the cores (read when OpenMP loads, after this)
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        if len(run_batches(args.runs)) == 1:  # before the threads start allocating
            keep_freed_memory()
        args.ahead = ReadAhead(args.runs)


#: the families whose variance reads every run evaluated (``measures/ht/anticipated.py``)
DESIGN_BASED = ("ht(", "ppi(")


def design_based(names) -> bool:
    """Whether a measure named on the command line is a design-based estimator: its anticipated
    variance fits one relevance model to where all the runs rank each document, so the runs
    are read at once (a batch of runs would fit another)."""
    return any(str(n).strip().lower().startswith(DESIGN_BASED) for n in names or ())


def check_trec_inputs(args) -> None:
    """Refuse ``-R`` and ``-Z`` where trec_eval's meaning cannot be kept."""
    if args.rel_info_format in ("prefs", "qrels_prefs"):
        raise IrsampleError(
            f"-R {args.rel_info_format}: preference judgments and trec_eval's prefs_* measures "
            "are not implemented (docs/usage.md, 'Differences from trec_eval')")
    if args.rel_info_format == "qrels_jg" and (args.auto_labels or args.ci is not None):
        raise IrsampleError("-R qrels_jg: no estimators (--ci, --auto-labels) with judgment "
                            "groups")
    if args.zscores is not None and (args.format != "trec" or args.ci is not None):
        raise IrsampleError("-Z: z-scores are printed in --format trec, without --ci")


def check_some_interval(args, measures) -> None:
    """``--ci`` with none of the measures an estimator with a variance (trec_eval's measures
    are the judgments' own values, with no interval): an error with ``--strict``, which would
    otherwise check nothing and pass, else a warning, since the numbers themselves are right."""
    if args.ci is None or any(m.variance_method is not None for m in measures):
        return
    names = ", ".join(m.trec_name for m in measures[:4]) + (", ..." if len(measures) > 4 else "")
    verb = "is" if len(measures) == 1 else "are"
    why = (f"{names} {verb} computed from the judgments as given; intervals come with the "
           "estimators of sampled judgments, e.g. -m 'ht(AP)', -m infAP, -m statAP (see "
           "`irsample measures`)")
    if args.strict:
        raise IrsampleError(f"--strict: no interval to check: {why}")
    print(f"irsample: warning: --ci: no interval to print: {why}", file=sys.stderr)


def check_sample_eval_names(measures) -> None:
    """sample_eval.pl's layout names xinfAP ``infAP``, as that script does: beside trec_eval's
    infAP the two lines could not be told apart, so two measures printed under one name are
    refused."""
    from ..errors import MeasureError
    from ..formats import sample_eval_name

    seen = {}
    for m in measures:
        name = sample_eval_name(m)
        if name in seen and seen[name] != m.name:
            raise MeasureError(f"--format sample_eval prints {seen[name]} and {m.name} both as "
                               f"{name!r} (sample_eval.pl's names): ask for one of them, or use "
                               "another format")
        seen.setdefault(name, m.name)


def cmd_eval(args) -> str:
    if not hasattr(args, "ahead"):
        start_reading(args)
    ahead = getattr(args, "ahead", None)
    try:
        return _evaluate(args, ahead)
    except BaseException:
        if ahead is not None:
            ahead.cancel()
        raise


def _evaluate(args, ahead) -> str:
    """The evaluation of :func:`cmd_eval`: streamed from ``ahead`` (a started
    :class:`~irsample.io.ahead.ReadAhead`), or all runs at once with ``--auto-labels`` or a
    design-based estimator."""
    if ahead is not None:  # the reading threads read the qrels and parse runs meanwhile
        ahead.parse(args.qrels, args.qrels_format)
    from ..api import measures_from
    from ..formats import render

    default = ["sample_eval"] if args.format == "sample_eval" else ["official"]
    options = dict(rel_level=args.level, judged_only=args.judged_only, max_docs=args.max_docs,
                   complete=args.complete, compat=args.compat, ci=args.ci,
                   variance=args.variance)
    if args.rel_info_format == "qrels_jg":
        ev = _judgment_groups(args, options)
    else:
        measures = measures_from(args.measure or default)
        check_some_interval(args, measures)
        if args.format == "sample_eval":
            check_sample_eval_names(measures)
        ev = _judgments(args, ahead, measures, options)
    places = 4 if args.places is None else args.places  # trec_eval's precision in every format
    if args.zscores is not None:
        from ..io.trec_extra import read_zscores
        from ..trec_inputs import zscores

        ev = zscores(ev, read_zscores(args.zscores), complete=args.complete)
    from ..formats import unreliable_notes
    from .strict import check_strict, warn_unreliable

    notes = [] if args.format == "sample_eval" else unreliable_notes(ev)  # no interval printed
    check_strict(args, notes)
    if args.format == "trec":
        warn_unreliable(notes)
    return render(ev, args.format, per_topic=args.per_topic,
                  places=None if places == "exact" else places,
                  zscores=args.zscores is not None)


def _judgment_groups(args, options):
    """``-R qrels_jg``: every run read at once, evaluated once per judgment group."""
    from ..io import load_runs
    from ..io.trec_extra import read_qrels_jg
    from ..model import Collection
    from ..trec_inputs import evaluate_judgment_groups, judgment_group_measures

    measures = judgment_group_measures(args.measure or ["qrels_jg"])
    groups = read_qrels_jg(args.qrels)
    collection = Collection.build(load_runs(args.runs), list(groups.values()))
    del options["ci"], options["variance"]
    return evaluate_judgment_groups(collection, groups, measures, **options)


def _judgments(args, ahead, measures, options):
    """The evaluation with one set of judgments (``-R qrels``)."""
    from ..judgment_notes import judgment_notes
    from .arguments import note_unused_assumption
    from .notices import print_notes

    def notices(judgments, collection):
        print_notes(judgment_notes(measures, judgments, collection, level=args.level,
                                   intervals=args.ci is not None))
        note_unused_assumption(args, judgments)

    if ahead is not None:
        from ..streaming import evaluate_in_batches

        ev = evaluate_in_batches(  # runs read and evaluated a batch at a time (bounded memory)
            args.qrels, ahead, measures, qrels_format=args.qrels_format, assume=args.assume,
            judgments_hook=notices, **options)
    else:  # automatic labels (the fusion labeller reads every run), design-based estimators
        # (their relevance model reads every run) or a design file: all runs at once
        from ..api import check_common_topics, load
        from ..evaluation import evaluate_collection
        from .judge_report import eval_labels

        collection, judgments = load(args.qrels, args.runs, qrels_format=args.qrels_format,
                                     assume=args.assume, design=args.design)
        check_common_topics(collection, judgments)
        notices(judgments, collection)
        if not args.complete:
            from ..judgment_notes import unanswered, unanswered_topics

            print_notes(unanswered(unanswered_topics(collection, judgments)))
        labels = eval_labels(args, measures, collection, judgments)
        ev = evaluate_collection(collection, judgments, measures, auto_labels=labels, **options)
    return ev
