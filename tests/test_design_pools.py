"""Depth-k pools from runs alone: best ranks, contributing runs and groups, statistics against a
brute-force oracle; run lists and group maps; frames over a pool's rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irsample.design import Pool, SamplingFrame, select_runs
from irsample.design.pools import runs_from_list
from irsample.errors import DesignError, InputError, InputWarning
from irsample.io import load_qrels, load_runs
from irsample.io.lists import read_group_map, read_run_list
from irsample.model import Collection


def collection_of(rankings: dict[str, dict[str, list[str]]]) -> Collection:
    """{run: {topic: [docno, ...] in rank order}} -> Collection (scores decrease with rank)."""
    rows = [
        {"qid": q, "docno": d, "score": float(len(docs) - i), "tag": run}
        for run, topics in rankings.items() for q, docs in topics.items()
        for i, d in enumerate(docs)
    ]
    return Collection.build(load_runs(pd.DataFrame(rows)))


RANKINGS = {
    "A": {"1": ["a", "b", "c", "d"], "2": ["x", "y"]},
    "B": {"1": ["c", "e", "a"]},
    "C": {"1": ["f", "a", "g"], "2": ["y", "z"]},
}


def rows_of(pool: Pool) -> dict[tuple[str, str], tuple]:
    out = {}
    for i, (q, d) in enumerate(zip(pool.qids(), pool.docnos())):
        groups = None if pool.n_groups is None else int(pool.n_groups[i])
        out[(q, d)] = (int(pool.best_rank[i]), int(pool.n_runs[i]), groups)
    return out


def test_depth_k_pool_by_hand():
    col = collection_of(RANKINGS)
    pool = Pool.from_runs(col, depth=2, groups={"A": "g1", "B": "g1", "C": "g2"})
    assert rows_of(pool) == {
        ("1", "a"): (1, 2, 2), ("1", "b"): (2, 1, 1), ("1", "c"): (1, 1, 1),
        ("1", "e"): (2, 1, 1), ("1", "f"): (1, 1, 1),
        ("2", "x"): (1, 1, 1), ("2", "y"): (1, 2, 2), ("2", "z"): (2, 1, 1),
    }
    assert pool.qids() == sorted(pool.qids()) and pool.docnos()[:5] == ["a", "b", "c", "e", "f"]
    stats = pool.stats()
    assert stats.size_by_depth.tolist() == [[3, 5], [2, 3]]
    assert stats.unique_run.tolist() == [4, 2]
    assert stats.unique_group.tolist() == [4, 2]
    b_only = Pool.from_runs(col, ["B", 0], depth=1, groups={"A": "g1", "B": "g1"})
    assert rows_of(b_only) == {("1", "a"): (1, 1, 1), ("1", "c"): (1, 1, 1), ("2", "x"): (1, 1, 1)}
    whole = Pool.from_runs(col, depth=None)
    assert len(whole) == 10 and whole.stats().size_by_depth.shape == (2, 4)
    assert rows_of(whole)[("1", "a")][1] == 3


def test_documents_of_one_group_count_as_unique_to_the_group():
    col = collection_of(RANKINGS)
    pool = Pool.from_runs(col, depth=3, groups={"A": "g", "B": "g", "C": "h"})
    row = rows_of(pool)
    assert row[("1", "c")] == (1, 2, 1)  # runs A and B, both of group g
    stats = pool.stats()
    assert stats.unique_run.tolist() == [4, 2]  # b, e, f, g; x, z
    assert stats.unique_group[0] - stats.unique_run[0] == 1  # c: one group, two runs
    assert list(stats.summary().columns) == ["topic", "size", "unique_run", "unique_group"]
    depth = stats.by_depth()
    assert depth.shape == (6, 3) and depth["size"].tolist() == [3, 5, 6, 2, 3, 3]


@st.composite
def random_runs(draw):
    n_runs, n_topics = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    docs = [f"d{i}" for i in range(12)]
    rankings = {}
    for r in range(n_runs):
        topics = {}
        for t in range(n_topics):
            k = draw(st.integers(0, 8))
            if k:
                topics[f"q{t}"] = draw(st.permutations(docs))[:k]
        rankings[f"r{r}"] = topics or {"q0": ["d0"]}
    groups = {run: draw(st.sampled_from(["G", "H"])) for run in rankings}
    return rankings, groups, draw(st.integers(1, 9))


@settings(max_examples=60, deadline=None)
@given(random_runs())
def test_pools_agree_with_a_brute_force_oracle(case):
    rankings, groups, depth = case
    col = collection_of(rankings)
    pool = Pool.from_runs(col, depth=depth, groups=groups)
    expected: dict[tuple[str, str], list] = {}
    for run, topics in rankings.items():
        for q, docs in topics.items():
            for i, d in enumerate(docs[:depth]):
                best, runs, grps = expected.setdefault((q, d), [np.inf, 0, set()])
                expected[(q, d)] = [min(best, i + 1), runs + 1, grps | {groups[run]}]
    assert rows_of(pool) == {k: (v[0], v[1], len(v[2])) for k, v in expected.items()}
    stats = pool.stats()
    for t, q in enumerate(col.topics):
        for k in range(1, depth + 1):
            assert stats.size_by_depth[t, k - 1] == sum(
                1 for (qq, _), v in expected.items() if qq == q and v[0] <= k
            )
        assert stats.unique_run[t] == sum(
            1 for (qq, _), v in expected.items() if qq == q and v[1] == 1
        )
        assert stats.unique_group[t] == sum(
            1 for (qq, _), v in expected.items() if qq == q and len(v[2]) == 1
        )


def test_run_selection_and_errors():
    col = collection_of(RANKINGS)
    assert select_runs(col) == (0, 1, 2) and select_runs(col, ["C", 0]) == (2, 0)
    assert select_runs(col, "B") == (1,)
    with pytest.raises(DesignError, match="unknown run 'D'"):
        select_runs(col, ["D"])
    with pytest.raises(DesignError, match="run index"):
        select_runs(col, [3])
    with pytest.raises(DesignError, match="distinct"):
        select_runs(col, [0, "A"])
    with pytest.raises(DesignError, match="pool depth"):
        Pool.from_runs(col, depth=0)
    with pytest.raises(DesignError, match="no group for run"):
        Pool.from_runs(col, depth=2, groups={"A": "g"})


def test_run_lists_and_group_maps(tmp_path):
    flags = tmp_path / "flags"
    flags.write_text("# pooled runs\nA judged\nB notjudged\n\nC\n")
    names = read_run_list(flags)
    assert names == [("A", 2), ("C", 5)]
    col = collection_of(RANKINGS)
    assert runs_from_list(col, names, str(flags)) == (0, 2)
    flags.write_text("D judged\nE\n")
    with pytest.raises(InputError, match=r"flags:1: unknown run 'D': the list names none of"):
        runs_from_list(col, read_run_list(flags), str(flags))
    # a roster naming more runs than are given (TREC's flags with a subset of the runs): the
    # runs given are pooled, the others named in a warning at the first one's line
    flags.write_text("A judged\nD judged\nC\n")
    with pytest.warns(InputWarning, match=r"flags:2: 1 of the 3 runs listed are not among the "
                      r"runs given, so not pooled: D$"):
        assert runs_from_list(col, read_run_list(flags), str(flags)) == (0, 2)
    for text, message in [
        ("A maybe\n", ":1: expected a run name"),
        ("A\nA\n", ":2: run 'A' listed twice"),
        ("# none\n", "empty file"),
    ]:
        flags.write_text(text)
        with pytest.raises(InputError, match=message):
            read_run_list(flags)
    table = tmp_path / "table"
    table.write_text("A:city:x@y:adhoc\nB:city:z\nC : ucla\n")
    assert {k: v[0] for k, v in read_group_map(table).items()} == {
        "A": "city",
        "B": "city",
        "C": "ucla",
    }
    pids = tmp_path / "pids"
    pids.write_text("A city\nB  ucla\n")
    assert read_group_map(pids) == {"A": ("city", 1), "B": ("ucla", 2)}
    pids.write_text("A city\nB\n")
    with pytest.raises(InputError, match="pids:2: expected 'run group'"):
        read_group_map(pids)


def test_frame_from_pool_keeps_the_pool_rows_in_order():
    col = collection_of(RANKINGS)
    qrels = load_qrels(pd.DataFrame({
        "qid": ["1"] * 6 + ["2"] * 3 + ["1"], "docno": list("abcefg") + list("xyz") + ["q"],
        "rel": [1, 0, 2, 0, 1, 0, 1, 0, 1, 1],
    }))
    pool = Pool.from_runs(col, depth=2)
    frame = SamplingFrame.from_pool(pool, qrels)
    assert np.array_equal(frame.tdi, pool.tdi) and np.array_equal(frame.best_rank, pool.best_rank)
    assert frame.rel.tolist() == [1, 0, 2, 0, 1, 1, 0, 1] and frame.depth == 2
    assert frame.runs == (0, 1, 2)
    truth = frame.judgments()
    assert truth.judged_grades.tolist() == [2, 1, 1, 0, 0, 1, 1, 0]  # g, q: not in the pool
    assert truth.grade_offsets.tolist() == [0, 5, 8]
    with pytest.raises(
        DesignError, match="1 documents of the pool have no judgment, e.g. topic 1 document d"
    ):
        SamplingFrame.from_pool(Pool.from_runs(col, depth=4), qrels)
