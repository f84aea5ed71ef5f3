"""``irsample compare``: every pair of runs compared on one judged sample with ``ht(M)``.

``irsample compare QRELS RUN... -m 'ht(AP)' [--ci 0.95] [--correction holm|bh|none]
[--variance design|topics] [--format text|csv|json]`` prints one row per pair: the mean
difference a - b over topics, its standard error from the shared sample
(:mod:`irsample.measures.ht.pairs`), the interval, the p-value, the p-value adjusted over all
pairs and whether the pair is decided at the chosen level (:mod:`irsample.comparison`).
"""

from __future__ import annotations

from .arguments import number


def add_parser(sub) -> None:
    cp = sub.add_parser(
        "compare", help="compare every pair of runs on one judged sample (ht measures)",
        description="Differences of the runs' ht(M) means with intervals from the shared "
        "sample, p-values adjusted over all pairs (Holm or Benjamini-Hochberg).")
    cp.add_argument("qrels", help="judgments: sampled qrels (-1: pooled, not judged), "
                    "stratified qrels or prels")
    cp.add_argument("runs", nargs="+", help="run files (at least two)")
    cp.add_argument("-m", "--measure", default="ht(AP)", help="a design-based measure "
                    "(default ht(AP))")
    cp.add_argument("--ci", type=number(float, above=0.0, below=1.0), default=0.95,
                    help="confidence level; pairs are decided at 1 - ci (default 0.95)")
    cp.add_argument("--correction", choices=("holm", "bh", "none"), default="holm")
    cp.add_argument("--variance", choices=("design", "topics"), default="design",
                    help="design: topics fixed (default); topics: topic-to-topic variance too")
    cp.add_argument("--qrels-format", choices=("trec", "strata", "prels"), default=None)
    cp.add_argument("-l", dest="rel_level", type=number(int, minimum=1), default=1,
                    help="relevance level (default 1)")
    cp.add_argument("--format", choices=("text", "csv", "json"), default="text")
    cp.set_defaults(run=cmd_compare)


def cmd_compare(args) -> str:
    from ..api import compare
    from ..errors import InputError

    if len(args.runs) < 2:
        raise InputError("compare needs at least two runs")
    table = compare(args.qrels, args.runs, args.measure, ci=args.ci, correction=args.correction,
                    variance=args.variance, qrels_format=args.qrels_format,
                    rel_level=args.rel_level)
    if args.format == "csv":
        return table.to_csv(index=False)
    if args.format == "json":
        return table.to_json(orient="records", lines=True)
    return table.to_string(index=False, float_format=lambda v: f"{v:.4f}") + "\n"
