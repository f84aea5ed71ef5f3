"""The numba passes of ``measures/ht/frame_sums.py`` that replace gathers and ``np.bincount``
calls over every ranked position of the frame: the same sums, to the bit (one pass in position
order adds in ``np.bincount``'s order)."""

from __future__ import annotations

import numpy as np

from irsample.measures.ht.frame_sums import segment_chance_sums, segment_reach_total


def _positions(rng, n_pos=5000, n_docs=700, n_seg=40, n_strata=3, k=4):
    seg = np.sort(rng.integers(0, n_seg, n_pos)).astype(np.int64)
    doc = rng.integers(0, n_docs, n_pos).astype(np.int32)
    rank = rng.integers(1, 101, n_pos).astype(np.int32)
    return dict(seg=seg, doc=doc, rank=rank, n_seg=n_seg, n_docs=n_docs, n_strata=n_strata,
                stratum=rng.integers(0, n_strata, n_docs).astype(np.int64),
                certain=rng.random(n_docs) < 0.2, fitted=rng.random(n_docs),
                slope=rng.random(n_docs) * 0.25, x=rng.standard_normal((n_docs, k)))


def test_reach_total_is_the_bincount_over_the_reach():
    p = _positions(np.random.default_rng(1))
    per_doc = np.random.default_rng(2).random(p["n_docs"])
    for cutoff in (10, 100, np.iinfo(np.int64).max):
        value = np.where(p["rank"] <= cutoff, per_doc[p["doc"]], 0.0)
        expected = np.bincount(p["seg"], weights=value, minlength=p["n_seg"])
        got = segment_reach_total(p["seg"], p["doc"], p["rank"], cutoff, per_doc, p["n_seg"])
        assert np.array_equal(got, expected)


def test_chance_sums_are_the_bincounts_of_the_uncertain_positions():
    p = _positions(np.random.default_rng(3))
    seg, doc, n_seg, n_strata = p["seg"], p["doc"], p["n_seg"], p["n_strata"]
    for cutoff in (10, np.iinfo(np.int64).max):
        chance = (p["rank"] <= cutoff) & ~p["certain"][doc]
        key = seg * n_strata + p["stratum"][doc]
        relevant = np.bincount(key, weights=np.where(chance, p["fitted"][doc], 0.0),
                               minlength=n_seg * n_strata).reshape(n_seg, n_strata)
        slope = np.where(chance, p["slope"][doc], 0.0)
        gradient = np.stack([np.bincount(seg, weights=slope * p["x"][doc, i], minlength=n_seg)
                             for i in range(p["x"].shape[1])], axis=1)
        got = segment_chance_sums(seg, doc, p["rank"], cutoff, p["certain"], p["stratum"],
                                  p["fitted"], p["slope"], p["x"], n_seg, n_strata)
        assert np.array_equal(got[0], relevant)
        assert np.array_equal(got[1], np.bincount(seg, weights=slope, minlength=n_seg))
        assert np.array_equal(got[2], gradient)
        none = segment_chance_sums(seg, doc, p["rank"], cutoff, p["certain"], p["stratum"],
                                   p["fitted"], np.zeros(p["n_docs"]),
                                   np.zeros((p["n_docs"], 0)), n_seg, n_strata)
        assert np.array_equal(none[0], relevant) and none[2].shape == (n_seg, 0)
