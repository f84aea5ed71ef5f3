"""Every value trec_eval prints for its own test files, reproduced to the printed decimals.

Expected outputs are trec_eval's (../shared/data/trec_eval_tests, options per FLAGS.md), rbp and
rbp_resid included: trec_eval 10's rbp reads uninitialised min/max gains (spec §2), but with the
normalisation of gain_tables.rbp_gain_table every printed rbp line matches; every rbp_resid line
matches too (trec_eval 10 leaves out p^n when no unjudged document is retrieved, see
score_intervals.RBP, but these rankings are 500 documents long or hold unjudged documents). The
prefs and qrels_jg input formats are not covered.
"""

from __future__ import annotations

import pytest

from irsample.api import load, measures_from
from irsample.evaluation import evaluate_collection
from irsample.formats import to_trec

from .conftest import parse_trec_eval

pytestmark = pytest.mark.shared

CASES = {
    # expected file: (qrels, results, measures, options)
    "out.test": ("qrels.test", "results.test", ["official"], {}),
    "out.test.a": ("qrels.test", "results.test", ["all_trec"], {}),
    "out.test.aq": ("qrels.test", "results.test", ["all_trec"], {"per_topic": True}),
    "out.test.aqc": (
        "qrels.test", "results.trunc", ["all_trec"], {"per_topic": True, "complete": True}
    ),
    "out.test.aqcM": (
        "qrels.test", "results.trunc", ["all_trec"],
        {"per_topic": True, "complete": True, "max_docs": 100},
    ),
    "out.test.aql": (
        "qrels.rel_level", "results.test", ["all_trec", "relstring.20"],
        {"per_topic": True, "rel_level": 2},
    ),
    "out.test.meas_params": (
        "qrels.test", "results.test",
        [
            "iprec_at_recall.0.1,0.2,0.25,0.5,0.75", "P.3,5,7", "recall.20,2000",
            "Rprec_mult.0.2,0.35,5.0", "utility.2,-1,0,0", "11pt_avg..25,.5,.75",
            "ndcg.1=3,2=9,4=4.5", "ndcg_cut.10,20,23", "success.2,5,20",
        ],
        {"per_topic": True},
    ),
}


def _ours(shared, qrels, results, measures, options):
    base = shared / "data" / "trec_eval_tests"
    collection, judgments = load(base / qrels, base / results)
    per_topic = options.pop("per_topic", False)
    ev = evaluate_collection(collection, judgments, measures_from(measures), **options)
    return parse_trec_eval(to_trec(ev, per_topic=per_topic))


@pytest.mark.parametrize("expected_file", sorted(CASES))
def test_reproduces_trec_eval_output(shared, expected_file):
    qrels, results, measures, options = CASES[expected_file]
    expected = parse_trec_eval((shared / "data" / "trec_eval_tests" / expected_file).read_text())
    ours = _ours(shared, qrels, results, measures, dict(options))
    missing = sorted(set(expected) - set(ours))
    extra = sorted(set(ours) - set(expected))
    assert not missing, f"lines trec_eval prints that we do not: {missing[:10]}"
    assert not extra, f"lines we print that trec_eval does not: {extra[:10]}"
    wrong = [(k, expected[k], ours[k]) for k in expected if expected[k] != ours[k]]
    assert not wrong, f"{len(wrong)} values differ, e.g. {wrong[:10]}"
