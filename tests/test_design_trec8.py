"""TREC-8 ad hoc (shared): the depth-100 pool of the 71 pooled runs, built from the runs alone,
is exactly the official qrels' document set of every topic; and the number of groups retrieving
each judged document agrees with the counts NIST published in ``annotated-qrels.gz`` (which
count the top 100 of all 129 runs, pooled or not)."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from irsample.design import Pool
from irsample.design.pools import runs_from_list
from irsample.io import load_qrels, load_runs
from irsample.io.lists import read_group_map, read_run_list
from irsample.model import Collection

pytestmark = pytest.mark.shared


@pytest.fixture(scope="module")
def trec8(shared):
    base = shared / "data" / "trec8-adhoc"
    runs = load_runs(sorted((base / "runs").glob("input.*.gz")))
    collection = Collection.build(runs)  # no qrels: pools come from the rankings alone
    groups = {run: g for run, (g, _) in read_group_map(base / "runs_table.adhoc").items()}
    return base, collection, groups


@pytest.fixture(scope="module")
def pooled(trec8):
    base, collection, groups = trec8
    flags = base / "run-pooled-flag.txt"
    chosen = runs_from_list(collection, read_run_list(flags), str(flags))
    return base, Pool.from_runs(collection, chosen, depth=100, groups=groups)


def test_depth_100_pool_of_the_pooled_runs_is_the_official_qrels(pooled):
    base, pool = pooled
    assert len(pool.runs) == 71
    qrels = load_qrels(base / "qrels.trec8.adhoc")
    official = set(zip(
        [q.decode() for q in qrels.qid.to_pylist()], [d.decode() for d in qrels.docno.to_pylist()]
    ))
    ours = set(zip(pool.qids(), pool.docnos()))
    for topic in sorted({q for q, _ in official}):
        a = {d for q, d in ours if q == topic}
        b = {d for q, d in official if q == topic}
        assert a == b, (topic, sorted(a - b)[:5], sorted(b - a)[:5])
    assert len(ours) == len(official) == 86830
    sizes = pool.stats().size_by_depth
    assert sizes.shape == (50, 100) and sizes[:, -1].sum() == 86830
    assert np.all(np.diff(sizes, axis=1) >= 0)


def test_group_counts_match_the_annotated_qrels(trec8):
    """``annotated-qrels.gz`` gives, per judged document, how many groups retrieved it: the
    groups of all 129 runs (pooled or not) within depth 100. Every one of the 86,830 counts
    agrees with our per-row group counts over that pool (with the 71 pooled runs only, about
    25,500 differ: NIST counted the unpooled runs too)."""
    base, collection, groups = trec8
    annotated = {}
    with gzip.open(base / "annotated-qrels.gz", "rt") as fh:
        for line in fh:
            fields = line.split()
            annotated[(fields[0], fields[2])] = int(fields[4])
    pool = Pool.from_runs(collection, depth=100, groups=groups)
    ours = dict(zip(zip(pool.qids(), pool.docnos()), pool.n_groups.tolist()))
    assert len(annotated) == 86830 and set(annotated) <= set(ours)
    differ = [k for k in annotated if ours[k] != annotated[k]]
    assert not differ, (len(differ), differ[:5], [(ours[k], annotated[k]) for k in differ[:5]])
