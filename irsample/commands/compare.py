"""``irsample compare``: every pair of runs compared on one judged sample with ``ht(M)``.

``irsample compare QRELS RUN... [-m 'ht(AP)']... [--ci 0.95] [--correction holm|bh|none]
[--variance design|topics] [--design FILE] [--format text|csv|json|markdown|latex|html]
[--strict] [-o FILE]``
prints one row per pair and measure: the mean difference a - b over topics, its standard error
from the shared sample (:mod:`irsample.measures.ht.pairs`), the interval, the p-value, the p-value
adjusted over all pairs and whether the pair is decided at the chosen level
(:mod:`irsample.comparison`) and the status of the pair's interval (``ok`` or ``unreliable``;
``text``: a ``!`` after it and, below the table, ``! run_a - run_b measure: reason`` per
unreliable pair; ``csv``, ``json``: a ``reason`` column too, and ``causes``, the topic ids, in
``json``). ``markdown``, ``latex`` and ``html`` print runs x measures for a paper instead:
estimate, interval, status, and superscripts naming the runs each run is significantly better
than (:mod:`irsample.comparison_table`). ``--strict``: an unreliable interval among those
printed is an error (:mod:`irsample.commands.strict`). A pair is compared on the judged topics
both runs answer, a run's mean (the tables) over its own: a note on standard error says so when
the runs do not answer the same topics.
"""

from __future__ import annotations

from .arguments import add_assume, add_design, add_output, check_design, number
from .strict import add_strict, check_strict

#: the pairs' formats, then the paper tables' (irsample.comparison_table.FORMATS)
PAIR_FORMATS = ("text", "csv", "json")
TABLE_FORMATS = ("markdown", "latex", "html")


def add_parser(sub) -> None:
    cp = sub.add_parser(
        "compare", help="compare every pair of runs on one judged sample (ht measures)",
        description="Differences of the runs' ht(M) means with intervals from the shared "
        "sample, p-values adjusted over all pairs (Holm or Benjamini-Hochberg).")
    cp.add_argument("qrels", help="judgments: sampled qrels (-1: pooled, not judged), "
                    "stratified qrels or prels")
    cp.add_argument("runs", nargs="+", help="run files (at least two)")
    cp.add_argument("-m", "--measure", action="append", default=None, metavar="MEASURE",
                    help="a design-based measure; repeat for more (default ht(AP))")
    cp.add_argument("--ci", type=number(float, above=0.0, below=1.0), default=0.95,
                    help="confidence level; pairs are decided at 1 - ci (default 0.95)")
    cp.add_argument("--correction", choices=("holm", "bh", "none"), default="holm",
                    help="adjustment of the p-values over all pairs of a measure: Holm "
                    "(default), Benjamini-Hochberg or none")
    cp.add_argument("--variance", choices=("design", "topics"), default="design",
                    help="design: topics fixed (default); topics: topic-to-topic variance too")
    cp.add_argument("--qrels-format", choices=("trec", "strata", "prels"), default=None)
    add_assume(cp)
    add_design(cp)
    cp.add_argument("-l", dest="rel_level", type=number(int, minimum=1), default=1,
                    help="relevance level (default 1)")
    cp.add_argument("--format", choices=PAIR_FORMATS + TABLE_FORMATS, default="text",
                    help="text, csv, json: one row per pair and measure (default text); "
                    "markdown, latex, html: runs x measures for a paper, each estimate with its "
                    "interval, status and superscript letters of the runs it is significantly "
                    "better than")
    cp.add_argument("--places", type=number(int, minimum=0), default=None,
                    help="decimals in the text, markdown, latex and html output (default 4); "
                    "csv and json keep every digit")
    add_output(cp)
    add_strict(cp)
    cp.set_defaults(run=cmd_compare)


def cmd_compare(args) -> str:
    import sys

    from ..comparing import compare_table
    from ..errors import IrsampleError

    if len(args.runs) < 2:
        raise IrsampleError(f"compare needs at least two runs; one run file given "
                            f"({args.runs[0]})")
    check_design(args)
    if args.places is not None and args.format in ("csv", "json"):
        raise IrsampleError(f"--places does not apply to --format {args.format}, which keeps "
                            "every digit (it applies to text, markdown, latex and html)")
    places = 4 if args.places is None else args.places
    names = args.measure or ["ht(AP)"]

    # the notices on the judgments come as the API's warnings (cli.main prints them)
    report = compare_table(args.qrels, args.runs, names, ci=args.ci,
                           correction=args.correction, variance=args.variance,
                           qrels_format=args.qrels_format, rel_level=args.rel_level,
                           assume=args.assume, design=args.design)
    if args.assume and report.assumed is None:
        print(f"irsample: note: --assume {args.assume} not used: the judgments carry their "
              "inclusion probabilities (or are complete)", file=sys.stderr)
    if args.format in TABLE_FORMATS:
        check_strict(args, report.unreliable())
        return report.render(args.format, places=places)
    table = report.pairs
    check_strict(args, report.unreliable(runs=False))
    if args.format == "csv":
        return table.drop(columns="causes").to_csv(index=False)
    if args.format == "json":
        return json_lines(table)
    head = f"# assume {report.assumed}\n" if report.assumed else ""  # as the assume column
    shown = table.drop(columns=["reason", "causes", "assume"], errors="ignore")
    shown["status"] = shown.status.where(shown.status == "ok", shown.status + "!")
    notes = [f"! {p.run_a} - {p.run_b} {p.measure}: {p.reason}"
             for p in table.itertuples(index=False) if p.status != "ok"]
    # degrees of freedom to a tenth: Satterthwaite's can run to millions, four decimals are noise
    text = shown.to_string(index=False, float_format=lambda v: f"{v:.{places}f}",
                           formatters={"df": lambda v: f"{v:.1f}"})
    return head + "\n".join([text, *notes]) + "\n"


def json_lines(table) -> str:
    """One JSON object per row, numbers as the csv has them (shortest round-trip repr; pandas'
    ``to_json`` keeps 10 decimals, printing p = 4.8e-13 as 0.0), NaN and inf as ``null``."""
    import json
    import math

    def plain(v):
        if isinstance(v, tuple):
            return [plain(x) for x in v]
        if hasattr(v, "item"):  # numpy scalars
            v = v.item()
        if isinstance(v, float) and not math.isfinite(v):
            return None
        return v

    return "".join(json.dumps({k: plain(v) for k, v in row.items()}, separators=(",", ":")) + "\n"
                   for row in table.to_dict(orient="records"))
