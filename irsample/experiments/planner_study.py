"""Does the design planner beat a fixed design at the same budget, and are its predicted
half-widths right? (:mod:`irsample.design.planner.plan`; paper 000's open problem, paper 002's
protocol.)

1. **Planned vs 2strata** (:func:`run_planner_vs_fixed`). Paper 002's protocol
   (:mod:`~irsample.experiments.voorhees14`): ``trials`` random halves of the pooled runs, the
   half's depth-100 pool sampled, every run evaluated, MAP by xinfAP and nDCG by infNDCG, paired
   t-tests at ``alpha`` on all run pairs against the frame truth (the half's depth-100 pool
   judged completely; ``*_qrels`` columns: against the complete qrels, pool bias included).
   At each budget B, per half:
   ``2strata@B`` (ranks 1-10 judged, 20% of 11-100, scaled to B judgments: irsample's preset)
   and the planner (:class:`~irsample.design.planner.sequential.PlannedDesign`: a pilot of 5% of B,
   then the rest planned for xinfAP, or for infNDCG; optionally in ``batches``). Reported per
   strategy, budget and measure, means over trials: accuracy of the significant pairs, RMS
   error and Kendall's tau against the true (frame) MAP / nDCG.
2. **Predicted vs observed** (:func:`run_halfwidths`). The official pool (the pooled runs,
   depth 100), ``trials`` independent plans and draws per budget, each as a root mean square over
   the pooled runs: the plan's predicted 95% half-width of a run's mean estimate
   (:attr:`~irsample.design.planner.plan.Plan.halfwidth`; mean over 5 plans), the jackknife
   intervals' half-width after judging, and the spread observed across the trials, z x the
   standard deviation of each run's mean estimate over trials (all three at ``level``; z =
   :func:`~irsample.stats.intervals.z`, 1.96 for 0.95).
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pandas as pd

from ..design import parse_design
from ..design.planner.sequential import BatchLog, PlannedDesign, judge_in_batches
from ..stats.intervals import z
from ..stats.random import derived_seed
from .data import CollectionFiles, load
from .runner import Experiment
from .trial import strategy

MEASURES = {"xinfAP": "AP", "infNDCG": "nDCG"}
TARGET_NAMES = {"AP": "MAP", "nDCG": "nDCG"}
BUDGETS = (5000, 10000, 15000)


def _strategies(budget: int, batches: int):
    out = [strategy("2strata", parse_design(f"2strata@{budget}"))]
    for est in MEASURES:
        out.append(strategy(f"plan-{est}", PlannedDesign(budget, est)))
        if batches > 1:
            out.append(strategy(f"plan-{est}-x{batches}", PlannedDesign(budget, est,
                                                                         batches=batches)))
    return out


def run_planner_vs_fixed(files: CollectionFiles, *, budgets=BUDGETS, trials: int = 50,
                         seed: int = 2014, alpha: float = 0.05, batches: int = 1,
                         workers: int = 2, executor: str = "processes",
                         progress: bool = False, scheduler=None) -> dict:
    """Step 1 of the module docstring. Returns ``summary`` (budget x strategy x measure:
    accuracy, rms, kendall_tau, bias, judged and the *_qrels columns; means over trials),
    ``trials`` (per trial) and ``seconds``."""
    start = time.perf_counter()
    tables = []
    for budget in budgets:
        exp = Experiment(collection=files, strategies=_strategies(int(budget), batches),
                         measures=MEASURES, splits=["halves"], trials=trials, seed=seed,
                         ci=None, alpha=alpha)
        res = exp.run(executor=executor, workers=workers, scheduler=scheduler,
                      progress=progress)
        tables.append(res.trials.assign(budget=int(budget)))
    tr = pd.concat(tables, ignore_index=True)
    tr["measure_name"] = tr.target.map(TARGET_NAMES).fillna(tr.target)
    summary = (tr.groupby(["budget", "measure_name", "strategy"], sort=False)
               [["accuracy", "rms", "kendall_tau", "bias", "judged", "accuracy_qrels",
                 "rms_qrels", "kendall_tau_qrels"]].mean())
    return {"summary": summary, "trials": tr, "seconds": time.perf_counter() - start}


def run_halfwidths(files: CollectionFiles, *, budgets=BUDGETS, trials: int = 30,
                   seed: int = 7, level: float = 0.95, workers: int = 2,
                   executor: str = "processes", progress: bool = False,
                   scheduler=None) -> dict:
    """Step 2 of the module docstring. Returns ``halfwidths`` (budget x estimator: predicted,
    jackknife, observed half-widths and their ratios; coverage of the runs' mean over trials by
    the jackknife intervals) and ``seconds``."""
    start = time.perf_counter()
    data = load(files)
    pooled = tuple(data.info.pooled_runs)
    frame = data.frame(pooled, 100)
    rows = []
    for budget in budgets:
        strategies = [strategy(f"plan-{est}", PlannedDesign(int(budget), est))
                      for est in MEASURES]
        exp = Experiment(collection=files, strategies=strategies, measures=MEASURES,
                         splits=["pooled"], trials=trials, seed=seed, ci=level, alpha=None)
        runs = exp.run(executor=executor, workers=workers, scheduler=scheduler,
                       progress=progress).runs
        for est in MEASURES:
            r = runs[(runs.strategy == f"plan-{est}") & (runs.measure == est) & runs.pooled]
            by_run = r.groupby("run").estimate
            observed = float(z(level) * np.sqrt(by_run.var(ddof=1).mean()))
            jackknife = float(np.sqrt((((r.high - r.low) / 2) ** 2).mean()))
            centre = r.run.map(by_run.mean())
            coverage = float(((r.low <= centre) & (centre <= r.high)).mean())
            predicted = _predicted(frame, int(budget), est, seed, min(trials, 5), level)
            rows.append({"budget": int(budget), "estimator": est, "predicted": predicted,
                         "jackknife": jackknife, "observed": observed,
                         "predicted/observed": predicted / observed,
                         "jackknife/observed": jackknife / observed,
                         "jackknife coverage of the mean": coverage})
    table = pd.DataFrame(rows).set_index(["budget", "estimator"])
    return {"halfwidths": table, "seconds": time.perf_counter() - start}


def _predicted(frame, budget: int, estimator: str, seed: int, draws: int, level: float) -> float:
    """Mean over ``draws`` pilots of the plan's predicted half-width at ``level`` (the plan's
    runs: the frame's, i.e. the pooled runs)."""
    values = []
    for k in range(draws):
        log = BatchLog()
        judge_in_batches(frame, lambda rows: frame.rel[rows], budget, estimator=estimator,
                         rng=derived_seed(seed, "pilot", budget, estimator, k), log=log)
        values.append(replace(log.plans[-1], level=level).halfwidth)
    return float(np.mean(values))
