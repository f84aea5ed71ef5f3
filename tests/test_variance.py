"""Variances and confidence intervals of the estimators (infAP, xinfAP, infNDCG, statAP).

- By hand: infAP's two stages (reference-semantics §3.3, ``variance="paper"``) on a small
  ranking (the default jackknife and the covariance method: test_variance_covariance.py).
- Complete judgments: no sampling, so every variance is 0 and the interval collapses.
- One stratum: xinfAP's stratified paper variance reduces to infAP's (up to the n/(n - 1) of a
  sample variance and the smoothing terms).
- The mean's variance is sum var_q / Q^2; the limits are value -/+ z sqrt(var).
- API and CLI: ``irsample.estimate``, ``--ci`` in every format, bad levels.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import irsample
from irsample.cli import main
from irsample.errors import MeasureError
from irsample.evaluation import evaluate_collection
from irsample.io import load_qrels, load_runs
from irsample.io.trec import QrelsTable
from irsample.measures import parse_all
from irsample.model import Collection, Judgments

from .test_estimator_invariants import collection


def run_frame(docnos, qid="1", tag="r"):
    n = len(docnos)
    return pd.DataFrame({"qid": qid, "docno": docnos, "score": np.arange(n, 0, -1.0), "tag": tag})


def evaluate_ci(table, runs, names, ci=0.95, variance="jackknife"):
    col = Collection.build(runs, [table])
    return evaluate_collection(col, Judgments.from_qrels(col, table), parse_all(names), ci=ci,
                               variance=variance)


def test_infap_variance_by_hand():
    """Ranking a(rel) x(-1) b(nonrel) c(rel) y(-1) d(rel); one more judged relevant e not
    retrieved and one pooled-unjudged z not retrieved. Pool: 9 entries, 6 judged: p = 2/3."""
    qrels = pd.DataFrame({
        "qid": "1",
        "docno": list("axbcydezf"),
        "rel": [1, -1, 0, 1, -1, 1, 1, -1, 0],
    })
    run = load_runs(run_frame(list("axbcyd")))
    ev = evaluate_ci(load_qrels(qrels), run, ["infAP"], variance="paper")
    eps = 1e-5
    # rank 1: PC = 1. rank 4 (c): above N = 3 pooled, n = 2 judged, 1 relevant.
    pc4 = 1 / 4 + (3 / 4) * (3 / 3) * (1 + eps) / (2 + 2 * eps)
    var4 = (3 / 4) ** 2 * 0.5 * 0.5 / 2 * (3 - 2) / (3 - 1)
    # rank 6 (d): above N = 5, n = 3 judged, 2 relevant.
    pc6 = 1 / 6 + (5 / 6) * (5 / 5) * (2 + eps) / (3 + 2 * eps)
    var6 = (5 / 6) ** 2 * (2 / 3) * (1 / 3) / 3 * (5 - 3) / (5 - 1)
    r = 4  # a, c, d, e
    pcs = np.array([1.0, pc4, pc6, 0.0])
    infap = pcs.sum() / r
    s2 = ((pcs - infap) ** 2).sum() / r
    expected = (1 - 6 / 9) * s2 / r + (var4 + var6) / r**2
    assert ev.values[0, 0, 0] == pytest.approx(infap, rel=1e-12)
    assert ev.variance[0, 0, 0] == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("method", ["jackknife", "covariance", "paper"])
@pytest.mark.parametrize("seed", range(3))
def test_complete_judgments_have_zero_variance(seed, method):
    q, runs = collection(seed)
    table = load_qrels(q)
    ev = evaluate_ci(table, runs, ["infAP", "infAP(c=1.5)", "xinfAP", "infNDCG"], variance=method)
    assert np.nanmax(np.abs(ev.variance)) <= 1e-12
    low, high = ev.interval()
    np.testing.assert_allclose(low, ev.summary, atol=1e-6)
    np.testing.assert_allclose(high, ev.summary, atol=1e-6)
    # statAP's variance is the Million Query script's estimator (statAP_var), whose cross term
    # -2 sum y_d y_d' / (n - 1) does not vanish when every probability is 1: only the same
    # numbers as statAP_var are asserted here.
    prels = QrelsTable(table.source, table.qid, table.docno, table.rel, table.lineno,
                       prob=np.ones(len(table)))
    stat = evaluate_ci(prels, runs, ["statAP", "statAP_var"])
    np.testing.assert_array_equal(stat.variance[..., 0], stat.values[..., 1])


def sampled_table(table: QrelsTable, rng, fraction, stratum=None) -> QrelsTable:
    rel = np.where(rng.random(len(table)) < fraction, table.rel, -1)
    return QrelsTable(table.source, table.qid, table.docno, rel, table.lineno, stratum=stratum)


@pytest.mark.parametrize("seed", range(4))
def test_one_stratum_xinfap_variance_reduces_to_infap(seed):
    q, runs = collection(seed, n_docs=300, depth=200)
    table = sampled_table(load_qrels(q), np.random.default_rng(seed), 0.4)
    ev = evaluate_ci(table, runs, ["infAP", "xinfAP"], variance="paper")
    infap, xinfap = ev.variance[..., 0], ev.variance[..., 1]
    # stage 1 differs by n/(n-1) with n ~ 120 judged per topic, plus smoothing differences
    np.testing.assert_allclose(xinfap, infap, rtol=0.02, atol=1e-9)
    assert (infap > 0).all()


def test_mean_variance_and_limits():
    q, runs = collection(3)
    full = load_qrels(q)
    stratum = pa.array(np.where(np.arange(len(full)) % 2 == 0, "a", "b"))
    table = sampled_table(full, np.random.default_rng(1), 0.5, stratum=stratum)
    ev = evaluate_ci(table, runs, ["xinfAP", "infNDCG"], ci=0.9)
    q_count = ev.evaluated.sum(axis=1)
    np.testing.assert_allclose(
        ev.summary_variance[:, :2], np.nansum(ev.variance[..., :2], axis=1) / q_count[:, None] ** 2
    )
    z = 1.6448536269514722
    low, high = ev.interval()
    np.testing.assert_allclose(
        high[:, :2] - ev.summary[:, :2], z * np.sqrt(ev.summary_variance[:, :2])
    )
    np.testing.assert_allclose(
        ev.summary[:, :2] - low[:, :2], z * np.sqrt(ev.summary_variance[:, :2])
    )
    with_ap = evaluate_ci(table, runs, ["map"])
    assert np.isnan(with_ap.summary_variance).all()  # AP has no variance estimator
    frame = ev.frame()
    assert {"variance", "low", "high"} <= set(frame.columns)
    row = frame[(frame.topic == "all") & (frame.measure == "xinfAP")].iloc[0]
    assert row.low == pytest.approx(low[0, 0]) and row.high == pytest.approx(high[0, 0])


@pytest.fixture
def sampled_files(tmp_path):
    q, runs_frame = collection(4, n_topics=3)
    full = load_qrels(q)
    rel = sampled_table(full, np.random.default_rng(2), 0.5).rel
    qrels = tmp_path / "sampled.qrels"
    qrels.write_text("".join(f"{t} 0 {d} {r}\n" for t, d, r in zip(q.qid, q.docno, rel)))
    paths = []
    for name, group in runs_frame_to_frames(q, 4):
        path = tmp_path / f"{name}.run"
        path.write_text("".join(
            f"{t} Q0 {d} {i} {s} {name}\n"
            for i, (t, d, s) in enumerate(zip(group.qid, group.docno, group.score))
        ))
        paths.append(str(path))
    return str(qrels), paths


def runs_frame_to_frames(q, seed):
    rng = np.random.default_rng(seed)
    for r in range(2):
        rows = []
        for t in sorted(set(q.qid)):
            docs = q[q.qid == t].docno.to_numpy()
            for d in rng.choice(docs, 40, replace=False):
                rows.append((t, d, float(rng.random())))
        yield f"run{r}", pd.DataFrame(rows, columns=["qid", "docno", "score"])


def test_estimate_api(sampled_files):
    qrels, runs = sampled_files
    est = irsample.estimate(qrels, runs, ["infAP", "infAP(c=1.5)"], ci=0.95)
    assert est.ci == 0.95
    low, high = est.interval()
    assert (low < est.summary).all() and (est.summary < high).all()
    with pytest.raises(MeasureError, match="no variance estimator for AP"):
        irsample.estimate(qrels, runs, ["AP"])


def test_cli_ci_in_every_format(sampled_files, capsys):
    qrels, runs = sampled_files
    assert main(["eval", qrels, *runs, "-m", "infAP", "-m", "map", "--ci", "0.95"]) == 0
    lines = capsys.readouterr().out.splitlines()
    names = [line.split("\t")[0].strip() for line in lines]
    # several runs: each block starts with the run's name (trec_eval's runid line)
    assert names[:5] == ["runid", "map", "infAP", "infAP_low", "infAP_high"]
    value, low, high = (float(line.split("\t")[2]) for line in lines[2:5])
    assert low < value < high

    assert (
        main(["eval", qrels, *runs, "-m", "infAP", "-m", "map", "--ci", "0.9", "--format", "tsv"])
        == 0
    )
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert rows[0] == ["run", "topic", "measure", "value", "low", "high", "status", "reason"]
    by_measure = {row[2]: row for row in rows[1:] if row[0] == "run0"}
    assert by_measure["map"][4:] == ["", "", "", ""]  # no interval, no status
    assert by_measure["infAP"][6] in ("ok", "unreliable")
    assert (
        float(by_measure["infAP"][4])
        < float(by_measure["infAP"][3])
        < float(by_measure["infAP"][5])
    )

    assert main(["eval", qrels, *runs, "-m", "infAP", "--ci", "0.95", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    entry = data["run0"]["all"]["infAP"]
    assert entry["low"] < entry["value"] < entry["high"]

    assert main(["eval", qrels, *runs, "-m", "infAP", "--ci", "0.95", "--format", "table"]) == 0
    header = capsys.readouterr().out.splitlines()[0].split()
    assert header == ["run", "infAP", "low", "high"]


@pytest.mark.parametrize("level", ["0", "1", "95", "x"])
def test_cli_rejects_bad_levels(sampled_files, level, capsys):
    qrels, runs = sampled_files
    with pytest.raises(SystemExit) as exit_:
        main(["eval", qrels, *runs, "-m", "infAP", "--ci", level])
    assert exit_.value.code == 2
    assert "--ci" in capsys.readouterr().err


@pytest.mark.parametrize("method", ["jackknife", "covariance", "paper"])
def test_variance_is_finite_and_nonnegative_under_sparse_samples(method):
    """5% samples leave strata with 0 or 1 judged documents: variances stay finite, >= 0."""
    q, runs = collection(9, n_docs=200, depth=100)
    full = load_qrels(q)
    stratum = pa.array(np.where(np.arange(len(full)) % 200 < 20, "top", "rest"))
    for seed in range(5):
        table = sampled_table(full, np.random.default_rng(seed), 0.05, stratum=stratum)
        ev = evaluate_ci(table, runs, ["infAP", "xinfAP", "infNDCG"], variance=method)
        v = ev.variance[ev.evaluated]
        assert np.isfinite(v).all() and (v >= 0).all()
        assert math.isfinite(ev.summary_variance.sum())
