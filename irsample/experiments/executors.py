"""Where an experiment's tasks run: this process, local processes or a Dask cluster.

Every executor returns the tasks' results in task order, whatever order they complete in, so an
experiment's tables do not depend on the executor or the number of workers. Workers read the
collection's files themselves, once each (:func:`~irsample.experiments.trial.init_worker`);
local processes are spawned, not forked (no fork of a process with numba threads).

Ctrl-C reaches every process of the terminal's foreground group. Local workers are spawned with
SIGINT ignored (an ignored signal stays ignored across ``exec``, and Python installs its
KeyboardInterrupt handler only where SIGINT is at its default), so only this process sees it:
it terminates the workers (SIGTERM; a task in a compiled kernel would not see an exception for
seconds) and waits at most :data:`STOP_SECONDS` for them, instead of letting the pool finish
the tasks under way.
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager

from ..errors import InputError
from .trial import Task, TrialConfig, init_worker, run_task, single_threaded

EXECUTORS = ("sequential", "processes", "dask")
#: how long an interrupted run waits for its terminated workers before killing them
STOP_SECONDS = 0.5


def run_tasks(config: TrialConfig, tasks: Sequence[Task], *, executor: str, workers: int,
              scheduler=None, progress: bool = True) -> list:
    """The results of ``tasks`` in task order, run by ``executor`` (one of :data:`EXECUTORS`;
    see :meth:`~irsample.experiments.runner.Experiment.run` for the arguments)."""
    if executor not in EXECUTORS:
        raise ValueError(f"executor must be one of {EXECUTORS}, not {executor!r}")
    bar = _progress(len(tasks), progress)
    try:
        if executor == "sequential":
            results = []
            for task in tasks:
                results.append(run_task(config, task))
                bar.update()
            return results
        if executor == "processes":
            return _run_processes(config, tasks, workers, bar)
        return _run_dask(config, tasks, workers, scheduler, bar)
    finally:
        bar.close()


def run_trial_chunks(function, files, *, trials: int, first: int = 0, workers: int = 1,
                     progress: bool = False, **kwargs) -> tuple:
    """``function(files, trials=n, first=k, records=[], progress=..., **kwargs)`` (a recipe's
    loop: a table and setup facts, per-run records appended to ``records``) over trials
    ``first`` .. ``first + trials - 1``, in ``workers`` consecutive chunks on spawned local
    processes (this process where ``workers`` is 1). ``function`` seeds every trial by its
    number, so the result is the one run's: tables and records joined in trial order, the
    facts of the first chunk with ``seconds`` the wall time of the whole, ``workers`` the
    processes and ``chunk_seconds`` the chunks' own. Returns ``(table, facts, records)``."""
    import pandas as pd

    start = time.perf_counter()
    n = max(1, min(workers, trials))
    bounds = [first + trials * i // n for i in range(n + 1)]
    chunks = [(a, b - a) for a, b in zip(bounds, bounds[1:])]
    if n == 1:  # this process, its threads as they are
        records: list = []
        parts = [(*function(files, trials=trials, first=first, records=records,
                            progress=progress, **kwargs), records)]
    else:
        parts = map_on_workers(_trial_chunk, files,
                               [(function, files, a, m, progress, kwargs) for a, m in chunks], n)
    table = pd.concat([t for t, _, _ in parts], ignore_index=True)
    facts = parts[0][1] | {"seconds": time.perf_counter() - start, "workers": n,
                           "chunk_seconds": [f["seconds"] for _, f, _ in parts]}
    return table, facts, [r for _, _, records in parts for r in records]


def map_on_workers(function, files, arguments: Sequence[tuple], workers: int) -> list:
    """``[function(*a) for a in arguments]`` on ``workers`` spawned local processes that read
    ``files`` once each (:func:`_local_pool`: Ctrl-C or a failed call stops them at once), in
    the order of ``arguments``. ``function`` must be importable by name (a module's)."""
    with _local_pool(files, workers) as pool:
        with _sigint_ignored():  # the workers are spawned by submit
            futures = [pool.submit(function, *a) for a in arguments]
        return [f.result() for f in futures]


def _trial_chunk(function, files, first: int, trials: int, progress: bool, kwargs) -> tuple:
    """One chunk of :func:`run_trial_chunks` in a worker, single-threaded beside the others."""
    records: list = []
    with single_threaded():
        table, facts = function(files, trials=trials, first=first, records=records,
                                progress=progress, **kwargs)
    return table, facts, records


def _progress(total: int, enabled: bool):
    """A progress bar of ``total`` tasks on standard error (hidden unless ``enabled``)."""
    from tqdm.auto import tqdm

    return tqdm(total=total, disable=not enabled, desc="tasks", unit="task")


def _run_processes(config: TrialConfig, tasks: Sequence[Task], workers: int, bar) -> list:
    """``workers`` spawned local processes (:func:`_local_pool`), results in task order."""
    results: list = [None] * len(tasks)
    with _local_pool(config.files, workers) as pool:
        with _sigint_ignored():  # the workers are spawned by submit
            futures = {pool.submit(run_task, config, task): task.index for task in tasks}
        for future in as_completed(futures):
            results[futures[future]] = future.result()
            bar.update()
    return results


@contextmanager
def _local_pool(files, workers: int):
    """``workers`` spawned local processes (no fork of a process with numba threads), each
    reading ``files`` once; on any exception (Ctrl-C, a failed task) they are stopped at once
    (:func:`stop_workers`) rather than left to finish, else shut down when the block ends."""
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=init_worker,
                               initargs=(files,))
    try:
        yield pool
    except BaseException:
        stop_workers(pool)
        raise
    pool.shutdown()


@contextmanager
def _sigint_ignored():
    """SIGINT ignored in this process (and so in the processes it spawns) meanwhile; only the
    main thread may change a handler, elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def stop_workers(pool: ProcessPoolExecutor) -> None:
    """Terminate ``pool``'s worker processes, wait up to :data:`STOP_SECONDS` for all of them
    together (then kill those left) and shut the pool down without waiting for its tasks."""
    processes = list(getattr(pool, "_processes", {}).values())  # the pool has no public list
    for process in processes:
        process.terminate()
    deadline = time.monotonic() + STOP_SECONDS
    for process in processes:
        process.join(max(deadline - time.monotonic(), 0.0))
    for process in processes:
        if process.is_alive():
            process.kill()
    for process in processes:
        process.join(STOP_SECONDS)
    pool.shutdown(wait=True, cancel_futures=True)  # quick: the manager sees the pool broken


def _run_dask(config: TrialConfig, tasks: Sequence[Task], workers: int, scheduler, bar) -> list:
    """A Dask cluster: ``scheduler`` (address or client), or a LocalCluster of ``workers``."""
    try:
        from distributed import Client, LocalCluster
        from distributed import as_completed as dask_completed
    except ImportError as err:  # pragma: no cover - the dask extra is optional
        raise ImportError(
            "executor='dask' needs the dask extra: pip install 'irsample[dask]'") from err
    cluster = None
    if scheduler is None:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    elif isinstance(scheduler, Client):
        client = scheduler
    else:
        try:
            client = Client(scheduler)
        except (OSError, ValueError, TypeError) as err:  # unreachable or not an address
            raise InputError(f"cannot use the Dask scheduler {scheduler!r}: {err}") from None
    try:
        client.run(init_worker, config.files)
        futures = client.map(run_task, [config] * len(tasks), tasks, pure=False)
        index = {future.key: task.index for future, task in zip(futures, tasks)}
        results: list = [None] * len(tasks)
        for future in dask_completed(futures):
            results[index[future.key]] = future.result()
            bar.update()
        return results
    finally:
        if client is not scheduler:
            client.close()
        if cluster is not None:
            cluster.close()
