"""Simulation of incomplete judgments on a collection with complete judgments.

    from irsample.design import stratified, uniform
    from irsample.experiments import CollectionFiles, Experiment, strategy

    files = CollectionFiles.of("trec8/runs", "trec8/qrels.trec8.adhoc",
                               pooled="trec8/run-pooled-flag.txt", groups="trec8/runs-pids")
    exp = Experiment(
        collection=files,
        strategies=[strategy("uniform", uniform, settings=[0.1, 0.2, 0.3]),
                    strategy("2strata", stratified("1-10:1,11-100:0.2"))],
        measures={"xinfAP": "AP", "infNDCG": "nDCG", "iP@10": "P@10"},
        splits=["halves"], trials=50, seed=2014,
    )
    result = exp.run(executor="processes", workers=2)   # or "sequential", "dask"
    result.runs, result.trials                          # tidy pandas tables
    result.write("out/voorhees14")                      # parquet (or format="csv") + settings

See :mod:`~irsample.experiments.runner` (grid, seeds, executors), :mod:`~.trial` (one trial,
the comparisons), :mod:`~.splits` (pooled / leave-one-group-out / random halves) and
:mod:`~.data` (loading once per process).
"""

from .data import CollectionFiles, LoadedCollection, load
from .runner import EXECUTORS, Experiment, ExperimentResult
from .splits import (
    LeaveOneGroupOut,
    PooledRuns,
    RandomHalves,
    RunInfo,
    Split,
    SplitFamily,
    derived_seed,
    read_pooled_flags,
    read_run_groups,
)
from .trial import Strategy, strategy

__all__ = [
    "EXECUTORS",
    "CollectionFiles",
    "Experiment",
    "ExperimentResult",
    "LeaveOneGroupOut",
    "LoadedCollection",
    "PooledRuns",
    "RandomHalves",
    "RunInfo",
    "Split",
    "SplitFamily",
    "Strategy",
    "derived_seed",
    "load",
    "read_pooled_flags",
    "read_run_groups",
    "strategy",
]
