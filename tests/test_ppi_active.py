"""Active judging (irsample.design.sampling.active): inclusion probabilities from automatic
labels' uncertainty and the runs' AP prior, mixed with uniform, drawn at a fixed size per topic;
the estimators stay unbiased because the draw records its pi."""

from __future__ import annotations

import numpy as np
import pytest

from irsample.design import SamplingFrame
from irsample.design.sampling.active import active
from irsample.errors import DesignError
from irsample.io.labels import AutoLabels
from irsample.measures import EvalContext
from irsample.measures.ppi.estimate import ppi_estimate

from .synthetic import pooled_collection


@pytest.fixture(scope="module")
def world():
    collection, qrels = pooled_collection(5, n_topics=4, n_runs=5, n_docs=600, depth=80,
                                          pool_depth=30, relevant=(10, 30))
    frame = SamplingFrame.from_qrels(collection, qrels)
    rng = np.random.default_rng(1)
    prob = np.full(collection.n_tdi, np.nan)
    prob[frame.tdi] = np.clip(0.7 * (frame.rel >= 1) + 0.3 * rng.random(len(frame)), 0, 1)
    return collection, frame, prob


def test_sizes_mixing_and_uncertainty(world):
    collection, frame, prob = world
    design = active(0.2, prob, mix=0.25)
    pi = design.inclusion(frame)
    size = frame.pool_size()
    want = np.floor(0.2 * size + 0.5)
    np.testing.assert_allclose(np.bincount(frame.topic, weights=pi), want, rtol=1e-9)
    floor = 0.25 * (want / size)[frame.topic]
    assert np.all(pi >= floor - 1e-12) and np.all(pi <= 1.0)
    sample = design.select(frame, rng=3)
    np.testing.assert_array_equal(np.bincount(frame.topic[sample.judged]), want.astype(int))
    # a label of 0 or 1 is certain: only the uniform share remains
    sure = np.isin(prob[frame.tdi], (0.0, 1.0))
    if sure.any():
        np.testing.assert_allclose(pi[sure], floor[sure])


def test_first_order_inclusion_is_exact(world):
    """The share of 4,000 draws that judge each document matches its recorded pi."""
    collection, frame, prob = world
    design = active(0.2, prob)
    pi = design.inclusion(frame)
    hits = np.zeros(len(frame))
    for i in range(4000):
        hits += design.select(frame, rng=i).judged
    se = np.sqrt(pi * (1 - pi) / 4000) + 1e-9
    assert np.mean(np.abs(hits / 4000 - pi) < 4 * se) > 0.99


def test_ppi_on_an_active_sample_is_unbiased_for_a_total(world):
    """ppi(num_rel) at fixed lambda over active draws: mean = the true count per topic."""
    collection, frame, prob = world
    labels = AutoLabels(prob, "probability")
    design = active(0.25, prob)
    values = np.array([ppi_estimate(EvalContext(collection, design.sample(frame, rng=i)), labels,
                                    "num_rel", tuning=0.5).value for i in range(800)])
    truth = np.tile(np.bincount(frame.topic[frame.rel >= 1], minlength=collection.n_topics),
                    collection.n_runs)
    se = values.std(axis=0) / np.sqrt(len(values))
    assert np.all(np.abs(values.mean(axis=0) - truth) < 4 * se + 1e-9)


def test_bad_arguments(world):
    collection, frame, prob = world
    with pytest.raises(DesignError):
        active(0.2, prob, mix=0.0)
    with pytest.raises(DesignError):
        active(0.2, prob[:10]).select(frame, rng=1)


def test_plan_with_auto_labels_merge_and_eval(tmp_path, capsys):
    """plan --auto-labels draws and records pi; merge --format prels keeps the whole pool with
    its pi; eval estimates ppi(AP) and ht(AP) from it."""
    import gzip
    from pathlib import Path

    import irsample
    from irsample.cli import main
    from irsample.design import DesignRecord

    vaswani = Path(irsample.__file__).resolve().parent / "data" / "vaswani"
    runs = [vaswani / "runs" / n for n in ("bm25_k1.2_b0.75.run.gz", "tf_raw.run.gz",
                                           "coord.run.gz")]
    with gzip.open(vaswani / "qrels.gz", "rt") as fh:
        relevant = {(q, d) for q, _, d, r in (line.split() for line in fh) if int(r) > 0}
    pool = set()
    for path in runs:
        with gzip.open(path, "rt") as fh:
            for q, _, d, rank, *_ in (line.split() for line in fh):
                if int(rank) <= 20:
                    pool.add((q, d))
    labels = tmp_path / "p.labels"
    labels.write_text("".join(f"{q} Q0 {d} {0.8 if (q, d) in relevant else 0.1}\n"
                              for q, d in sorted(pool)))
    design = tmp_path / "design.json"
    rc = main(["plan", *map(str, runs), "--budget", "400", "--depth", "20", "--auto-labels",
               str(labels), "--seed", "3", "-o", str(design)])
    out = capsys.readouterr().out
    assert rc == 0 and "active judging" in out and "400 documents drawn" in out
    record = DesignRecord.read(design)
    assert record.selected.sum() == 400 and record.design.name.startswith("active(")
    listed = (tmp_path / "design.to_judge.tsv").read_text().splitlines()  # as `sample` writes
    assert f"wrote {design} and {tmp_path / 'design.to_judge.tsv'}" in out
    assert len(listed) == 401 and listed[0] == "topic\tdocno"
    assert {tuple(line.split("\t")[:2]) for line in listed[1:]} == {
        (q, d) for q, d, s in zip(record.qid, record.docno, record.selected) if s}
    assert len(set(np.round(record.inclusion, 9))) > 2  # not uniform
    qrels = tmp_path / "judged.qrels"
    qrels.write_text("".join(f"{q} 0 {d} {int((q, d) in relevant)}\n"
                             for q, d, s in zip(record.qid, record.docno, record.selected) if s))
    prels = tmp_path / "judged.prels"
    assert main(["merge", str(design), str(qrels), "--format", "prels", "-o", str(prels)]) == 0
    assert len(prels.read_text().splitlines()) == len(record.qid)  # the whole pool
    capsys.readouterr()
    rc = main(["eval", str(prels), *map(str, runs), "--qrels-format", "prels", "-m", "ppi(AP)",
               "-m", "ht(AP)", "--auto-labels", str(labels), "--ci", "0.95"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    rows = [line.split() for line in out.splitlines()]
    ppi = [float(v) for n, _, v in rows if n == "ppi(AP)"]
    assert len(ppi) == 3 and all(0 < v < 1 for v in ppi)
    assert main(["merge", str(design), str(qrels), "--format", "strata"]) == 1
