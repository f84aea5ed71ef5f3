"""Probability samples of a pool: the designs that draw documents to judge, with every
document's inclusion probability known.

- :mod:`.cells`: the (topic, stratum) cells, their sample sizes k of N and the SRS draw;
- :mod:`.budget`: how a budget of B judgments sets the sample sizes;
- :mod:`.stratified`: uniform, stratified by best rank, depth-k + random (the inferred
  estimators' designs), and the strata spec ``"1-10:1,11-100:0.2"``;
- :mod:`.importance`: importance (systematic PPS, pi proportional to the AP prior) for statAP;
- :mod:`.allocated`: fixed sample sizes per (topic, stratum) cell, as a planner sets them
  (:mod:`.plan_file`: its entry in a design file);
- :mod:`.union`: the union of judging rounds (``irsample plan --next-round``), as recorded;
- :mod:`.depth`: the depth-k pool as a sample of a deeper pool (paper 001 §5.2);
- :mod:`.named`: designs by name (``2strata@2000``) and paper 002's presets.

Every design class registers itself by its ``kind`` when its module is imported
(:data:`irsample.design.frame.DESIGNS`): every module of this room is imported below, so a new
design is one new module here and nothing else (docs/adding-a-design.md).
"""

from . import stratified as _stratified
from .allocated import Allocated, allocated
from .budget import Budget
from .importance import Importance, ap_prior, importance
from .named import PRESETS, parse_design, preset
from .stratified import *  # noqa: F403  (names listed once, in stratified.__all__)

__all__ = [
    "PRESETS", "Allocated", "Budget", "Importance", "allocated", "ap_prior", "importance",
    "parse_design", "preset", *_stratified.__all__,
]


def _register_every_design() -> None:
    """Import every module of this room, so each design class in it registers its kind."""
    import importlib
    import pkgutil

    for module in pkgutil.iter_modules(__path__):  # noqa: F405 (the package's own path)
        importlib.import_module(f"{__name__}.{module.name}")


_register_every_design()
