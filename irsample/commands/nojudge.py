"""``irsample nojudge`` (rank runs without judgments) and ``irsample infer-qrels`` (complete a
judged sample into qrels): thin wrappers of :mod:`irsample.design.nojudge.methods` and
:mod:`irsample.design.nojudge.infer`."""

from __future__ import annotations

from ..errors import DesignError
from .arguments import add_output, add_runs, add_seed, number
from .notices import Steps, add_progress_option, bar, progress_enabled

METHODS = ("soboroff", "refcount", "condorcet")


def _positive(kind):
    return number(kind, above=0)


def add_parser(sub) -> None:
    nj = sub.add_parser(
        "nojudge",
        help="rank runs without relevance judgments (Soboroff, reference count, Condorcet)",
        description="Score and rank runs from the runs alone. soboroff: MAP against random "
        "pseudo-qrels drawn from the depth-K pool with duplicates (Soboroff, Nicholas & Cahan "
        "2001; needs --mean/--sd, the fraction of a pool that is relevant); refcount: how often "
        "the other runs retrieve a run's top-K documents (Wu & Crestani 2003); condorcet: MAP "
        "against the top --fraction of the Condorcet fusion of the runs (Nuray & Can 2006).",
    )
    add_runs(nj)
    nj.add_argument("--method", choices=METHODS, required=True)
    nj.add_argument("--depth", type=_positive(int), default=100, help="pool depth K (default 100)")
    nj.add_argument("--trials", type=_positive(int), default=None,
                    help="soboroff: trials (default 50)")
    add_seed(nj, "soboroff: random seed")
    nj.add_argument("--mean", type=float, default=None,
                    help="soboroff: mean fraction of relevant documents in a pool (TREC-8: 0.055)")
    nj.add_argument("--sd", type=float, default=None, help="soboroff: its standard deviation")
    nj.add_argument("--weighted", action="store_true", help="refcount: rank-weighted variant")
    nj.add_argument("--fraction", type=float, default=None,
                    help="condorcet: top fraction of the fused list taken as relevant "
                    "(default 0.1)")
    nj.add_argument("--select", type=float, default=None,
                    help="condorcet: fuse only this fraction of the runs, those of largest bias")
    nj.add_argument("--measure", default=None, help="soboroff/condorcet: measure (default AP)")
    nj.add_argument("--format", choices=("tsv", "table"), default="tsv",
                    help="tsv: run, score, rank lines (default); table: aligned columns")
    add_output(nj)
    add_progress_option(nj)
    nj.set_defaults(run=cmd_nojudge)

    inf = sub.add_parser(
        "infer-qrels",
        help="infer the relevance of a sample's unjudged documents (Aslam & Yilmaz 2007)",
        description="Input: sampled judgments of a pool (TREC qrels with -1 for pooled documents "
        "not judged, or stratified qrels) and the runs. Each run's AP per topic is estimated from "
        "the sample (infAP, or xinfAP for stratified samples; or read from --estimates) and R^ by "
        "sample_eval's estimator; relevance probabilities of the unjudged documents are fitted so "
        "that the expected APs match, then rounded. Output: qrels of the whole pool.",
    )
    inf.add_argument("qrels", help="sampled judgments: TREC qrels (-1 = pooled, not judged) or "
                     "stratified qrels; prels only of a sample uniform within its strata "
                     "(others are refused)")
    add_runs(inf)
    inf.add_argument("--estimates", default=None,
                     help="AP estimates instead of the sample's: lines 'run topic value' or "
                     "'run topic measure value' (irsample eval --format tsv -q) of an AP "
                     "measure (AP/map, infAP, xinfAP, statAP, ht(AP), ppi(AP)); 'all' rows "
                     "skipped")
    inf.add_argument("--estimator", choices=("infAP", "xinfAP"), default=None,
                     help="AP estimator (default: infAP for one stratum, xinfAP for several)")
    inf.add_argument("--rounding", choices=("threshold", "top", "random"), default="top",
                     help="p >= 0.5, the round(R^) most probable per topic (default), or random")
    add_seed(inf, "random rounding: seed")
    inf.add_argument("--qrels-format", choices=("trec", "strata", "prels"), default=None)
    inf.add_argument("-o", "--output", help="inferred qrels file (default: standard output)")
    add_progress_option(inf)
    inf.set_defaults(run=cmd_infer_qrels)


def cmd_nojudge(args) -> str:
    from ..design import nojudge
    from ..io import load_runs
    from ..model import Collection

    if args.method == "soboroff" and (args.mean is None or args.sd is None):
        raise DesignError(
            "soboroff needs --mean and --sd (the fraction of relevant documents in a pool)"
        )
    refuse_ignored_options(args)
    trials = 50 if args.trials is None else args.trials
    fraction = 0.1 if args.fraction is None else args.fraction
    measure = nojudge.scoring_measure("AP" if args.measure is None else args.measure)
    with Steps(["reading runs", f"scoring ({args.method})"], progress_enabled(args)) as steps:
        steps.next()
        collection = Collection.build(load_runs(args.runs))
        steps.next()
        if args.method == "soboroff":
            scores = nojudge.soboroff(
                collection, mean=args.mean, sd=args.sd, rng=args.seed, depth=args.depth,
                trials=trials, measure=measure,
            )
        elif args.method == "refcount":
            scores = nojudge.refcount(collection, depth=args.depth, weighted=args.weighted)
        else:
            scores = nojudge.condorcet(
                collection, depth=args.depth, fraction=fraction, select=args.select,
                measure=measure,
            )
    frame = scores.frame()
    if args.format == "tsv":
        lines = ["run\tscore\trank"] + [
            f"{r.run}\t{float(r.score)!r}\t{int(r.rank)}" for r in frame.itertuples()
        ]
        return "\n".join(lines) + "\n"
    width = max(len("run"), *(len(r) for r in frame["run"]))
    lines = [f"# {scores.method}", f"{'run':<{width}}  {'score':>12}  {'rank':>4}"]
    lines += [f"{r.run:<{width}}  {r.score:12.6f}  {int(r.rank):4d}" for r in frame.itertuples()]
    return "\n".join(lines) + "\n"


#: The options each method reads beyond --depth; the others are refused, not ignored.
METHOD_OPTIONS = {
    "soboroff": ("trials", "seed", "mean", "sd", "measure"),
    "refcount": ("weighted",),
    "condorcet": ("fraction", "select", "measure"),
}
_UNSET = {"trials": None, "mean": None, "sd": None, "weighted": False, "fraction": None,
          "select": None, "measure": None}


def refuse_ignored_options(args) -> None:
    """An option the chosen method does not read is an error: ``refcount --mean 0.05`` would
    otherwise print the same ranking as without it and let the user believe it was used.
    ``--seed`` is not checked: its default cannot be told from the same value typed."""
    used = METHOD_OPTIONS[args.method]
    given = [name for name, unset in _UNSET.items()
             if name not in used and getattr(args, name) != unset]
    if given:
        options = ", ".join(f"--{name}" for name in given)
        readers = "; ".join(
            f"--{name}: {', '.join(m for m, opts in METHOD_OPTIONS.items() if name in opts)}"
            for name in given
        )
        raise DesignError(f"{args.method} does not read {options} ({readers})")


def cmd_infer_qrels(args) -> str:
    from ..api import check_common_topics, load
    from ..design.nojudge.infer import estimated_relevant, estimates_from_sample, infer_relevance

    enabled = progress_enabled(args)
    with Steps(["reading runs and judgments", "estimating AP"], enabled) as steps:
        steps.next()
        collection, judgments = load(args.qrels, args.runs, qrels_format=args.qrels_format)
        check_common_topics(collection, judgments)
        steps.next()
        if args.estimates is not None:
            from ..io.estimates import read_estimates

            ap = read_estimates(args.estimates, collection)
            r_hat = estimated_relevant(judgments)
            warn_missing_estimates(ap, collection, judgments, args)
        else:
            estimator = args.estimator or (
                "xinfAP" if len(judgments.stratum_labels) > 1 else "infAP")
            ap, r_hat = estimates_from_sample(collection, judgments, measure=estimator)
    with bar(enabled, total=collection.n_topics, unit="topic", desc="fitting") as progress:
        inferred = infer_relevance(
            collection, judgments, ap, r_hat, rounding=args.rounding,
            rng=args.seed if args.rounding == "random" else None, progress=progress.update,
        )
    return inferred.qrels_text()


def warn_missing_estimates(ap, collection, judgments, args) -> None:
    """Warnings on standard error when ``--estimates`` leaves out rankings the inference reads
    (a run's topic with judgments: it then constrains nothing there) and when ``--estimator``
    is given with it (the file's estimates are used instead)."""
    import sys

    import numpy as np

    if args.estimator is not None:
        print(f"irsample: warning: --estimator {args.estimator} not used: the AP estimates come "
              f"from {args.estimates}", file=sys.stderr)
    wanted = (collection.segment_lengths() > 0) & judgments.has_topic
    missing = np.argwhere(wanted & np.isnan(ap))
    if len(missing):
        r, t = missing[0]
        print(f"irsample: warning: {args.estimates}: no estimate for {len(missing)} of "
              f"{int(wanted.sum())} (run, topic) rankings with judgments (the first: run "
              f"{collection.run_names[r]}, topic {collection.topics[t]}); those rankings "
              "constrain nothing in the inference", file=sys.stderr)
