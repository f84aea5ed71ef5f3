"""condensed/induced/subAP on TREC-8 ad hoc (every sixth run, sorted by name).

- Official qrels (the whole depth-100 pool judged, no -1 entries): induced AP and subAP equal AP,
  as paper 001 requires of its measures; condensed AP does not (unpooled documents go).
- The random10 sample (10% of each pool judged, the rest -1): condensed(M) equals M under -J
  exactly; induced AP and subAP estimate the full-judgment MAP far better than AP with the
  sample does (paper 001 Figs. 7 and 11).
"""

from __future__ import annotations

import numpy as np
import pytest

from irsample.evaluation import evaluate_collection
from irsample.io import load_qrels, load_runs
from irsample.measures import parse_all
from irsample.measures.incomplete.condensed import Condensed
from irsample.model import Collection, Judgments

pytestmark = pytest.mark.shared


@pytest.fixture(scope="module")
def trec8(shared):
    base = shared / "data" / "trec8-adhoc"
    runs = load_runs(sorted((base / "runs").glob("input.*.gz"))[::6])
    full = load_qrels(base / "qrels.trec8.adhoc")
    sample = load_qrels(shared / "golden" / "trec8" / "random10.trec_eval.qrels.gz")
    collection = Collection.build(runs, [full])
    return (
        collection,
        Judgments.from_qrels(collection, full),
        Judgments.from_qrels(collection, sample),
    )


def values(collection, judgments, names, **options):
    ev = evaluate_collection(collection, judgments, parse_all(names), **options)
    return {m.name: ev.values[..., j] for j, m in enumerate(ev.measures)}, ev


def test_complete_pool_induced_and_subap_are_ap(trec8):
    collection, full, _ = trec8
    v, _ = values(collection, full, ["AP", "induced(AP)", "condensed(AP)", "subAP"])
    np.testing.assert_array_equal(v["induced(AP)"], v["AP"])
    np.testing.assert_allclose(v["subAP"], v["AP"], rtol=1e-14, atol=0)
    assert np.nanmean(v["condensed(AP)"]) > np.nanmean(v["AP"]) + 0.005


def test_sample_condensed_is_judged_only(trec8):
    collection, _, sample = trec8
    names = ["map", "bpref", "ndcg", "P.10", "Rprec", "recip_rank", "ndcg_cut.10", "num_ret"]
    plain = parse_all(names)
    ev = evaluate_collection(collection, sample, [Condensed(m) for m in plain])
    ref = evaluate_collection(collection, sample, plain, judged_only=True)
    np.testing.assert_array_equal(ev.values, ref.values)
    np.testing.assert_array_equal(ev.summary, ref.summary)


def test_sample_estimates_track_full_map(trec8):
    collection, full, sample = trec8
    truth = values(collection, full, ["AP"])[1].summary[:, 0]
    v, ev = values(collection, sample, ["AP", "induced(AP)", "subAP"])
    summary = {m.name: ev.summary[:, j] for j, m in enumerate(ev.measures)}
    sampled_error = np.abs(summary["AP"] - truth).mean()
    assert sampled_error > 0.05  # unjudged documents taken as non-relevant: far too low
    for name in ("induced(AP)", "subAP"):
        assert np.isfinite(v[name][ev.evaluated]).all()
        assert np.abs(summary[name] - truth).mean() < sampled_error / 2, name
        assert np.corrcoef(summary[name], truth)[0, 1] > 0.9, name
