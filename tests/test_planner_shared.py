"""Planned draws are the same, to the bit, since the planner keeps what depends on the pool alone
(the relevance features, the runs' walked pool rows) and what a search asks again (a candidate's
cell weights), reads its cumulative sums rank-first, and runs BLAS on one thread in simulations.

``tests/data/planned_before.npz`` holds the draws of irsample at commit f2c6244, before those
changes: on the synthetic graded pool of ``tests/test_planner.py``, planned designs for xinfAP and
infNDCG at three budgets, in one and in two batches (``default_rng(k)``), every judged row and
inclusion probability. One draw was regenerated since, on purpose: the band's new switch
(``plan.band_reason``, e87ca89) bands xinfAP's plan at 400 judgments in one batch, whose free
plan judges most cells whole and samples few relevant documents below certainty, where
f2c6244's switch did not (with the switch forced free, the draw is f2c6244's bit for bit; the
other eleven draws are unchanged). All were regenerated again when the relevance model's fit
went from L-BFGS, which stopped short of the mode, to Newton's method, which reaches it: the
fitted probabilities moved by up to a few 1e-4 and the plans' cells with them (seven of the
twelve draws moved; ``benchmarks/relevance_fit.py``). And again when the model's slopes took a
weak prior (``relevance_model.SLOPE_SD``): 7 of this pool's 17 fits had separated judged rows
and no mode, their Newton iterates ran to the step limit with parameters of 120-500, whose last
bits the machine's BLAS set (two draws came out a document or two apart on an AMD EPYC
machine); with the prior every fit converges (at most 28 objective evaluations, parameters of
at most 11), and 7 of the 12 draws moved, the separated fits' probabilities near 0 and 1 no
longer steering the plans. Regenerate only from a commit whose draws are known good:
``python -m tests.test_planner_shared``.
"""

from __future__ import annotations

import types
from pathlib import Path

import numpy as np

from irsample.design import SamplingFrame
from irsample.design.planner.plan import PILOT_EDGE, candidate_edges
from irsample.design.planner.relevance_model import fit_relevance
from irsample.design.planner.sequential import PlannedDesign
from irsample.design.planner.variance_model import VarianceModel

from .bitwise import differing
from .synthetic import pooled_collection

BEFORE = Path(__file__).parent / "data" / "planned_before.npz"


def world():
    collection, table = pooled_collection(
        3, n_topics=6, n_runs=6, n_docs=800, depth=60, pool_depth=40, relevant=(10, 40))
    return collection, table


def draws(frames) -> dict:
    """Every planned draw, each on the frame ``frames()`` gives (one reused, or a new one)."""
    out = {}
    k = 0
    for estimator in ("xinfAP", "infNDCG"):
        for budget in (60, 150, 400):
            for batches in (1, 2):
                frame = frames()
                design = PlannedDesign(budget, estimator, batches=batches)
                sample = design.select(frame, rng=np.random.default_rng(k))
                key = f"{estimator}/{budget}/{batches}"
                out[f"{key}/judged"] = np.asarray(sample.judged)
                out[f"{key}/inclusion"] = np.asarray(sample.inclusion)
                out[f"{key}/stratum"] = np.asarray(sample.stratum)
                k += 1
    return out


def _reused():
    collection, table = world()
    frame = SamplingFrame.from_qrels(collection, table)
    return lambda: frame


def test_planned_draws_are_those_before():
    now = draws(_reused())
    assert not differing(BEFORE, now)


def test_a_pool_planned_again_draws_as_a_new_one():
    """Draws on one frame, whose kept features and walked rows serve every plan, equal draws on
    a new frame each time (nothing kept)."""
    collection, table = world()
    fresh = draws(lambda: SamplingFrame.from_qrels(collection, table))
    again = draws(_reused())
    assert all(np.array_equal(fresh[k], again[k], equal_nan=True) for k in fresh)


def test_kept_cell_weights_are_those_of_the_rank_last_sums():
    collection, table = world()
    frame = SamplingFrame.from_qrels(collection, table)
    judged = np.zeros(len(frame), bool)
    judged[::7] = True
    model = fit_relevance(frame, judged, frame.rel)
    vm = VarianceModel.build(frame, model, "xinfAP")
    for edges in candidate_edges(vm.depth, 4, (PILOT_EDGE,)):
        first = vm.cells_and_bias(edges)
        assert vm.cells_and_bias(edges) is first  # kept
        assert not any(a.flags.writeable for a in first)
        assert all(np.array_equal(a, b) for a, b in zip(first, rank_last(vm, edges),
                                                        strict=True))


def rank_last(vm, edges):
    """The cell weights computed on the rank-last sums, as before they were read rank-first."""
    fresh = VarianceModel(vm.cum_runs, vm.cum_rows, vm.shift, vm.depth, vm.n_topics,
                          vm.relevant, vm.ratio)

    def between(self, cum, edges):
        hi = np.array(list(edges[1:]) + [self.depth + 1]) - 2
        lo = np.array(edges) - 2
        return cum[..., hi] - np.where(lo >= 0, cum[..., np.maximum(lo, 0)], 0.0)

    fresh.__dict__["_by_rank"] = (vm.cum_runs, vm.cum_rows)
    fresh.__dict__["_between"] = types.MethodType(between, fresh)
    return fresh._cells_and_bias(tuple(edges))


def test_a_task_runs_blas_on_one_thread():
    """The relevance fit's small products spun a second BLAS thread (experiments/trial.py)."""
    from threadpoolctl import threadpool_info

    from irsample.experiments.trial import single_threaded

    with single_threaded():
        assert all(i["num_threads"] == 1 for i in threadpool_info() if i["user_api"] == "blas")


if __name__ == "__main__":  # pragma: no cover - regenerates the fixture
    np.savez_compressed(BEFORE, **draws(_reused()))
