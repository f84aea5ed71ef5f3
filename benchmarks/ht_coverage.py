"""Coverage of ht(M)'s 95% intervals of the mean over topics, against the frame's truth.

The frame is the depth-100 pool of the collection's runs, with grades from the qrels (documents
the qrels do not list are non-relevant); the truth of a run is M on the complete judgments of that
frame (what judging the whole pool would give). Designs (``design_for``): those of
``irsample simulate ci-coverage`` (uniform, 2strata, planned) and top10 (1-10 exhaustive, 11-100
sampled), under a total budget of f x pool size. For
each design, fraction and trial (seeded), every run's mean of ht(M) over topics gets the 95%
interval ``irsample eval --ci 0.95`` prints (``Evaluation.interval``: for the ratios AP and
nDCG on the logit scale, where the normal interval lies inside (0, 1)) and the reliability
rule's status; printed per measure: coverage over runs x trials (``cover``: all intervals;
``unflag``: those the rule leaves unflagged, with ``flagged`` the share it flags), bias and RMS
of the mean against the truth, mean half-width (high - low) / 2, and the predicted standard
error sqrt(sum var_q) / Q against the spread observed over trials, and ``vratio``, the median
over runs of the estimated variance (mean over trials) over the variance of the estimate over
trials (about 1 where the variance is right; its noise falls with the trials, and as the trials
are shared by every run, a median over runs of few trials is not steadier than one run's).
``--spec`` adds designs written as ``irsample sample --design`` reads them (``1-10:1,11-100:0.5``:
ranks 1-10 judged whole, 11-100 at a rate of 0.5), run once each (no fraction).

Usage: python benchmarks/ht_coverage.py [--collection vaswani|trec8|cacm] [--trials 100]
       [--fractions 0.05,0.1,0.2,0.3] [--designs uniform,2strata,planned,top10] [--seed 12]
       [--measures 'ht(AP),ht(nDCG),ht(P@10)'] [--spec SPEC ...]
"""

from __future__ import annotations

import argparse
import glob
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def paths(name: str, shared: Path) -> tuple[Path, list[str]]:
    """The qrels and run files of ``name`` (vaswani, cacm, trec8, covid), or of ``QRELS:RUNS``
    (a qrels file and a folder of runs: a collection of one's own, such as the synthetic runs
    of ``scripts/synthetic_runs.py``)."""
    if ":" in name:
        qrels_file, run_folder = name.split(":", 1)
        runs = sorted(glob.glob(str(Path(run_folder) / "*")))
        if not Path(qrels_file).is_file() or not runs:
            raise SystemExit(f"{name}: expected QRELS:RUNS, a qrels file and a folder of runs")
        return Path(qrels_file), runs
    if name == "vaswani":
        base, qrels = ROOT / "irsample/data/vaswani", "qrels.gz"
    elif name == "trec8":
        base, qrels = shared / "data/trec8-adhoc", "qrels.trec8.adhoc"
    elif name == "covid":
        base, qrels = shared / "data/trec-covid-r5", "qrels.covid-round5.txt"
    elif name == "cacm":
        base, qrels = ROOT / "irsample/data/cacm", "qrels.gz"
    else:
        raise SystemExit(f"unknown collection {name}")
    return base / qrels, sorted(glob.glob(str(base / "runs/*")))


def recipe_cell(name: str, shared: Path, seed: int, percent: float, strategy: str):
    """The ``Setup`` of ``irsample simulate model-assisted`` on collection ``name`` run on one
    design and percentage, with the recipe's defaults (kappas 0.3, 0.5, 0.7; three favoured
    runs' top 20; depth 100): trial t of it draws what trial t of that recipe run draws."""
    from irsample.experiments.data import CollectionFiles
    from irsample.experiments.model_assisted import Setup

    qrels, runs = paths(name, shared)
    pooled = qrels.parent / "run-pooled-flag.txt"
    files = CollectionFiles.of(runs, qrels, pooled=pooled if pooled.exists() else None)
    return Setup(files, seed=seed, percents=(percent,), strategies=(strategy,),
                 kappas=(0.3, 0.5, 0.7), adv_runs=3, adv_depth=20, depth=100.0, mix=0.2)


def design_cell_arguments(parser, root: Path, *, design: str, percent: float,
                          draws: int = 20) -> None:
    """The options of a study of one ``simulate ci-coverage`` design (:func:`design_for`):
    collection, design, percent, draws, seed and the shared data folder."""
    parser.add_argument("--collection", default="cacm")
    parser.add_argument("--design", default=design)
    parser.add_argument("--percent", type=float, default=percent)
    parser.add_argument("--draws", type=int, default=draws)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--shared", type=Path, default=root.parent / "shared")


def recipe_cell_arguments(parser, root: Path) -> None:
    """The options of a one-cell study of the model-assisted recipe (:func:`recipe_cell`):
    collection, strategy, percent, trials, label source, seed and the shared data folder."""
    parser.add_argument("--collection", default="covid",
                        help="vaswani, cacm, trec8, covid, or QRELS:RUNS (a qrels file and a "
                             "folder of runs)")
    parser.add_argument("--strategy", default="uniform")
    parser.add_argument("--percent", type=float, default=30.0)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--labels", default="kappa0.7")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--shared", default=str(root.parent / "shared"))


def importance_study(description: str, *, trials: int):
    """A study of ht(nDCG) over importance draws: its options (collection, fraction, trials,
    seed, shared data folder) parsed, and :func:`importance_ndcg_draws` of them:
    ``(args, truth, draws)``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--collection", default="trec8")
    parser.add_argument("--fraction", type=float, default=0.1)
    parser.add_argument("--trials", type=int, default=trials)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[1].parent
                                                / "shared"))
    args = parser.parse_args()
    return (args, *importance_ndcg_draws(args))


def importance_ndcg_draws(args):
    """The frame truth of nDCG (runs x topics) and, lazily, ``args.trials`` seeded draws of
    statAP's design at ``args.fraction`` on ``args.collection``'s frame, each as (context,
    ht(nDCG)'s estimate)."""
    from irsample.measures.context import EvalContext
    from irsample.measures.ht.estimator import estimate

    col, frame, m, truth = load_with_truth(args.collection, Path(args.shared), "nDCG")
    design = design_for("importance", args.fraction, frame)

    def draws():
        for child in np.random.SeedSequence(args.seed).spawn(args.trials):
            ctx = EvalContext(col, design.sample(frame, rng=np.random.default_rng(child)))
            yield ctx, estimate(ctx, m)

    return truth, draws()


def load(name: str, shared: Path, graded: int = 0, depth: int = 100):
    """Collection and depth-``depth`` frame (100 by default) of ``name`` (vaswani, cacm, trec8,
    covid); ``graded`` > 1: the relevant judgments regraded 1..graded as ``irsample simulate
    --graded`` does (seed 0)."""
    from irsample.design import Pool, SamplingFrame
    from irsample.io import load_qrels, load_runs
    from irsample.model import JUDGED, Collection, Judgments

    qrels, runs = paths(name, shared)
    q = load_qrels(str(qrels))
    if graded > 1:
        from irsample.experiments.data import regraded

        q = regraded(q, graded, 0)
    col = Collection.build(load_runs([str(r) for r in runs]), [q])
    pool = Pool.from_runs(col, list(range(col.n_runs)), depth=depth)
    full = Judgments.from_qrels(col, q)
    rel = np.where(full.state[pool.tdi] == JUDGED, np.maximum(full.grade[pool.tdi], 0), 0)
    judged = full.has_topic[pool.topic]  # topics the qrels judge (CACM leaves some out)
    frame = SamplingFrame.from_arrays(col, pool.topic[judged], pool.tdi[judged], rel[judged],
                                      runs=list(pool.runs))
    return col, frame


def load_with_truth(name: str, shared: Path, measure: str):
    """:func:`load`'s collection and frame, the measure ``measure`` parsed, and its frame truth
    (runs x topics)."""
    from irsample.evaluation import evaluate_collection
    from irsample.measures import parse

    col, frame = load(name, shared)
    (m,) = parse(measure)
    return col, frame, m, evaluate_collection(col, frame.judgments(), [m]).values[:, :, 0]


def design_for(kind: str, fraction: float, frame):
    """The designs of ``irsample simulate ci-coverage`` (irsample/experiments/coverage.py), plus
    ``top10`` (best ranks 1-10 judged completely, 11-100 sampled) at B = f x frame size and
    ``importance`` (statAP's AP-prior sample of f of each topic's pool)."""
    from irsample.design import Budget, Stratified, parse_design, parse_strata, uniform
    from irsample.design.planner.sequential import PlannedDesign

    budget = max(1, int(round(fraction * len(frame))))
    if kind == "uniform":
        return uniform(fraction)
    if kind == "2strata":
        return parse_design(f"1-20:0.8,21-100:0.2@{budget}")
    if kind == "planned":
        return PlannedDesign(budget, "xinfAP")
    if kind == "importance":  # statAP's design (unequal probabilities within a stratum)
        from irsample.design.sampling.importance import importance

        return importance(fraction)
    if kind == "top10":
        return Stratified(parse_strata("1-10:1,11-100:0.2"), Budget(budget))
    raise SystemExit(f"unknown design {kind}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="vaswani")
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--fractions", default="0.05,0.1,0.2,0.3")
    parser.add_argument("--designs", default="uniform,2strata,planned")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--measures", default="ht(AP),ht(nDCG),ht(P@10)")
    parser.add_argument("--spec", action="append", default=[],
                        help="a design as 'irsample sample --design' reads it (repeatable)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from irsample.design import parse_design
    from irsample.evaluation import evaluate_collection
    from irsample.measures import parse_all
    from irsample.stats.intervals import covers

    col, frame = load(args.collection, Path(args.shared))
    measures = parse_all([m.strip() for m in args.measures.split(",")])
    inner = [m.inner for m in measures]
    truth = evaluate_collection(col, frame.judgments(), inner).summary  # (runs, measures)
    print(f"{args.collection}: {col.n_runs} runs, {col.n_topics} topics, frame {len(frame)} "
          f"documents, seed {args.seed}, {args.trials} trials")
    print(f"{'design':9} {'f':>5} {'measure':12} {'judged':>7} {'cover':>6} {'unflag':>6} "
          f"{'flagged':>7} {'bias':>8} {'rms':>7} {'halfw':>7} {'sd_pred':>7} {'sd_obs':>7} "
          f"{'vratio':>6}")
    seeds = np.random.SeedSequence(args.seed)
    fractions = [float(x) for x in args.fractions.split(",")]
    cells = [(kind, f, design_for(kind, f, frame))
             for kind in args.designs.split(",") if kind for f in fractions]
    cells += [(spec, float("nan"), parse_design(spec)) for spec in args.spec]
    for kind, f, design in cells:
        est = np.zeros((args.trials, col.n_runs, len(measures)))
        var, low, high = np.zeros_like(est), np.zeros_like(est), np.zeros_like(est)
        flagged = np.zeros(est.shape, dtype=bool)
        judged = 0
        start = time.perf_counter()
        for t, child in enumerate(seeds.spawn(args.trials)):
            judgments = design.sample(frame, rng=np.random.default_rng(child))
            judged += int(np.count_nonzero(judgments.state == 2))
            e = evaluate_collection(col, judgments, measures, ci=0.95)
            est[t], var[t] = e.summary, e.summary_variance
            low[t], high[t] = e.interval()
            flagged[t] = e.statuses.status == "unreliable"
        ms = (time.perf_counter() - start) / args.trials * 1000
        half = (high - low) / 2
        cover = covers(est, low, high, truth)
        for j, m in enumerate(measures):
            err = est[:, :, j] - truth[:, j]
            kept = cover[:, :, j][~flagged[:, :, j]]
            unflagged = f"{kept.mean():6.3f}" if kept.size else f"{'-':>6}"
            print(
                f"{kind:9} {f:5.2f} {m.name:12} {judged / args.trials / len(frame):7.3f} "
                f"{cover[:, :, j].mean():6.3f} {unflagged} {flagged[:, :, j].mean():7.3f} "
                f"{err.mean():8.4f} "
                f"{np.sqrt((err**2).mean()):7.4f} "
                f"{half[:, :, j].mean():7.4f} {np.sqrt(var[:, :, j].mean()):7.4f} "
                f"{est[:, :, j].std(axis=0).mean():7.4f} "
                f"{np.median(var[:, :, j].mean(axis=0) / est[:, :, j].var(axis=0, ddof=1)):6.2f}"
            )
        print(f"   ({ms:.0f} ms per trial)", flush=True)


if __name__ == "__main__":
    main()
