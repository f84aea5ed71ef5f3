"""Recipes ``voorhees14``, ``four-strata``, ``residuals`` and ``planner`` for ``irsample simulate``.

Each wraps the experiment function of its module (protocols and sources in their docstrings)
as a :mod:`~irsample.experiments.recipes` recipe: parameters overridable with ``--param``, a
Markdown report with the experiment's tables and figure.
"""

from __future__ import annotations

from . import pool_bias
from .four_strata import run_four_strata
from .planner_study import BUDGETS, run_halfwidths, run_planner_vs_fixed
from .registry import Context, local_only, recipe
from .report import Report, Section
from .residuals import SIZES, run_residuals, separability_figure
from .voorhees14 import r_hat_figure, run_voorhees14

PAPER_002 = ("Voorhees, The effect of sampling strategy on inferred measures, SIGIR 2014 "
             "(paper 002)")
PAPER_000_6 = ("Yilmaz, Kanoulas & Aslam, A simple and efficient sampling method for estimating "
               "AP and NDCG, SIGIR 2008 (paper 000), §6")
PAPER_004 = ("Ravana & Moffat, Score estimation, incomplete judgments, and significance testing "
             "in IR evaluation, AIRS 2010 (paper 004)")


def _execution(context: Context) -> dict:
    """How a recipe built on the experiment runner runs its tasks, as ``run_experiment`` does:
    on the Dask scheduler given (``--scheduler``), else on local processes or in this one."""
    executor = ("dask" if context.scheduler is not None else
                "processes" if context.executor == "processes" else "sequential")
    return {"executor": executor, "scheduler": context.scheduler, "progress": context.progress,
            "workers": context.workers or (2 if executor == "processes" else 1)}


def _flat(table):
    """``table`` with two-level column names joined ("mean MAP"), as a report prints them."""
    table.columns = [" ".join(str(c) for c in col).strip() if isinstance(col, tuple) else col
                     for col in table.columns]
    return table


@recipe("voorhees14", "sampling strategies: accuracy of significant pairs, R^ vs R", PAPER_002,
        trials=50, alpha=0.05)
def voorhees14(context: Context, p: dict) -> Report:
    out = run_voorhees14(context.files, trials=p["trials"], seed=p["seed"], alpha=p["alpha"],
                         **_execution(context))
    accuracy = _flat(out["accuracy"].reset_index())
    r_corr = out["r_correlation"].reset_index()
    judged = out["judged"].reset_index()
    return Report("voorhees14", "Sampling strategies on random halves of the pooled runs "
                  "(paper 002)", PAPER_002, {}, [
                      Section("Judgments per topic", "Mean over trials (paper 002 Table 1; its "
                              "strata rates are not in our copy: the rates are irsample's).",
                              judged),
                      Section("Accuracy of significant pairs",
                              f"Paired t-test at {p['alpha']} over all run pairs, estimate vs "
                              "the frame truth (the half's depth-100 pool judged completely); "
                              "accuracy = (TP + TN) / (all + inversions) (paper 002 Table 2).",
                              accuracy),
                      Section("Accuracy against the complete qrels",
                              "The same pairs against the complete qrels (paper 002's gold "
                              "standard): sampling error and the half pool's bias together.",
                              _flat(out["accuracy_qrels"].reset_index())),
                      Section("R^ vs true R", "Pearson r per trial between R^ and R (relevant "
                              "documents of the half's pool) over the topics (paper 002 §5, "
                              "Fig. 1).", r_corr, "r_hat.png",
                              lambda path: r_hat_figure(out["r_hat"], ("pool25", "2strata"), path)),
                      pool_bias.section(out["runs"]),
                  ], out["trials"].assign(recipe="voorhees14"), {"seconds": out["seconds"]})


@recipe("four-strata", "xinfAP and infNDCG with four strata vs uniform samples", PAPER_000_6,
        trials=10, depths=(1, 2, 3, 5, 10))
def four_strata(context: Context, p: dict) -> Report:
    out = run_four_strata(context.files, trials=p["trials"], seed=p["seed"],
                          depths=tuple(int(k) for k in p["depths"]), **_execution(context))
    return Report("four-strata", "Four strata vs uniform samples (paper 000 §6)", PAPER_000_6,
                  {}, [
                      Section("Designs", "The four strata per depth k (the paper's exact strata "
                              "are lost from our copy; irsample's choice).",
                              out["designs"].reset_index()),
                      Section("Agreement with the truth", "Means over trials; truth: the "
                              "depth-100 pool of the pooled runs judged completely.",
                              out["summary"].reset_index()),
                      pool_bias.section(out["runs"]),
                  ], out["trials"].assign(recipe="four-strata"), {"seconds": out["seconds"]})


@recipe("residuals", "separability of P@10/RBP/SDCG intervals and point estimates", PAPER_004,
        trials=5, order="depth", runs="unpooled", alpha=0.01,
        sizes=SIZES)
def residuals(context: Context, p: dict) -> Report:
    local_only(context, "residuals")
    out = run_residuals(context.files, trials=p["trials"], seed=p["seed"], order=p["order"],
                        runs=p["runs"], alpha=p["alpha"], sizes=tuple(p["sizes"]),
                        workers=context.workers or (2 if context.executor == "processes" else 1))
    summary = _flat(out["separability"].reset_index())
    return Report("residuals", "Separability vs number of judgments (paper 004)", PAPER_004, {}, [
        Section("Separability", f"{out['runs']} runs compared; judgments added in "
                f"{p['order']} order; means over trials.", summary, "separability.png",
                lambda path: separability_figure(out["separability"], path)),
        Section("Recanted decisions", "Of the run pairs significant (p < alpha, same point "
                "estimate) with the first `judgments` judgments (`significant`), those no "
                "longer significant with the first `later` (`recanted`, and their `fraction`); "
                "paper 004 Table 3. Means over trials.", out["recant"].reset_index()),
    ], out["trials"].assign(recipe="residuals"), {"seconds": out["seconds"]})


def check_budgets(files, budgets, trials: int, seed: int, depth: int = 100) -> None:
    """Refuse, before any trial, budgets past the smallest depth-``depth`` pool of the halves
    the trials split the runs into (a budget is spent in a half's pool): the defaults are
    TREC-8's, and on the bundled CACM (halves' pools of about 8,800 documents) the recipe ran
    its trials at 5,000 before 10,000 failed."""
    from .data import load
    from .splits import split_family

    data = load(files)
    halves = split_family("halves")
    smallest = min(len(data.frame(split.pool, depth).rel) for trial in range(trials)
                   for split in halves.splits(data.info, trial=trial, seed=seed))
    over = [b for b in budgets if b > smallest]
    if over:
        raise ValueError(f"planner: budget {over[0]} is larger than the smallest half's depth-"
                         f"{depth} pool ({smallest} documents): give smaller ones, e.g. "
                         f"--param budgets={max(smallest // 8, 1)},{max(smallest // 4, 1)}")


PAPER_000_OPEN = ("Yilmaz, Kanoulas & Aslam, SIGIR 2008 (paper 000), §7: confidence intervals as "
                  "the objective of the sampling design; Voorhees, SIGIR 2014 (paper 002)")


@recipe("planner", "planned designs vs 2strata at equal budgets; predicted vs observed "
        "half-widths", PAPER_000_OPEN, trials=50, alpha=0.05, budgets=BUDGETS, batches=1)
def planner(context: Context, p: dict) -> Report:
    budgets = tuple(int(b) for b in p["budgets"])
    if int(p["batches"]) < 1:  # 0 ran as 1 without a word
        raise ValueError(f"planner: batches must be an integer >= 1, got {p['batches']}")
    check_budgets(context.files, budgets, p["trials"], p["seed"])
    compare = run_planner_vs_fixed(context.files, budgets=budgets, trials=p["trials"],
                                   seed=p["seed"], alpha=p["alpha"], batches=int(p["batches"]),
                                   **_execution(context))
    widths = run_halfwidths(context.files, budgets=budgets, trials=min(p["trials"], 30),
                            seed=p["seed"], **_execution(context))
    return Report(
        "planner",
        "The design planner vs 2strata (paper 002's protocol)",
        PAPER_000_OPEN,
        {},
        [
            Section(
                "Planned vs 2strata",
                "Random halves of the pooled runs; means "
                "over trials of the accuracy of significant pairs (paired t-test "
                f"at {p['alpha']}), RMS error and Kendall tau against the frame truth "
                "(the half's depth-100 pool judged completely); *_qrels: the same "
                "against the complete qrels.",
                compare["summary"].reset_index(),
            ),
            Section(
                "Predicted vs observed half-widths",
                "The official pool; the "
                "plan's predicted 95% half-width of a pooled run's mean, the "
                "jackknife intervals' half-width, and 1.96 x the standard "
                "deviation across trials.",
                widths["halfwidths"].reset_index(),
            ),
        ],
        compare["trials"].assign(recipe="planner"),
        {"seconds": compare["seconds"] + widths["seconds"]},
    )
