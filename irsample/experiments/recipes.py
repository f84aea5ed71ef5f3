"""Recipes: the seed papers' experiments, rerun on a collection with complete judgments.

Each recipe is a function of a :class:`Context` (collection files, trials, seed, executor) and
its parameters (defaults overridable, e.g. ``irsample simulate infap-random --param
percents=1,5,10``) returning a :class:`~irsample.experiments.report.Report`. The simulations run
on the experiment runner (:class:`~irsample.experiments.Experiment`, pool = the originally pooled
runs, every run evaluated, depth-100 pool), so every draw has its own recorded seed.

"True MAP" below is the frame truth: MAP on the complete judgments of the depth-100 pool the
samples are drawn from (what judging the whole pool gives); each report adds the pool's own
bias against the complete qrels as a separate section (:mod:`~irsample.experiments.pool_bias`).
On TREC-8 the two agree (its qrels are that pool); on Vaswani and CACM they do not.

- ``infap-random``: infAP on uniform random samples of the pool (Yilmaz & Aslam, "Estimating
  average precision when judgments are incomplete", KAIS/IR 2008, §5.1, Figs. 16 and 18).
- ``depth-pools``: infAP and induced AP on depth-k pools (same paper, §5.2, Fig. 23).
- ``xinfap-terabyte``: xinfAP and infAP on depth-k + equal-size random samples (Yilmaz,
  Kanoulas & Aslam, "A simple and efficient sampling method for estimating AP and NDCG",
  SIGIR 2008, §4, Figs. 3-4).
- ``ci-coverage``: coverage, half-width, bias, RMS and tau of the 95% intervals of run means
  (same SIGIR 2008 paper, §3; :mod:`~irsample.experiments.coverage`; also
  ``benchmarks/ci_coverage.py``).
- ``designs``: the same checks for any designs given by name (``--param
  designs="2strata;systematic(1-10:1,11-100:0.2)"``), every registered design kind included.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..design import parse_design, terabyte, uniform
from ..design.sampling.depth import DepthPool
from . import pool_bias
from .coverage import ESTIMATORS, cell_checks
from .data import parse_one
from .registry import (
    PAPER_000,
    PAPER_001,
    RECIPES,
    Context,
    load_recipes,
    pool_size,
    recipe,
    run_experiment,
    run_recipe,
)
from .report import Report, Section
from .runner import ExperimentResult
from .trial import strategy

#: the estimator families whose truth is AP (infap-random sets them against MAP)
AP_ESTIMATORS = ("infAP", "xinfAP", "statAP", "subAP")
#: why the smallest uniform samples err most (infap-random's report)
NO_RELEVANT_NOTE = (
    "On a topic whose sample holds no judged relevant document trec_eval's infAP is 0, as is "
    "every estimator here that divides by the relevant documents found, so at the smallest "
    "percentages, where many topics' samples miss all their relevant documents, the error is "
    "mostly that downward bias.")


def summarise(result: ExperimentResult, pool_size: int | None = None) -> pd.DataFrame:
    """Per strategy x setting x measure, means over trials: % of the pool judged, Kendall's
    tau, RMS error and Pearson's rho between the runs' estimated and true means."""
    runs = result.runs
    keys = ["strategy", "setting", "measure", "trial"]
    rho = (runs.groupby(keys, sort=False)[["estimate", "truth"]]
           .apply(lambda g: float(np.corrcoef(g["estimate"], g["truth"])[0, 1])
                  if len(g) > 1 else math.nan)
           .rename("rho").reset_index())
    trials = result.trials.merge(rho, on=keys, how="left")
    size = trials["pool_size"] if pool_size is None else pool_size
    trials = trials.assign(judged_pct=100.0 * trials["judged"] / size)
    out = (trials.groupby(keys[:3], sort=False)
           .agg(judged_pct=("judged_pct", "mean"), tau=("kendall_tau", "mean"),
                tau_sd=("kendall_tau", "std"), rms=("rms", "mean"), rho=("rho", "mean"),
                trials=("trial", "nunique"))
           .reset_index())
    return out


def _lines(table: pd.DataFrame, column: str, x: str = "judged_pct", by: str = "measure"):
    return {str(k): (g[x].to_numpy(), g[column].to_numpy())
            for k, g in table.groupby(by, sort=False)}


@recipe("infap-random", "infAP on uniform random samples of the depth-100 pool vs true MAP",
        PAPER_001 + ", §5.1, Figs. 16 and 18", trials=10, estimator="infAP",
        percents=(1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0))
def infap_random(context: Context, p: dict) -> Report:
    name = parse_one(p["estimator"]).name
    if not (name.split("(")[0] in AP_ESTIMATORS or name.endswith("(AP)")):
        raise ValueError(f"infap-random: estimator {p['estimator']} does not estimate AP, and "
                         "each run's estimate is set against its true MAP; give an AP "
                         "estimator (infAP, infAP(c=1.5), xinfAP, statAP, subAP, ht(AP), ...)")
    fractions = [x / 100.0 for x in p["percents"]]
    result = run_experiment(context, p, [strategy("uniform", uniform, settings=fractions)],
                  {p["estimator"]: "AP"})
    table = summarise(result)
    shown = table[["setting", "judged_pct", "tau", "tau_sd", "rms", "rho"]].copy()
    shown.insert(0, "percent", [100 * float(s) for s in shown.pop("setting")])
    key = shown[shown["percent"].isin([1.0, 5.0, 10.0])][["percent", "rms"]]
    text = (f"Uniform random samples of each topic's depth-100 pool (pooled runs); "
            f"{p['estimator']} of every run against its true MAP (the frame truth; infAP: "
            "trec_eval's, smoothing c = 2; `--param estimator=infAP(c=1.5)` for the paper's other "
            "choice). Means over trials.")
    points = ", ".join(f"{r.percent:g}%: {r.rms:.4f}" for r in key.itertuples()) or "-"
    return Report("infap-random", "infAP on random samples of the pool (paper 001 §5.1)",
                  PAPER_001, {}, [
                      Section("Agreement with true MAP", text, shown, "infap_random.png",
                              lambda path: _figure(table, path, ("tau", "rms", "rho"))),
                      Section(f"{p['estimator']} RMS error at 1%, 5%, 10%",
                              f"Ours: {points}. Paper 001 (§5, Fig. 23) reports an infAP RMS "
                              "error <= 0.05 even at 1% judged; its other values are read off "
                              "figures only. " + NO_RELEVANT_NOTE),
                      pool_bias.section(result.runs),
                  ], table.assign(recipe="infap-random"), result.execution,
                  result.runs)


def _figure(table, path, columns, references=None, by="measure"):
    from ..plots import metric_lines

    labels = {"tau": "Kendall's tau", "rms": "RMS error", "rho": "Pearson's rho"}
    return metric_lines([(labels[c], _lines(table, c, by=by)) for c in columns], path,
                        references=references)


@recipe("depth-pools", "infAP and induced AP on depth-k pools vs true MAP",
        PAPER_001 + ", §5.2, Fig. 23", trials=1, depths=(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 50))
def depth_pools(context: Context, p: dict) -> Report:
    designs = [strategy(f"depth-{k}", DepthPool(int(k)), depth=100)
               for k in p["depths"]]
    result = run_experiment(context, p, designs, {"infAP": "AP", "induced(AP)": "AP"})
    table = summarise(result).assign(depth=lambda t: t["strategy"].str[6:].astype(int))
    shown = table.pivot_table(index=["depth"], columns="measure",
                              values=["judged_pct", "tau", "rms"], sort=False)
    shown.columns = [f"{m} {v}" if v != "judged_pct" else "judged_pct" for v, m in shown.columns]
    shown = shown.loc[:, ~shown.columns.duplicated()].reset_index()
    four = table[table["depth"] == 4].set_index("measure")["tau"]
    ours = (f"ours infAP {four.get('infAP', math.nan):.4f}, induced AP "
            f"{four.get('induced(AP)', math.nan):.4f}" if len(four) else "depth 4 not run")
    compare = ("Paper 001 (TREC-8, depth-4 pool): Kendall's tau infAP 0.9002, induced AP "
               f"0.8992; {ours}.")
    text = ("Depth-k pools of the pooled runs, seen as samples of the depth-100 pool: documents "
            "ranked 1..k by some pooled run are judged, the rest of the depth-100 pool is "
            "pooled but unjudged (infAP estimates them; induced AP drops them).")
    return Report("depth-pools", "infAP and induced AP on depth-k pools (paper 001 §5.2)",
                  PAPER_001, {}, [
                      Section("Agreement with true MAP", text, shown, "depth_pools.png",
                              lambda path: _figure(table, path, ("tau", "rms"))),
                      Section("Paper vs ours", compare),
                      pool_bias.section(result.runs),
                  ], table.assign(recipe="depth-pools"), result.execution,
                  result.runs)


@recipe("xinfap-terabyte", "xinfAP and infAP on depth-k + equal random samples vs true MAP",
        PAPER_000 + ", §4, Figs. 3-4", trials=10,
        depths=(1, 2, 3, 4, 5, 10, 20, 30, 40, 50))
def xinfap_terabyte(context: Context, p: dict) -> Report:
    designs = [strategy("terabyte", terabyte, settings=list(p["depths"]))]
    result = run_experiment(context, p, designs, {"xinfAP": "AP", "infAP": "AP"})
    table = summarise(result, pool_size(context))
    table = table.assign(depth=table["setting"].astype(int))
    shown = table.pivot_table(index="depth", columns="measure", values=["tau", "rms", "rho"],
                              sort=False)
    shown.columns = [f"{m} {v}" for v, m in shown.columns]
    judged = table.groupby("depth", sort=False)["judged_pct"].mean()
    shown = shown.reset_index()
    shown.insert(1, "judged_pct", judged.to_numpy())
    text = ("terabyte(k): the depth-k pool of the pooled runs plus an equally large uniform "
            "sample of the rest of the depth-100 pool (TREC 2006 Terabyte). xinfAP uses the two "
            "strata; infAP treats the same judged set as one random sample. % judged of the "
            "depth-100 pool; means over trials.")
    compare = ("Paper 000 (TREC-8) plots judged points at 3.5%, 12.7% and 23.1% of the pool "
               "with xinfAP ahead of infAP in tau, RMS and rho. Ours: " + ", ".join(
                   f"k={d}: {j:.1f}%" for d, j in judged.items()) + ".")
    return Report("xinfap-terabyte", "xinfAP vs infAP on Terabyte-style samples (paper 000 §4)",
                  PAPER_000, {}, [
                      Section("Agreement with true MAP", text, shown, "xinfap_terabyte.png",
                              lambda path: _figure(table, path, ("tau", "rms", "rho"))),
                      Section("Paper vs ours", compare),
                      pool_bias.section(result.runs),
                  ], table.assign(recipe="xinfap-terabyte"), result.execution,
                  result.runs)




def design_table(result: ExperimentResult, level: float = 0.95) -> pd.DataFrame:
    """Per design x estimator, over runs x trials: % of the pool judged, coverage of the
    intervals, the share of run means the reliability rule flags and the coverage of the
    unflagged and of the flagged ones (:func:`~irsample.experiments.coverage.cell_checks`, as
    ``ci-coverage``'s table),
    mean half-width, bias, RMS error, mean Kendall tau per trial, and ``sd_ratio`` =
    predicted SD (half-width / z, or / t on the interval's degrees of freedom) over the SD
    observed across trials (means over runs)."""
    rows = []
    for (name, measure), g in result.runs.groupby(["strategy", "measure"], sort=False):
        _, half, _, checks, flags = cell_checks(g, level)
        t = result.trials[(result.trials["strategy"] == name)
                          & (result.trials["measure"] == measure)]
        rows.append({"design": name, "estimator": measure,
                     "judged_pct": float(100 * (t["judged"] / t["pool_size"]).mean()),
                     "coverage": checks["coverage"], **flags,
                     "halfwidth": float(np.nanmean(half)),
                     "bias": checks["bias"], "rms": checks["rms"],
                     "tau": float(t["kendall_tau"].mean()),
                     "sd_ratio": checks["predicted_sd"] / checks["observed_sd"]
                     if checks["observed_sd"] > 0 else math.nan})  # nan: no spread
    return pd.DataFrame(rows)


@recipe("designs", "any designs by name (e.g. systematic(1-10:1,11-100:0.2)): coverage, "
        "half-width, bias, RMS and tau of the 95% intervals of run means vs the frame truth",
        PAPER_000 + ", §3 (the coverage protocol)", trials=20,
        designs="2strata;systematic(1-10:1,11-100:0.2)", estimators="ht(AP),xinfAP")
def named_designs(context: Context, p: dict) -> Report:
    names = [n.strip() for n in str(p["designs"]).split(";") if n.strip()]
    estimators = [e.strip() for e in str(p["estimators"]).split(",") if e.strip()]
    unknown = [e for e in estimators if e not in ESTIMATORS]
    if not names or not estimators or unknown:
        raise ValueError(f"designs: give designs=NAME;NAME... and estimators among "
                         f"{', '.join(ESTIMATORS)} (unknown: {', '.join(unknown) or '-'})")
    designs = [parse_design(name) for name in names]
    strategies = [strategy(d.name, d) for d in designs]
    result = run_experiment(context, p, strategies, {e: ESTIMATORS[e] for e in estimators},
                            ci=0.95)
    table = design_table(result)
    text = ("Designs by name (irsample.design.sampling.named: any registered kind, presets, "
            "strata specs), drawn over the pooled runs' pool (depth: the design's own, else "
            "100); truth: each run's measure on the complete judgments of that pool. Over "
            "runs x trials: coverage of the 95% interval of the mean over topics (of all of "
            "them, of those the reliability rule leaves unflagged and of those it flags, with "
            "the flagged share), mean half-width, bias, RMS error; tau: mean Kendall tau-b per "
            "trial; sd_ratio: predicted / observed SD of the estimates.")
    return Report("designs", "Named designs: intervals of run means against the frame truth",
                  PAPER_000, {}, [
                      Section("Coverage, half-width, bias, RMS, tau", text, table),
                      pool_bias.section(result.runs),
                  ], table.assign(recipe="designs"), result.execution,
                  result.runs)


load_recipes()  # the other recipe modules too: importing this module gives every recipe

__all__ = ["RECIPES", "Context", "run_recipe", "summarise"]
