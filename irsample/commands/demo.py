"""``irsample demo``: judge 10% of a pool, estimate with confidence intervals, compare with truth.

On the bundled Vaswani collection (11 runs of real retrieval models, built by
``scripts/make_vaswani_runs.py``; 93 topics with complete relevance judgments), the bundled
CACM collection (``--collection cacm``), or on given qrels and runs:

1. the depth-``--depth`` pool of all runs, judged completely (qrels; unlisted documents are
   non-relevant): the truth, each run's MAP and nDCG with the whole pool judged (the frame
   truth: what the sample estimates; relevant documents outside the pool are no part of it);
2. a two-strata design with a budget of ``--fraction`` of the pool, drawn with ``--seed``: the
   top k of every run judged exhaustively, k the deepest whose stratum takes at most half the
   budget (paper 002's 2strata shape), and a uniform sample of ranks k+1 to depth with the rest;
3. per measure, every estimator of :data:`ESTIMATORS` per run next to the truth, with a 95%
   interval only for the estimator of :data:`INTERVALS` (the one whose intervals are measured
   to be calibrated; the others are point estimates, and the output says why); the Kendall tau,
   RMS error, the coverage of the printed intervals, and a figure. Each printed interval
   carries its status (:mod:`irsample.measures.reliability`): an unreliable one gets a ``!``
   and a line ``! run estimator: reason`` below the table; ``--strict`` makes it an error
   (nothing printed, no figure, exit 1).
"""

from __future__ import annotations

import time
from importlib import resources
from pathlib import Path

from .arguments import add_seed
from .calibration import EVIDENCE
from .calibration import INTERVALS as CALIBRATED
from .notices import Steps, add_progress_option, progress_enabled
from .strict import add_strict, check_strict

#: estimators shown per target measure (point estimates)
ESTIMATORS = {"AP": ("xinfAP", "ht(AP)"), "nDCG": ("infNDCG", "ht(nDCG)")}
#: per target, the estimator whose 95% intervals are printed, or None: the measured choice of
#: :mod:`irsample.commands.calibration` (coverage by `irsample simulate ci-coverage`)
INTERVALS = CALIBRATED
TRUTH_NAMES = {"AP": "MAP", "nDCG": "nDCG"}


def add_parser(sub) -> None:
    p = sub.add_parser(
        "demo",
        help="judge 10%% of a pool, estimate MAP/nDCG with intervals, compare with the truth",
        description=__doc__.split("\n\n")[0],
    )
    p.add_argument("--qrels", help="complete qrels (default: the bundled collection's)")
    p.add_argument("runs", nargs="*", help="run files (default: the bundled collection's runs)")
    p.add_argument("--collection", choices=("vaswani", "cacm"), default="vaswani",
                   help="bundled collection used without --qrels (default vaswani)")
    p.add_argument("--depth", type=int, default=100, help="pool depth (default 100)")
    p.add_argument("--fraction", type=float, default=0.1, help="share of the pool judged (0.1)")
    add_seed(p, "seed of the draw")
    p.add_argument("--plot", default="irsample-demo.png", help="figure path (irsample-demo.png)")
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


def run(args) -> str:
    from ..errors import InputError

    if not 0 < args.fraction <= 1:
        raise InputError(f"--fraction must be in (0, 1], not {args.fraction}")
    start = time.perf_counter()
    qrels, runs = (args.qrels, args.runs) if args.qrels else bundled(args.collection)
    if not runs:
        raise InputError("no runs given")
    with Steps(["reading runs and qrels", "pooling and sampling", "evaluating",
                "drawing the figure"], progress_enabled(args)) as steps:
        steps.next()
        return _demo(args, qrels, runs, steps, start)


def _demo(args, qrels, runs, steps, start) -> str:
    import numpy as np

    from ..api import load
    from ..design import Pool, SamplingFrame, parse_design
    from ..evaluation import evaluate_collection
    from ..measures import parse
    from ..plots import estimate_vs_truth

    collection, complete = load(qrels, runs)
    steps.next()
    pool = Pool.from_runs(collection, depth=args.depth)
    rel = np.maximum(complete.grade[pool.tdi], 0).astype(np.int64)  # unlisted: non-relevant
    frame = SamplingFrame.from_arrays(collection, pool.topic, pool.tdi, rel, source="pool")
    budget = max(1, round(args.fraction * len(frame)))
    top = top_depth(pool.best_rank, budget / 2, args.depth)
    design = parse_design(f"1-{top}:1,{top + 1}-{args.depth}:0.5@{budget}" if top < args.depth
                          else f"1-{args.depth}:1@{budget}")
    judgments = design.sample(frame, rng=args.seed)
    steps.next()

    targets = list(ESTIMATORS)
    names = [e for t in targets for e in ESTIMATORS[t]]
    truth = evaluate_collection(collection, frame.judgments(), [one(parse, t) for t in targets])
    est = evaluate_collection(collection, judgments, [one(parse, e) for e in names], ci=0.95)
    low, high = est.interval()
    column = {e: k for k, e in enumerate(names)}
    judged = int(judgments.stratum_sampled.sum())
    shown = {column[e] for e in INTERVALS.values() if e is not None and e in column}
    order = np.argsort(-truth.summary[:, 0], kind="stable")  # the table's rows
    flagged = sorted(((r, k) for r, k in est.statuses.unreliable() if k in shown),
                     key=lambda rk: (int(np.flatnonzero(order == rk[0])[0]), rk[1]))
    notes = [(collection.run_names[r], names[k], est.statuses.reason[r, k]) for r, k in flagged]
    check_strict(args, notes)
    table = _table(collection, truth.summary, est.summary, low, high, targets, column,
                   set(flagged))
    lines = [
        f"{collection.n_runs} runs, {collection.n_topics} topics; depth-{args.depth} pool of "
        f"{len(frame)} documents, {judged} judged ({judged / len(frame):.1%}) with "
        f"{design.name}, seed {args.seed}",
        "truth: each run's measure with the whole pool judged",
        "", *table, *(f"! {run} {e}: {reason}" for run, e, reason in notes), "",
    ]
    panels, uncalibrated = [], []
    for t, target in enumerate(targets):
        true = truth.summary[:, t]
        for e in ESTIMATORS[target]:
            k = column[e]
            tau = _tau(est.summary[:, k], true)
            rms = float(np.sqrt(np.mean((est.summary[:, k] - true) ** 2)))
            line = f"{e:8s} vs truth: Kendall tau {tau:.3f}, RMS error {rms:.4f}"
            if INTERVALS.get(target) == e:
                covered = int(((low[:, k] <= true) & (true <= high[:, k])).sum())
                line += f", {covered}/{collection.n_runs} intervals cover the true value"
                panels.append((f"{e} vs {TRUTH_NAMES[target]}", true, est.summary[:, k],
                               low[:, k], high[:, k]))
            else:
                line += " (point estimate only)"
                uncalibrated.append(e)
                if INTERVALS.get(target) is None and e == ESTIMATORS[target][0]:
                    panels.append((f"{e} vs {TRUTH_NAMES[target]}", true, est.summary[:, k],
                                   None, None))
            lines.append(line)
    if uncalibrated:
        lines.append(f"no intervals for {', '.join(uncalibrated)}:")
        for t in targets:
            others = [e for e in ESTIMATORS[t] if e in uncalibrated]
            if others and INTERVALS.get(t) is not None:
                lines.append(f"  {TRUTH_NAMES[t]}: {', '.join(others)} as point estimates, "
                             f"{INTERVALS[t]} with intervals: {EVIDENCE[t]}")
            elif others:
                lines.append(f"  {TRUTH_NAMES[t]}: {EVIDENCE[t]}")
    steps.next()
    if panels:
        path = estimate_vs_truth(
            panels, Path(args.plot), title=f"{judged / len(frame):.0%} of the depth-{args.depth} "
            f"pool judged\n{design.name}")
        lines.append(f"figure: {path}  ({time.perf_counter() - start:.1f} s)")
    return "\n".join(lines) + "\n"


def one(parse, name: str):
    (measure,) = parse(name)
    return measure


def _tau(estimate, truth) -> float:
    from scipy.stats import kendalltau

    return float(kendalltau(estimate, truth).statistic)


def _table(collection, truth, est, low, high, targets, column, flagged=frozenset()) -> list[str]:
    """The per-run table, best true MAP first: per target the truth, then each estimator (with
    its interval when it is the target's interval estimator, and a ``!`` after an interval in
    ``flagged``, (run, estimator column) pairs: unreliable)."""
    import numpy as np

    mark = 1 if flagged else 0  # the marks' column, where some interval is unreliable
    head = f"{'run':22s}"
    for target in targets:
        head += f" {TRUTH_NAMES[target]:>7s}"
        for e in ESTIMATORS[target]:
            head += f" {e:>8s}" + (f" {'95% interval':>{17 + mark}s}"
                                   if INTERVALS.get(target) == e else "")
    out = [head]
    for r in np.argsort(-truth[:, 0], kind="stable"):
        line = f"{collection.run_names[r][:22]:22s}"
        for t, target in enumerate(targets):
            line += f" {truth[r, t]:7.4f}"
            for e in ESTIMATORS[target]:
                k = column[e]
                line += f" {est[r, k]:8.4f}"
                if INTERVALS.get(target) == e:
                    line += f" [{low[r, k]:7.4f}, {high[r, k]:7.4f}]"
                    line += ("!" if (r, k) in flagged else " ") if mark else ""
        out.append(line)
    return out
