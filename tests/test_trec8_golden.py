"""TREC-8 ad hoc: all 129 runs against trec_eval's own output.

- Three sampled judgment sets (``../shared/golden/trec8``): every per-topic and summary value
  within 1e-12 of trec_eval 10's 15-decimal output.
- The official qrels: every line of ``reference_eval/eval.<run>.gz`` (``-q -m all_trec``, 4
  decimals) reproduced as printed. rbp_resid is compared after trec_eval 10's omission: where
  a ranking holds no unjudged document it prints 0, leaving out the tail p^n that irsample
  includes (83 of 6450 per-topic lines and 4 of 129 summaries: short, fully judged rankings of
  READWARE, READWARE2, disco1 and a few others).
"""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from irsample.evaluation import evaluate_collection
from irsample.formats import to_trec
from irsample.io import load_qrels, load_runs
from irsample.measures import parse_all
from irsample.model import Collection, Judgments

from .conftest import parse_trec_eval

pytestmark = pytest.mark.shared

DESIGNS = ["random10", "depth10_equal", "strata_1-10at1_11-25at0.5_26-50at0.2_51-100at0.1"]
GOLDEN_MEASURES = "infAP bpref map ndcg P.10 Rprec recip_rank ndcg_cut.10 num_rel".split()


@pytest.fixture(scope="module")
def trec8(shared):
    base = shared / "data" / "trec8-adhoc"
    runs = load_runs(sorted((base / "runs").glob("input.*.gz")))
    qrels = load_qrels(base / "qrels.trec8.adhoc")
    collection = Collection.build(runs, [qrels])
    return collection, qrels, runs


def _blocks(path) -> dict[str, str]:
    """``## run input.<name>`` blocks of a golden file -> {name: text}."""
    blocks, name, lines = {}, None, []
    with gzip.open(path, "rt") as fh:
        for line in fh:
            if line.startswith("## run "):
                if name is not None:
                    blocks[name] = "".join(lines)
                name, lines = line.split()[2].removeprefix("input."), []
            else:
                lines.append(line)
    blocks[name] = "".join(lines)
    return blocks


@pytest.mark.parametrize("design", DESIGNS)
def test_sampled_qrels_match_trec_eval_15_digits(shared, trec8, design):
    collection, _, runs = trec8
    golden = shared / "golden" / "trec8"
    table = load_qrels(golden / f"{design}.trec_eval.qrels.gz")
    judgments = Judgments.from_qrels(collection, table)
    ev = evaluate_collection(collection, judgments, parse_all(GOLDEN_MEASURES))
    ours = _per_run(ev, places=15)
    expected = _blocks(golden / f"{design}.trec_eval.out.gz")
    assert set(expected) == {r.name for r in runs}
    worst = 0.0
    for name, text in expected.items():
        exp = parse_trec_eval(text)
        got = ours[name]
        assert set(exp) == set(got), name
        for key, value in exp.items():
            diff = abs(float(value) - float(got[key]))
            worst = max(worst, diff)
            assert diff <= 1e-12, (name, key, value, got[key])
    assert worst <= 1e-12


def _per_run(ev, places):
    return {
        name: parse_trec_eval(to_trec(ev, per_topic=True, places=places, runs=[r]))
        for r, name in enumerate(ev.run_names)
    }


def test_official_qrels_match_reference_eval(shared, trec8):
    collection, qrels, runs = trec8
    judgments = Judgments.from_qrels(collection, qrels)
    ev = evaluate_collection(collection, judgments, parse_all(["all_trec"]))
    ours = _per_run(ev, places=4)
    resid, resid_mean = _trec_eval_10_rbp_resid(ev)
    ref = shared / "data" / "trec8-adhoc" / "reference_eval"
    checked, omitted = 0, []
    for r, run in enumerate(runs):
        with gzip.open(ref / f"eval.{run.name}.gz", "rt") as fh:
            exp = parse_trec_eval(fh.read())
        got = ours[run.name]
        omitted += [(run.name, k) for k, v in exp.items() if v != got[k]]
        for t in np.flatnonzero(ev.evaluated[r]):
            got[("rbp_resid", ev.topics[t])] = f"{resid[r, t]:.4f}"
        got[("rbp_resid", "all")] = f"{resid_mean[r]:.4f}"
        assert set(exp) == set(got), (run.name, sorted(set(exp) ^ set(got))[:5])
        wrong = [(k, v, got[k]) for k, v in exp.items() if v != got[k]]
        assert not wrong, (run.name, wrong[:5])
        checked += len(exp)
    assert checked >= 129 * 50 * 90  # about 96 lines per topic
    assert {k[0] for _, k in omitted} == {"rbp_resid"}
    assert len(omitted) == 83 + 4


def _trec_eval_10_rbp_resid(ev):
    """rbp_resid as trec_eval 10 prints it: 0 where no unjudged document is retrieved."""
    col = {m.trec_name: j for j, m in enumerate(ev.measures)}
    v = ev.values
    judged = v[..., col["num_rel_ret"]] + v[..., col["num_nonrel_judged_ret"]]
    resid = np.where(v[..., col["num_ret"]] > judged, v[..., col["rbp_resid"]], 0.0)
    return resid, np.nanmean(resid, axis=1)
