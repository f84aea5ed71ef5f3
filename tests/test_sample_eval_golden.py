"""sample_eval.pl parity: all 129 TREC-8 runs on the three golden stratified judgment sets.

Every per-topic and summary value sample_eval.pl printed (12 decimals) in
../shared/golden/trec8/*.sample_eval.out.gz is reproduced within 1e-9: xinfAP (printed
``infAP``), infNDCG, iP10/50/1000, inum_rel_ret, inum_rel, num_ret and the 11 iprec@rec points.
"""

from __future__ import annotations

import gzip

import pytest

from irsample.evaluation import evaluate_collection
from irsample.io import load_runs
from irsample.io.strata import read_strata_qrels
from irsample.measures import parse_all
from irsample.model import Collection, Judgments

pytestmark = pytest.mark.shared

DESIGNS = ["random10", "depth10_equal", "strata_1-10at1_11-25at0.5_26-50at0.2_51-100at0.1"]
MEASURES = [
    "xinfAP",
    "infNDCG",
    "iP.10,50,1000",
    "inum_rel_ret",
    "inum_rel",
    "num_ret",
    "iprec_rec",
]


def golden_blocks(path):
    """{run: {(measure, topic): value}} from a golden sample_eval output."""
    blocks, run = {}, None
    with gzip.open(path, "rt") as fh:
        for line in fh:
            if line.startswith("## run "):
                run = line.split()[2].removeprefix("input.")
                blocks[run] = {}
                continue
            name, topic, value = line.split()
            blocks[run][(name, topic)] = float(value)
    return blocks


@pytest.fixture(scope="module")
def runs(shared):
    return load_runs(sorted((shared / "data" / "trec8-adhoc" / "runs").glob("input.*.gz")))


@pytest.mark.parametrize("design", DESIGNS)
def test_every_value_within_1e9(shared, runs, design):
    golden = shared / "golden" / "trec8"
    table = read_strata_qrels(golden / f"{design}.sample_eval.qrels.gz")
    collection = Collection.build(runs, [table])
    judgments = Judgments.from_qrels(collection, table)
    measures = parse_all(MEASURES)
    ev = evaluate_collection(collection, judgments, measures)
    expected = golden_blocks(golden / f"{design}.sample_eval.out.gz")
    assert set(expected) == set(ev.run_names)
    checked, worst = 0, 0.0
    names = [getattr(m, "sample_eval_name", m.trec_name) for m in measures]
    for r, run in enumerate(ev.run_names):
        for (name, topic), value in expected[run].items():
            j = names.index(name)
            if topic == "all":
                ours = ev.summary[r, j]
            else:
                t = ev.topics.index(topic)
                assert ev.evaluated[r, t], (run, topic)
                ours = ev.values[r, t, j]
            worst = max(worst, abs(ours - value))
            assert abs(ours - value) <= 1e-9, (run, name, topic, value, ours)
            checked += 1
        per_topic_lines = sum(1 for (_, topic) in expected[run] if topic != "all")
        assert per_topic_lines == 8 * ev.evaluated[r].sum(), run  # no topic left out
    assert checked > 129 * 50 * 8


def test_sample_eval_format_matches_layout(shared, runs):
    """`irsample eval --format sample_eval -q --places 12` prints sample_eval.pl's lines: same
    names, topics, tabs and field widths, values within 1e-9 (the last of 12 printed decimals
    can differ by summation order)."""
    from irsample.formats import to_sample_eval

    golden = shared / "golden" / "trec8"
    design = "depth10_equal"
    table = read_strata_qrels(golden / f"{design}.sample_eval.qrels.gz")
    collection = Collection.build(runs, [table])
    ev = evaluate_collection(
        collection, Judgments.from_qrels(collection, table), parse_all(["sample_eval"])
    )
    expected, run, lines = {}, None, []
    with gzip.open(golden / f"{design}.sample_eval.out.gz", "rt") as fh:
        for line in fh:
            if line.startswith("## run "):
                if run is not None:
                    expected[run] = "".join(lines)
                run, lines = line.split()[2].removeprefix("input."), []
            else:
                lines.append(line)
    expected[run] = "".join(lines)
    for r, name in enumerate(ev.run_names):
        ours = to_sample_eval(ev, per_topic=True, places=12, runs=[r]).splitlines()
        theirs = expected[name].splitlines()
        assert len(ours) == len(theirs), name
        for a, b in zip(ours, theirs):
            fa, fb = a.split("\t"), b.split("\t")
            assert fa[:-1] == fb[:-1] and len(fa[-1]) == len(fb[-1]), (name, a, b)
            assert abs(float(fa[-1]) - float(fb[-1])) <= 1e-9, (name, a, b)
