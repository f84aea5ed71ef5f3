"""Recipe ``ci-coverage``: are the 95% intervals of a run's mean calibrated against the truth?

Yilmaz, Kanoulas & Aslam, SIGIR 2008 (paper 000) §3 check their intervals by coverage and a
Kolmogorov-Smirnov test of the standardised errors. Here, per design and judged percentage, the
experiment runner (:mod:`irsample.experiments.runner`) draws ``trials`` samples of the pooled
runs' depth-100 pool, every run is estimated by every estimator with its 95% interval of the
mean over topics, and each estimate is compared with the **frame truth** (the target measure on
the complete judgments of that pool: what judging all of it would give; the pool's own bias
against the complete qrels is a separate section, :mod:`irsample.experiments.pool_bias`).

Designs (``--param designs=uniform,2strata,planned``, the default: all three), at equal
judgments B = round(f x pool size) for each percentage f:

- ``uniform``: uniform(f), a simple random sample of f of every topic's pool;
- ``2strata``: best rank 1-20 at four times the rate of ranks 21-100 (``1-20:0.8,21-100:0.2``)
  scaled to B judgments (:mod:`irsample.design.sampling.budget`); on a pool of another depth
  D (``--param depth=D``, a shallow pool as a collection judged to depth 10 or 20 has: the
  frame, its truth and every design take it), best ranks 1 to D / 5 against the rest;
- ``planned``: the design planner (:class:`~irsample.design.planner.sequential.PlannedDesign`), a
  pilot of 5% of B (at least 2 per topic), then the rest Neyman-allocated for ``plan_for``
  (xinfAP) with every cell's rate within 1.5 times the judged fraction either way;
- ``top10`` (named only, not a default): best ranks 1 to D / 10 judged whole, the rest sampled
  (``1-10:1,11-100:0.2`` scaled to B judgments, ranks 1-10 kept whole): the ranks judged with
  certainty beside sampled ones of paper 002's 2strata preset and of the rounds, whose ratios
  keep the sample's variance (``measures/ht/anticipated.py``, ``partly_certain``).
- ``importance`` (named only): statAP's design, ``importance(f)``: f of every topic's pool drawn
  with probabilities proportional to the runs' AP prior (unequal within a topic, so ht's
  ratios take the jackknife: ``measures/ht/jackknife.py``); its size is f of each topic's pool
  rather than B spread by a plan;
- ``defensive`` (named only): the same with the prior's weights floored at a tenth of the
  topic's uniform weight (``DEFENSIVE_FLOOR``), ``importance(f,floor=0.1)``: every document's
  pi about a tenth of the uniform rate at least, which keeps a few deep relevant documents
  from carrying the estimate and its variance together (``design/sampling/importance.py``).

Columns, over runs x trials of a cell (strategy, percent, estimator): ``coverage`` = share of
intervals [low, high] holding the truth (nominal 0.95; an estimate with no variance left covers
when it equals the truth); ``flagged`` = share of the run means whose interval the reliability
rule flags (:mod:`irsample.measures.reliability`), ``coverage_unflagged`` and
``coverage_flagged`` = coverage of those not flagged and of those flagged; ``halfwidth`` = mean
(high - low) / 2; ``bias`` = mean (estimate - truth); ``rms`` = sqrt(mean (estimate - truth)^2);
``tau`` = mean over trials of Kendall's tau-b between the runs' estimates and truths;
``sd_ratio`` = predicted SD (half-width / z, or / t on the run rows' ``df``) over the SD observed
across trials, averaged over runs; ``ks_pass`` = share of runs whose standardised errors pass
a KS test against N(0, 1) at 5%; ``coverage_se``, ``coverage_unflagged_se`` and
``flagged_se``: the Monte Carlo standard errors of those three shares, the trials being the
independent units (a trial's runs share its draw, so they miss together and the run means of
a trial count as far fewer than their number; :func:`monte_carlo_errors`); ``se_error_corr``
(:func:`steadiness`) = the correlation over trials of a run's error with its standard error,
averaged over runs: intervals whose variance is right on average still miss when the variance
estimate is unsteady and shrinks with the estimate (benchmarks/interval_studentization.py).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from ..design import parse_design, uniform
from ..design.planner.sequential import PlannedDesign
from ..design.sampling.importance import DEFENSIVE_FLOOR, importance
from ..errors import MeasureError
from ..stats import intervals
from ..stats.intervals import covers, trial_shares
from . import pool_bias
from .data import parse_one
from .registry import PAPER_000, Context, pool_size, recipe, run_experiment
from .report import Report, Section
from .trial import strategy

#: estimator -> target measure; ht(...) are the design-based (Horvitz-Thompson) estimators
ESTIMATORS = {"infAP": "AP", "xinfAP": "AP", "infNDCG": "nDCG",
              "ht(AP)": "AP", "ht(nDCG)": "nDCG", "ht(P@10)": "P@10",
              "ht(nDCG@10)": "nDCG@10"}


def available(names) -> tuple[list[str], list[str]]:
    """(estimators this build knows, estimators it does not), in the given order."""
    known, unknown = [], []
    for name in names:
        try:
            parse_one(name)
            known.append(name)
        except (MeasureError, ValueError):  # an unknown measure name: reported, not run
            unknown.append(name)
    return known, unknown


#: the strategies of the module docstring, in the order they run
STRATEGIES = ("uniform", "2strata", "planned")
#: the strategies ``designs=`` may name beside the default ones (module docstring)
OPTIONAL = ("top10", "importance", "defensive")
#: a run's estimates over the trials whose SD is below this (relative to their size) do not vary
NO_SPREAD = 1e-12


def designs(pool_size: int, percents, plan_for: str = "xinfAP", which=STRATEGIES,
            recipe_name: str = "ci-coverage", depth: int = 100):
    """The strategies of the module docstring named in ``which``, at the judged ``percents``
    (``recipe_name``: the recipe an unknown name is reported for), on the depth-``depth``
    pool (2strata: best ranks 1 to ``depth`` / 5 at four times the rate of the rest)."""
    known = STRATEGIES + OPTIONAL
    unknown = [w for w in which if w not in known]
    if unknown or not which:
        raise ValueError(f"{recipe_name}: designs must be among {', '.join(known)}, not "
                         f"{', '.join(unknown) or 'none'}")
    if depth < 2:
        raise ValueError(f"{recipe_name}: the pool depth must be 2 or more, not {depth}")
    budget = {f"{p:g}": max(1, round(p / 100.0 * pool_size)) for p in percents}
    made = {
        "uniform": strategy("uniform", uniform, settings=[p / 100.0 for p in percents],
                            depth=depth),
        "2strata": strategy("2strata", lambda p: parse_design(
            f"{two_strata(depth)}@{budget[f'{p:g}']}"), settings=list(percents), depth=depth),
        "planned": strategy("planned", lambda p: PlannedDesign(budget[f"{p:g}"], plan_for),
                            settings=list(percents), depth=depth),
        "top10": strategy("top10", lambda p: parse_design(
            f"{judged_top(depth)}@{budget[f'{p:g}']}"), settings=list(percents), depth=depth),
        "importance": strategy("importance", lambda p: importance(min(1.0, p / 100.0)),
                               settings=list(percents), depth=depth),
        "defensive": strategy("defensive", lambda p: importance(
            min(1.0, p / 100.0), floor=DEFENSIVE_FLOOR), settings=list(percents), depth=depth),
    }
    return [made[name] for name in known if name in which]


def design_cells(pool_size: int, percents, which=STRATEGIES, recipe_name: str = "ci-coverage",
                 depth: int = 100) -> dict:
    """:func:`designs` (same arguments but ``plan_for``, xinfAP's) by cell name, as the reports
    write them: "uniform 10%", "2strata 20%", "planned 30%"."""
    return {f"{s.name} {_percent(s.name, label):g}%": design
            for s in designs(pool_size, percents, which=which, recipe_name=recipe_name,
                             depth=depth)
            for label, design in s.designs}


def top_stratum(depth: int) -> int:
    """The last best rank of 2strata's top stratum on the depth-``depth`` pool: a fifth of it
    (20 of 100)."""
    return max(1, int(depth) // 5)


def two_strata(depth: int = 100) -> str:
    """2strata's strata on the depth-``depth`` pool: best ranks 1 to :func:`top_stratum` at
    four times the rate of the rest (``1-20:0.8,21-100:0.2`` at depth 100)."""
    top = top_stratum(depth)
    return f"1-{top}:0.8,{top + 1}-{int(depth)}:0.2"


def judged_top(depth: int = 100) -> str:
    """top10's strata on the depth-``depth`` pool: best ranks 1 to a tenth of it judged whole,
    the rest at rate 0.2 (``1-10:1,11-100:0.2`` at depth 100; the budget scales the rest)."""
    top = max(1, int(depth) // 10)
    return f"1-{top}:1,{top + 1}-{int(depth)}:0.2"


def interval_checks(est, truth, sd, *, level: float = 0.95, ks_alpha: float = 0.05,
                    limits=None) -> dict:
    """Coverage of est -/+ z sd, or of [low, high] where the intervals' ``limits`` are given
    (a logit-scale interval is not symmetric) (arrays [trial, run]; ``covered`` the array,
    ``coverage`` its mean) and the Kolmogorov-Smirnov pass rate: per run, the standardised
    errors (est - truth) / sd over the trials against N(0, 1) at ``ks_alpha`` (paper 000 §3
    reports 90% of the systems passing for infAP)."""
    est, truth, sd = (np.asarray(a, dtype=float) for a in (est, truth, sd))
    half = intervals.z(level) * sd
    low, high = (est - half, est + half) if limits is None else limits
    covered = covers(est, low, high, truth)
    err = (est - truth) / np.where(sd > 0, sd, np.nan)
    passes = []
    for r in range(err.shape[1]):
        x = err[:, r][np.isfinite(err[:, r])]
        if len(x) >= 2:
            passes.append(stats.kstest(x, "norm").pvalue >= ks_alpha)
    return {"covered": covered, "coverage": float(covered.mean()),
            "ks_pass": float(np.mean(passes)) if passes else math.nan,
            **steadiness(est, truth, sd),
            "bias": float(np.mean(est - truth)), "rms": float(np.sqrt(np.mean((est - truth) ** 2))),
            "predicted_sd": float(np.mean(sd)), "observed_sd": float(
                np.mean(est.std(axis=0, ddof=1))) if est.shape[0] > 1 else math.nan}


def steadiness(est, truth, sd) -> dict:
    """``se_error_corr``: the correlation over trials of a run's error est - truth with its sd
    (arrays [trial, run]), averaged over the runs where both vary; NaN where none does. 0 for an
    sd unrelated to the error; positive where low estimates come with small sds, as
    Horvitz-Thompson variances of a skewed population do: then the misses fall below the truth,
    and an sd right on average (``sd_ratio`` near 1) does not mean the intervals cover."""
    err = est - truth
    e, s = err - err.mean(axis=0), sd - sd.mean(axis=0)
    scale = np.sqrt((e * e).sum(axis=0) * (s * s).sum(axis=0))
    varies = (np.ptp(err, axis=0) > 0) & (np.ptp(sd, axis=0) > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = np.where(varies & (scale > 0), (e * s).sum(axis=0) / scale, np.nan)
    return {"se_error_corr": float(np.nanmean(corr)) if np.isfinite(corr).any() else math.nan}


def predicted_sd(g: pd.DataFrame, half: np.ndarray, level: float) -> np.ndarray:
    """The standard errors behind the half-widths ``half`` of ``g``'s intervals (its rows in the
    same order): half / z, or half / t on the row's ``df`` where that is finite (a jackknife
    variance's degrees of freedom, ``Evaluation.summary_df``)."""
    if "df" not in g:
        return half / intervals.z(level)
    return half / intervals.quantile(level, g["df"].to_numpy().reshape(half.shape))


def coverage_table(result, level: float = 0.95) -> pd.DataFrame:
    """The module docstring's columns per strategy x setting x estimator."""
    runs, trials = result.runs, result.trials
    tau = trials.groupby(["strategy", "setting", "measure"], sort=False).kendall_tau.mean()
    judged = trials.groupby(["strategy", "setting"], sort=False).apply(
        lambda g: float((g.judged / g.pool_size).mean()), include_groups=False)
    rows = []
    for (strat, setting, measure), g in runs.groupby(["strategy", "setting", "measure"],
                                                      sort=False):
        est, half, sd, checks, flags = cell_checks(g, level)
        observed = est.std(axis=0, ddof=1) if est.shape[0] > 1 else np.full(est.shape[1], np.nan)
        # runs with no spread (every trial judged their reach whole: estimates equal up to
        # rounding, ~1e-17) have no ratio: NaN, left out of the mean
        varies = observed > NO_SPREAD * np.maximum(1.0, np.abs(est).max(axis=0))
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.where(varies, sd.mean(0) / observed, np.nan)
        ratio = float(np.nanmean(ratio)) if np.isfinite(ratio).any() else math.nan
        rows.append({"strategy": strat, "percent": _percent(strat, setting),
                     "judged_pct": 100 * judged.loc[(strat, setting)],
                     "estimator": measure, "target": g["target"].iloc[0],
                     "coverage": checks["coverage"], **flags,
                     "halfwidth": float(np.mean(half)),
                     "bias": checks["bias"], "rms": checks["rms"],
                     "tau": float(tau.loc[(strat, setting, measure)]),
                     "sd_ratio": ratio, "ks_pass": checks["ks_pass"],
                     "se_error_corr": checks["se_error_corr"]})
    return pd.DataFrame(rows)


def cell_checks(g: pd.DataFrame, level: float = 0.95) -> tuple:
    """The run rows ``g`` of one cell (all its trials x runs) as arrays [trial, run]: the
    estimates, the intervals' half-widths (high - low) / 2, the standard errors behind them
    (:func:`predicted_sd`), :func:`interval_checks` of the limits [low, high] (a logit-scale
    interval is not symmetric) and :func:`flag_columns`; the ``ci-coverage`` and ``designs``
    tables read their columns from it."""
    g = g.sort_values(["trial", "run"])
    shape = (g["trial"].nunique(), -1)
    est, truth, low, high = (g[c].to_numpy().reshape(shape)
                             for c in ("estimate", "truth", "low", "high"))
    half = (high - low) / 2
    sd = predicted_sd(g, half, level)
    checks = interval_checks(est, truth, sd, level=level, limits=(low, high))
    return est, half, sd, checks, flag_columns(g, checks["covered"])


def flag_columns(g: pd.DataFrame, covered: np.ndarray) -> dict:
    """``coverage_unflagged``, ``flagged``, ``coverage_flagged`` and their Monte Carlo standard
    errors (:func:`monte_carlo_errors`) for the run rows ``g`` of one cell, sorted by trial and
    run, whose intervals ``covered`` (array [trial, run]) the truth; rows without a ``flagged``
    column count as unflagged."""
    flagged = (g["flagged"].to_numpy(dtype=bool).reshape(covered.shape) if "flagged" in g
               else np.zeros(covered.shape, dtype=bool))
    return {"coverage_unflagged": _share(covered[~flagged]),
            "flagged": float(flagged.mean()),
            "coverage_flagged": _share(covered[flagged]),
            **monte_carlo_errors(covered, flagged)}


def monte_carlo_errors(covered: np.ndarray, flagged: np.ndarray) -> dict:
    """``coverage_se``, ``coverage_unflagged_se`` and ``flagged_se``: the Monte Carlo standard
    errors of ``coverage``, ``coverage_unflagged`` and ``flagged`` (arrays [trial, run]) with the
    trials as the independent units (:func:`~irsample.stats.intervals.trial_shares`)."""
    counts = {"runs": np.full(covered.shape[0], covered.shape[1]),
              "covered": covered.sum(axis=1), "flagged": flagged.sum(axis=1),
              "covered_unflagged": (covered & ~flagged).sum(axis=1),
              "unflagged": (~flagged).sum(axis=1)}
    found = trial_shares(counts, {"coverage": ("covered", "runs"),
                                  "coverage_unflagged": ("covered_unflagged", "unflagged"),
                                  "flagged": ("flagged", "runs")})
    return {name: value for name, value in found.items() if name.endswith("_se")}


def _share(values: np.ndarray) -> float:
    return float(values.mean()) if values.size else math.nan


def _percent(strat: str, setting: str) -> float:
    value = float(setting)
    return 100 * value if strat == "uniform" else value


@recipe("ci-coverage", "coverage, half-width, bias, RMS and tau of 95% intervals of run means "
        "against the frame truth, for uniform, 2strata and planned designs",
        PAPER_000 + ", §3", trials=100, percents=(5.0, 10.0, 20.0, 30.0),
        estimators="infAP,xinfAP,infNDCG,ht(AP),ht(nDCG),ht(P@10)", plan_for="xinfAP",
        designs=STRATEGIES, depth=100)
def ci_coverage(context: Context, p: dict) -> Report:
    names = [n.strip() for n in str(p["estimators"]).split(",") if n.strip()]
    for name in names:
        if name not in ESTIMATORS:
            raise ValueError(f"ci-coverage: unknown estimator {name!r}; known: "
                             f"{', '.join(ESTIMATORS)}")
    known, missing = available(names)
    if not known:
        raise ValueError(f"ci-coverage: none of {', '.join(names)} is available")
    depth = p["depth"]
    pool = pool_size(context, depth)
    result = run_experiment(context, p, designs(pool, p["percents"], p["plan_for"],
                                                p["designs"], depth=depth),
                            {n: ESTIMATORS[n] for n in known}, ci=0.95, pool_depth=depth)
    table = coverage_table(result)
    cells = table[table.percent >= 10]
    worst = (cells.groupby("estimator").coverage.agg(["min", "max"]) if len(cells) else None)
    summary = ("" if worst is None else "Coverage from 10% judged up (min-max over designs and "
               "percentages): " + "; ".join(f"{e} {r['min']:.2f}-{r['max']:.2f}"
                                            for e, r in worst.iterrows()) + ".")
    text = (f"Depth-{depth} pool of the pooled runs ({pool:,} documents); designs at equal "
            "judgments (module irsample.experiments.coverage): uniform(f); 2strata = ranks "
            f"1-{top_stratum(depth)} at four times the rate of {top_stratum(depth) + 1}-{depth}, "
            "scaled to the budget; planned = the design "
            f"planner for {p['plan_for']} (pilot 5%; rates within 1.5x of f where the ratio "
            "would be biased). Truth: each run's measure on the complete judgments of the "
            "pool (frame truth). Over runs x trials: coverage of the 95% "
            "interval of the mean over topics, mean half-width, bias, RMS error; tau: mean "
            "Kendall tau-b per trial; sd_ratio: predicted / observed SD; se_error_corr: "
            "correlation over trials of a run's error with its standard error (positive: low "
            "estimates get narrow intervals, so coverage can fall short with sd_ratio near 1). "
            + summary)
    if missing:
        text += (f" Not in this build, so not run: {', '.join(missing)}.")
    first = result.runs[result.runs["trial"] == 0]
    middle = f"{p['percents'][len(p['percents']) // 2]:g}"
    shown_design = "2strata" if "2strata" in p["designs"] else p["designs"][0]
    shown = [(shown_design, m) for m in known[:6]]
    panels, marks = [], []
    for (s, setting, m), g in first.groupby(["strategy", "setting", "measure"], sort=False):
        if (s, m) in shown and _percent(s, setting) == float(middle):
            panels.append((f"{s}: {m} vs {g['target'].iloc[0]}", g["truth"].to_numpy(),
                           g["estimate"].to_numpy(), g["low"].to_numpy(), g["high"].to_numpy()))
            marks.append(g["flagged"].to_numpy(dtype=bool) if "flagged" in g else None)

    def draw(path):
        from ..plots import estimate_vs_truth
        return estimate_vs_truth(panels, path, flagged=marks,
                                 title=f"trial 0, {middle}% judged ({shown_design})")

    return Report("ci-coverage", "Confidence intervals of run means: coverage against the "
                  "frame truth", PAPER_000, {}, [
                      Section("Coverage, half-width, bias, RMS, tau", text, table),
                      Section("Estimates vs truth, one trial",
                              "Paper 000 reports ~95% coverage and 90% of the systems passing "
                              "the KS test for infAP (TREC-8, uniform samples).",
                              figure="estimate_vs_truth.png", draw=draw),
                      pool_bias.section(result.runs),
                  ], table.assign(recipe="ci-coverage"), result.execution,
                  result.runs)


__all__ = ["ESTIMATORS", "STRATEGIES", "available", "ci_coverage", "coverage_table", "designs",
           "interval_checks", "steadiness"]
