"""argparse value types shared by the subcommands: numbers with bounds, one error wording, and
the ``--seed`` option with its one default."""

from __future__ import annotations

import argparse


def add_seed(parser, what: str) -> None:
    """``--seed``: an int >= 0 (NumPy's seed sequences take no negative entropy) with the one
    default of every command,
    :data:`~irsample.stats.random.DEFAULT_SEED` (the same seed gives the same draws on any
    machine). Imported here, not with the module: the commands without ``--seed`` (``eval``)
    start reading their runs before NumPy is imported."""
    from ..stats.random import DEFAULT_SEED

    parser.add_argument("--seed", type=number(int, minimum=0), default=DEFAULT_SEED,
                        help=f"{what} (default {DEFAULT_SEED}, as in every command)")


def number(kind=int, *, minimum=None, above=None, below=None):
    """An argparse ``type`` converting with ``kind`` (int or float) and checking
    ``value >= minimum``, ``value > above`` and ``value < below`` (each when given)."""
    noun = "an integer" if kind is int else "a number"

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {noun}: {text!r}") from None
        if minimum is not None and value < minimum:
            raise argparse.ArgumentTypeError(f"must be {noun} >= {minimum}, not {text!r}")
        if above is not None and not value > above:
            raise argparse.ArgumentTypeError(f"must be {noun} > {above}, not {text!r}")
        if below is not None and not value < below:
            raise argparse.ArgumentTypeError(f"must be {noun} < {below}, not {text!r}")
        return value

    return parse


def add_runs(parser, what: str = "run files (plain, .gz, .parquet)") -> None:
    """The positional ``runs``: one or more run files."""
    parser.add_argument("runs", nargs="+", help=what)


def add_output(parser) -> None:
    """``-o/--output``: the file to write instead of standard output (the commands write it
    only once the whole result is computed)."""
    parser.add_argument("-o", "--output", help="write to this file instead of standard output")


def add_level(parser) -> None:
    """``-l/--level``: the lowest grade counted relevant, an integer >= 1 (default 1)."""
    parser.add_argument("-l", "--level", type=number(int, minimum=1), default=1,
                        help="lowest relevant grade (default 1)")


def add_assume(parser) -> None:
    """``--assume uniform``: the design of sampled TREC qrels (-1 rows), which carry no
    inclusion probabilities; without it the design-based estimators (ht, ppi, auto) refuse
    them (:meth:`~irsample.model.Judgments.require_probabilities`). Recorded in the output."""
    parser.add_argument(
        "--assume", choices=("uniform",), default=None,
        help="the design of TREC qrels with -1 rows, which do not carry inclusion "
        "probabilities: 'uniform' takes each topic's judged documents as a uniform random "
        "sample of its pool (recorded in the output); without it ht(M), ppi(M) and auto(M) "
        "refuse such qrels (stratified qrels and prels carry the probabilities)")


def note_unused_assumption(args, judgments) -> None:
    """One line on standard error when ``--assume`` was given for judgments that carry their
    own probabilities (or are complete): it changes nothing there."""
    import sys

    if getattr(args, "assume", None) and judgments.probabilities != "none":
        what = ("are complete (every pooled document judged)" if judgments.probabilities
                == "census" else "carry their inclusion probabilities")
        print(f"irsample: note: --assume {args.assume} not used: the judgments "
              f"({judgments.source}) {what}", file=sys.stderr)


def add_design(parser) -> None:
    """``--design FILE``: the design file the judged documents were drawn by; QRELS are then
    the assessors' TREC judgments of its selected documents, read with every pooled document's
    stratum and inclusion probability at once (``irsample.load(..., design=)``)."""
    parser.add_argument(
        "--design", metavar="FILE", default=None,
        help="the design file (design.json of `irsample sample` or `plan`) the judged documents "
        "were drawn by: QRELS are then the assessors' judgments of its selected documents, as "
        "for `irsample merge`, and the estimators read every pooled document's stratum and "
        "inclusion probability from it, both at once (stratified qrels keep the first, prels "
        "the second)")


def check_design(args) -> None:
    """With ``--design``, QRELS are TREC qrels: ``--qrels-format strata|prels`` (and eval's
    ``-R`` other than qrels) is an error, before any file is read."""
    from ..errors import IrsampleError

    if getattr(args, "design", None) is not None and (
            getattr(args, "rel_info_format", "qrels") != "qrels"
            or getattr(args, "qrels_format", None) not in (None, "trec")):
        raise IrsampleError("--design: QRELS are the assessors' TREC qrels of the design's "
                            "selected documents (no -R, no --qrels-format)")
