"""Recipe ``rounds``: judging in rounds until no interval is flagged, against the truth.

Per trial and first design (``uniform`` or ``2strata``, each judging ``percent`` of the depth-100
pool of the pooled runs, or of the depth-``depth`` one), round 1 is drawn, every run is
estimated by each of ``estimators`` with its 95% interval and its reliability status
(:mod:`irsample.measures.reliability`); while some interval is flagged, another round of the
same size is judged
(:func:`irsample.design.rounds.next_round`: cross-fitted allocation, exact inclusion
probabilities), up to ``max_rounds`` rounds or the whole pool. The final estimates are compared
with the frame truth (the measure on the complete judgments of the pool), and so are those of a
fixed ``2strata`` design drawn at once with the same total number of judgments.

Columns (per first design, estimator and ``when``: ``round 1``, ``final``, ``fixed`` = the fixed
design at the final total): ``judged_pct`` (mean share of the pool judged), ``rounds`` (mean;
1 for ``round 1`` and ``fixed``), ``flagged`` (share of run means flagged), ``coverage`` (all
intervals), ``coverage_unflagged`` (the unflagged ones; NaN where none), ``coverage_flagged``,
``bias``, ``halfwidth``; ``nothing_flagged`` = share of trials with no run mean of any
estimator flagged at that point (``final``: the rounds stopped clean; ``fixed``: the fixed
design's one draw); ``top_judged`` = share of trials whose rounds judged the first best-rank
bands whole (``design.rounds``, "Top bands judged whole"; 0 for ``round 1`` and ``fixed``);
``coverage_se`` and ``coverage_unflagged_se``, the Monte Carlo standard errors of the two
coverages with the trials as the independent units
(:func:`~irsample.stats.intervals.trial_shares`).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from ..design import stratified, uniform
from ..design.rounds import judge_in_rounds, top_judged_whole
from ..design.sampling.budget import Budget
from ..evaluation import evaluate_collection
from ..measures import parse
from ..stats.intervals import covers, trial_shares
from .coverage import two_strata
from .data import load
from .executors import run_trial_chunks
from .model_assisted import build_frame
from .registry import Context, local_only, recipe
from .report import Report, Section

SOURCES = ("Cochran, Sampling Techniques (1977) §5.5 (Neyman allocation); Chernozhukov et al., "
           "Econometrics Journal 2018 (cross-fitting)")
TARGETS = {"ht(AP)": "AP", "ht(nDCG)": "nDCG", "ht(P@10)": "P@10", "ppi(AP)": "AP",
           "ppi(nDCG)": "nDCG"}
#: the first designs, in the order that numbers them in each trial's seed (:func:`trial_rng`)
DESIGNS = ("uniform", "2strata")


def trial_rng(seed: int, trial: int, design: int) -> np.random.Generator:
    """The generator of trial ``trial`` with the ``design``-th first design: it draws round 1,
    every later round and then the fixed design of the same total."""
    return np.random.default_rng([seed, trial, design])


def first_design(name: str, budget: int, share: float, depth: int = 100):
    """Round 1's design ``name`` judging ``budget`` documents (``share`` of the depth-``depth``
    pool)."""
    if name == "uniform":
        return uniform(min(1.0, share))
    if name == "2strata":
        return stratified(two_strata(depth), budget=Budget(budget))
    raise ValueError(f"rounds: the first design is uniform or 2strata, not {name!r}")


def outcome(ev, low, high, truth) -> dict:
    """Per (run, measure) of an evaluation with 95% intervals: estimate, limits, error,
    covered, flagged and half-width."""
    return {"estimate": ev.summary, "low": low, "high": high, "error": ev.summary - truth,
            "covered": covers(ev.summary, low, high, truth),
            "flagged": ev.statuses.status == "unreliable", "half": (high - low) / 2}


def run_rounds(files, *, trials=100, seed=2025, percent=10.0, designs=DESIGNS,
               estimators=("ht(AP)", "ht(nDCG)", "ht(P@10)"), max_rounds=10, first=0,
               depth=100, progress=False, records=None):
    """One row per trial x first design x estimator x ``when`` (module docstring) and the
    setup facts, on the depth-``depth`` pool of the pooled runs; with a list ``records``, a
    table of the per-run records (one row per trial x first design x estimator x ``when`` x
    run: estimate, low, high, truth, covered, flagged) is appended to it."""
    data = load(files)
    c = data.collection
    frame = build_frame(data, float(depth))
    measures = [parse(e)[0] for e in estimators]
    truth_eval = evaluate_collection(c, frame.judgments(),
                                     [parse(TARGETS[e])[0] for e in estimators])
    truth = truth_eval.summary
    budget = max(1, int(round(percent / 100.0 * len(frame))))
    rows, started = [], time.time()
    for trial in range(first, first + trials):
        for d, name in enumerate(designs):
            rng = trial_rng(seed, trial, d)
            steps = judge_in_rounds(c, frame, first_design(name, budget, percent / 100.0,
                                                           depth),
                                    budget, max_rounds, rng, measures)
            state = steps[-1].state
            history = [outcome(s.evaluation, s.low, s.high, truth) for s in steps]
            top_judged = any(top_judged_whole(frame, s.state, s.plan, s.top).any()
                             for s in steps if s.plan is not None and s.top)
            fixed_design = stratified(two_strata(depth), budget=Budget(state.judged))
            ev = evaluate_collection(c, fixed_design.sample(frame, rng=rng), measures, ci=0.95,
                                     per_topic=False)
            fixed = outcome(ev, *ev.interval(), truth)
            for when, res in (("round 1", history[0]), ("final", history[-1]),
                              ("fixed", fixed)):
                judged = state.spent[0] if when == "round 1" else state.judged
                clean = not res["flagged"].any()  # of every estimator, at this point
                for j, e in enumerate(estimators):
                    flagged, hit = res["flagged"][:, j], res["covered"][:, j]
                    if records is not None:
                        records.append(pd.DataFrame({
                            "trial": trial, "design": name, "estimator": e, "when": when,
                            "run": c.run_names, "estimate": res["estimate"][:, j],
                            "low": res["low"][:, j], "high": res["high"][:, j],
                            "truth": truth[:, j], "covered": hit, "flagged": flagged}))
                    rows.append(dict(
                        trial=trial, design=name, estimator=e, when=when,
                        judged_pct=100.0 * judged / len(frame),
                        rounds=state.rounds if when == "final" else 1,  # fixed: one draw
                        runs=len(flagged), flagged=int(flagged.sum()),
                        covered=int(hit.sum()), covered_unflagged=int(hit[~flagged].sum()),
                        bias=float(res["error"][:, j].mean()),
                        halfwidth=float(res["half"][:, j].mean()), clean=clean,
                        top_judged=top_judged and when == "final"))
        if progress:
            print(f"trial {trial + 1}/{first + trials} ({time.time() - started:.0f}s)",
                  flush=True)
    # the topics evaluated (those the qrels judge), not every topic the runs answer
    facts = dict(frame_size=len(frame), runs=c.n_runs,
                 topics=int(truth_eval.evaluated.any(axis=0).sum()), budget=budget,
                 seconds=time.time() - started)
    return pd.DataFrame(rows), facts


def summarise(rows: pd.DataFrame) -> pd.DataFrame:
    """The module docstring's table from :func:`run_rounds`'s rows."""
    out = []
    for (design, estimator, when), g in rows.groupby(["design", "estimator", "when"],
                                                     sort=False):
        shares = trial_shares(g.assign(unflagged=g.runs - g.flagged,
                                       covered_flagged=g.covered - g.covered_unflagged),
                              {"flagged": ("flagged", "runs"), "coverage": ("covered", "runs"),
                               "coverage_unflagged": ("covered_unflagged", "unflagged"),
                               "coverage_flagged": ("covered_flagged", "flagged")})
        out.append(dict(
            design=design, estimator=estimator, when=when, judged_pct=g.judged_pct.mean(),
            judged_min=g.judged_pct.min(), judged_max=g.judged_pct.max(),
            rounds=g.rounds.mean(), flagged=shares["flagged"], coverage=shares["coverage"],
            coverage_unflagged=shares["coverage_unflagged"],
            coverage_se=shares["coverage_se"],
            coverage_unflagged_se=shares["coverage_unflagged_se"],
            coverage_flagged=shares["coverage_flagged"],
            bias=g.bias.mean(), halfwidth=g.halfwidth.mean(), nothing_flagged=g.clean.mean(),
            top_judged=g.top_judged.mean(),
            trials=len(g)))
    return pd.DataFrame(out)


@recipe("rounds", "judging in rounds until no interval is flagged, against the truth and a "
        "fixed design at the same total", SOURCES, trials=100, percent=10.0,
        designs=DESIGNS, estimators="ht(AP),ht(nDCG),ht(P@10)", max_rounds=10,
        first=0, depth=100)
def rounds(context: Context, p: dict) -> Report:
    names = tuple(n.strip() for n in str(p["estimators"]).split(",") if n.strip())
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        raise ValueError(f"rounds: unknown estimator {unknown[0]!r}; known: "
                         f"{', '.join(TARGETS)}")
    if p["max_rounds"] < 1:
        raise ValueError(f"--param max_rounds={p['max_rounds']}: at least 1 round")
    if not 0 < p["percent"] <= 100:
        raise ValueError(f"--param percent={p['percent']}: a share of the pool in (0, 100]")
    local_only(context, "rounds")
    trials, facts, records = run_trial_chunks(
        run_rounds, context.files, trials=p["trials"], first=p["first"],
        workers=context.workers or 1, progress=context.progress, seed=context.seed,
        percent=p["percent"], designs=tuple(p["designs"]), estimators=names,
        max_rounds=p["max_rounds"], depth=p["depth"])
    table = summarise(trials)
    text = (f"Frame: the depth-{p['depth']} pool of the pooled runs ({facts['frame_size']:,} "
            "documents, "
            f"{facts['runs']} runs, {facts['topics']} topics); rounds of {facts['budget']:,} "
            f"judgments ({p['percent']:g}%) until no run mean's interval is flagged, at most "
            f"{p['max_rounds']} rounds. 'fixed': a 2strata design of the final total, drawn at "
            "once. 'top_judged': the share of trials whose rounds judged the best ranks 1-10 "
            "of every topic whole (a P@10 mean estimated outside [0, 1]). Coverage of the 95% "
            "intervals against the frame truth.")
    return Report("rounds", "Judging in rounds until the intervals can be trusted", SOURCES,
                  {}, [Section("Rounds, their cost and their coverage", text, table)],
                  table.assign(recipe="rounds"),
                  {"workers": facts["workers"], "seconds": facts["seconds"]},
                  pd.concat(records, ignore_index=True) if records else None)
