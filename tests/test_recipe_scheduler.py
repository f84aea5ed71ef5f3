"""``irsample simulate --scheduler``: every recipe either runs its tasks on the scheduler given
or refuses it; none silently runs them here instead (voorhees14, four-strata and planner did)."""

from __future__ import annotations

import pytest

from irsample.errors import InputError
from irsample.experiments import CollectionFiles
from irsample.experiments.executors import run_tasks
from irsample.experiments.recipes import Context, run_recipe
from irsample.experiments.runner import Experiment
from irsample.experiments.trial import TrialConfig

from .experiment_data import write_collection

SMALL = {"voorhees14": {}, "four-strata": {"depths": "1"}, "planner": {"budgets": "60"}}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    paths = write_collection(tmp_path_factory.mktemp("collection"), n_topics=3, n_docs=150)
    return CollectionFiles.of(paths["runs"], paths["qrels"], pooled=paths["pooled"])


@pytest.mark.parametrize("name", sorted(SMALL))
def test_runner_recipes_run_on_the_scheduler_given(name, files, monkeypatch):
    calls = []
    run = Experiment.run

    def recorded(self, **kwargs):  # record how the recipe asked, then run here
        calls.append(kwargs)
        return run(self, executor="sequential", progress=False)

    monkeypatch.setattr(Experiment, "run", recorded)
    run_recipe(name, Context(files, trials=1, seed=3, scheduler="tcp://scheduler:8786"),
               SMALL[name])
    assert calls
    assert all(c["executor"] == "dask" and c["scheduler"] == "tcp://scheduler:8786"
               for c in calls)


@pytest.mark.parametrize("name", ["residuals", "comparisons"])
def test_local_recipes_refuse_a_scheduler(name, files):
    with pytest.raises(ValueError, match="--scheduler"):
        run_recipe(name, Context(files, trials=1, seed=3, scheduler="tcp://scheduler:8786"))


def test_comparisons_refuses_workers_it_would_not_use(files):
    """comparisons runs its trials in this process: --workers 2 was silently ignored (2 trials
    of TREC-8 took 813 s on one core)."""
    with pytest.raises(ValueError, match="--workers 2 would not be used"):
        run_recipe("comparisons", Context(files, trials=1, seed=3, workers=2))


def test_an_unreachable_scheduler_is_an_input_error(files):
    dask = pytest.importorskip("dask")
    pytest.importorskip("distributed")
    config = TrialConfig(files, ("infAP",), ("AP",), None, None)
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        with pytest.raises(InputError, match="tcp://127.0.0.1:9"):
            run_tasks(config, [], executor="dask", workers=1,
                      scheduler="tcp://127.0.0.1:9", progress=False)
