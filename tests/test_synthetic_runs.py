"""scripts/synthetic_runs.py: runs over any qrels, with the quirks real runs have, readable by
irsample and the same for the same seed."""

from __future__ import annotations

import gzip
import importlib.util
from pathlib import Path

import numpy as np

from irsample.io import load_qrels, load_runs
from irsample.model import Collection

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "synthetic_runs.py"
spec = importlib.util.spec_from_file_location("synthetic_runs", SCRIPT)
synthetic = importlib.util.module_from_spec(spec)
spec.loader.exec_module(synthetic)


def _text(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode()


def _qrels(path: Path) -> Path:
    rng = np.random.default_rng(3)
    lines = [f"t{t} 0 d{t}-{j} {int(rng.choice([-2, 0, 0, 1, 2, 3]))}\n"
             for t in range(14) for j in range(40)]
    path.write_text("".join(lines))
    return path


def test_runs_carry_the_quirks_and_repeat_for_a_seed(tmp_path):
    qrels_path = _qrels(tmp_path / "q.txt")
    qrels = synthetic.read_qrels(qrels_path)
    first = synthetic.write_runs(qrels, tmp_path / "a", n_runs=5, depth=30, seed=2, prefix="s",
                                 gz_every=2)
    again = synthetic.write_runs(qrels, tmp_path / "b", n_runs=5, depth=30, seed=2, prefix="s",
                                 gz_every=2)
    assert [p.name for p in first] == ["s00.run.gz", "s01.run", "s02.run.gz", "s03.run",
                                       "s04.run.gz"]
    assert [_text(p) for p in first] == [_text(p) for p in again]

    runs = load_runs([str(p) for p in first])
    collection = Collection.build(runs, [load_qrels(str(qrels_path))])
    lengths = collection.segment_lengths()  # runs x topics
    topics = sorted(qrels)
    assert (lengths[1] == 0).sum() == len(range(0, len(topics), 5))  # run 1 leaves topics out
    assert sorted(set(lengths[2].tolist())) == [5, 30]  # run 2: 5 documents on some topics
    assert np.all(lengths[[0, 3, 4]] == 30)
    scores = [float(line.split()[4]) for line in first[3].read_text().splitlines()]
    assert all(s == round(s) for s in scores)  # run 3: integer scores, ties
    docs = {line.split()[2] for line in _text(first[0]).splitlines()}
    assert any(d.startswith("FAKE-") for d in docs) and any(d.startswith("d") for d in docs)
