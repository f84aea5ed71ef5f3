"""``irsample simulate RECIPE``: rerun a seed paper's experiment on a collection with complete
judgments and write a Markdown report, PNG figures and a results table
(:mod:`irsample.experiments.recipes`, :mod:`irsample.experiments.report`)."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from .arguments import add_seed, number
from .notices import add_progress_option, progress_enabled

TREC8 = Path("..") / "shared" / "data" / "trec8-adhoc"  #: default data, relative to cwd


def add_parser(sub) -> None:
    from ..experiments.recipes import RECIPES

    listing = "; ".join(f"{r.name}: {r.summary}" for r in RECIPES.values())
    p = sub.add_parser(
        "simulate", help="rerun a seed paper's experiment (recipe) and write a report",
        description="Simulate incomplete judgments on a collection with complete judgments "
        f"(default: {TREC8} if present) and write OUTDIR/report.md, figures and results. "
        f"Recipes: {listing}.",
    )
    p.add_argument("recipe", choices=sorted(RECIPES))
    p.add_argument("--shared", default=None,
                   help="a folder with runs/, the qrels (qrels* file) and run-pooled-flag.txt, "
                   "or the shared folder holding data/trec8-adhoc")
    p.add_argument("--qrels", default=None, help="complete qrels (instead of --shared)")
    p.add_argument("--runs", nargs="+", default=None, help="run files or folders")
    p.add_argument("--pooled", default=None,
                   help="'run judged|notjudged' lines (default: every run pooled)")
    p.add_argument("--graded", type=number(int, minimum=2), default=0, metavar="K",
                   help="give every relevant judgment a random grade 1..K (seeded by "
                   "--graded-seed): a graded version of a binary collection")
    p.add_argument("--graded-seed", type=number(int, minimum=0), default=0, metavar="N",
                   help="seed of --graded's grades (default 0)")
    p.add_argument("--trials", type=number(int, minimum=1), default=None,
                   help="trials (default: the recipe's)")
    add_seed(p, "random seed")
    p.add_argument("--workers", type=number(int, minimum=1), default=1,
                   help="local worker processes (default 1: this process)")
    p.add_argument("--scheduler", default=None, help="Dask scheduler address tcp://host:port")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="recipe parameter (lists comma-separated), e.g. percents=1,5,10")
    p.add_argument("--format", choices=("parquet", "csv"), default="parquet",
                   help="results table format (default parquet)")
    add_progress_option(p)
    p.add_argument("-o", "--output", dest="outdir", required=True, help="output directory")
    p.set_defaults(run=cmd_simulate, output_folders=("outdir",))


def collection_files(args):
    """The :class:`CollectionFiles` named by ``--shared`` or ``--qrels/--runs/--pooled``."""
    from ..experiments import CollectionFiles

    if args.qrels or args.runs:
        if not (args.qrels and args.runs):
            raise InputError("give both --qrels and --runs (or --shared)")
        return CollectionFiles.of(args.runs, args.qrels, pooled=args.pooled,
                                  graded=args.graded, graded_seed=args.graded_seed)
    folder = Path(args.shared) if args.shared else TREC8
    if (folder / "data" / "trec8-adhoc").is_dir():
        folder = folder / "data" / "trec8-adhoc"
    if not (folder / "runs").is_dir():
        raise InputError(f"{folder}: no runs/ folder (give --shared DIR or --qrels and --runs)")
    qrels = sorted(folder.glob("qrels*"))
    if not qrels:
        raise InputError(f"{folder}: no qrels* file")
    pooled = folder / "run-pooled-flag.txt"
    return CollectionFiles.of(folder / "runs", qrels[0],
                              pooled=args.pooled or (pooled if pooled.exists() else None),
                              graded=args.graded, graded_seed=args.graded_seed)


def cmd_simulate(args) -> str:
    from ..experiments.recipes import Context, run_recipe
    from ..experiments.report import write_report

    params = {}
    for item in args.param:
        key, sep, value = item.partition("=")
        if not sep:
            raise InputError(f"--param {item!r}: expected KEY=VALUE")
        params[key.strip()] = value.strip()
    context = Context(collection_files(args), trials=args.trials, seed=args.seed,
                      executor="sequential" if args.workers == 1 else "processes",
                      workers=args.workers, scheduler=args.scheduler,
                      progress=progress_enabled(args))
    try:
        report = run_recipe(args.recipe, context, params)
    except ValueError as err:
        raise InputError(str(err)) from err
    written = write_report(report, args.outdir, format=args.format)
    return "".join(f"wrote {p}\n" for p in written)
