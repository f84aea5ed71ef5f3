"""Simulation experiments: collection x strategy x setting x split x trial, on any executor.

An :class:`Experiment` names a collection with complete judgments (files), strategies (named
designs, possibly one per setting), estimators with the measures they estimate, run splits and
a number of trials. :meth:`Experiment.run` expands the grid into tasks (one per trial and
split, holding every strategy x setting; :mod:`irsample.experiments.trial`), runs them
sequentially, on local processes or on a Dask cluster, and returns two tidy tables:

- ``runs``: one row per trial x split x strategy x setting x evaluated run x measure, with the
  estimate, the truth (the frame truth: the measure on the complete judgments of the pool the
  design samples from; :mod:`irsample.experiments.trial`), ``truth_qrels`` (on the complete
  qrels; the difference is the pool's bias) and the interval (``low``, ``high``; NaN without a
  variance estimator);
- ``trials``: one row per trial x split x strategy x setting x measure, with the pool size, the
  judgments drawn, Kendall's tau, RMS error, bias, largest error, interval coverage and the
  run-pair classes with paper 002's accuracy.

Reproducibility: every draw has its own seed, ``derived_seed(seed, "draw", strategy, setting,
split, trial)`` (a NumPy SeedSequence keyed by those values; recorded in the ``seed`` column, so
any row can be redrawn alone with ``design.sample(frame, rng=default_rng(seed))``), and random
splits are keyed by (seed, trial). Results are put back in task order, so the tables are
identical whatever the executor, the number of workers or the order tasks complete in.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .. import __version__
from .data import CollectionFiles, load, parse_one
from .executors import EXECUTORS, run_tasks
from .splits import PooledRuns, RunInfo, SplitFamily, derived_seed, split_family
from .trial import (
    RUN_COLUMNS,
    TRIAL_COLUMNS,
    Cell,
    Strategy,
    Task,
    TrialConfig,
)


@dataclass(frozen=True, kw_only=True)
class Experiment:
    """A simulation grid (see the module docstring).

    Parameters
    ----------
    collection : CollectionFiles
        A collection with complete judgments (:meth:`CollectionFiles.of`).
    strategies : sequence of Strategy
        Named designs, possibly one per setting (:func:`~irsample.experiments.trial.strategy`),
        with distinct names.
    measures : mapping or sequence of (estimator, measure)
        Each estimator with the measure it estimates, e.g. ``{"xinfAP": "AP", "infNDCG":
        "nDCG", "iP@10": "P@10"}``.
    seed : int
        The experiment's seed; every draw's seed is derived from it (module docstring).
    splits : sequence of SplitFamily or str, default ``(PooledRuns(),)``
        Run splits: ``"pooled"``, ``"logo"`` (leave one group out), ``"halves"``.
    trials : int, default 1
        Trials per split.
    ci : float or None, default 0.95
        Level of the intervals (None: no variances).
    alpha : float or None, default 0.05
        Level of the paired t-tests of the run-pair classification (None: no pairs).
    pool_depth : float, default 100
        The default depth of a simulated pool (TREC-8's pools are depth 100), and the least
        depth of the frame whose complete judgments are the truth (a depth-10 pool strategy
        samples the depth-100 pool: its truth is the depth-100 pool's).

    Raises
    ------
    ValueError
        No measure or strategy, repeated strategy names, a seed that is not an int, trials
        < 1, or ``ci``/``alpha`` outside (0, 1).
    MeasureError
        An unknown estimator or measure name.

    Examples
    --------
    Two trials of infAP on a uniform 30% sample of the bundled Vaswani collection's pools (11
    runs, complete judgments), run in this process:

    >>> from importlib.resources import files
    >>> from irsample.design import uniform
    >>> from irsample.experiments import CollectionFiles, Experiment, strategy
    >>> vaswani = files("irsample") / "data" / "vaswani"
    >>> exp = Experiment(
    ...     collection=CollectionFiles.of(str(vaswani / "runs"), str(vaswani / "qrels.gz")),
    ...     strategies=[strategy("uniform", uniform, settings=[0.3])],
    ...     measures={"infAP": "AP"}, trials=2, seed=7)
    >>> result = exp.run(executor="sequential", progress=False)
    >>> result.trials[["trial", "setting", "judged", "kendall_tau", "rms"]].round(4)
       trial setting  judged  kendall_tau     rms
    0      0     0.3    7002       0.9273  0.0565
    1      1     0.3    7002       0.9636  0.0259
    >>> result.runs.shape   # 2 trials x 11 runs x 1 measure
    (22, 17)
    """

    collection: CollectionFiles
    strategies: tuple[Strategy, ...]
    measures: tuple[tuple[str, str], ...]
    seed: int
    splits: tuple[SplitFamily, ...] = (PooledRuns(),)
    trials: int = 1
    ci: float | None = 0.95
    alpha: float | None = 0.05
    pool_depth: float = 100

    def __post_init__(self):
        measures = self.measures
        if isinstance(measures, Mapping):
            measures = tuple(measures.items())
        measures = tuple((str(e), str(t)) for e, t in measures)
        for name in (n for pair in measures for n in pair):
            parse_one(name)  # fails early on unknown or ambiguous names
        if not measures:
            raise ValueError("no measure to estimate")
        strategies = tuple(self.strategies)
        if not strategies or len({s.name for s in strategies}) != len(strategies):
            raise ValueError("strategies must be given, with distinct names")
        splits = tuple(split_family(s) for s in (
            [self.splits] if isinstance(self.splits, (str, SplitFamily)) else self.splits))
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)):
            raise ValueError(f"seed must be an int, not {self.seed!r}")
        if not isinstance(self.trials, (int, np.integer)) or self.trials < 1:
            raise ValueError(f"trials must be a positive int, not {self.trials!r}")
        if self.ci is not None and not 0 < self.ci < 1:
            raise ValueError(f"ci must be in (0, 1) or None, not {self.ci!r}")
        if self.alpha is not None and not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be in (0, 1) or None, not {self.alpha!r}")
        object.__setattr__(self, "measures", measures)
        object.__setattr__(self, "strategies", strategies)
        object.__setattr__(self, "splits", splits)
        object.__setattr__(self, "seed", int(self.seed))

    @property
    def config(self) -> TrialConfig:
        """What every task needs besides its cells: the collection's files, the estimators and
        their measures, ``ci`` and ``alpha``."""
        return TrialConfig(self.collection, tuple(e for e, _ in self.measures),
                           tuple(t for _, t in self.measures), self.ci, self.alpha)

    def tasks(self, runs: RunInfo) -> list[Task]:
        """The grid as tasks, in output order: trial, split family, split; cells in strategy
        and setting order.

        Parameters
        ----------
        runs : RunInfo
            The collection's runs, pooled flags and groups (``load(collection).info``).

        Returns
        -------
        list of Task
            Each with its index, trial, split and cells (strategy, setting, design, depth and
            derived seed).
        """
        tasks = []
        for trial in range(self.trials):
            for family in self.splits:
                for split in family.splits(runs, trial=trial, seed=self.seed):
                    cells = tuple(
                        Cell(s.name, label, design, depth,
                             derived_seed(self.seed, "draw", s.name, label, split.name, trial),
                             max(depth, float(self.pool_depth)))
                        for s in self.strategies for label, design in s.designs
                        for depth in (s.depth_of(design, self.pool_depth),)
                    )
                    tasks.append(Task(len(tasks), trial, split, cells))
        return tasks

    def settings(self) -> dict:
        """Every setting of the experiment, JSON-ready (written next to the tables).

        Returns
        -------
        dict
            Versions, collection files, strategies, measures, splits, trials, seed, ci, alpha,
            the pair test and the pool depth.
        """
        return {
            "irsample": __version__,
            "numpy": np.__version__,
            "collection": self.collection.settings(),
            "strategies": [
                {"name": s.name, "depth": None if s.depth is None else float(s.depth),
                 "settings": {label: design.name for label, design in s.designs}}
                for s in self.strategies
            ],
            "measures": [list(pair) for pair in self.measures],
            "splits": [_describe(f) for f in self.splits],
            "trials": self.trials,
            "seed": self.seed,
            "ci": self.ci,
            "alpha": self.alpha,
            "pair_test": "paired t-test, p < alpha",
            "pool_depth": float(self.pool_depth),
        }

    def run(self, *, executor: str = "processes", workers: int | None = None,
            scheduler=None, progress: bool = True) -> ExperimentResult:
        """Run every task and collect the tidy tables (example: :class:`Experiment`).

        The tables are identical whatever the executor, the number of workers or the order
        tasks complete in. Workers read the collection's files themselves, once each.

        Parameters
        ----------
        executor : {"sequential", "processes", "dask"}, default "processes"
            ``sequential``: this process; ``processes``: ``workers`` local processes; ``dask``:
            a Dask cluster (the ``irsample[dask]`` extra).
        workers : int, optional
            Worker processes (default 2).
        scheduler : str or distributed.Client, optional
            For ``dask``: an address ``tcp://host:port`` or a client; without one a
            ``distributed.LocalCluster`` of ``workers`` single-threaded processes is started
            and closed.
        progress : bool, default True
            Show a progress bar on standard error.

        Returns
        -------
        ExperimentResult

        Raises
        ------
        ValueError
            An unknown executor.
        """
        if executor not in EXECUTORS:
            raise ValueError(f"executor must be one of {EXECUTORS}, not {executor!r}")
        start = time.perf_counter()
        tasks = self.tasks(load(self.collection).info)
        config = self.config
        results = run_tasks(config, tasks, executor=executor, workers=workers or 2,
                            scheduler=scheduler, progress=progress)
        execution = {"executor": executor,
                     "workers": 1 if executor == "sequential" else workers or 2,
                     "tasks": len(tasks), "seconds": time.perf_counter() - start,
                     "task_cpu_seconds": sum(r["cpu_seconds"] for r in results)}
        return ExperimentResult(
            _table(results, "runs", RUN_COLUMNS), _table(results, "trials", TRIAL_COLUMNS),
            self.settings(), execution,
        )


def _describe(family: SplitFamily) -> dict:
    out = {"name": family.name}
    groups = getattr(family, "groups", None)
    if groups is not None:
        out["groups"] = list(groups)
    return out


def _table(results: list, part: str, columns: Sequence[str]) -> pd.DataFrame:
    data = {c: np.concatenate([r[part][c] for r in results]) for c in columns}
    frame = pd.DataFrame(data, columns=list(columns))
    return frame.astype({c: bool for c in columns if c == "pooled"})


@dataclass(frozen=True, eq=False)
class ExperimentResult:
    """The ``runs`` and ``trials`` tables, the experiment's ``settings`` and how it ran
    (``execution``: executor, workers, tasks, wall ``seconds`` and the tasks' summed
    ``task_cpu_seconds``; not part of the results).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> result = ExperimentResult(pd.DataFrame({"run": ["bm25"], "estimate": [0.25]}),
    ...                           pd.DataFrame({"trial": [0], "rms": [0.02]}), {"seed": 7})
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     written = result.write(Path(folder) / "exp")
    ...     again = ExperimentResult.read(Path(folder) / "exp")
    >>> [path.name for path in written]
    ['exp.runs.parquet', 'exp.trials.parquet', 'exp.settings.json']
    >>> again.runs.equals(result.runs), again.settings
    (True, {'seed': 7})
    """

    runs: pd.DataFrame
    trials: pd.DataFrame
    settings: dict
    execution: dict = field(default_factory=dict)

    def write(self, prefix, *, format: str = "parquet") -> list[Path]:
        """Write ``<prefix>.runs.<ext>``, ``<prefix>.trials.<ext>`` and
        ``<prefix>.settings.json`` (settings and execution); parquet files also carry the
        settings in their schema metadata (key ``irsample.settings``).

        Parameters
        ----------
        prefix : str or path
            Path prefix of the files; missing folders are created.
        format : {"parquet", "csv"}, default "parquet"

        Returns
        -------
        list of Path
            The files written.

        Raises
        ------
        ValueError
            An unknown format.
        """
        if format not in ("parquet", "csv"):
            raise ValueError(f"format must be 'parquet' or 'csv', not {format!r}")
        prefix = Path(prefix)
        prefix.parent.mkdir(parents=True, exist_ok=True)
        settings = json.dumps(self.settings, sort_keys=True, default=_json_default)
        written = []
        for name, table in (("runs", self.runs), ("trials", self.trials)):
            path = prefix.with_name(f"{prefix.name}.{name}.{format}")
            if format == "csv":
                table.to_csv(path, index=False)
            else:
                import pyarrow as pa
                import pyarrow.parquet as pq

                arrow = pa.Table.from_pandas(table, preserve_index=False)
                meta = dict(arrow.schema.metadata or {}) | {b"irsample.settings": settings.encode()}
                pq.write_table(arrow.replace_schema_metadata(meta), path)
            written.append(path)
        path = prefix.with_name(f"{prefix.name}.settings.json")
        path.write_text(json.dumps({"settings": self.settings, "execution": self.execution},
                                   indent=2, sort_keys=True, default=_json_default) + "\n")
        return written + [path]

    @classmethod
    def read(cls, prefix, *, format: str = "parquet") -> ExperimentResult:
        """Read what :meth:`write` wrote (example: :class:`ExperimentResult`).

        Parameters
        ----------
        prefix : str or path
            The prefix given to :meth:`write`.
        format : {"parquet", "csv"}, default "parquet"

        Returns
        -------
        ExperimentResult
        """
        prefix = Path(prefix)
        reader = pd.read_parquet if format == "parquet" else pd.read_csv
        tables = [reader(prefix.with_name(f"{prefix.name}.{n}.{format}"))
                  for n in ("runs", "trials")]
        meta = json.loads(prefix.with_name(f"{prefix.name}.settings.json").read_text())
        return cls(*tables, meta["settings"], meta.get("execution", {}))


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {value!r} as JSON")
