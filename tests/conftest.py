"""Shared fixtures: where ../shared lives, and small helpers to parse trec_eval output."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# One BLAS thread per test process: the suite runs in two worker processes (pyproject's addopts,
# -n 2), which inherit this; two workers each spinning BLAS threads on a two-core machine ran the
# suite in 14.4 min against 5.3 min with one thread each (and 10.7 min in one process).
for _blas in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_blas, "1")

SHARED = Path(os.environ.get("IRSAMPLE_SHARED", Path(__file__).resolve().parents[2] / "shared"))


@pytest.fixture(scope="session")
def shared() -> Path:
    """The ../shared folder; tests using it are marked ``shared``."""
    if not (SHARED / "data").is_dir():
        pytest.fail(f"shared data not found at {SHARED} (set IRSAMPLE_SHARED)")
    return SHARED


def parse_trec_eval(text: str) -> dict[tuple[str, str], str]:
    """trec_eval output lines -> {(measure, topic): printed value}."""
    out = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        measure, topic, value = line.split("\t")
        key = (measure.strip(), topic.strip())
        assert key not in out, f"repeated line {key}"
        out[key] = value.strip()
    return out


@pytest.fixture
def without_relevance_model(monkeypatch):
    """Estimates without the relevance model behind the anticipated variance
    (``ht/anticipated.py``): their intervals take the sample's variance. For the Monte Carlo
    tests of what does not read it (the estimators' totals X^ and Y^, the bias-corrected
    ratios, ppi's difference form at a fixed lambda), whose draws would spend most of their
    time on it (78% of an ht(AP) draw on a four-topic stratified sample, 70% in its fit)."""
    from irsample.measures.ht import anticipated

    monkeypatch.setattr(anticipated, "_relevance_model", lambda ctx, d, for_rule=False: None)
