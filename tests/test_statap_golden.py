"""statAP parity: 20 TREC-8 runs on an importance sample (../shared/golden/statap-trec8).

statAP_MQ_eval_v3.pl -q printed, per topic, Relevant (R^), AP (statAP), R-prec, Prec_at_30 with 6
decimals and varAP in full; per run statMAP, VAR_MAP, statMRP and statMPC_30 in full. The 6-decimal
values are matched to their printed precision (5e-7), the others within 1e-9 relative. Its nDCG
lines are wrong (spec §3.2) and not compared.
"""

from __future__ import annotations

import gzip
import re

import pytest

from irsample.evaluation import evaluate_collection
from irsample.io import load_runs, read_prels
from irsample.measures import parse_all
from irsample.model import Collection, Judgments

pytestmark = pytest.mark.shared

MEASURES = ["statnum_rel", "statAP", "statRprec", "statP.30", "statAP_var"]
TOPIC_KEYS = {"Relevant": "statnum_rel", "AP": "statAP", "R-prec": "statRprec",
              "Prec_at_30": "statP_30", "varAP": "statAP_var"}
SUMMARY_KEYS = {"statMAP_on_valid_topics": "statAP", "VAR_MAP": "statAP_var",
                "statMRP_on_valid_topics": "statRprec", "statMPC_30 _on_valid_topics": "statP_30"}


def golden(path):
    """{run: ({(measure, topic): value}, {measure: value})} from statap.out.gz."""
    out, run, topic = {}, None, None
    with gzip.open(path, "rt") as fh:
        for line in fh:
            if line.startswith("## run "):
                run = line.split()[2].removeprefix("input.")
                out[run] = ({}, {})
                continue
            m = re.search(r"topic=(\S+)", line)
            if m:
                topic = m.group(1)
                continue
            for key, value in re.findall(r"([\w\- ]+?)=(\S+)", line):
                key = key.strip()
                if key in TOPIC_KEYS:
                    out[run][0][(TOPIC_KEYS[key], topic)] = float(value)
                elif key in SUMMARY_KEYS:
                    out[run][1][SUMMARY_KEYS[key]] = float(value)
    return out


def test_statap_matches_reference(shared):
    base = shared / "golden" / "statap-trec8"
    runs = load_runs(sorted((base / "runs").glob("input.*.gz")))
    prels = read_prels(base / "prels.trec8.gz")
    collection = Collection.build(runs, [prels])
    measures = parse_all(MEASURES)
    ev = evaluate_collection(collection, Judgments.from_qrels(collection, prels), measures)
    names = [m.trec_name for m in measures]
    expected = golden(base / "statap.out.gz")
    assert set(expected) == set(ev.run_names) and len(expected) == 20
    checked = 0
    for r, run in enumerate(ev.run_names):
        per_topic, summary = expected[run]
        for (name, topic), value in per_topic.items():
            ours = ev.values[r, ev.topics.index(topic), names.index(name)]
            if name == "statAP_var":
                assert ours == pytest.approx(value, rel=1e-9, abs=1e-15), (run, topic)
            else:
                assert abs(ours - value) <= 5e-7, (run, name, topic, value, ours)
            checked += 1
        for name, value in summary.items():
            assert ev.summary[r, names.index(name)] == pytest.approx(value, rel=1e-9), (run, name)
            checked += 1
    assert checked == 20 * (50 * 5 + 4)
