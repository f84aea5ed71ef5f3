"""Paired comparisons of runs from samples: type-I error on pairs whose frame truths are equal.

A test of "run A and run B have the same mean" from a judged sample must reject a true null at
most at its level. Pairs with a known equal truth are built, not searched for: a run and its
**tie-preserving twin** (:func:`add_twins`), the run with its documents permuted, per topic,
within classes that every measure treats alike: the frame's relevant documents of one grade,
its non-relevant documents, and the documents outside the frame. Each rank keeps its grade
under the frame's complete judgments, so every frame measure (AP, nDCG, P@k, ...) of the twin
equals the run's, topic by topic, while a sample sees two different rankings (different
documents at every non-relevant rank): the two runs differ only by sampling error. The twin
of a pooled run is pooled as a real run would be: its ranks count in the frame's best ranks,
so a stratified design samples a document at rank 3 of the twin as a top-stratum document.

:func:`type_one_error`: per design and trial one draw from the frame; every test (name ->
function of the evaluation, returning per pair a p-value) is applied to every (run, twin) pair;
the type-I error is the share of (pair, trial) with p < ``alpha``, with its Monte Carlo
standard error ``se`` with the trials as the independent units (the pairs of a trial share its
draw: :func:`~irsample.stats.intervals.trial_shares`); for a test that gives each pair's
reliability status (the ht comparison, :mod:`irsample.measures.reliability`), ``flagged`` is the
share of (pair, trial) flagged and ``type_one_error_unflagged`` the type-I error among the
others (``unflagged_se`` its standard error). The recipe's ``depth`` (100 by default) is the
pool the twins are built on and its designs draw from (ci-coverage's designs on that pool: a
shallow one as a collection judged to depth 20 has); paper 002's accuracy protocol below stays
on its depth-100 frame.

Tests (:func:`default_tests`): ``t-test(xinfAP)`` (:func:`t_test`), a paired t-test over topics
on the per-topic estimates (the topics as the random sample; the sample's own variance unused),
and the design-based comparison of the two runs' ht(M) means (:func:`ht_test`; the recipe's
``measures``, ht(AP) by default), whose variance comes from the design and the documents the two
runs share in the sample. Paper 002's accuracy protocol classifies decisions against MAP's
t-test on the frame, so its tests stay ht(AP)'s.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from ..design import SamplingFrame, stratified
from ..evaluation import evaluate_collection
from ..model import Collection
from ..stats.intervals import trial_shares
from ..stats.pairs import CLASSES, PairCounts, PairDecisions, classify_decisions
from ..stats.tests import all_pairs, pairwise
from .coverage import STRATEGIES as DESIGNS
from .data import CollectionFiles, load, parse_one
from .registry import Context, local_only, recipe
from .report import Report, Section
from .splits import RandomHalves, derived_seed
from .trial import single_threaded

#: a test: (collection, judgments, first, second) -> (p-value, estimated mean difference) per
#: pair (first[k], second[k]), the difference being run first[k] minus run second[k]; a test
#: that knows whether a pair's interval is reliable adds a third array, True where it is flagged
PairTest = Callable[[Collection, object, np.ndarray, np.ndarray],
                    tuple[np.ndarray, np.ndarray]]


def twin_order(tdi: np.ndarray, grade: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``tdi`` (one ranking) with its documents permuted within classes of equal ``grade``
    (frame grade; -1 for documents outside the frame): rank i keeps grade[i]."""
    out = tdi.copy()
    for g in np.unique(grade):
        at = np.flatnonzero(grade == g)
        out[at] = tdi[at[rng.permutation(len(at))]]
    return out


def add_twins(collection: Collection, frame: SamplingFrame, runs, rng) -> Collection:
    """``collection`` with a tie-preserving twin of each run of ``runs`` appended (named
    ``<run>~twin``; module docstring). Topics, documents and the frame's rows are unchanged."""
    grade = np.full(collection.n_tdi, -1, dtype=np.int64)
    inside = frame.tdi >= 0
    grade[frame.tdi[inside]] = frame.rel[inside]
    n_topics = collection.n_topics
    offsets, tdi, score = [collection.rank_offsets], [collection.rank_tdi], [collection.rank_score]
    end = int(collection.rank_offsets[-1])
    for r in runs:
        for t in range(n_topics):
            a, b = collection.rank_offsets[r * n_topics + t], collection.rank_offsets[
                r * n_topics + t + 1]
            ranking = collection.rank_tdi[a:b]
            tdi.append(twin_order(ranking, grade[ranking], rng).astype(ranking.dtype))
            score.append(collection.rank_score[a:b])
            end += b - a
            offsets.append(np.array([end], dtype=np.int64))
    return dataclasses.replace(
        collection,
        run_names=collection.run_names + tuple(f"{collection.run_names[r]}~twin" for r in runs),
        run_sources=collection.run_sources + tuple("<twin>" for _ in runs),
        rank_offsets=np.concatenate(offsets), rank_tdi=np.concatenate(tdi),
        rank_score=np.concatenate(score),
    )


def t_test(estimator: str = "xinfAP") -> PairTest:
    """Paired t-test over topics on the per-topic ``estimator`` values (p-values per pair)."""
    measure = parse_one(estimator)

    def test(collection, judgments, first, second):
        values = evaluate_collection(collection, judgments, [measure]).values[:, :, 0]
        res = pairwise(values, test="t", pairs=(first, second))
        return np.asarray(res.pvalue), np.asarray(res.estimate)

    test.__name__ = f"t-test({estimator})"
    return test


def pooled_twin_frame(frame: SamplingFrame, twins: Collection, first, second) -> SamplingFrame:
    """``frame``'s rows over the collection with twins, the twin ``second[k]`` of a pooled run
    ``first[k]`` pooled with it: best ranks (hence strata, and the planner's runs) count its
    ranks, as they would for any submitted run."""
    pooled = set(frame.runs)
    runs = tuple(frame.runs) + tuple(int(t) for r, t in zip(first, second) if int(r) in pooled)
    return SamplingFrame.from_arrays(twins, frame.topic, frame.tdi, frame.rel, runs=runs,
                                     source=frame.source)


def type_one_error(files: CollectionFiles, designs: Mapping[str, object],
                   tests: Mapping[str, PairTest], *, trials: int = 100, seed: int = 2024,
                   alpha: float = 0.05, runs=None, depth: float = 100,
                   check: tuple[str, ...] = ("AP", "nDCG", "P@10"), records=None) -> dict:
    """Type-I error of every test under every design (module docstring).

    ``designs``: name -> design drawn from the depth-``depth`` frame of the pooled runs;
    ``runs``: indices of the runs twinned (default all); ``check``: measures whose frame truths
    must be equal for every run and twin (verified; ``max_truth_difference`` in the result).
    Returns ``summary`` (design x test: pairs, rejections, type_one_error, se), ``trials``
    (design x test x trial: rejections) and ``seconds``. With a list ``records``, one table per
    (design, trial, test) is appended to it: a row per (run, twin) pair with the estimated
    difference ``diff`` (run minus twin; its truth is 0), the p-value ``p``, ``rejected``
    (p < ``alpha``), the pair's rule status ``flagged`` (missing for a test that gives none) and
    ``truth``, the run's mean of ``check[0]`` on the frame, which its twin shares.
    """
    start = time.perf_counter()
    data = load(files)
    frame = data.frame(data.info.pooled_runs, depth)
    chosen = list(range(data.collection.n_runs) if runs is None else runs)
    twins = add_twins(data.collection, frame, chosen,
                      np.random.default_rng(derived_seed(seed, "twins")))
    first = np.array(chosen, dtype=np.int64)
    second = data.collection.n_runs + np.arange(len(chosen), dtype=np.int64)
    twin_frame = pooled_twin_frame(frame, twins, first, second)
    frame_truth = evaluate_collection(twins, twin_frame.judgments(),
                                      [parse_one(m) for m in check])
    truth = frame_truth.values
    gap = float(np.max(np.abs(truth[first] - truth[second]))) if len(first) else 0.0
    if gap > 1e-12:
        raise AssertionError(f"twins differ from their runs under the frame truth by {gap}")
    rows = []
    with single_threaded():
        for name, design in designs.items():
            for trial in range(trials):
                rng = np.random.default_rng(derived_seed(seed, "type1", name, trial))
                judgments = design.sample(twin_frame, rng=rng)
                for test_name, test in tests.items():
                    found = test(twins, judgments, first, second)
                    p = np.asarray(found[0], dtype=np.float64)
                    flagged = (np.asarray(found[2], dtype=bool) if len(found) > 2
                               else np.zeros(len(p), dtype=bool))
                    if records is not None:
                        records.append(pd.DataFrame({
                            "design": name, "test": test_name, "trial": trial,
                            "run": [twins.run_names[r] for r in first],
                            "twin": [twins.run_names[r] for r in second],
                            "diff": np.asarray(found[1], dtype=np.float64), "p": p,
                            "rejected": p < alpha,
                            "flagged": pd.array(flagged if len(found) > 2
                                                else [pd.NA] * len(p), dtype="boolean"),
                            "truth": (frame_truth.summary[first, 0] if check
                                      else np.nan)}))
                    rows.append({"design": name, "test": test_name, "trial": trial,
                                 "pairs": len(p), "rejections": int(np.sum(p < alpha)),
                                 "undefined": int(np.sum(~np.isfinite(p))),
                                 "flagged": int(flagged.sum()) if len(found) > 2 else -1,
                                 "unflagged_rejections": int(np.sum((p < alpha) & ~flagged))})
    per_trial = pd.DataFrame(rows)
    per_trial["unflagged_pairs"] = per_trial.pairs - per_trial.flagged
    judged = per_trial.groupby(["design", "test"], sort=False)
    summary = judged[["pairs", "rejections", "undefined"]].sum()
    found = judged.apply(lambda g: pd.Series(trial_shares(g, {
        "type_one_error": ("rejections", "pairs"), "flagged": ("flagged", "pairs"),
        "type_one_error_unflagged": ("unflagged_rejections", "unflagged_pairs")})),
        include_groups=False)
    checked = judged.flagged.min() >= 0  # tests that give a pair's status
    summary["type_one_error"] = found.type_one_error
    summary["se"] = found.type_one_error_se
    summary["flagged"] = found.flagged.where(checked)
    summary["type_one_error_unflagged"] = found.type_one_error_unflagged.where(checked)
    summary["unflagged_se"] = found.type_one_error_unflagged_se.where(checked)
    return {"summary": summary.reset_index(), "trials": per_trial,
            "max_truth_difference": gap, "alpha": alpha,
            "seconds": time.perf_counter() - start}


def describe(summary: pd.DataFrame, alpha: float) -> str:
    """One line per test: its largest type-I error over designs, with its Monte Carlo error
    (``se``: over trials); "above the level" where it exceeds the level by more than two of
    them (it said so of 0.061 +- 0.030 before: 2 rejections in 33 pairs, 3 trials)."""
    known = summary.dropna(subset=["type_one_error"])
    worst = known.loc[known.groupby("test", sort=False).type_one_error.idxmax()]
    return "; ".join(
        f"{row.test}: at most {row.type_one_error:.3f} +- {row.se:.3f}"
        + (" (above the level)" if row.type_one_error - 2 * row.se > alpha else "")
        for row in worst.itertuples(index=False))


def pair_accuracy(files: CollectionFiles, strategies: Mapping[str, object],
                  tests: Mapping[str, PairTest], *, target: str = "AP", trials: int = 50,
                  seed: int = 2014, alpha: float = 0.05, depth: float = 100) -> dict:
    """Paper 002's protocol (:mod:`irsample.experiments.voorhees14`) for any pair tests: per
    trial a random half of the pooled runs builds the depth-``depth`` frame, each strategy
    draws from it with the seed the experiment runner gives that cell (so the draws are the
    ``voorhees14`` recipe's), every test decides every pair of all runs at ``alpha``, and the
    decisions are classified against the paired t-test over topics on the frame truth of
    ``target`` (``accuracy``) and on the complete qrels (``accuracy_qrels``):
    accuracy = (TP + TN) / (TP + TN + miss + false alarm + 2 inversion).

    Returns ``summary`` (strategy x test: mean, min and max accuracy over trials, mean
    accuracy_qrels and mean class counts), ``trials`` and ``seconds``.
    """
    start = time.perf_counter()
    data = load(files)
    info = data.info
    runs = info.all_runs
    first, second = all_pairs(len(runs))
    rows = []
    with single_threaded():
        for trial in range(trials):
            (split,) = RandomHalves().splits(info, trial=trial, seed=seed)
            frame = data.frame(split.pool, depth)
            gold = data.frame_decisions(split.pool, depth, (target,), 0, runs, alpha)
            qrels_gold = data.truth_decisions((target,), 0, runs, alpha)
            for name, design in strategies.items():
                rng = np.random.default_rng(
                    derived_seed(seed, "draw", name, "-", split.name, trial))
                judgments = design.sample(frame, rng=rng)
                for test_name, test in tests.items():
                    p, diff = (np.asarray(a, dtype=np.float64)
                               for a in test(data.collection, judgments, first, second)[:2])
                    with np.errstate(invalid="ignore"):
                        significant = p < alpha
                    sign = np.sign(np.nan_to_num(diff)).astype(np.int8)
                    decided = PairDecisions(first, second, p, significant, sign, alpha, test_name)
                    counts = PairCounts.of(classify_decisions(gold, decided)).as_dict()
                    qrels = PairCounts.of(classify_decisions(qrels_gold, decided)).as_dict()
                    rows.append({"strategy": name, "test": test_name, "trial": trial,
                                 "judged": int(judgments.stratum_sampled.sum()),
                                 **{k: float(v) for k, v in counts.items()},
                                 "accuracy_qrels": float(qrels["accuracy"])})
    per_trial = pd.DataFrame(rows)
    summary = (per_trial.groupby(["strategy", "test"], sort=False)
               .agg(judged=("judged", "mean"), accuracy=("accuracy", "mean"),
                    accuracy_min=("accuracy", "min"), accuracy_max=("accuracy", "max"),
                    accuracy_qrels=("accuracy_qrels", "mean"),
                    **{c: (c, "mean") for c in CLASSES})
               .reset_index())
    return {"summary": summary, "trials": per_trial, "seconds": time.perf_counter() - start}


def default_tests(measures: tuple[str, ...] = ("ht(AP)",)) -> dict[str, PairTest]:
    """The tests compared: the paired t-test over topics on xinfAP's per-topic estimates, and
    for each of ``measures`` (ht(M) names) the design-based comparison of two runs' means
    (:func:`ht_test`) with the topics fixed (``design``: is the difference on these topics
    real?) and as a sample of topics (``topics``: the t-test's question, the design variance
    included)."""
    tests = {"t-test(xinfAP)": t_test("xinfAP")}
    for m in measures:
        tests.update({f"{m} design": ht_test(m, "design"), f"{m} topics": ht_test(m, "topics")})
    return tests


def ht_measures(names: str) -> tuple[str, ...]:
    """The recipe's ``measures`` (comma-separated ht(M) names), checked before any trial: each
    must be a measure ``compare`` takes (:func:`irsample.comparison.comparison_measure`)."""
    from ..comparison import comparison_measure
    from ..errors import MeasureError

    found = tuple(n.strip() for n in str(names).split(",") if n.strip())
    wrong = []
    for name in found:
        try:
            comparison_measure(name)
        except MeasureError:  # every wrong name is reported at once
            wrong.append(name)
    if wrong or not found:
        raise ValueError(f"comparisons: measures must be ht(M) names such as ht(AP) or "
                         f"ht(nDCG); got {', '.join(wrong) or 'none'}")
    return found


def ht_test(measure: str = "ht(AP)", variance: str = "design") -> PairTest:
    """The design-based comparison of two runs' ``measure`` means on one sample
    (:func:`irsample.comparison.compare_collection`: the difference's variance from the shared
    sampled documents; ``variance`` ``design`` or ``topics``): the unadjusted two-sided
    p-value and the difference of every requested pair."""
    from ..comparison import compare_collection

    def test(collection, judgments, first, second):
        table = compare_collection(collection, judgments, measure, correction="none",
                                   variance=variance)
        index = {name: i for i, name in enumerate(collection.run_names)}
        a = table["run_a"].map(index).to_numpy()
        b = table["run_b"].map(index).to_numpy()
        n = collection.n_runs
        p, diff = np.full((n, n), np.nan), np.full((n, n), np.nan)
        flag = np.zeros((n, n), dtype=bool)
        p[a, b] = p[b, a] = table["p"].to_numpy()
        diff[a, b] = table["diff"].to_numpy()
        diff[b, a] = -table["diff"].to_numpy()
        flag[a, b] = flag[b, a] = (table["status"] != "ok").to_numpy()
        return p[first, second], diff[first, second], flag[first, second]

    test.__name__ = f"{measure} {variance}"
    return test


@recipe("comparisons", "paired comparisons of runs: type-I error on tie-preserving twins and "
        "accuracy of significant pairs under paper 002's protocol", "Voorhees, SIGIR 2014 "
        "(paper 002), for the accuracy protocol", trials=50, percents=(10.0, 20.0), alpha=0.05,
        strategies="pool25,1stratum,2strata,3strata", twins=0, designs=DESIGNS, depth=100,
        measures="ht(AP)")
def comparisons(context: Context, p: dict) -> Report:
    from .coverage import design_cells
    from .voorhees14 import STRATEGIES

    local_only(context, "comparisons", "in this process")
    if (context.workers or 1) > 1:  # its trials share the twin collections of one process
        raise ValueError("comparisons runs its trials in this process; --workers "
                         f"{context.workers} would not be used: leave it out")
    # every name is checked before the first trial: a typo costs no run
    names = [n.strip() for n in str(p["strategies"]).split(",") if n.strip()]
    unknown = [n for n in names if n not in STRATEGIES]
    if unknown:
        raise ValueError(f"comparisons: unknown strategies {', '.join(unknown)}; known: "
                         f"{', '.join(STRATEGIES)}")
    measures = ht_measures(p["measures"])
    data = load(context.files)
    depth = p["depth"]
    pool = len(data.frame(data.info.pooled_runs, depth))
    cells = design_cells(pool, p["percents"], which=p["designs"], recipe_name="comparisons",
                         depth=depth)
    n_runs = data.collection.n_runs
    twins = int(p["twins"])
    chosen = None if twins <= 0 or twins >= n_runs else sorted(
        np.random.default_rng(derived_seed(p["seed"], "twinned")).choice(
            n_runs, twins, replace=False).tolist())
    one = type_one_error(context.files, cells, default_tests(measures), trials=p["trials"],
                         seed=p["seed"], alpha=p["alpha"], runs=chosen, depth=depth,
                         records=(records := []))
    sections = [Section(
        "Type-I error on pairs with equal frame truth",
        "Each run against its tie-preserving twin (documents permuted per topic within the "
        "frame's grade classes: every frame measure equal, rankings different); one draw per "
        f"design and trial; rejections at {p['alpha']} over all (run, twin) pairs x trials "
        f"({'all' if chosen is None else len(chosen)} runs twinned), se and unflagged_se = "
        "Monte Carlo standard errors with the trials as the units (a trial's pairs share its "
        "draw). Designs at equal judgments as in ci-coverage, on the depth-"
        f"{depth} pool; the records file holds every (design, trial, test, pair) with its "
        "p-value and status. " + describe(one["summary"], p["alpha"]) + ".", one["summary"])]
    results, seconds = [one["summary"].assign(part="type-I")], one["seconds"]
    if names:  # none: the type-I part alone (paper 002's accuracy protocol is left out)
        # the protocol's reference is MAP's t-test on the frame: its tests stay AP's
        acc = pair_accuracy(context.files, {n: stratified(STRATEGIES[n]) for n in names},
                            default_tests(), trials=p["trials"], seed=p["seed"],
                            alpha=p["alpha"])
        sections.append(Section(
            "Accuracy of significant pairs (paper 002's protocol)",
            "Random halves of the pooled runs build the depth-100 frame; all runs evaluated; "
            "every pair decided by each test at the level, classified against the paired "
            "t-test on the frame truth of MAP (accuracy) and on the complete qrels "
            "(accuracy_qrels).", acc["summary"]))
        results.append(acc["summary"].assign(part="accuracy"))
        seconds += acc["seconds"]
    return Report("comparisons", "Paired comparisons of runs from samples", "paper 002", {},
                  sections, pd.concat(results, ignore_index=True).assign(recipe="comparisons"),
                  {"seconds": seconds}, pd.concat(records, ignore_index=True) if records else None)
