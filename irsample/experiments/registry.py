"""The recipe registry: named experiments for ``irsample simulate``, and what they share.

A recipe is a function of a :class:`Context` (collection files, trials, seed, executor) and its
parameters (defaults overridable, e.g. ``irsample simulate infap-random --param
percents=1,5,10``) returning a :class:`~irsample.experiments.report.Report`. A module defines
one with the :func:`recipe` decorator; the modules holding recipes are listed once, in
:data:`RECIPE_MODULES`, and :func:`load_recipes` imports them (so this module imports none of
them, and none of them imports another to register).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field

from .data import CollectionFiles, load
from .runner import Experiment

PAPER_001 = ("Yilmaz & Aslam, Estimating average precision when judgments are incomplete, "
             "Knowledge and Information Systems 16(2), 2008 (paper 001)")
PAPER_000 = ("Yilmaz, Kanoulas & Aslam, A simple and efficient sampling method for estimating "
             "AP and NDCG, SIGIR 2008 (paper 000)")

#: the modules of irsample.experiments that define recipes (imported by :func:`load_recipes`)
RECIPE_MODULES = ("recipes", "coverage", "comparisons", "model_assisted", "paper_recipes",
                  "rounds")


@dataclass(frozen=True)
class Context:
    """Where and how a recipe runs: ``trials`` None = the recipe's default; ``executor`` as in
    :meth:`~irsample.experiments.Experiment.run`."""

    files: CollectionFiles
    trials: int | None = None
    seed: int = 2008
    executor: str = "sequential"
    workers: int | None = None
    scheduler: object = None
    progress: bool = False


@dataclass(frozen=True)
class Recipe:
    name: str
    summary: str
    sources: str
    defaults: dict
    function: Callable = field(repr=False)

    def params(self, overrides: dict | None = None) -> dict:
        """The defaults with ``overrides`` (strings are converted to the default's type;
        tuples from comma-separated lists)."""
        out = dict(self.defaults)
        for key, value in (overrides or {}).items():
            if key not in out:
                raise ValueError(f"recipe {self.name!r} has no parameter {key!r}; "
                                 f"parameters: {', '.join(sorted(out))}")
            try:
                out[key] = _convert(out[key], value) if isinstance(value, str) else value
            except ValueError:
                kind = (f"a comma-separated list of {_kind(out[key][0] if out[key] else 0.0, 's')}"
                        if isinstance(out[key], tuple) else _kind(out[key]))
                raise ValueError(f"--param {key}={value}: {key} is {kind} (default "
                                 f"{_shown(out[key])})") from None
        return out


def _kind(default, plural: str = "") -> str:
    """What a parameter with ``default`` holds: "an integer", or "integers" with ``plural``."""
    noun = ("boolean" if isinstance(default, bool) else "integer" if isinstance(default, int)
            else "number" if isinstance(default, float) else "text")
    return noun + plural if plural else ("an " if noun[0] in "aeiou" else "a ") + noun


def _shown(default) -> str:
    return (",".join("all" if d is None else str(d) for d in default)
            if isinstance(default, tuple) else str(default))


def _convert(default, text: str):
    if isinstance(default, tuple):
        kind = type(default[0]) if default else float
        return tuple(None if None in default and t.strip() == "all" else _convert(kind(), t.strip())
                     for t in text.split(",") if t.strip())
    if isinstance(default, bool):
        return text.lower() in ("1", "true", "yes", "on")
    if isinstance(default, int):
        return int(text)
    if isinstance(default, float):
        return float(text)
    return text


#: recipe name -> :class:`Recipe`, filled by :func:`recipe` as the recipe modules are imported
RECIPES: dict[str, Recipe] = {}


def recipe(name: str, summary: str, sources: str, **defaults):
    """Register the decorated function ``f(context, params) -> Report`` as recipe ``name``
    with parameters ``defaults``."""
    def register(function):
        RECIPES[name] = Recipe(name, summary, sources, defaults, function)
        return function
    return register


def load_recipes() -> dict[str, Recipe]:
    """:data:`RECIPES` with every module of :data:`RECIPE_MODULES` imported."""
    for module in RECIPE_MODULES:
        importlib.import_module(f"{__package__}.{module}")
    return RECIPES


def run_recipe(name: str, context: Context, params: dict | None = None):
    """Run recipe ``name`` (see :data:`RECIPES`) and return its report."""
    recipes = load_recipes()
    if name not in recipes:
        raise ValueError(f"unknown recipe {name!r}; recipes: {', '.join(sorted(recipes))}")
    r = recipes[name]
    p = r.params(params)
    if context.trials is not None:
        given = (params or {}).get("trials")
        if given is not None and int(p["trials"]) != context.trials:  # --param trials=N too
            raise ValueError(f"trials given twice ({context.trials} and --param trials="
                             f"{given}): give --trials N alone")
        p["trials"] = context.trials
    p["seed"] = context.seed
    report = r.function(context, p)
    files = context.files
    report.params = p | {"collection": files.settings()["run_folders"] + [files.qrels]}
    if files.graded > 1:  # the qrels' relevant judgments regraded (CollectionFiles.graded)
        report.params |= {"graded": files.graded, "graded_seed": files.graded_seed}
    return report


def local_only(context: Context, name: str,
               where: str = "on local processes only (--workers N)") -> None:
    """Refuse a Dask scheduler for recipe ``name``, whose trials do not run on the experiment
    runner but ``where``: ``--scheduler`` would otherwise be silently ignored."""
    if context.scheduler is not None:
        raise ValueError(f"{name} runs {where}, not on a Dask scheduler: leave out "
                         "--scheduler")


def run_experiment(context: Context, p: dict, strategies, measures, *, ci=None,
                   pool_depth: float = 100.0):
    """The :class:`~irsample.experiments.Experiment` of a recipe's ``strategies`` and
    ``measures`` (estimator -> target) over ``p["trials"]`` trials, run as ``context`` says, on
    the depth-``pool_depth`` pool."""
    exp = Experiment(collection=context.files, strategies=strategies, measures=measures,
                     seed=context.seed, trials=p["trials"], ci=ci, alpha=None,
                     pool_depth=pool_depth)
    executor = "dask" if context.scheduler is not None else context.executor
    return exp.run(executor=executor, workers=context.workers, scheduler=context.scheduler,
                   progress=context.progress)


def pool_size(context: Context, depth: float = 100.0) -> int:
    """Documents in the depth-``depth`` pool of the context's pooled runs."""
    data = load(context.files)
    return len(data.frame(data.info.pooled_runs, depth))
