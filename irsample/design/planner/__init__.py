"""The design planner: a relevance model from a pilot, the predicted variance of the mean
estimate for any strata and sample sizes, and the Neyman allocation over topics and rank strata
that minimises it for a budget; planning in batches that re-plan after every round.

- :mod:`.relevance_model`: which pool documents are relevant, from the runs and a pilot;
- :mod:`.variance_model`: the predicted stratified variance (the planner's objective);
- :mod:`.bounds`: the least and largest sample size per cell (forced top-ups, the rate band);
- :mod:`.plan`: strata search, Neyman allocation, budget for a target half-width;
- :mod:`.sequential`: :class:`PlannedDesign` and :func:`judge_in_batches`.
"""

from .plan import Plan, budget_for_halfwidth, pilot, plan
from .relevance_model import RelevanceModel, fit_relevance
from .sequential import PlannedDesign, judge_in_batches

__all__ = [
    "Plan", "PlannedDesign", "RelevanceModel", "budget_for_halfwidth", "fit_relevance",
    "judge_in_batches", "pilot", "plan",
]
