"""``irsample demo``: judge a pool in rounds until the intervals can be trusted, against the truth.

On the bundled CACM collection (11 runs of real retrieval models, built by
``scripts/make_cacm_runs.py``; 52 topics with complete relevance judgments), the bundled
Vaswani collection (``--collection vaswani``: 93 topics), or on given qrels and runs. CACM is
the default because its story ends where a user's should: in rounds of 10% nothing is flagged
after 7-9 rounds (71.6% of the pool on average) and the intervals printed cover the truth
(0.995, 0.991 and 0.969 of them over 100 seeds: ``benchmarks/demo_coverage.py``); on Vaswani,
where many topics hold one or two relevant documents, something stays flagged until its whole
pool is judged (docs/usage.md, "The demo"):

1. the depth-``--depth`` pool of all runs over the topics the qrels name, judged completely
   (qrels; unlisted documents are non-relevant): the truth, each run's MAP, nDCG and P@10 with
   the whole pool judged (the frame truth: what the sample estimates; relevant documents
   outside the pool are no part of it). A topic the qrels do not name (CACM's 12 queries
   without relevance judgments) is not evaluated, as trec_eval does not: taken as all
   non-relevant its truth was 0 while every estimator imputed it from the other topics, which
   made nearly all the error of CACM's final MAP (+0.072 of +0.076 at 30% judged, seed 2008);
2. round 1: a two-strata design with a budget of ``--fraction`` of the pool, drawn with
   ``--seed``: the top k of every run judged exhaustively, k the deepest whose stratum takes at
   most half the budget (paper 002's 2strata shape), and a uniform sample of ranks k+1 to depth
   with the rest;
3. after each round, every run's ht(AP), ht(nDCG) and ht(P@10) with its 95% interval and the
   interval's status (:mod:`irsample.measures.reliability`): a block says how much is judged and,
   per estimator, how many run means are flagged and why, and what the next round judges; while
   some interval is flagged, another round of the same size
   (:func:`irsample.design.rounds.next_round`: exact inclusion probabilities, allocation
   cross-fitted between two halves of the topics), up to ``--rounds`` rounds;
4. the final estimates per run next to the truth, a ``!`` after a flagged interval; per
   estimator the Kendall tau, RMS error and how many intervals cover the truth (all, and the
   unflagged ones); what is still flagged, why, and which topics to judge further; a figure
   (ht(AP) vs MAP, ht(nDCG) vs nDCG, flagged intervals grey and dashed). ``--strict`` makes a
   flagged final interval an error (nothing printed, no figure, exit 1).

Only estimators with intervals are printed: xinfAP and infNDCG, point estimates of the same
measures, have no status to judge their intervals by in rounds.
"""

from __future__ import annotations

import time
from importlib import resources
from pathlib import Path

from .arguments import add_seed, number
from .demo_text import ESTIMATORS, TRUTH_NAMES
from .notices import Steps, add_progress_option, progress_enabled
from .strict import add_strict, check_strict

#: the targets drawn in the figure, one panel each
PANELS = ("AP", "nDCG")
NAMES = {"vaswani": "Vaswani", "cacm": "CACM"}


def add_parser(sub) -> None:
    p = sub.add_parser(
        "demo",
        help="judge a pool in rounds until the intervals can be trusted, compare with the truth",
        description=__doc__.split("\n\n")[0],
    )
    p.add_argument("--qrels", help="complete qrels (default: the bundled collection's)")
    p.add_argument("runs", nargs="*", help="run files (default: the bundled collection's runs)")
    p.add_argument("--collection", choices=("cacm", "vaswani"), default="cacm",
                   help="bundled collection used without --qrels (default cacm)")
    p.add_argument("--depth", type=number(int, minimum=1), default=100,
                   help="pool depth (default 100)")
    p.add_argument("--fraction", type=float, default=0.1,
                   help="share of the pool judged per round (0.1)")
    p.add_argument("--rounds", type=int, default=10,
                   help="most rounds, fewer when no interval is flagged (10)")
    add_seed(p, "seed of the draws")
    p.add_argument("--plot", default="irsample-demo.png",
                   help="figure path (irsample-demo.png); its suffix sets the format (png, pdf, "
                   "svg, eps, ps, jpg)")
    add_progress_option(p)
    add_strict(p)
    p.set_defaults(run=run, output_files=("plot",))


def bundled(name: str = "vaswani") -> tuple[str, list[str]]:
    """Paths of a bundled collection's qrels and runs (``vaswani`` or ``cacm``)."""
    root = resources.files("irsample") / "data" / name
    runs = sorted(str(p) for p in (root / "runs").iterdir() if p.name.endswith(".run.gz"))
    return str(root / "qrels.gz"), runs


def top_depth(best_rank, share: float, depth: int) -> int:
    """The deepest k (>= 1) whose top-k stratum (pool documents of best rank <= k) holds at most
    ``share`` documents: 2strata's exhaustive first stratum, sized to half the budget."""
    import numpy as np

    sizes = np.array([(best_rank <= k).sum() for k in range(1, depth + 1)])
    fits = np.flatnonzero(sizes <= share)
    return int(fits[-1]) + 1 if len(fits) else 1


def setup(collection, complete, depth: int, fraction: float, source: str = "qrels"):
    """The demo's frame (the depth-``depth`` pool over the topics ``complete`` names, graded by
    it), its round-1 design and the budget of every round; ``source`` names the qrels in an
    error."""
    import numpy as np

    from ..design import Pool, SamplingFrame, parse_design

    pool = Pool.from_runs(collection, depth=depth)
    # the topics the qrels name, as trec_eval evaluates (a topic they do not name, such as
    # CACM's 12 queries without relevance judgments, is no part of the truth's mean)
    named = complete.has_topic[pool.topic]
    if not named.any():
        from ..errors import InputError

        raise InputError("the qrels name none of the topics the runs rank documents for: "
                         "nothing to evaluate", source)
    topic, tdi = pool.topic[named], pool.tdi[named]
    rel = np.maximum(complete.grade[tdi], 0).astype(np.int64)  # unlisted: non-relevant
    frame = SamplingFrame.from_arrays(collection, topic, tdi, rel, source="pool")
    budget = max(1, round(fraction * len(frame)))
    top = top_depth(pool.best_rank[named], budget / 2, depth)
    design = parse_design(f"1-{top}:1,{top + 1}-{depth}:0.5@{budget}" if top < depth
                          else f"1-{depth}:1@{budget}")
    cells = np.unique(topic * 2 + (pool.best_rank[named] > top)).size
    if budget < cells:  # each (topic, stratum) cell needs a judgment in every round
        from ..errors import InputError

        need = np.ceil(100.0 * cells / len(frame)) / 100.0
        raise InputError(f"--fraction {fraction:g} gives each round {budget} judgments, fewer "
                         f"than the {cells} (topic, stratum) cells of the depth-{depth} pool's "
                         f"two-strata design, each of which needs one: give --fraction "
                         f"{min(need, 1.0):g} or more")
    return frame, design, budget, top


def run(args) -> str:
    from ..errors import InputError

    if not 0 < args.fraction <= 1:
        raise InputError(f"--fraction must be in (0, 1], not {args.fraction}")
    if args.rounds < 1:
        raise InputError(f"--rounds must be at least 1, not {args.rounds}")
    if args.runs and not args.qrels:
        raise InputError(f"run files ({args.runs[0]}{', ...' * (len(args.runs) > 1)}) need "
                         "--qrels, the complete judgments they are scored against; without "
                         "both the demo judges a bundled collection (--collection)")
    from ..plots import figure_format

    figure_format(args.plot)  # before any work
    start = time.perf_counter()
    qrels, runs = (args.qrels, args.runs) if args.qrels else bundled(args.collection)
    if not runs:
        raise InputError("no runs given")
    with Steps(["reading runs and qrels", "pooling", "judging in rounds",
                "drawing the figure"], progress_enabled(args)) as steps:
        steps.next()
        return _demo(args, qrels, runs, steps, start)


def _demo(args, qrels, runs, steps, start) -> str:
    import numpy as np

    from ..api import load
    from ..design.rounds import judge_in_rounds
    from ..evaluation import evaluate_collection
    from ..measures import parse
    from ..stats.intervals import covers
    from . import demo_text as text

    collection, complete = load(qrels, runs)
    steps.next()
    frame, design, budget, top = setup(collection, complete, args.depth, args.fraction,
                                       str(qrels))
    targets = list(ESTIMATORS)
    names = [ESTIMATORS[t] for t in targets]
    truth = evaluate_collection(collection, frame.judgments(),
                                [parse(t)[0] for t in targets]).summary
    steps.next()
    history = judge_in_rounds(collection, frame, design, budget, args.rounds, args.seed,
                              [parse(e)[0] for e in names], source="demo")
    last = history[-1]
    ev, flagged = last.evaluation, last.flagged
    order = sorted(zip(*flagged.nonzero()), key=lambda rk: (rk[1], -truth[rk[0], 0]))
    check_strict(args, [(collection.run_names[r], names[k], ev.statuses.reason[r, k])
                        for r, k in order])
    where = NAMES[args.collection] if not args.qrels else "given qrels"
    if budget >= len(frame):
        plan = f"round 1 judges the whole pool ({len(frame):,} documents)"
    else:
        head = "rank 1" if top == 1 else f"ranks 1-{top}"
        plan = (f"round 1 judges {args.fraction:.0%} of the pool ({budget:,} documents) with a "
                f"two-strata design ({head} of every run in full, ranks {top + 1}-"
                f"{args.depth} at random; seed {args.seed}); "
                + (f"later rounds {budget:,} more each, up to {args.rounds} rounds or until no "
                   "interval is flagged" if args.rounds > 1 else "no later round (--rounds 1)"))
    evaluated = int(np.unique(frame.topic).size)
    unnamed = collection.n_topics - evaluated
    left_out = (f" ({unnamed} more in the runs, which the qrels do not name, are not evaluated)"
                if unnamed else "")
    lines = [*text.wrap(f"{where}: {collection.n_runs} runs, {evaluated} topics{left_out}; "
                        f"the depth-{args.depth} pool holds {len(frame):,} documents; truth: "
                        "each run's measure with the whole pool judged", "  "),
             *text.wrap(plan, "  "), ""]
    n = collection.n_runs
    for round_no, step in enumerate(history, 1):
        lines += text.round_block(round_no, step.state, len(frame), names, step.flagged,
                                  step.evaluation.statuses.reason, n, final=step is last)
        if step.plan is not None:
            lines += text.plan_line(frame, step.state, step.plan, round_no + 1, step.top)
        lines.append("")
    state = last.state
    hit = covers(ev.summary, last.low, last.high, truth)
    spent = ("; per round " + ", ".join(f"{s:,}" for s in state.spent)
             if state.rounds > 1 else "")
    lines += [f"final, after {state.rounds} round{'s' if state.rounds > 1 else ''}: "
              f"{state.judged:,} judged ({state.judged / len(frame):.1%} of the pool{spent})",
              *text.table(collection.run_names, truth, ev.summary, last.low, last.high,
                          flagged, targets),
              *(["(! after an interval: flagged unreliable)"] if flagged.any() else []),
              *text.agreement_lines(targets, truth, ev.summary, hit, flagged)]
    if flagged.any():
        from ..measures.context import EvalContext

        ctx = EvalContext(collection, state.judgments(frame, source="demo"))
        expected = parse(names[0])[0].expected_found(ctx)  # the rule's count (rule 2)
        lines += ["", *text.advice(frame, state, collection.topics, names, flagged,
                                   ev.statuses.reason, ev.statuses.causes, hit, expected)]
    else:
        lines.append("nothing is flagged: every interval printed can be trusted by the rule")
    steps.next()
    from ..plots import estimate_vs_truth

    panels, marks = [], []
    for target in PANELS:
        k = targets.index(target)
        panels.append((f"{names[k]} vs {TRUTH_NAMES[target]}", truth[:, k], ev.summary[:, k],
                       last.low[:, k], last.high[:, k]))
        marks.append(flagged[:, k])
    title = (f"{where}: {state.judged / len(frame):.0%} of the depth-{args.depth} pool judged in "
             f"{state.rounds} round{'s' if state.rounds > 1 else ''}, seed {args.seed}")
    path = estimate_vs_truth(panels, Path(args.plot), title=title, flagged=marks)
    lines.append(f"figure: {path}  ({time.perf_counter() - start:.1f} s)")
    return "\n".join(lines) + "\n"
