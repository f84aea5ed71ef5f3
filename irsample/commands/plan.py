"""``irsample plan``: plan where to spend a judging budget (:mod:`irsample.design.planner.plan`).

Rounds, each a design file that ``irsample sample --design FILE`` draws:

1. nothing judged yet: ``irsample plan RUNS --budget N --measure xinfAP -o plan.json`` plans a
   pilot (``--pilot P`` judgments; default 5% of the budget, at least 2 per topic), or with
   ``--pilot 0`` the whole budget from a runs-only prior;
2. after judging a drawn sample: ``irsample plan RUNS --budget N --measure xinfAP --design
   DIR/design.json --judged QRELS -o plan2.json`` re-fits the relevance model to the
   judgments and plans the rest of the budget (or ``--batch B`` more judgments: sequential
   mode), keeping the drawn design's strata and its judged documents.

Judging in rounds for ``ht(M)`` and ``ppi(M)``: ``irsample plan RUNS --next-round
DIR/design.json --judged QRELS --budget N -o NEXT/`` (:mod:`irsample.commands.plan_rounds`).

``--target-halfwidth W``: plan the smallest budget whose predicted half-width of a run's mean
estimate is at most W (``--budget`` then caps it). The summary goes to standard output.

Active judging: ``irsample plan RUNS --budget N --auto-labels FILE|fusion [--mix A] [--seed S]
-o design.json`` draws the sample at once with inclusion probabilities that favour documents
whose label is uncertain and that the runs rank high (:mod:`irsample.design.sampling.active`),
and writes the drawn design file (rows with their pi) and the list of its documents to judge
beside it (``design.to_judge.tsv``, :func:`to_judge_path`); judge them, then
``irsample merge design.json QRELS --format prels`` (every pool document, with its pi) and
``irsample eval ... --auto-labels`` estimate ppi(M) and ht(M) without bias.
"""

from __future__ import annotations

import argparse

from ..errors import DesignError
from .arguments import add_level, add_runs, add_seed, number
from .notices import Steps, add_progress_option, progress_enabled
from .plan_rounds import NextRound

DEFAULT_DEPTH = 100
ESTIMATORS = ("xinfAP", "infNDCG", "statAP")


def add_parser(sub) -> None:
    pl = sub.add_parser(
        "plan", help="plan strata and sample sizes for a judging budget",
        description="Plan strata over best rank and per-topic sample sizes that minimise the "
        "predicted variance of the mean estimate (Neyman allocation from a relevance model "
        "fitted to a pilot); writes a design file for `irsample sample --design`.")
    add_runs(pl)
    pl.add_argument("--measure", type=plan_measure, action="append", default=None,
                    help="the estimator to plan for: xinfAP (default), infNDCG or statAP; with "
                    "--next-round, design-based ones (repeatable; default ht(AP), ht(nDCG), "
                    "ht(P@10); ppi(M) with --auto-labels)")
    pl.add_argument("--next-round", action=NextRound, default=None, metavar="FILE",
                    help="judging in rounds: the judged round's design.json (round 1 drawn by "
                    "`irsample sample`, or a round written by this option); with --judged "
                    "QRELS (every judgment so far) and --budget or --batch, draw the next "
                    "round unless no interval is flagged; -o is then a folder")
    pl.add_argument("--budget", type=number(int, minimum=1), default=None, metavar="N",
                    help="judgments in all, those already judged included")
    pl.add_argument("--target-halfwidth", type=number(float, above=0), default=None,
                    metavar="W", help="smallest budget whose predicted half-width of a run's "
                    "mean estimate is at most W")
    pl.add_argument("--pilot", type=number(int, minimum=0), default=None, metavar="P",
                    help="pilot size when nothing is judged (default: 5%% of the budget, at "
                    "least 2 per topic; 0: plan from the runs alone)")
    pl.add_argument("--design", metavar="FILE", help="the drawn design.json of what is judged")
    pl.add_argument("--judged", metavar="QRELS", help="judgments of that design's documents")
    pl.add_argument("--batch", type=number(int, minimum=1), default=None, metavar="B",
                    help="plan only B more judgments (sequential mode)")
    pl.add_argument("--depth", type=number(int, minimum=1), default=None,
                    help="pool depth (default: the design file's, else 100)")
    pl.add_argument("--runs-from", metavar="FILE", help="pool only the runs named in FILE")
    pl.add_argument("--max-strata", type=number(int, minimum=1), default=4,
                    help="most strata a topic's pool is cut into, from a grid of rank "
                    "boundaries (default 4)")
    pl.add_argument("--ci", type=number(float, above=0, below=1), default=0.95, metavar="LEVEL",
                    help="confidence level of the predicted half-width (default 0.95; as "
                    "`eval --ci`: -l/--level is a relevance level)")
    add_level(pl)  # with --next-round: the statuses and the allocation read it
    pl.add_argument("--auto-labels", metavar="FILE|fusion", default=None,
                    help="active judging: draw the sample now, favouring documents whose "
                    "automatic label is uncertain (a label file of probabilities, or fusion: "
                    "the runs-only relevance prior); with --next-round: the labels ppi(M) "
                    "reads")
    pl.add_argument("--mix", type=number(float, above=0), default=0.2,
                    help="active judging: the uniform share of the inclusion probabilities "
                    "(default 0.2)")
    add_seed(pl, "active judging and --next-round: the seed of the draw")
    pl.add_argument("-o", dest="plan_out", required=True, metavar="FILE",
                    help="the design file to write (with --auto-labels, also its list to "
                    "judge, FILE's stem + .to_judge.tsv; with --next-round: the folder of the "
                    "next round's design.json and to_judge.tsv)")
    add_progress_option(pl)
    pl.set_defaults(run=cmd_plan, output_files=("plan_out",))


def plan_measure(text: str) -> str:
    """``--measure``: a planner estimator, or a design-based one (``ht(M)``, ``ppi(M)``: judging
    in rounds, checked by :func:`~irsample.commands.plan_rounds.design_based`)."""
    if text in ESTIMATORS or text.startswith(("ht(", "ppi(")):
        return text
    raise argparse.ArgumentTypeError(
        f"invalid choice: {text!r} (choose from {', '.join(ESTIMATORS)}, or ht(M), ppi(M) with "
        "--next-round)")


def cmd_plan(args) -> str:
    from ..design import DesignRecord

    if args.next_round is not None:
        from .plan_rounds import cmd_next_round

        return cmd_next_round(args)
    if args.level != 1:
        raise DesignError("-l: the planner reads relevance at level 1; -l LEVEL is for judging "
                          "in rounds (--next-round)")
    measures = args.measure or ["xinfAP"]
    if len(measures) > 1 or measures[0] not in ESTIMATORS:
        raise DesignError(
            f"--measure {' '.join(measures)}: the planner plans for one of "
            f"{', '.join(ESTIMATORS)}; the design-based estimators (ht(M), ppi(M)) are judged "
            "in rounds: draw round 1 with `irsample sample RUNS --design 2strata@N --seed S -o "
            "r1/`, judge it, then `irsample plan RUNS --next-round r1/design.json --judged "
            "QRELS --budget N -o r2/`")
    args.measure = measures[0]
    if (args.design is None) != (args.judged is None):
        raise DesignError("--design and --judged go together: the drawn design file and the "
                          "judgments of its documents")
    if args.budget is None and args.target_halfwidth is None and (
            args.batch is None or args.design is None):
        raise DesignError("give --budget N, --target-halfwidth W, or both (or --batch B with "
                          "--design and --judged: B more judgments after those)")
    if args.auto_labels is not None:
        return _plan_active(args)
    previous = DesignRecord.read(args.design) if args.design is not None else None
    with Steps(["reading runs", "pooling", "fitting the relevance model", "planning"],
               progress_enabled(args)) as steps:
        steps.next()
        return _plan(args, previous, steps)


def _plan(args, previous, steps) -> str:
    import numpy as np

    from ..design import Pool
    from ..design.planner.plan import budget_for_halfwidth, pilot, plan
    from ..design.planner.relevance_model import fit_relevance
    from ..design.planner.sequential import default_pilot, judged_keys, judged_sample
    from ..io import read_qrels
    from .design import _collection, _pooled_runs

    collection = _collection(args.runs)
    steps.next()
    runs = _pooled_runs(collection, args.runs_from, previous.runs if previous else None,
                        previous.source if previous else None)
    depth = args.depth or (int(previous.depth) if previous and previous.depth else DEFAULT_DEPTH)
    pool = Pool.from_runs(collection, runs, depth=depth)
    gains = args.measure == "infNDCG"
    steps.next()
    lines = [f"pool: depth {depth}, {len(pool.runs)} runs, {len(pool)} documents, "
             f"{collection.n_topics} topics"]
    if previous is None:
        required = ()
        size = args.pilot
        if size is None:
            size = default_pilot(args.budget or len(pool), collection.n_topics)
        if size > 0:
            design = pilot(pool, size)
            lines.append(f"pilot of {size} judgments (strata {', '.join(design.labels)}); "
                         "draw it with `irsample sample --design FILE`, judge it, then plan "
                         "the rest with --design DIR/design.json --judged QRELS")
            return _write(args, design, pool, depth, lines)
        judged = np.zeros(len(pool), bool)
        grade = np.zeros(len(pool), np.int64)
        lines.append("nothing judged: relevance from the runs-only prior")
    else:
        sample = judged_sample(pool, previous, read_qrels(args.judged))
        judged, grade, required = sample.judged, sample.grade, sample.edges[1:]
        lines.append(f"judged: {int(judged.sum())} documents of {previous.source} "
                     f"({int((grade[judged] > 0).sum())} relevant)"
                     + (f"; {sample.extra} other judgments not used" if sample.extra else ""))
    model = fit_relevance(pool, judged, grade, gains=gains)
    steps.next()
    kw = dict(estimator=args.measure, judged=judged, required=required,
              max_strata=args.max_strata, level=args.ci)
    budget = args.budget
    if args.batch is not None:
        budget = min(budget or len(pool), int(judged.sum()) + args.batch)
    if args.target_halfwidth is not None:
        result = budget_for_halfwidth(pool, model, args.target_halfwidth, **kw)
        if budget is not None and result.budget > budget:
            capped = plan(pool, model, budget, **kw)
            lines.append(f"target half-width {args.target_halfwidth:g} needs {result.budget} "
                         f"judgments, more than the budget of {budget}: planned the budget "
                         f"(predicted half-width {capped.halfwidth:.4f})")
            result = capped
        else:
            lines.append(f"target half-width {args.target_halfwidth:g}: {result.budget} "
                         "judgments suffice by the model")
    else:
        result = plan(pool, model, budget, **kw)
    lines.append(result.summary().rstrip("\n"))
    lines.append(interval_note(args.measure))  # the estimator measured to be calibrated
    return _write(args, result.design(before=judged_keys(pool, judged)), pool, depth, lines)


def _plan_active(args) -> str:
    """Active judging (module docstring): draw and write the design at once."""
    import numpy as np

    from ..design import DesignRecord, Pool
    from ..design.planner.relevance_model import fit_relevance
    from ..design.sampling.active import active
    from ..io.labels import read_labels
    from ..io.output import write_atomic
    from .design import _collection, _pooled_runs

    if args.budget is None or args.design is not None or args.target_halfwidth is not None:
        raise DesignError("--auto-labels draws a first sample of --budget N judgments (without "
                          "--design, --judged or --target-halfwidth)")
    collection = _collection(args.runs)
    runs = _pooled_runs(collection, args.runs_from)
    depth = args.depth or DEFAULT_DEPTH
    pool = Pool.from_runs(collection, runs, depth=depth)
    if args.budget > len(pool):
        raise DesignError(f"budget of {args.budget} judgments is larger than the pool "
                          f"({len(pool)} documents)")
    prob = np.full(collection.n_tdi, np.nan)
    if args.auto_labels == "fusion":
        nothing = np.zeros(len(pool), bool)
        prob[pool.tdi] = fit_relevance(pool, nothing, np.zeros(len(pool), np.int64)).prob
        source = "the runs-only relevance prior (fusion)"
    else:
        labels = read_labels(args.auto_labels, collection)
        if labels.kind == "probability":
            prob = labels.value
        source = f"{args.auto_labels} ({labels.kind} labels"
        source += ")" if labels.kind == "probability" else ": no uncertainty, by rank only)"
    design = active(args.budget / len(pool), prob, mix=args.mix, budget=args.budget)
    sample = design.select(pool, rng=args.seed)
    record = DesignRecord.from_sample(pool, design, sample, seed=args.seed)
    listed = to_judge_path(args.plan_out)
    write_atomic(args.plan_out, record.to_json())
    write_atomic(listed, record.to_judge_tsv())
    pi = sample.inclusion
    return (f"pool: depth {depth}, {len(pool.runs)} runs, {len(pool)} documents, "
            f"{collection.n_topics} topics\n"
            f"active judging from {source}: {int(sample.judged.sum())} documents drawn "
            f"(seed {args.seed}), inclusion probabilities {pi.min():.3g} to {pi.max():.3g}, "
            f"uniform share {args.mix:g}\n"
            f"judge the documents of {listed}, then `irsample merge {args.plan_out} QRELS "
            "--format prels` for eval's ppi(M) and ht(M)\n"
            f"wrote {args.plan_out} and {listed}\n")


def to_judge_path(design_path):
    """Where active judging writes its list of documents to judge (``sample``'s
    ``to_judge.tsv``): beside the design file, named after it (``r1.json`` ->
    ``r1.to_judge.tsv``), so that designs written to one folder keep their own lists."""
    from pathlib import Path

    path = Path(design_path)
    return path.with_name(path.stem + ".to_judge.tsv")


def interval_note(estimator: str) -> str:
    from .calibration import interval_note as note

    return (note(estimator) + "\n  (measured on the bundled Vaswani and CACM collections with "
            "the demo's design, not on these runs: the prediction above is this plan's own; "
            "`irsample simulate ci-coverage` measures coverage on a collection with complete "
            "judgments)")


def _write(args, design, pool, depth, lines) -> str:
    from ..design import DesignRecord
    from ..io.output import write_atomic

    col = pool.collection
    record = DesignRecord(design=design, runs=tuple(col.run_names[r] for r in pool.runs),
                          depth=float(depth))
    write_atomic(args.plan_out, record.to_json())
    lines.append(f"wrote {args.plan_out}")
    return "\n".join(lines) + "\n"
