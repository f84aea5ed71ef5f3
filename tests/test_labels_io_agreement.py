"""Automatic labels: the reader (irsample.io.labels), Cohen's kappa and the confusion by grade
(irsample.stats.agreement), the simulated labellers (irsample.design.labels.simulated) and the
cross-fitted fusion labeller (irsample.design.labels.fusion)."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irsample.design import SamplingFrame, uniform
from irsample.design.labels.fusion import fusion_labels, topic_folds
from irsample.design.labels.simulated import (
    calibrate_sigma,
    favoured_documents,
    noisy_grades,
    over_label,
)
from irsample.errors import InputError
from irsample.io.labels import read_labels
from irsample.model import Judgments
from irsample.stats.agreement import (
    cohen_kappa,
    confusion,
    confusion_by_grade,
    kappa_from_counts,
    wilson,
)

from .synthetic import pooled_collection


@pytest.fixture(scope="module")
def world():
    collection, qrels = pooled_collection(5, n_topics=8, n_runs=5, n_docs=600, depth=80,
                                          pool_depth=30, relevant=(15, 40))
    return collection, SamplingFrame.from_qrels(collection, qrels)


def _docs(collection, frame, n):
    out = []
    for i in range(n):
        t, d = frame.topic[i], frame.tdi[i]
        out.append((collection.topics[t], collection.tdi_docno[int(d)].as_py().decode()))
    return out


# ---- reader ------------------------------------------------------------------------------
def test_reads_probabilities_and_grades_onto_the_pool(world, tmp_path):
    collection, frame = world
    docs = _docs(collection, frame, 3)
    path = tmp_path / "labels.txt"
    path.write_text("".join(f"{t} Q0 {d} {v}\n" for (t, d), v in zip(docs, (0.2, 0.9, 0.0)))
                    + "\n" + f"{docs[0][0]} Q0 NOT-IN-POOL 0.5\nno-such-topic Q0 x 1\n")
    labels = read_labels(path, collection)
    assert labels.kind == "probability"
    np.testing.assert_allclose(labels.value[frame.tdi[:3]], [0.2, 0.9, 0.0])
    assert np.count_nonzero(np.isfinite(labels.value)) == 3
    np.testing.assert_allclose(labels.relevance()[frame.tdi[:3]], [0.2, 0.9, 0.0])
    gz = tmp_path / "grades.gz"
    with gzip.open(gz, "wt") as fh:
        fh.write("".join(f"{t} 0 {d} {v}\n" for (t, d), v in zip(docs, (2, 0, 1))))
    grades = read_labels(gz, collection)
    assert grades.kind == "grade" and grades.max_grade() == 2
    np.testing.assert_allclose(grades.relevance(2)[frame.tdi[:3]], [1, 0, 0])
    np.testing.assert_allclose(grades.at_least(1)[frame.tdi[:3]], [1, 0, 1])


def test_labels_read_like_runs_a_leading_bom_comments_and_a_pipe(world, tmp_path):
    """A leading byte-order mark hid the first label (its topic became U+FEFF + id), a '#'
    line was an error, and a label file given as a pipe was read after a peek had taken its
    start."""
    import os
    import subprocess
    import threading

    collection, frame = world
    (t, d), = _docs(collection, frame, 1)
    path = tmp_path / "l.txt"
    path.write_text(f"\ufeff{t} Q0 {d} 0.75\n# a comment\n")
    assert read_labels(path, collection).value[frame.tdi[0]] == 0.75
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"cat {path} > {fifo}"])
    read = []  # in a daemon thread: a reader that opens a FIFO twice waits for ever
    worker = threading.Thread(daemon=True,
                              target=lambda: read.append(read_labels(fifo, collection)))
    worker.start()
    worker.join(60)
    writer.kill()
    assert read and read[0].value[frame.tdi[0]] == 0.75


@pytest.mark.parametrize("body,line,message", [
    ("q Q0 d\n", 1, "expected 4 fields"),
    ("q Q0 d 0.5\nq Q0 e high\n", 2, "not a number"),
    ("q Q0 d 0.5\nq Q0 e 1.5\n", 2, "outside its range"),
    ("q Q0 d 0.5\nq Q0 e nan\n", 2, "not finite"),
    ("q Q0 d 0.5\nq Q0 d 0.4\n", 2, "labelled twice"),
    # grades with one fraction: its line, not the first grade's (was line 2 in both)
    ("q Q0 a 0\nq Q0 b 2\nq Q0 c 0.5\n", 3,
     "label value 0.5 is a probability, but line 2 holds the grade 2"),
    ("q Q0 a 1\nq Q0 b 2\nq Q0 c 2\nq Q0 d -0.5\n", 4, "label value -0.5 outside its range"),
    # read as runs and qrels are (these topic ids matched nothing: labels dropped silently)
    (b"q Q0 a 1\n\xe9 Q0 b 1\n", 2, "not UTF-8"),
    ("q Q0 a 1\n\ufeffq Q0 b 1\n", 2, "byte-order mark"),
    ("q Q0 a 1\nq\x00 Q0 b 1\n", 2, "NUL byte"),
    (b"\x1f\x8b\x08\x00garbage", 1, "corrupt gzip data"),  # was a traceback
])
def test_bad_label_files_name_the_line(world, tmp_path, body, line, message):
    collection, _ = world
    path = tmp_path / "bad.txt"
    path.write_bytes(body if isinstance(body, bytes) else body.encode())
    with pytest.raises(InputError, match=message) as err:
        read_labels(path, collection)
    assert err.value.line == line and err.value.source == str(path)


def test_negative_or_fractional_grades_are_errors(world, tmp_path):
    collection, _ = world
    path = tmp_path / "g.txt"
    path.write_text("q Q0 d 2\nq Q0 e -1\n")
    with pytest.raises(InputError, match="outside its range") as err:
        read_labels(path, collection)
    assert err.value.line == 2
    path.write_text("q Q0 d 2\nq Q0 e 0.5\n")
    with pytest.raises(InputError, match="outside its range"):
        read_labels(path, collection, kind="grade")


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=1, max_size=20))
def test_probabilities_round_trip(tmp_path_factory, values):
    collection, qrels = pooled_collection(1, n_topics=1, n_runs=2, n_docs=100, depth=30,
                                          pool_depth=30)
    frame = SamplingFrame.from_qrels(collection, qrels)
    n = min(len(values), len(frame))
    docs = _docs(collection, frame, n)
    path = tmp_path_factory.mktemp("p") / "l.txt"
    path.write_text("".join(f"{t} Q0 {d} {v!r}\n" for (t, d), v in zip(docs, values)))
    labels = read_labels(path, collection, kind="probability")
    np.testing.assert_array_equal(labels.value[frame.tdi[:n]], values[:n])


# ---- agreement ---------------------------------------------------------------------------
def test_kappa_by_hand():
    # counts: 20 agree on 0, 15 on 1, 5 and 10 disagree; p_o = 0.7, p_e = 0.5: kappa = 0.4
    k = kappa_from_counts([[20, 5], [10, 15]])
    assert k.observed == pytest.approx(0.7) and k.expected == pytest.approx(0.5)
    assert k.kappa == pytest.approx(0.4)
    ref = np.array([0] * 25 + [1] * 25)
    lab = np.array([0] * 20 + [1] * 5 + [0] * 10 + [1] * 15)
    assert cohen_kappa(ref, lab).kappa == pytest.approx(0.4)
    assert cohen_kappa(ref, ref).kappa == pytest.approx(1.0)


def test_kappa_variance_matches_statsmodels():
    sm = pytest.importorskip("statsmodels.stats.inter_rater")
    table = np.array([[30, 4, 1], [6, 20, 3], [2, 5, 12]])
    ours = kappa_from_counts(table)
    theirs = sm.cohens_kappa(table)
    assert ours.kappa == pytest.approx(theirs.kappa)
    assert ours.se == pytest.approx(theirs.std_kappa, rel=1e-9)


def test_confusion_by_grade_and_wilson():
    ref = np.array([0, 0, 0, 1, 1, 2, 2, 2])
    lab = np.array([0, 1, 0, 1, 2, 2, 2, 1])
    grades, counts = confusion(ref, lab)
    assert list(grades) == [0, 1, 2]
    np.testing.assert_array_equal(counts, [[2, 1, 0], [0, 1, 1], [0, 1, 2]])
    _, _, share, low, high = confusion_by_grade(ref, lab)
    np.testing.assert_allclose(share, [2 / 3, 1 / 2, 2 / 3])
    assert np.all(low < share) and np.all(share < high)
    lo, hi = wilson(0, 10)  # Wilson (1927): 0 of 10 gives [0, 0.2775]
    assert lo == pytest.approx(0.0, abs=1e-12) and hi == pytest.approx(0.27753, abs=1e-4)


# ---- simulated labellers -----------------------------------------------------------------
@pytest.mark.parametrize("target", [0.3, 0.5, 0.7])
def test_noise_calibrated_to_kappa(target):
    rng = np.random.default_rng(0)
    grade = rng.choice([0, 1, 2], 20000, p=[0.9, 0.06, 0.04])
    sigma = calibrate_sigma(grade, target, rng=1)
    fresh = noisy_grades(grade, sigma, np.random.default_rng(2).standard_normal(len(grade)))
    assert cohen_kappa(grade, fresh).kappa == pytest.approx(target, abs=0.02)
    _, counts = confusion(grade, fresh)
    assert counts[2, 1] > counts[2, 0]  # graded confusion: a neighbour more than a far grade
    assert counts[0, 1] > counts[0, 2]


def test_adversarial_source_raises_only_the_favoured_runs_documents(world):
    collection, frame = world
    in_frame = np.zeros(collection.n_tdi, dtype=bool)
    in_frame[frame.tdi] = True
    favoured = favoured_documents(collection, [0], 5, in_frame)
    base = np.full(collection.n_tdi, np.nan)
    base[frame.tdi] = 0
    out = over_label(base, favoured)
    assert np.all(out[favoured] == 1)
    assert np.all(out[in_frame & ~favoured] == 0)
    top = collection.rank_tdi[collection.rank_offsets[0]:collection.rank_offsets[0] + 5]
    assert favoured[top[in_frame[top]]].all()


# ---- the fusion labeller -----------------------------------------------------------------
def test_fusion_labels_of_a_topic_do_not_use_its_judgments(world):
    """Cross-fitting by topic: changing the judgments of topic 0 leaves its labels unchanged
    (and it does change other folds' labels)."""
    collection, frame = world
    sample = uniform(0.5).sample(frame, rng=3)
    a = fusion_labels(collection, sample, folds=4, rng=0)
    grade = np.where(sample.state[frame.tdi] == 2, frame.rel, -1)
    flipped = grade.copy()
    zero = (frame.topic == 0) & (grade >= 0)
    flipped[zero] = np.where(grade[zero] >= 1, 0, 1)
    changed = Judgments.from_arrays(collection, frame.topic, frame.tdi, flipped)
    b = fusion_labels(collection, changed, folds=4, rng=0)
    t0 = frame.tdi[frame.topic == 0]
    np.testing.assert_array_equal(a.value[t0], b.value[t0])
    others = frame.tdi[frame.topic != 0]
    assert not np.allclose(a.value[others], b.value[others])
    assert a.kind == "probability" and np.all((a.value[frame.tdi] >= 0) & (a.value[frame.tdi] <= 1))


def test_topic_folds_are_balanced():
    fold = topic_folds(23, 5, 0)
    assert sorted(np.bincount(fold)) == [4, 4, 5, 5, 5]
