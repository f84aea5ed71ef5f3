"""Design files (write, read back, errors) and merging judgments into strata / prels / trec."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from irsample.design import DesignRecord, Pool, SamplingFrame, merge, parse_design
from irsample.errors import InputError
from irsample.io import load_qrels, load_runs, read_prels, read_qrels, read_strata_qrels
from irsample.model import Collection

RUNS = pd.DataFrame({
    "qid": ["1"] * 7 + ["2"] * 3,
    "docno": ["a", "b", "c", "d", "c", "e", "f", "x", "y", "z"],
    "score": [5.0, 4, 3, 2, 9, 8, 7, 3, 2, 1],
    "tag": ["A"] * 4 + ["B"] * 3 + ["A"] * 3,
})
TRUTH = {("1", d): r for d, r in zip("abcdef", [1, 0, 2, 0, 1, 0])} | {
    ("2", d): r for d, r in zip("xyz", [1, 1, 0])}


@pytest.fixture
def drawn():
    col = Collection.build(load_runs(RUNS))
    pool = Pool.from_runs(col, depth=2)  # 1: a b c e (best 1 1 ... ), 2: x y
    design = parse_design("1-1:1,2-:0.5")
    sample = design.select(pool, rng=4)
    return pool, design, DesignRecord.from_sample(pool, design, sample, seed=4)


def qrels_file(tmp_path, lines, name="judged"):
    path = tmp_path / name
    path.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in lines))
    return path


def test_design_file_round_trip(tmp_path, drawn):
    pool, design, record = drawn
    assert record.qid == ("1", "1", "1", "1", "2", "2") and record.docno == tuple("abcexy")
    assert record.labels == ("1-1", "2-") and record.stratum.tolist() == [0, 1, 0, 1, 0, 1]
    assert record.inclusion.tolist() == [1, 0.5, 1, 0.5, 1, 1]  # topic 2's "2-" cell: y alone
    path = tmp_path / "design.json"
    path.write_bytes(record.to_json())
    data = json.loads(path.read_text())
    assert data["design"] == "stratified(1-1:1,2-:0.5)" and data["seed"] == 4
    assert data["runs"] == ["A", "B"] and data["depth"] == 2
    assert data["strata"] == [{"label": "1-1", "size": 3, "sampled": 3},
                              {"label": "2-", "size": 3, "sampled": 2}]
    back = DesignRecord.read(path)
    assert back.design == design and (back.seed, back.runs, back.depth) == (4, ("A", "B"), 2.0)
    for name in ("qid", "docno", "labels"):
        assert getattr(back, name) == getattr(record, name)
    for name in ("best_rank", "stratum", "inclusion", "selected"):
        assert np.array_equal(getattr(back, name), getattr(record, name))
    tsv = record.to_judge_tsv().decode().splitlines()
    assert tsv == ["topic\tdocno", "1\ta", "1\tc", "1\te", "2\tx", "2\ty"]  # b not selected


def test_a_planned_design_file_has_no_rows(tmp_path):
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"format": "irsample-design", "version": 1, "design": "2strata@50"}))
    plan = DesignRecord.read(path)
    assert plan.design.name == "2strata@50" and not plan.has_rows and plan.runs is None
    assert json.loads(plan.to_json()) == {"format": "irsample-design", "version": 1,
                                          "design": "2strata@50", "seed": None, "runs": None,
                                          "depth": None}
    with pytest.raises(InputError, match="lists no documents"):
        merge(plan, load_qrels(pd.DataFrame({"qid": ["1"], "docno": ["a"], "rel": [1]})))


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda t: t.replace('"rows": [', '"rows": [[', 1), "invalid JSON"),
        (lambda t: t.replace("irsample-design", "other"), ":1: not a design file"),
        (lambda t: t.replace('"version": 1', '"version": 9'), "unsupported design file version"),
        (
            lambda t: t.replace("stratified(1-1:1,2-:0.5)", "stratified(1-1:2)"),
            r":1: design: .*\(0, 1\]",
        ),
        (
            lambda t: t.replace('["1", "b", 2, "2-", 0.5, 0]', '["1", "b", 2, "2-", 1.5, 0]'),
            r":6: rows\[1\]: expected",
        ),
        (
            lambda t: t.replace('["1", "b", 2, "2-", 0.5, 0]', '["1", "a", 2, "2-", 0.5, 0]'),
            r":6: rows\[1\]: document 'a' of topic '1' listed twice",
        ),
        (lambda t: t.replace('"depth": 2', '"depth": 0'), ":1: depth must be"),
        # edited by hand: the strata summary and the rows disagree (was accepted)
        (lambda t: t.replace('"size": 3, "sampled": 2', '"size": 5, "sampled": 2'),
         r":2: the strata summary gives stratum '2-' size 5, the rows 3"),
        (lambda t: t.replace('["1", "b", 2, "2-", 0.5, 0]', '["1", "b", 2, "nope", 0.5, 0]'),
         r":2: rows have stratum 'nope', which the strata summary does not list"),
    ],
)
def test_bad_design_files_name_file_and_line(tmp_path, drawn, edit, message):
    _, _, record = drawn
    text = record.to_json().decode()
    assert text.splitlines()[5] == '  ["1", "b", 2, "2-", 0.5, 0],'  # row 2: line 6
    path = tmp_path / "bad.json"
    path.write_text(edit(text))
    with pytest.raises(InputError, match=message):
        DesignRecord.read(path)


@pytest.mark.parametrize("indent", [None, 1])
def test_rows_are_located_in_json_without_one_row_a_line(tmp_path, drawn, indent):
    """One-line or indented JSON: the row's own line and its index (line 2 and 91 were named
    for one-line files, counted from the "rows" key as if each row had its line)."""
    _, _, record = drawn
    data = json.loads(record.to_json())
    data["rows"][1][4], data["rows"][1][5] = 0.0, 1
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data, indent=indent))
    line = 1
    if indent:  # the second "[" line after the "rows" key opens rows[1]
        lines = path.read_text().splitlines()
        after = next(i for i, t in enumerate(lines) if t.strip() == '"rows": [')
        line = [i + 1 for i, t in enumerate(lines) if i > after and t.strip() == "["][1]
    with pytest.raises(InputError, match=rf"bad.json:{line}: rows\[1\]: a selected document"):
        DesignRecord.read(path)
    data["rows"][1] = data["rows"][0]
    path.write_text(json.dumps(data, indent=indent))
    with pytest.raises(InputError, match=rf":{line}: rows\[1\]: document 'a' of topic '1'"):
        DesignRecord.read(path)


def test_merge_writes_three_formats_and_reports_unjudged(tmp_path, drawn):
    _, _, record = drawn
    chosen = [(q, d) for q, d, s in zip(record.qid, record.docno, record.selected) if s]
    partial = chosen[:-1]  # the last selected document is not judged yet
    merged = merge(
        record, read_qrels(qrels_file(tmp_path, [(q, d, TRUTH[q, d]) for q, d in partial]))
    )
    assert merged.unjudged.sum() == 1
    report = merged.report()
    assert report.splitlines()[-2] == "all\t6\t5\t4\t1"
    assert (f"not judged yet (no row in the judgments, or a value below 0): "
            f"{chosen[-1][0]}/{chosen[-1][1]}") in report
    strata = tmp_path / "s"
    strata.write_bytes(merged.render("strata"))
    table = read_strata_qrels(strata)
    assert len(table) == 6 and (table.rel >= 0).sum() == 4
    prels = tmp_path / "p"
    prels.write_bytes(merged.render("prels"))
    p = read_prels(prels)
    assert len(p) == 6 and (p.rel >= 0).sum() == 4  # the whole pool
    # a judged row's pi is its cell's judged / size, as the stratified qrels say: the
    # document left unjudged no longer counts as judged and not relevant
    cell = {(q.as_py(), d.as_py()): (q.as_py(), s.as_py())
            for q, d, s in zip(table.qid, table.docno, table.stratum)}
    size, judged = {}, {}
    for key, r in zip(cell.values(), table.rel):
        size[key] = size.get(key, 0) + 1
        judged[key] = judged.get(key, 0) + int(r >= 0)
    for q, d, pi in zip(p.qid, p.docno, p.prob):
        key = cell[q.as_py(), d.as_py()]
        assert pi == judged[key] / size[key]
    assert any(pi != rec_pi for pi, rec_pi in zip(p.prob, record.inclusion))
    trec = tmp_path / "t"
    trec.write_bytes(merged.render("trec"))
    t = read_qrels(trec)
    assert sorted(t.rel.tolist()) == sorted([-1, -1] + [TRUTH[k] for k in partial])


def test_merge_errors_name_the_judgments_line(tmp_path, drawn):
    _, _, record = drawn
    unselected = [(q, d) for q, d, s in zip(record.qid, record.docno, record.selected) if not s][0]
    bad = qrels_file(tmp_path, [("1", "a", 1), ("1", "zz", 0)])
    with pytest.raises(
        InputError, match=r"judged:2: document 'zz' of topic '1' is not in the design"
    ):
        merge(record, read_qrels(bad))
    bad = qrels_file(tmp_path, [("1", "a", 1), (*unselected, 0)])
    with pytest.raises(InputError, match="judged:2: .* was not selected for judging"):
        merge(record, read_qrels(bad))
    ok = qrels_file(tmp_path, [("1", "a", 1), (*unselected, -1)])  # -1: not judged, allowed
    assert merge(record, read_qrels(ok)).judged.sum() == 1
    col = Collection.build(load_runs(RUNS))
    pool = Pool.from_runs(col, depth=2)
    imp = parse_design("importance(0.5)")
    rec = DesignRecord.from_sample(pool, imp, imp.select(pool, rng=0), seed=0)
    with pytest.raises(InputError, match="importance sample.*merge it as prels"):
        merge(rec, read_qrels(ok)).render("strata")


def test_frame_and_pool_draw_the_same_documents(drawn):
    """A frame built from a pool shares its rows and order: a seed selects the same documents."""
    pool, design, _ = drawn
    qrels = load_qrels(pd.DataFrame(
        [{"qid": q, "docno": d, "rel": r} for (q, d), r in TRUTH.items()]
    ))
    frame = SamplingFrame.from_pool(pool, qrels)
    for name in ("2strata", "importance(0.5)", "terabyte(1)", "uniform(0.5)@3"):
        d = parse_design(name)
        for seed in range(5):
            a, b = d.select(pool, rng=seed), d.select(frame, rng=seed)
            assert np.array_equal(a.judged, b.judged) and np.array_equal(a.inclusion, b.inclusion)
