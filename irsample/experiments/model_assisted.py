"""Recipe ``model-assisted``: human judgments + automatic labels (prediction-powered estimators)
against design-based estimators alone, on a collection with complete judgments.

Per trial, on the frame F = the depth-``depth`` pool of the pooled runs (grades from the qrels,
a pooled document missing from them non-relevant), with the truth = AP and nDCG of every run on
the complete judgments restricted to F (mean over topics):

1. each label source labels every document of F: noisy copies of the truth at Cohen's kappa
   0.3, 0.5, 0.7 (:mod:`irsample.design.labels.simulated`, sigma calibrated once per collection,
   fresh
   noise each trial), an adversarial source (the kappa-0.7 labels with the top ``adv_depth``
   documents of ``adv_runs`` runs, chosen at the quartiles of the true MAP, raised to relevant),
   and the fusion predictor fitted on the trial's human sample
   (:mod:`irsample.design.labels.fusion`, cross-fitted by topic);
2. each design (``uniform``; ``2strata``: ranks 1-10 at rate 1 and 11-``depth`` at 0.2, scaled
   to the budget; ``active``: :mod:`irsample.design.sampling.active` with the runs-only
   relevance prior as the design's labels, fixed before any judging; ``planned``:
   ci-coverage's, a pilot and the planner's plan for xinfAP,
   :class:`~irsample.design.planner.sequential.PlannedDesign`; ``importance``, named only:
   statAP's AP-prior sample of ``percent``% of each topic's pool; ``defensive``, named only:
   the same with ci-coverage's floor on the prior, ``importance(f,floor=0.1)``) draws
   ``percent``% of F for human judgment;
3. ht(M) (:mod:`irsample.measures.ht.estimator`, humans only), ppi(M) (lambda tuned per run
   for AP, per stratum for nDCG's difference form, per topic on the run's other topics for its
   control variate, or as ``tuning`` says: ``stratum`` tunes AP per run and
   stratum too, :mod:`irsample.measures.ppi.ap_ratio`; ``model`` nDCG per topic and stratum
   by the label-informed model, :mod:`irsample.measures.ppi.anticipated`) and auto-only
   (labels as judgments)
   estimate every run's mean (``form``: ppi(nDCG)'s, ``auto``, ``control`` or
   ``difference``; ``kept``: what the topics outside the difference form take, ``ht``,
   ``control`` or ``identified``:
   :func:`irsample.measures.ppi.estimate.ppi_estimate`), with 95% intervals for ht and ppi
   (:mod:`irsample.measures.ppi.estimate`; ppi's ``ht`` is ht(M) itself).

``cells`` (``strategy:percent``) and ``labels`` (source names) evaluate part of the grid only,
on the draws the whole grid takes (each cell is seeded by its place in the grid), so that one
cell can be re-run, or run over more trials, on the same draws.

results: per (strategy, percent, labels, measure) over trials and runs: coverage of ppi's
intervals, mean half-width, halfwidth_ratio = ppi's mean half-width / ht's (same draws), bias
and RMS error of ppi; ht's coverage and half-width; Kendall's tau against the truth of ppi, ht
and auto-only; the mean lambda and the realised kappa; ``flagged`` and ``ht_flagged``, the share
of run means whose interval the reliability rule flags (:mod:`irsample.measures.reliability`),
``coverage_unflagged`` / ``ht_coverage_unflagged``, the coverage of the others, and
``coverage_flagged`` / ``ht_coverage_flagged``, that of the flagged ones (worse, where the rule
flags the right means), with their Monte Carlo standard errors (``_se``: the trials as the
independent units).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from scipy import stats

from ..design import SamplingFrame, stratified, uniform
from ..design.labels.fusion import PoolRows, fusion_labels
from ..design.labels.simulated import calibrate_sigma, favoured_documents, noisy_grades, over_label
from ..design.planner.relevance_model import fit_relevance
from ..design.planner.sequential import PlannedDesign
from ..design.sampling.active import active
from ..design.sampling.budget import Budget
from ..design.sampling.importance import DEFENSIVE_FLOOR, importance
from ..evaluation import evaluate_collection
from ..io.labels import AutoLabels
from ..measures import EvalContext, parse
from ..measures.ht.estimator import estimate as ht_estimate
from ..measures.ppi.estimate import ppi_estimate
from ..measures.ppi.measures import use_estimate
from ..measures.reliability import assess
from ..stats.agreement import cohen_kappa
from ..stats.intervals import covers, run_mean_interval, trial_shares
from .cell_choice import chosen_cells, chosen_sources
from .data import load
from .executors import run_trial_chunks
from .registry import Context, local_only, recipe
from .report import Report, Section

SOURCES = "Angelopoulos et al., Science 2023 (PPI); Angelopoulos, Duchi & Zrnic 2023 (PPI++); " \
          "Zrnic & Candes, PNAS 2024 (cross-prediction)"
MEASURES = ("AP", "nDCG")


def build_frame(data, depth: float) -> SamplingFrame:
    """The depth-``depth`` pool of the pooled runs with complete grades (0 if unjudged), for
    the topics the qrels judge: :meth:`LoadedCollection.frame
    <irsample.experiments.data.LoadedCollection.frame>`, its rows in the order of their
    ``tdi`` (the order the seeded draws of the recorded results were taken in). A topic the
    qrels leave out (CACM: 12 of 64) is never evaluated; taken as all non-relevant, its true
    nDCG was 0 while every estimator imputed it from the other topics (a bias of +0.13 on
    CACM's ht(nDCG) and ppi(nDCG))."""
    runs = tuple(int(r) for r in data.info.pooled_runs)
    frame = data.frame(runs, depth)
    order = np.argsort(frame.tdi, kind="stable")
    return SamplingFrame.from_arrays(data.collection, frame.topic[order], frame.tdi[order],
                                     np.maximum(frame.rel[order], 0), runs=runs)


def _designs(strategies, percents, pool, prior=None, mix=0.2):
    out = []
    for s in strategies:
        for p in percents:
            budget = Budget(max(1, int(round(p / 100.0 * pool))))
            if s == "uniform":
                design = uniform(min(1.0, p / 100.0))
            elif s == "2strata":
                design = stratified("1-10:1,11-100:0.2", budget=budget)
            elif s == "active":
                design = active(min(1.0, p / 100.0), prior, mix=mix)
            elif s == "planned":  # ci-coverage's: a pilot, then the planner's plan for xinfAP
                design = PlannedDesign(budget, "xinfAP")
            elif s == "importance":  # statAP's: AP-prior probabilities within each topic
                design = importance(min(1.0, p / 100.0))
            elif s == "defensive":  # the same with a floor on the prior's weights
                design = importance(min(1.0, p / 100.0), floor=DEFENSIVE_FLOOR)
            else:
                raise ValueError(f"unknown strategy {s!r} (uniform, 2strata, active, planned, "
                                 "importance, defensive)")
            out.append((s, p, design))
    return out


def run_model_assisted(files, *, trials=100, seed=2024, percents=(5, 10, 20),
                       strategies=("uniform", "2strata"), kappas=(0.3, 0.5, 0.7),
                       adv_runs=3, adv_depth=20, depth=100.0, folds=5, tuning="default",
                       mix=0.2, first=0, kept="ht", form="auto", progress=False,
                       records=None, cells="", labels=""):
    """Per-trial summaries (one row per trial x cell x label source x measure) and setup facts;
    trials ``first`` .. ``first + trials - 1`` (each seeded by its number, so a long run can be
    split into chunks that together equal the whole). With a list ``records``, a table of the
    per-run records (one row per trial x cell x label source x measure x run: ppi's and ht's
    estimate, limits, flag and coverage, and the truth) is appended to it for each of them.
    ``cells`` (``strategy:percent``, comma-separated) and ``labels`` (label source names) keep
    only those of the grid, whose draws stay those of the whole grid
    (:func:`.cell_choice.chosen_cells`)."""
    kept_cells = chosen_cells(cells, strategies, percents)
    kept_sources = chosen_sources(labels, kappas)
    setup = Setup(files, seed=seed, percents=percents, strategies=strategies, kappas=kappas,
                  adv_runs=adv_runs, adv_depth=adv_depth, depth=depth, mix=mix)
    frame = setup.frame
    out = []
    started = time.time()
    for trial in range(first, first + trials):
        for strategy, percent, sample, ctx, sources in setup.trial(
                trial, folds=folds, cells=kept_cells, fusion="fusion" in kept_sources):
            judged = sample.state[frame.tdi] == 2
            for name, lab in sources.items():
                if name not in kept_sources:
                    continue
                if lab.kind == "grade":
                    kap = cohen_kappa(frame.rel, lab.value[frame.tdi].astype(np.int64)).kappa
                else:
                    binary = (lab.value[frame.tdi] >= 0.5).astype(np.int64)
                    kap = cohen_kappa(frame.rel, binary).kappa
                for j, kind in enumerate(MEASURES):
                    e = ppi_estimate(ctx, lab, kind, tuning=_tuning(tuning), kept=kept,
                                     form=form)
                    use_estimate(ctx, lab, kind, e)  # what ppi(kind)'s rule reads
                    res, per_run = _summarise(e, setup.evaluated, setup.q,
                                              setup.truth_mean[:, j], setup.collection.n_runs,
                                              setup.picks, ctx, kind)
                    head = dict(trial=trial, strategy=strategy, percent=percent, labels=name,
                                measure=kind)
                    out.append(dict(**head, judged=int(judged.sum()), kappa=kap, **res))
                    if records is not None:
                        records.append(pd.DataFrame(
                            head | {"run": setup.collection.run_names} | per_run))
        if progress:
            print(f"trial {trial + 1}/{first + trials} ({time.time() - started:.0f}s)", flush=True)
    c = setup.collection
    # the topics evaluated (those the qrels judge), not every topic the runs answer: CACM's
    # runs answer 64, the frame, the truth and every estimate rest on the 52 judged
    facts = dict(frame_size=len(frame), runs=c.n_runs,
                 topics=int(setup.evaluated.any(axis=0).sum()),
                 sigmas={f"{k:g}": round(s, 4) for k, s in setup.sigmas.items()},
                 favoured_runs=[c.run_names[p] for p in setup.picks],
                 seconds=time.time() - started)
    return pd.DataFrame(out), facts


class Setup:
    """What every trial of the recipe shares: the collection, its frame and truth (AP, nDCG),
    the noise level per kappa, the adversary's favoured runs and documents, the fusion
    labeller's pool rows and the designs; :meth:`trial` draws one trial."""

    def __init__(self, files, *, seed, percents, strategies, kappas, adv_runs, adv_depth,
                 depth, mix):
        data = load(files)
        self.collection = c = data.collection
        self.frame = frame = build_frame(data, depth)
        self.seed, self.kappas = seed, kappas
        truth = evaluate_collection(c, frame.judgments(), [parse(m)[0] for m in MEASURES])
        self.evaluated = truth.evaluated
        self.q = self.evaluated.sum(axis=1)
        self.truth_mean = truth.summary  # (runs, measures)
        self.sigmas = {k: calibrate_sigma(frame.rel, k, rng=seed) for k in kappas}
        order = np.argsort(self.truth_mean[:, 0], kind="stable")
        self.picks = [order[int(round(x * (len(order) - 1)))]
                      for x in np.linspace(0.25, 0.75, adv_runs)]
        in_frame = np.zeros(c.n_tdi, dtype=bool)
        in_frame[frame.tdi] = True
        self.favoured = favoured_documents(c, self.picks, adv_depth, in_frame)
        self.rows = PoolRows(c, frame.topic, frame.tdi, frame.best_rank, frame.runs, depth)
        prior = np.full(c.n_tdi, np.nan)  # the runs-only relevance prior: known before judging
        prior[frame.tdi] = fit_relevance(self.rows, np.zeros(len(frame), bool),
                                         np.zeros(len(frame), np.int64)).prob
        self.cells = _designs(strategies, percents, len(frame), prior, mix)

    def trial(self, trial: int, *, folds: int = 5, cells=None, fusion: bool = True):
        """Trial ``trial``'s draws, cell by cell: ``(strategy, percent, sample, context,
        label sources by name)``, seeded by ``(seed, trial)`` alone; only the ``cells``
        (indices into :attr:`cells`) when given, and without the fusion labels unless
        ``fusion``: every cell's seed is spawned whichever are drawn."""
        c, frame = self.collection, self.frame
        ss = np.random.SeedSequence([self.seed, trial])
        noise_seed, *cell_seeds = ss.spawn(1 + len(self.cells))
        noise = np.random.default_rng(noise_seed).standard_normal(len(frame))
        labels = {}
        for k, sigma in self.sigmas.items():
            v = np.full(c.n_tdi, np.nan)
            v[frame.tdi] = noisy_grades(frame.rel, sigma, noise)
            labels[f"kappa{k:g}"] = v
        base = labels[f"kappa{max(self.kappas):g}"]
        labels["adversarial"] = over_label(base, self.favoured)
        for at, ((strategy, percent, design), cseed) in enumerate(zip(self.cells, cell_seeds)):
            if cells is not None and at not in cells:
                continue
            draw_seed, fold_seed = cseed.spawn(2)
            sample = design.sample(frame, rng=np.random.default_rng(draw_seed))
            sources = {n: AutoLabels(v, "grade", n) for n, v in labels.items()}
            if fusion:
                sources["fusion"] = fusion_labels(c, sample, folds=folds, rows=self.rows,
                                                  rng=np.random.default_rng(fold_seed))
            yield strategy, percent, sample, EvalContext(c, sample), sources


def _tuning(text):
    """The recipe's ``tuning``: ``default`` (each measure's own: per run for AP, per stratum for
    nDCG), a level name, or a fixed lambda."""
    if text in (None, "default"):
        return None
    try:
        return float(text)
    except (TypeError, ValueError):
        return text


def _means(values, evaluated, q, n_runs):
    v = np.where(evaluated, values.reshape(n_runs, -1), 0.0)
    return v.sum(axis=1) / np.maximum(q, 1)


def _summarise(e, evaluated, q, truth, n_runs, picks, ctx, kind):
    """One trial's summary of ppi's and ht's run means against ``truth`` (a dict of the
    ``trials`` columns) and their per-run records (a dict of arrays: estimate, low, high,
    flagged and covered of each, and the truth)."""
    # the run means' intervals as ``eval --ci`` prints them (AP and nDCG are ratios in [0, 1])
    ppi = run_mean_interval(e.value, e.variance, evaluated, 0.95, spread=e.variance_spread)
    ht_spread = ht_estimate(ctx, parse(kind)[0]).variance_spread
    hti = run_mean_interval(e.ht, e.ht_variance, evaluated, 0.95, spread=ht_spread)
    (est, low, high), (ht, hlow, hhigh) = ((i.estimate, i.low, i.high) for i in (ppi, hti))
    auto = _means(e.auto, evaluated, q, n_runs)
    half, hhalf = (high - low) / 2, (hhigh - hlow) / 2
    err, herr = est - truth, ht - truth
    lam = e.lam.reshape(n_runs, -1)[:, 0]

    def tau(x):
        return float(stats.kendalltau(truth, x).statistic)

    covered, ht_covered = covers(est, low, high, truth), covers(ht, hlow, hhigh, truth)
    counts, flagged = _flags(ctx, kind, e, evaluated, covered, ht_covered)
    per_run = dict(truth=truth, estimate=est, low=low, high=high, flagged=flagged[""],
                   covered=covered, ht_estimate=ht, ht_low=hlow, ht_high=hhigh,
                   ht_flagged=flagged["ht_"], ht_covered=ht_covered)
    return dict(coverage=float(np.mean(covered)), halfwidth=float(half.mean()),
                bias=float(err.mean()), sq_error=float(np.mean(err * err)),
                ht_coverage=float(np.mean(ht_covered)), ht_halfwidth=float(hhalf.mean()),
                ht_sq_error=float(np.mean(herr * herr)), auto_bias=float(np.mean(auto - truth)),
                auto_favoured_bias=float(np.mean((auto - truth)[picks])),
                ppi_favoured_bias=float(np.mean(err[picks])),
                tau_ppi=tau(est), tau_ht=tau(ht), tau_auto=tau(auto), lam=float(lam.mean()),
                **counts), per_run


def _flags(ctx, kind: str, e, evaluated, covered, ht_covered) -> tuple[dict, dict]:
    """The reliability rule's flags on ppi's and ht's intervals of the run means
    (:mod:`irsample.measures.reliability`), ``covered`` and ``ht_covered`` whether each covers:
    counts of flagged means and of covered unflagged and flagged ones, for ``summarise``'s
    ``flagged``, ``coverage_unflagged`` and ``coverage_flagged`` (and ``ht_``), and the flags
    per run by prefix (``""`` ppi's, ``"ht_"`` ht's)."""
    n_runs = evaluated.shape[0]
    out, flags = {}, {}
    for prefix, name, value, variance, hit in (
            ("", f"ppi({kind})", e.value, e.variance, covered),
            ("ht_", f"ht({kind})", e.ht, e.ht_variance, ht_covered)):
        flagged = assess(ctx, parse(name)[0], evaluated, variance.reshape(n_runs, -1),
                         value.reshape(n_runs, -1)).unreliable
        out |= {f"{prefix}flagged_n": int(flagged.sum()), f"{prefix}runs_n": n_runs,
                f"{prefix}covered_unflagged_n": int(hit[~flagged].sum()),
                f"{prefix}covered_flagged_n": int(hit[flagged].sum())}
        flags[prefix] = flagged
    return out, flags


def summarise(trials: pd.DataFrame) -> pd.DataFrame:
    """Per (strategy, percent, labels, measure): the results columns (module docstring)."""
    keys = ["strategy", "percent", "labels", "measure"]
    g = trials.groupby(keys, sort=False)
    out = g.agg(coverage=("coverage", "mean"), halfwidth=("halfwidth", "mean"),
                ht_halfwidth=("ht_halfwidth", "mean"), bias=("bias", "mean"),
                mse=("sq_error", "mean"), ht_coverage=("ht_coverage", "mean"),
                ht_mse=("ht_sq_error", "mean"), auto_bias=("auto_bias", "mean"),
                auto_favoured_bias=("auto_favoured_bias", "mean"),
                ppi_favoured_bias=("ppi_favoured_bias", "mean"),
                tau_ppi=("tau_ppi", "mean"), tau_ht=("tau_ht", "mean"),
                tau_auto=("tau_auto", "mean"), lam=("lam", "mean"), kappa=("kappa", "mean"),
                judged=("judged", "mean"), trials=("trial", "nunique")).reset_index()
    if "flagged_n" in trials:  # per-trial counts -> shares and their Monte Carlo errors
        prefixes = ("", "ht_")
        counts = trials.assign(**{f"{p}unflagged_n": trials[f"{p}runs_n"]
                                  - trials[f"{p}flagged_n"] for p in prefixes})
        shares = {}
        for p in prefixes:
            shares[f"{p}flagged"] = (f"{p}flagged_n", f"{p}runs_n")
            shares[f"{p}coverage_unflagged"] = (f"{p}covered_unflagged_n", f"{p}unflagged_n")
            if f"{p}covered_flagged_n" in counts:  # trials recorded before it have none
                shares[f"{p}coverage_flagged"] = (f"{p}covered_flagged_n", f"{p}flagged_n")
        found = counts.groupby(keys, sort=False).apply(
            lambda t: pd.Series(trial_shares(t, shares)), include_groups=False)
        out = out.join(found.reset_index(drop=True))
    out["halfwidth_ratio"] = out["halfwidth"] / out["ht_halfwidth"]
    out["rms"] = np.sqrt(out.pop("mse"))
    out["ht_rms"] = np.sqrt(out.pop("ht_mse"))
    first = ["strategy", "percent", "labels", "measure", "coverage", "halfwidth",
             "halfwidth_ratio", "bias", "rms"]
    first += [c for c in ("coverage_unflagged", "flagged", "coverage_flagged",
                          "ht_coverage_unflagged", "ht_flagged", "ht_coverage_flagged",
                          "coverage_unflagged_se", "flagged_se", "coverage_flagged_se",
                          "ht_coverage_unflagged_se", "ht_flagged_se", "ht_coverage_flagged_se")
              if c in out]
    return out[first + [c for c in out.columns if c not in first]]


def halfwidth_figure(table: pd.DataFrame, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = list(table.groupby(["strategy", "measure"], sort=False))
    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.6), squeeze=False)
    for ax, ((strategy, measure), g) in zip(axes[0], panels):
        for name, h in g.groupby("labels", sort=False):
            ax.plot(h["percent"], h["halfwidth"], marker="o", label=f"ppi {name}")
        ht = g.groupby("percent")["ht_halfwidth"].mean()
        ax.plot(ht.index, ht.values, "k--", marker="s", label="ht (humans only)")
        ax.set_title(f"{measure}, {strategy}")
        ax.set_xlabel("human judgments (% of pool)")
        ax.set_ylabel("mean 95% half-width of a run's mean")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


@recipe("model-assisted", "human judgments + automatic labels (ppi) vs humans only (ht): "
        "coverage, half-widths, Kendall tau", SOURCES, trials=100, percents=(5, 10, 20),
        strategies=("uniform", "2strata"), kappas=(0.3, 0.5, 0.7), adv_runs=3, adv_depth=20,
        depth=100.0, folds=5, tuning="default", mix=0.2, first=0, kept="ht", form="auto",
        cells="", labels="")
def model_assisted(context: Context, p: dict) -> Report:
    local_only(context, "model-assisted")
    trials, facts, records = run_trial_chunks(
        run_model_assisted, context.files, trials=p["trials"], first=p["first"],
        workers=context.workers or 1, progress=context.progress, seed=p["seed"],
        percents=p["percents"], strategies=p["strategies"], kappas=p["kappas"],
        adv_runs=p["adv_runs"], adv_depth=p["adv_depth"], depth=p["depth"], folds=p["folds"],
        tuning=p["tuning"], mix=p["mix"], kept=p["kept"], form=p["form"], cells=p["cells"],
        labels=p["labels"])
    table = summarise(trials)
    text = (f"Frame: {facts['frame_size']} pooled documents, {facts['runs']} runs, "
            f"{facts['topics']} topics; noise sigma per kappa {facts['sigmas']}; adversarial "
            f"source favours {', '.join(facts['favoured_runs'])}. Coverage, half-width, bias and "
            "RMS are ppi's, over trials and runs; ht_* are the same draws with humans only; tau_* "
            "are Kendall's tau between the runs' estimated and true means.")
    short = table[["strategy", "percent", "labels", "measure", "coverage", "ht_coverage",
                   "halfwidth", "halfwidth_ratio", "bias", "rms", "tau_ppi", "tau_ht",
                   "tau_auto", "lam", "kappa"]]
    rule = table[["strategy", "percent", "labels", "measure"]
                 + [c for c in ("flagged", "coverage_unflagged", "coverage_flagged", "ht_flagged",
                                "ht_coverage_unflagged", "ht_coverage_flagged") if c in table]]
    return Report("model-assisted", "Human judgments + automatic labels (prediction-powered)",
                  SOURCES, {}, [
                      Section("Coverage and half-widths", text, short),
                      Section("The reliability rule", "Share of the run means whose interval "
                              "the rule flags (irsample.measures.reliability), and the coverage "
                              "of the unflagged and of the flagged intervals: ppi's, then ht's "
                              "on the same draws (- where there are none).", rule),
                      Section("Half-width vs human budget", "Mean 95% half-width of a run's "
                              "mean per label source; dashed: humans only (ht).",
                              figure="halfwidth.png",
                              draw=lambda path: halfwidth_figure(table, path)),
                  ], table,
                  {"workers": facts["workers"], "seconds": facts["seconds"]},
                  pd.concat(records, ignore_index=True) if records else None)
