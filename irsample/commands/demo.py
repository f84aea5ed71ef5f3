"""``irsample demo``: judge 10% of a pool, estimate with confidence intervals, compare with truth.

On the bundled Vaswani collection (11 runs of real retrieval models, built by
``scripts/make_vaswani_runs.py``; 93 topics with complete relevance judgments), or on given
qrels and runs:

1. the depth-``--depth`` pool of all runs, judged completely (qrels; unlisted documents are
   non-relevant): the truth, MAP and nDCG of every run;
2. a two-strata design with a budget of ``--fraction`` of the pool, drawn with ``--seed``: the
   top k of every run judged exhaustively, k the deepest whose stratum takes at most half the
   budget (paper 002's 2strata shape), and a uniform sample of ranks k+1 to depth with the rest;
3. xinfAP and infNDCG with 95% intervals from that sample, per run, next to the truth; the
   Kendall tau of the estimated ranking, the coverage of the intervals, and a figure.
"""

from __future__ import annotations

import time
from importlib import resources
from pathlib import Path

from .notices import Steps, add_progress_option, progress_enabled


def add_parser(sub) -> None:
    p = sub.add_parser(
        "demo",
        help="judge 10%% of a pool, estimate MAP/nDCG with intervals, compare with the truth",
        description=__doc__.split("\n\n")[0],
    )
    p.add_argument("--qrels", help="complete qrels (default: the bundled Vaswani qrels)")
    p.add_argument("runs", nargs="*", help="run files (default: the bundled Vaswani runs)")
    p.add_argument("--depth", type=int, default=100, help="pool depth (default 100)")
    p.add_argument("--fraction", type=float, default=0.1, help="share of the pool judged (0.1)")
    p.add_argument("--seed", type=int, default=2008)
    p.add_argument("--plot", default="irsample-demo.png", help="figure path (irsample-demo.png)")
    add_progress_option(p)
    p.set_defaults(run=run, output_files=("plot",))


def bundled() -> tuple[str, list[str]]:
    """Paths of the bundled Vaswani qrels and runs."""
    root = resources.files("irsample") / "data" / "vaswani"
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
    qrels, runs = (args.qrels, args.runs) if args.qrels else bundled()
    if not runs:
        raise InputError("no runs given")
    with Steps(["reading runs and qrels", "pooling and sampling", "evaluating",
                "drawing the figure"], progress_enabled(args)) as steps:
        steps.next()
        return _demo(args, qrels, runs, steps, start)


def _demo(args, qrels, runs, steps, start) -> str:
    import numpy as np
    from scipy.stats import kendalltau

    from ..api import load
    from ..design import Pool, SamplingFrame, parse_design
    from ..evaluation import evaluate_collection
    from ..measures import parse_all
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

    truth = evaluate_collection(collection, frame.judgments(), parse_all(["map", "ndcg"]))
    est = evaluate_collection(collection, judgments, parse_all(["xinfAP", "infNDCG"]), ci=0.95)
    low, high = est.interval()
    true_map, true_ndcg = truth.summary[:, 0], truth.summary[:, 1]
    judged = int(judgments.stratum_sampled.sum())

    lines = [
        f"{collection.n_runs} runs, {collection.n_topics} topics; depth-{args.depth} pool of "
        f"{len(frame)} documents, {judged} judged ({judged / len(frame):.1%}) with "
        f"{design.name}, seed {args.seed}",
        "",
        f"{'run':22s} {'MAP':>7s} {'xinfAP':>7s} {'95% interval':>17s}   "
        f"{'nDCG':>7s} {'infNDCG':>7s} {'95% interval':>17s}",
    ]
    for r in np.argsort(-true_map):
        lines.append(
            f"{collection.run_names[r][:22]:22s} {true_map[r]:7.4f} {est.summary[r, 0]:7.4f} "
            f"[{low[r, 0]:7.4f}, {high[r, 0]:7.4f}]   {true_ndcg[r]:7.4f} {est.summary[r, 1]:7.4f} "
            f"[{low[r, 1]:7.4f}, {high[r, 1]:7.4f}]"
        )
    lines.append("")
    steps.next()
    for j, (name, true) in enumerate((("xinfAP", true_map), ("infNDCG", true_ndcg))):
        covered = int(((low[:, j] <= true) & (true <= high[:, j])).sum())
        tau = kendalltau(est.summary[:, j], true).statistic
        rms = float(np.sqrt(np.mean((est.summary[:, j] - true) ** 2)))
        lines.append(
            f"{name:8s} vs truth: Kendall tau {tau:.3f}, RMS error {rms:.4f}, "
            f"{covered}/{collection.n_runs} intervals cover the true value"
        )
    path = estimate_vs_truth(
        [
            ("xinfAP vs MAP", true_map, est.summary[:, 0], low[:, 0], high[:, 0]),
            ("infNDCG vs nDCG", true_ndcg, est.summary[:, 1], low[:, 1], high[:, 1]),
        ],
        Path(args.plot),
        title=f"{judged / len(frame):.0%} of the depth-{args.depth} pool judged ({design.name})",
    )
    lines.append(f"figure: {path}  ({time.perf_counter() - start:.1f} s)")
    return "\n".join(lines) + "\n"
