"""Probability samples of a pool: the designs that draw documents to judge, with every
document's inclusion probability known.

- :mod:`.stratified`: uniform, stratified by best rank, depth-k + random (the inferred
  estimators' designs), and the strata spec ``"1-10:1,11-100:0.2"``;
- :mod:`.importance`: importance (Poisson, pi proportional to the AP prior) for statAP;
- :mod:`.allocated`: fixed sample sizes per (topic, stratum) cell, as a planner sets them;
- :mod:`.budget`: how a budget of B judgments sets the sample sizes;
- :mod:`.named`: designs by name (``2strata@2000``) and paper 002's presets.
"""

from .allocated import Allocated, allocated
from .budget import Budget
from .importance import Importance, ap_prior, importance
from .named import PRESETS, parse_design, preset
from .stratified import (
    RankStratum,
    Stratified,
    Terabyte,
    Uniform,
    parse_strata,
    stratified,
    terabyte,
    uniform,
)

__all__ = [
    "PRESETS", "Allocated", "Budget", "Importance", "RankStratum", "Stratified", "Terabyte",
    "Uniform", "allocated", "ap_prior", "importance", "parse_design", "parse_strata", "preset",
    "stratified", "terabyte", "uniform",
]
