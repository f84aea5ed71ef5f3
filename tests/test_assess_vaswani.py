"""The whole path on the bundled Vaswani collection with its real documents and topics
(../shared/data/vaswani): irsample sample -> irsample assess (two assessors judging through
the app, answering from the qrels, 30% of the documents judged by both) -> export -> merge ->
eval with intervals; the result equals merging the qrels' own grades of the sample."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from irsample.cli import main

from .test_assess_helpers import ROOT, Api, Server, add_assessor, judge_all, sample, selected

VASWANI = ROOT / "irsample" / "data" / "vaswani"


@pytest.mark.shared
def test_sample_assess_export_merge_eval_on_vaswani(shared, tmp_path, capsys):
    docs = shared / "data" / "vaswani" / "doc-text.trec.gz"
    topics = shared / "data" / "vaswani" / "query-text.trec"
    runs = sorted((VASWANI / "runs").glob("*.gz"))
    design = sample(runs, tmp_path / "design", design="2strata@400", seed=11)
    capsys.readouterr()
    qrels = {}
    for line in gzip.open(VASWANI / "qrels.gz", "rt"):
        q, _, d, g = line.split()
        qrels[(q, d)] = int(g)
    truth = {pair: qrels.get(pair, 0) for pair in selected(design)}  # unjudged: not relevant
    db = tmp_path / "v.db"
    tokens = [add_assessor(db, name) for name in ("alice", "bob")]
    boss = add_assessor(db, "olga", role="organiser")
    with Server(design, docs, topics, db, "--overlap", "0.3", "--grades", "0-1") as server:
        apis = [Api(server.url, t) for t in tokens]
        page = apis[0].http.get(server.url + "/judge").text
        assert "<mark>" in page and 'id="doctext"' in page  # a real Vaswani document
        while sum(judge_all(api, truth, limit=25) for api in apis):
            pass
        report = Api(server.url, boss).http.get(server.url + "/api/progress").json()
    assert sum(r["judged"] for r in report["progress"]) == len(truth)
    both = report["agreement"]["items"]
    assert both == round(0.3 * len(truth))
    assert report["agreement"]["pairs"][0]["raw"] == 1.0  # both answer from the qrels
    exported = tmp_path / "judged.qrels"
    assert main(["assess", "export", "--db", str(db), "-o", str(exported)]) == 0
    assert len(exported.read_text().splitlines()) == len(truth)
    reference = tmp_path / "truth.qrels"
    reference.write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in truth.items()))
    out = {}
    for name, judged in (("app", exported), ("truth", reference)):
        merged = tmp_path / f"{name}.strata"
        assert main(["merge", str(design / "design.json"), str(judged), "--format", "strata",
                     "-o", str(merged)]) == 0
        capsys.readouterr()
        assert main(["eval", "--ci", "0.95", str(merged), *map(str, runs),
                     "-m", "xinfAP"]) == 0
        out[name] = capsys.readouterr().out
    assert out["app"] == out["truth"]
    assert out["app"].count("xinfAP_low") == len(runs)
    Path(tmp_path / "eval.txt").write_text(out["app"])
