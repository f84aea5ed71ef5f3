"""The planned design (fixed sample size per topic and stratum, topping up judged documents):
sizes and inclusion probabilities per cell, selection frequencies, errors, its design file and
``irsample sample`` / ``irsample merge`` with a plan file."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irsample.design import (
    Allocated,
    DesignRecord,
    Pool,
    SamplingFrame,
    allocated,
    merge,
    parse_design,
)
from irsample.errors import DesignError, InputError
from irsample.io import load_runs, read_qrels
from irsample.model import Collection

from .synthetic import pooled_collection
from .test_cli_design import cli, files  # noqa: F401 - files is a fixture used below

EDGES, LAST = (1, 6, 21), 30  # strata 1-5, 6-20, 21-30; best rank 40 is outside the design
TOPICS = ("a", "b")


def _collection(width=80) -> Collection:
    docs = [f"d{i:02d}" for i in range(width)]
    return Collection.build(load_runs(pd.DataFrame({
        "qid": np.repeat(TOPICS, width), "docno": docs * len(TOPICS),
        "score": np.tile(np.arange(width, 0, -1.0), len(TOPICS)), "tag": "R",
    })))


COLLECTION = _collection()


def pool_of_cells(size: np.ndarray, beyond: int = 3) -> Pool:
    """A pool with exactly ``size[t, s]`` rows in cell (topic t, stratum s), best ranks inside
    the stratum, plus ``beyond`` rows per topic with best rank 40 (outside the design)."""
    topic, docno, rank = [], [], []
    for t, _qid in enumerate(TOPICS):
        ranks = [EDGES[s] + j % 5 for s in range(len(EDGES)) for j in range(size[t, s])]
        ranks += [40] * beyond
        topic += [t] * len(ranks)
        docno += [f"d{i:02d}" for i in range(len(ranks))]
        rank += ranks
    _, tdi = COLLECTION.lookup(_arrow([TOPICS[t] for t in topic]), _arrow(docno))
    n = len(topic)
    return Pool(
        COLLECTION, (0,), 40.0, np.array(topic, np.int64), tdi, np.array(rank, np.float64),
        np.ones(n, np.int32), None, "<cells>",
    )


def _arrow(values):
    return pa.array(values, pa.string())


def rows_of(pool: Pool):
    return list(zip(pool.qids(), pool.docnos()))


def cell_of(pool: Pool, stratum: np.ndarray) -> np.ndarray:
    return np.where(stratum >= 0, pool.topic * len(EDGES) + stratum, -1)


@st.composite
def plans(draw):
    """Cell sizes N, planned sizes k (some beyond N), judged-before counts m <= N."""
    n = len(TOPICS) * len(EDGES)
    size = np.array(draw(st.lists(st.integers(0, 12), min_size=n, max_size=n)))
    take = np.array(draw(st.lists(st.integers(0, 15), min_size=n, max_size=n)))
    judged = np.array([draw(st.integers(0, int(s))) for s in size])
    take = np.where((size > 0) & (take == 0) & (judged == 0), 1, take)  # estimable cells
    seed = draw(st.integers(0, 2**31))
    return size.reshape(-1, len(EDGES)), take.reshape(-1, len(EDGES)), judged, seed


@settings(max_examples=80, deadline=None)
@given(plans())
def test_every_cell_gets_its_size_its_judged_documents_and_pi(case):
    size, take, judged, seed = case
    pool = pool_of_cells(size)
    stratum0 = allocated(EDGES, LAST, dict.fromkeys(TOPICS, [1, 1, 1])).select(pool, rng=0).stratum
    cell = cell_of(pool, stratum0)
    rng = np.random.default_rng(seed)
    before_rows = np.concatenate([
        rng.choice(np.flatnonzero(cell == c), m, replace=False) for c, m in enumerate(judged)
    ]).astype(np.int64)
    rows = rows_of(pool)
    outside = [rows[i] for i in np.flatnonzero(cell < 0)[:2]]  # judged but beyond the design
    before = [rows[i] for i in before_rows] + outside + [("a", "not-in-pool"), ("zz", "d01")]
    design = allocated(EDGES, LAST, dict(zip(TOPICS, take.tolist())), before=before)
    sample = design.select(pool, rng=seed)
    assert sample.labels == ("1-5", "6-20", "21-30")
    assert np.array_equal(sample.stratum, stratum0)
    flat_size, flat_take = size.ravel(), take.ravel()
    expected = np.maximum(np.minimum(flat_take, flat_size), judged)
    assert np.array_equal(np.bincount(cell[sample.judged], minlength=len(flat_size)), expected)
    assert sample.judged[before_rows].all()
    inside = cell >= 0
    # given the documents judged before: 1 for them, j / (N - m) for the rest of a cell topped up
    # by j > 0; a cell with no top-up keeps its judged documents as its SRS, m / N
    top_up, rest = expected - judged, flat_size - judged
    topped = (top_up > 0) | (rest == 0)
    ratio = np.where(topped, top_up / np.maximum(rest, 1), judged / np.maximum(flat_size, 1))
    pi = np.where(np.isin(np.arange(len(cell)), before_rows),
                  np.where(topped, 1.0, ratio)[cell], ratio[cell])
    assert np.allclose(sample.inclusion[inside], pi[inside])
    assert not sample.judged[~inside].any() and not sample.inclusion[~inside].any()
    again = design.select(pool, rng=seed)
    assert np.array_equal(again.judged, sample.judged)


def test_a_plan_larger_than_its_cell_judges_the_cell():
    pool = pool_of_cells(np.array([[3, 4, 2], [5, 0, 1]]))
    design = allocated(EDGES, LAST, {"a": [10, 4, 9], "b": [5, 3, 7]})
    sample = design.select(pool, rng=1)
    inside = sample.stratum >= 0
    assert sample.judged[inside].all() and np.all(sample.inclusion[inside] == 1)
    assert design.name == "planned(1-5,6-20,21-30)@38" and design.depth == 30


def test_names_labels_and_parse_design_refusal():
    design = allocated([1, 11], None, {"q1": [3, 2]}, label="round2")
    assert design.labels == ("1-10", "11-") and math.isinf(design.depth)
    assert design.name == "round2(1-10,11-)@5"
    assert design == allocated([1, 11], math.inf, {"q1": (3, 2)}, label="round2")
    same = allocated([1, 11], None, {"q1": [3, 2]}, label="round2")
    assert isinstance(design, Allocated) and hash(design) == hash(same)
    for name in (design.name, "planned(1-5,6-20,21-100)@40"):
        with pytest.raises(DesignError, match="planned design .* read from its design file"):
            parse_design(name)


@pytest.mark.parametrize("kwargs, message", [
    (dict(edges=[2, 6]), "start at rank 1"),
    (dict(edges=[1, 6, 6]), "increase strictly"),
    (dict(edges=[1, 6], last=4), "last rank must be an integer >= first"),
    (dict(take={"a": [1, 2, 3]}), "topic 'a' has 3 sample sizes for 2 strata"),
    (dict(take={"a": [1, -1]}), "integers >= 0"),
    (dict(take={}), "plans no topic"),
    (dict(take=[("a", [1, 1]), ("a", [2, 2])]), "planned twice"),
    (dict(before=[("a", 3)]), r"\(topic, docno\) strings"),
    (dict(label="two words"), "label must be a word"),
])
def test_bad_plans_are_design_errors(kwargs, message):
    args = dict(edges=[1, 6], last=20, take={"a": [1, 1]}, before=(), label="planned")
    args.update(kwargs)
    take = args.pop("take")
    with pytest.raises(DesignError, match=message):
        if isinstance(take, dict):
            allocated(take=take, **args)
        else:
            Allocated(tuple(args["edges"]), args["last"], take)


def test_plans_that_do_not_fit_the_pool_are_design_errors():
    pool = pool_of_cells(np.array([[3, 4, 2], [5, 2, 1]]))
    with pytest.raises(DesignError, match=r"no planned sample sizes for topic\(s\) b of <cells>"):
        allocated(EDGES, LAST, {"a": [1, 1, 1], "other": [1, 1, 1]}).select(pool, rng=0)
    zeros = allocated(EDGES, LAST, {"a": [1, 0, 1], "b": [1, 0, 1]}, before=[("a", "d03")])
    with pytest.raises(DesignError, match="1 non-empty cell.*: b/6-20; an empty stratum sample"):
        zeros.select(pool, rng=0)
    # a topic with no pool document needs no plan
    empty = pool_of_cells(np.array([[3, 4, 2], [0, 0, 0]]), beyond=0)
    assert allocated(EDGES, LAST, {"a": [1, 1, 1]}).select(empty, rng=0).judged.sum() == 3


@pytest.fixture(scope="module")
def frame_and_pool():
    collection, table = pooled_collection(5, n_topics=2, n_runs=4)
    pool = Pool.from_runs(collection, depth=40)
    return SamplingFrame.from_pool(pool, table), pool


def test_top_up_is_a_simple_random_sample_of_the_rest(frame_and_pool):
    """Within a cell, every row not judged before is selected with frequency (k - m) / (N - m)
    (4,000 draws, 4-sigma bounds), the judged ones always; a frame and its pool draw alike."""
    frame, pool = frame_and_pool
    plan = {"q0": [4, 9, 12], "q1": [2, 10, 6]}
    first = allocated([1, 6, 21], 40, plan).select(pool, rng=0)
    cell = cell_of(pool, first.stratum)
    rows = rows_of(pool)
    picked = np.concatenate([np.flatnonzero(cell == 1)[:5], np.flatnonzero(cell == 4)[::7]])
    before = [rows[i] for i in picked]
    design = allocated([1, 6, 21], 40, plan, before=before)
    assert np.array_equal(design.select(frame, rng=3).judged, design.select(pool, rng=3).judged)
    draws = 4000
    rng = np.random.default_rng(2024)
    freq = np.mean([design.select(frame, rng=rng).judged for _ in range(draws)], axis=0)
    done = np.isin(np.arange(len(pool)), [rows.index(p) for p in before])
    size = np.bincount(cell[cell >= 0], minlength=6)
    judged = np.bincount(cell[done], minlength=6)
    k = np.minimum(np.array(plan["q0"] + plan["q1"]), size)
    for c in range(6):
        rest = (cell == c) & ~done
        p = max(k[c] - judged[c], 0) / (size[c] - judged[c])
        sigma = math.sqrt(p * (1 - p) / draws)
        assert np.all(np.abs(freq[rest] - p) <= 4 * sigma + 1e-12), (c, p)
        assert np.all(freq[(cell == c) & done] == 1)
        # the recorded probabilities are these conditional frequencies (1 for the judged ones)
        pi = design.select(frame, rng=0).inclusion
        assert np.allclose(pi[rest], p) and np.all(pi[(cell == c) & done] == 1), (c, p)
    assert judged[1] == 5 and judged[4] > 0 and k[4] < size[4]


def test_design_file_round_trip(frame_and_pool, tmp_path):
    _, pool = frame_and_pool
    rows = rows_of(pool)
    design = allocated([1, 6, 21], None, {"q1": [2, 3, 4], "q0": [5, 8, 20]}, before=rows[:3])
    plan = DesignRecord(design=design, runs=("r0", "r2"), depth=40.0)
    path = tmp_path / "plan.json"
    path.write_bytes(plan.to_json())
    data = json.loads(path.read_text())
    assert data["design"] == "planned(1-5,6-20,21-)@42" and "rows" not in data
    assert data["plan"] == {"label": "planned", "edges": [1, 6, 21], "last": None,
                            "take": {"q0": [5, 8, 20], "q1": [2, 3, 4]},
                            "before": [list(p) for p in sorted(rows[:3])]}
    assert path.read_text().splitlines()[4] == '   "q0": [5, 8, 20],'  # one topic a line
    back = DesignRecord.read(path)
    assert back.design == design and not back.has_rows and back.runs == ("r0", "r2")
    assert np.array_equal(back.design.select(pool, rng=9).judged, design.select(pool, rng=9).judged)
    drawn = DesignRecord.from_sample(pool, design, design.select(pool, rng=9), seed=9)
    path.write_bytes(drawn.to_json())
    again = DesignRecord.read(path)
    assert again.design == design and again.has_rows and again.to_json() == drawn.to_json()
    assert np.array_equal(again.selected, drawn.selected)
    todo = [tuple(line.split("\t")) for line in drawn.to_judge_tsv().decode().splitlines()[1:]]
    chosen = {(q, d) for q, d, s in zip(drawn.qid, drawn.docno, drawn.selected) if s}
    assert set(todo) == chosen - set(rows[:3]) and set(rows[:3]) <= chosen


def _plan_text(frame_and_pool) -> str:
    _, pool = frame_and_pool
    design = allocated([1, 6], 20, {"q0": [2, 3], "q1": [4, 1]}, before=rows_of(pool)[:2])
    return DesignRecord(design=design, depth=20.0).to_json().decode()


@pytest.mark.parametrize("edit, message", [
    (lambda t: re.sub(r'"take": \{.*?\}', '"take": {}', t, flags=re.S), ":4: plan: take must map"),
    (lambda t: t.replace('"edges": [1, 6]', '"edges": [1, "6"]'), ":3: plan: edges must be"),
    (lambda t: t.replace('"last": 20', '"last": "all"'), ":3: plan: last must be"),
    (lambda t: t.replace('"q1": [4, 1]', '"q1": [4, 1.5]'),
     ":6: plan: topic 'q1': expected 2 sample sizes"),
    (lambda t: t.replace('"q1": [4, 1]', '"q1": [4, 1, 1]'),
     ":6: plan: topic 'q1': expected 2 sample sizes"),
    (lambda t: t.replace('"edges": [1, 6]', '"edges": [1, 6], "depth": 3'),
     ":2: plan: expected the keys"),
    (lambda t: re.sub(r'\["q0", "[^"]*"\]\n', '["q0"]\n', t),
     r":10: plan: before: expected \[topic, docno\]"),
    (lambda t: re.sub(r'(\["q0", "[^"]*"\]),\n   \["q0", "[^"]*"\]', r"\1,\n   \1", t),
     ":10: plan: before: .* listed twice"),
    (lambda t: re.sub(r'"before": \[.*?\n  \]', '"before": {}', t, flags=re.S),
     ":8: plan: before must be"),
    (lambda t: t.replace('"label": "planned"', '"label": "a b"'),
     ":3: plan: planned: label must be"),
])
def test_malformed_plan_blocks_name_file_and_line(frame_and_pool, tmp_path, edit, message):
    text = _plan_text(frame_and_pool)
    assert text.splitlines()[7] == '  "before": [' and text.count('["q0", ') == 2  # lines 9, 10
    path = tmp_path / "bad.json"
    path.write_text(edit(text))
    with pytest.raises(InputError, match=re.escape(str(path)) + message):
        DesignRecord.read(path)


def test_a_plan_must_be_an_object(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"format": "irsample-design", "version": 1, "design": "x",\n "plan": [1]}\n')
    with pytest.raises(InputError, match=re.escape(f"{path}:2: plan: must be an object")):
        DesignRecord.read(path)


def test_cli_draws_a_plan_file_and_merges_it(capsys, files, tmp_path):  # noqa: F811
    collection, table, runs, _ = files
    pool = Pool.from_runs(collection, ["r1", "r3"], depth=30)
    rows = rows_of(pool)
    pilot = rows[::9]  # judged before, in every topic
    design = allocated([1, 6, 21], 30, {q: [3, 6, 4] for q in collection.topics}, before=pilot)
    plan = tmp_path / "plan.json"
    plan.write_bytes(DesignRecord(design=design, runs=("r1", "r3"), depth=30.0).to_json())
    out = tmp_path / "out"
    rc, report, err = cli(capsys, "sample", *runs, "--design", plan, "--seed", 5, "-o", out)
    assert rc == 0, err
    assert report.startswith(f"{design.name}: depth-30 pool of 2 runs, seed 5")
    todo = [tuple(line.split("\t")) for line in (out / "to_judge.tsv").read_text().splitlines()[1:]]
    chosen = design.select(pool, rng=5).judged
    selected = {p for p, j in zip(rows, chosen) if j}
    assert set(todo) == selected - set(pilot) and len(todo) == len(selected - set(pilot))
    already = len(selected) - len(todo)
    assert f"{already} selected documents are judged already; {len(todo)} to judge" in report
    data = json.loads((out / "design.json").read_text())
    assert data["plan"] == json.loads(plan.read_text())["plan"]
    assert {(r[0], r[1]) for r in data["rows"] if r[5]} == selected >= set(pilot)
    truth = dict(zip(zip(table.qid.to_pylist(), table.docno.to_pylist()), table.rel.tolist()))
    judged = tmp_path / "judged"
    lines = [f"{q} 0 {d} {truth[q.encode(), d.encode()]}\n" for q, d in pilot + todo]
    judged.write_text("".join(lines))
    rc, text, err = cli(capsys, "merge", out / "design.json", judged, "--format", "strata")
    assert rc == 0 and err.endswith(", 0 selected documents not judged yet\n"), err
    assert len(text.splitlines()) == len(pool)
    merged = merge(DesignRecord.read(out / "design.json"), read_qrels(judged))
    assert merged.judged.sum() == len(selected)


def test_cli_refuses_a_budget_and_a_malformed_plan(capsys, files, tmp_path):  # noqa: F811
    collection, _, runs, _ = files
    design = allocated([1, 11], 20, {q: [3, 2] for q in collection.topics})
    plan = tmp_path / "plan.json"
    plan.write_bytes(DesignRecord(design=design, runs=("r0",), depth=20.0).to_json())
    out = tmp_path / "out"
    rc, _, err = cli(capsys, "sample", *runs, "--design", plan, "--budget", 30, "--seed", 1,
                     "-o", out)
    assert rc == 1 and "planned design: its sample sizes are fixed" in err and "--budget" in err
    assert not out.exists()
    plan.write_text(plan.read_text().replace('"edges": [1, 11]', '"edges": [2, 11]'))
    rc, _, err = cli(capsys, "sample", *runs, "--design", plan, "--seed", 1, "-o", out)
    assert rc == 1 and f"{plan}:3: plan: " in err and "start at rank 1" in err, err
    assert not out.exists()
