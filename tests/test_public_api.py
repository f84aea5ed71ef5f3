"""The public API's names, pinned: the package's front door, :mod:`irsample.measures` and the
rooms of the measures (their public entry points), and every import path of the flat measures
modules that moved into those rooms, which keeps working (with a DeprecationWarning) and gives
the same objects as the new paths. A name added on purpose is added here too; one removed is a
break for users."""

from __future__ import annotations

import importlib
import sys
import warnings

import pytest

import irsample
import irsample.measures
from irsample._moved import MOVED

TOP = (
    "Collection Evaluation InputError IrsampleError Judgments Measure MeasureError "
    "compare compare_table estimate evaluate load measures_from parse"
).split()
MEASURES = "EvalContext MEASURE_SETS Measure REGISTRY TREC_REGISTRY parse parse_all".split()
ROOMS = {
    "trec_eval": (
        "AP BinG Bpref ElevenPointAP G GMAP GMBpref IPrec Judged NDCG NDCGRel "
        "NumNonrelJudgedRet NumQ NumRel NumRelRet NumRet P RNDCG RR Recall RelString "
        "RelativeP Rprec RprecMult RunId SetAP SetF SetP SetR SetRelativeP Success "
        "Unjudged Utility"
    ).split(),
    "incomplete": (
        "Condensed Induced InfAP InfIPrec InfNDCG InfP InumRel InumRelRet PInterval RBP "
        "SDCG StatAP StatAPVariance StatNumRel StatP StatRprec SubAP XInfAP "
        "compare_intervals"
    ).split(),
    "ht": "Estimate HT PairEstimates estimate pair_estimates supported_text".split(),
    "ppi": "Auto PPI PPIEstimate attach_labels label_contexts ppi_estimate".split(),
}
#: the public names of each flat module of irsample.measures before the move
OLD_PATHS = {
    "ap_variance": "ap_variance".split(),
    "average_precision": "AP Bpref GMAP GMBpref".split(),
    "condensed": "Condensed Induced reduced_context".split(),
    "counts": "NumNonrelJudgedRet NumQ NumRel NumRelRet NumRet RunId".split(),
    "design_based": (
        "Estimate HT census_topics estimate impute linearised_variance supported_text "
        "tdi_relevant topic_states"
    ).split(),
    "gain": "BinG G NDCG NDCGRel RNDCG ideal_span".split(),
    "gain_tables": (
        "cumulative_dcg gain_tables gains_text ideal_dcg_at parse_gains position_gains "
        "shared_gain_tables"
    ).split(),
    "ht_design": "HTDesign TopicTotal cell_variance ht_design topic_total total_variance".split(),
    "ht_ideal": (
        "grade_counts ideal_and_slopes ideal_dcg ideal_linearisation hits_and_donors"
    ).split(),
    "ht_jackknife": "ap_replicates jackknife_pair_variance jackknife_variance".split(),
    "ht_kernels": "ap_walk cell_sums gather_design weighted_prefix".split(),
    "ht_pairs": "PairEstimates pair_estimates".split(),
    "inferred": "InfAP".split(),
    "interpolated": "ElevenPointAP IPrec RprecMult interpolated_precision".split(),
    "judged": "Judged RelString Unjudged".split(),
    "ppi": "PPIEstimate label_contexts ppi_estimate".split(),
    "ppi_ap": "choose fixed_tuning ratio_form strata_moments".split(),
    "ppi_control": "control_estimate ndcg_slopes".split(),
    "ppi_difference": (
        "Parts cell_moments difference_estimate identified influence_cells outside_sums "
        "pooled_weights variance_of"
    ).split(),
    "ppi_judgments": (
        "agreeing_topics census_possible informative_topics label_grades labelled_census "
        "labelled_sample"
    ).split(),
    "ppi_kernels": "influence_sums".split(),
    "ppi_measures": "Auto PPI attach_labels".split(),
    "precision": (
        "P RR Recall RelativeP Rprec SetAP SetF SetP SetR SetRelativeP Success Utility"
    ).split(),
    "residual": (
        "PInterval RBP SDCG compare_intervals interval_outcomes point_estimates "
        "rbp_gain_table"
    ).split(),
    "sampled": (
        "InfIPrec InfNDCG InfP InumRel InumRelRet XInfAP estimated_relevant expected_at "
        "ideal_dcg walk"
    ).split(),
    "sampled_variance": "infndcg_variance variance_walk xinfap_variance".split(),
    "stat": (
        "StatAP StatAPVariance StatNumRel StatP StatRprec estimated_relevant stat_walk"
    ).split(),
    "stratified": (
        "PoolLayout count expected_relevant gain_table infap_precision pooled_positions "
        "sample_eval_expected sample_eval_precision segment stratified_precision"
    ).split(),
    "subcollection": "SubAP expected_precision pool_fraction".split(),
}


def test_top_level_names():
    assert sorted(irsample.__all__) == TOP
    for name in TOP:
        assert getattr(irsample, name) is not None


def test_measures_names():
    assert sorted(irsample.measures.__all__) == MEASURES
    for name in MEASURES:
        assert getattr(irsample.measures, name) is not None


@pytest.mark.parametrize("room", sorted(ROOMS))
def test_rooms_export_their_entry_points(room):
    module = importlib.import_module(f"irsample.measures.{room}")
    assert sorted(module.__all__) == ROOMS[room]
    for name in ROOMS[room]:
        value = getattr(module, name)
        assert getattr(value, "__module__", "").startswith(f"irsample.measures.{room}.")


@pytest.mark.parametrize("old", sorted(OLD_PATHS))
def test_old_paths_still_import(old):
    """``import irsample.measures.<old>`` and ``from ... import`` of each of its public names
    work, give the object of the new path, and warn once naming the new home."""
    full = f"irsample.measures.{old}"
    sys.modules.pop(full, None)  # imported by an earlier test: import it afresh
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(full)
    if full in MOVED:
        assert any(issubclass(w.category, DeprecationWarning) and MOVED[full][0] in str(w.message)
                   for w in caught)
    for name in OLD_PATHS[old]:
        value = getattr(module, name)
        homes = MOVED.get(full, (full,))
        assert any(getattr(importlib.import_module(h), name, None) is value for h in homes)


def test_old_paths_cover_every_moved_module():
    assert set(MOVED) == {f"irsample.measures.{old}" for old in OLD_PATHS} - {
        "irsample.measures.ppi"}  # ppi is a package now, exporting the old module's names
