"""One simulation task: draw judgments, estimate every run, compare with the truth.

A task is one (trial, split) with every cell (strategy x setting) of the experiment, so a
split's frame is built once for all of them. For each cell, in a process that loaded the
collection once (:mod:`irsample.experiments.data`):

1. the frame: qrels entries within the strategy's depth of the split's pool runs (best ranks
   over those runs only; :meth:`LoadedCollection.frame`, cached);
2. the draw: ``design.sample(frame, rng=default_rng(seed))`` with the cell's own seed;
3. the estimates: every estimator for every evaluated run, per topic and as means over
   topics, with normal-theory intervals at level ``ci`` where the estimator has a variance;
4. the comparison with the truth. ``truth`` is the **frame truth**: the target measure under
   the complete judgments of the frame the design samples from (the split's pool at
   ``truth_depth`` = max(the cell's depth, the experiment's pool depth), documents outside it
   non-relevant; :meth:`LoadedCollection.frame_truth`), what judging that whole pool would
   give. It is the truth for every evaluated run, pooled or not: estimate - truth is the
   sampling error. ``truth_qrels`` is the measure under the complete qrels; truth -
   truth_qrels is the pool's own bias, reported apart (:func:`pool_bias`). Per run the
   estimate, both truths and the interval; per (cell, measure) over the evaluated runs
   Kendall's tau-b between truth and estimate (Kendall 1945; ``scipy.stats.kendalltau``), the
   RMS error sqrt(mean_r (est_r - truth_r)^2), the bias mean_r (est_r - truth_r), the largest
   error, the coverage of the intervals (an interval with NaN limits, none given for a run,
   counts as a miss, as in the recipes' tables), and, with
   ``alpha``, the classes of all run pairs under paired t-tests of the per-topic values
   against the frame truth's tests (paper 002; :mod:`irsample.stats.pairs`); ``*_qrels``
   columns: tau, RMS error and pair accuracy against the qrels truth (sampling + pool bias,
   paper 002's gold standard).

Numba and BLAS run single-threaded inside a task: tasks are what runs in parallel, and each
kernel call is too small to gain from threads on a shared machine. BLAS's threads cost more than
they give: the planner's relevance fit (``design/planner/relevance_model.py``) makes a few
hundred small matrix-vector products per planned cell, and OpenBLAS's second thread spun
through them (TREC-8, four planned draws: 2.0 s of process CPU with two BLAS threads, 0.85 s
with one; the fits are identical to the bit).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass

import numba
import numpy as np
from scipy import stats

from ..design import Design
from ..evaluation import evaluate_collection
from ..stats.intervals import covers
from ..stats.pairs import CLASSES, PairCounts, classify_decisions, decisions
from .data import CollectionFiles, load, parse_one
from .splits import Split

RUN_COLUMNS = ("strategy", "setting", "design", "split", "trial", "seed", "run", "pooled",
               "measure", "target", "estimate", "truth", "truth_qrels", "low", "high", "df",
               "flagged")
TRIAL_COLUMNS = ("strategy", "setting", "design", "split", "trial", "seed", "measure", "target",
                 "runs", "pool_size", "judged", "kendall_tau", "rms", "bias", "max_error",
                 "coverage", *CLASSES, "accuracy", "kendall_tau_qrels", "rms_qrels",
                 "accuracy_qrels")


@dataclass(frozen=True)
class Strategy:
    """A named way of choosing judgments: ``designs`` = (setting label, design) pairs, e.g.
    one per judged fraction. ``depth`` bounds the simulated pool: frame rows are the qrels
    entries with best rank <= depth over the split's pool runs (``None``: the design's own
    :attr:`~irsample.design.frame.Design.depth` where finite, e.g. the last rank of a
    stratified design ending in a closed stratum, else the experiment's ``pool_depth``;
    ``inf``: every qrels entry)."""

    name: str
    designs: tuple[tuple[str, Design], ...]
    depth: float | None = None

    def depth_of(self, design: Design, pool_depth: float) -> float:
        if self.depth is not None:
            return float(self.depth)
        if not math.isinf(design.depth):  # e.g. a stratified design ending in a closed stratum
            return float(design.depth)
        return float(pool_depth)


def strategy(name: str, design: Design | Callable[[object], Design], *,
             settings: Iterable | None = None, depth: float | None = None) -> Strategy:
    """A :class:`Strategy` of one ``design``, or of ``design(s)`` for each of ``settings``.

    Parameters
    ----------
    name : str
        The strategy's name in the result tables.
    design : Design or callable
        A design, or a function of a setting returning one (``uniform``, ``importance``).
    settings : iterable, optional
        The settings, each labelled ``f"{s:g}"`` for numbers, ``str(s)`` otherwise.
    depth : float, optional
        Bound of the simulated pool (see :class:`Strategy`).

    Returns
    -------
    Strategy

    Raises
    ------
    TypeError
        ``design`` is a function but no settings are given.

    Examples
    --------
    >>> from irsample.design import stratified, uniform
    >>> [label for label, _ in strategy("uniform", uniform, settings=[0.1, 0.2]).designs]
    ['0.1', '0.2']
    >>> strategy("2strata", stratified("1-10:1,11-100:0.2")).designs[0][1].name
    'stratified(1-10:1,11-100:0.2)'
    """
    if settings is None:
        if not isinstance(design, Design):
            raise TypeError(f"strategy {name!r}: give a Design, or a function and settings")
        return Strategy(name, (("-", design),), depth)
    cells = []
    for s in settings:
        label = f"{s:g}" if isinstance(s, (int, float)) and not isinstance(s, bool) else str(s)
        made = design(s)
        if not isinstance(made, Design):
            raise TypeError(f"strategy {name!r}: setting {label} gave {made!r}, not a Design")
        cells.append((label, made))
    if len({label for label, _ in cells}) != len(cells):
        raise ValueError(f"strategy {name!r}: repeated settings")
    return Strategy(name, tuple(cells), depth)


@dataclass(frozen=True)
class Cell:
    """One strategy x setting of a task, with its resolved depth and draw seed;
    ``truth_depth``: the depth of the frame whose complete judgments are the truth (default
    ``depth``)."""

    strategy: str
    setting: str
    design: Design
    depth: float
    seed: int
    truth_depth: float | None = None


@dataclass(frozen=True)
class Task:
    index: int
    trial: int
    split: Split
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class TrialConfig:
    """What every task of an experiment shares (small: sent with each task)."""

    files: CollectionFiles
    estimators: tuple[str, ...]
    targets: tuple[str, ...]
    ci: float | None
    alpha: float | None


@contextmanager
def single_threaded():
    """Numba kernels and BLAS on one thread in this (calling) thread, restored afterwards."""
    from threadpoolctl import threadpool_limits

    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        with threadpool_limits(limits=1, user_api="blas"):
            yield
    finally:
        numba.set_num_threads(before)


def init_worker(files: CollectionFiles) -> None:
    """Worker initializer: parse the collection before the first task arrives."""
    numba.set_num_threads(1)
    load(files)


def run_task(config: TrialConfig, task: Task) -> dict:
    """Columns of the task's rows: ``{"runs": {...}, "trials": {...}}`` (see RUN_COLUMNS and
    TRIAL_COLUMNS), cells in task order, runs in split order, measures in config order; and
    ``cpu_seconds``, the task's CPU time (not part of the tables)."""
    start = time.thread_time()
    with single_threaded():
        out = _run_task(config, task)
    return out | {"cpu_seconds": time.thread_time() - start}


def _run_task(config: TrialConfig, task: Task) -> dict:
    data = load(config.files)
    split = task.split
    evaluate = list(split.evaluate)
    sub = data.subcollection(split.evaluate)
    qrels_means = data.truth(config.targets).summary[evaluate]
    measures = [parse_one(m) for m in config.estimators]
    has_variance = [m.variance_method is not None for m in measures]
    names = np.array([data.info.names[r] for r in evaluate], dtype=object)
    in_pool = np.isin(np.array(evaluate), np.array(split.pool))
    n_runs = len(evaluate)
    runs_out, trials_out = _columns(RUN_COLUMNS), _columns(TRIAL_COLUMNS)
    for cell in task.cells:
        frame = data.frame(split.pool, cell.depth)
        truth_depth = cell.depth if cell.truth_depth is None else cell.truth_depth
        truth = data.frame_truth(split.pool, truth_depth, config.targets)
        true_means = truth.summary[evaluate]
        judgments = cell.design.sample(frame, rng=np.random.default_rng(cell.seed))
        ev = evaluate_collection(sub, judgments, measures, ci=config.ci, per_topic=False)
        if config.ci is not None:
            low, high = ev.interval()
            flagged = ev.statuses.status == "unreliable"
            df = ev.summary_df
        else:
            low = high = df = np.full_like(ev.summary, np.nan)
            flagged = np.zeros(ev.summary.shape, dtype=bool)
        judged = int(judgments.stratum_sampled.sum())
        head = {"strategy": cell.strategy, "setting": cell.setting, "design": cell.design.name,
                "split": split.name, "trial": task.trial, "seed": cell.seed}
        for j, measure in enumerate(config.estimators):
            est, true = ev.summary[:, j], true_means[:, j]
            lo = low[:, j] if has_variance[j] else np.full(n_runs, np.nan)
            hi = high[:, j] if has_variance[j] else np.full(n_runs, np.nan)
            row = head | {"measure": measure, "target": config.targets[j]}
            for key, value in row.items():
                kind = object if isinstance(value, str) else np.int64
                runs_out[key].append(np.full(n_runs, value, dtype=kind))
            for key, value in (("run", names), ("pooled", in_pool), ("estimate", est),
                               ("truth", true), ("truth_qrels", qrels_means[:, j]),
                               ("low", lo), ("high", hi), ("df", df[:, j]),
                               ("flagged", flagged[:, j])):
                runs_out[key].append(value)
            summary = row | {"runs": n_runs, "pool_size": len(frame), "judged": judged}
            summary |= _compare(est, true, lo, hi, has_variance[j])
            qrels = _compare(est, qrels_means[:, j], lo, hi, False)
            summary |= {"kendall_tau_qrels": qrels["kendall_tau"], "rms_qrels": qrels["rms"]}
            gold = (None if config.alpha is None or len(evaluate) < 2 else
                    data.frame_decisions(split.pool, truth_depth, config.targets, j,
                                         split.evaluate, config.alpha))
            summary |= _pairs(data, config, j, split, ev.values[:, :, j], gold)
            for key in TRIAL_COLUMNS:
                trials_out[key].append(summary[key])
    return {"runs": {k: _concat(v) for k, v in runs_out.items()},
            "trials": {k: np.array(v, dtype=_dtype(v)) for k, v in trials_out.items()}}


def _columns(names) -> dict:
    return {name: [] for name in names}


def _concat(parts: list) -> np.ndarray:
    return np.concatenate(parts) if parts else np.array([], dtype=object)


def _dtype(values: list):
    if values and all(isinstance(v, str) for v in values):
        return object
    if values and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
        return np.int64
    return np.float64


def _compare(est: np.ndarray, true: np.ndarray, low, high, has_interval: bool) -> dict:
    """Agreement of the runs' estimates with their truths (see the module docstring)."""
    error = est - true
    n = len(est)
    tau = stats.kendalltau(true, est).statistic if n >= 2 else math.nan
    covered = covers(est, low, high, true)  # NaN limits (no interval) miss, as in the tables
    return {
        "kendall_tau": float(tau),
        "rms": float(np.sqrt(np.mean(error**2))) if n else math.nan,
        "bias": float(np.mean(error)) if n else math.nan,
        "max_error": float(np.max(np.abs(error))) if n else math.nan,
        "coverage": float(np.mean(covered)) if has_interval and n else math.nan,
    }


def _pairs(data, config: TrialConfig, j: int, split: Split, est_values, gold) -> dict:
    """Class counts of all pairs of evaluated runs against the frame truth's decisions
    ``gold``, and ``accuracy_qrels`` against the qrels truth's (NaN without ``alpha`` or
    pairs)."""
    if gold is None:
        return {name: math.nan for name in (*CLASSES, "accuracy", "accuracy_qrels")}
    estimate = decisions(est_values, alpha=config.alpha)
    counts = PairCounts.of(classify_decisions(gold, estimate))
    qrels = data.truth_decisions(config.targets, j, split.evaluate, config.alpha)
    accuracy_qrels = PairCounts.of(classify_decisions(qrels, estimate)).as_dict()["accuracy"]
    return {k: float(v) for k, v in counts.as_dict().items()} | {
        "accuracy_qrels": float(accuracy_qrels)}
