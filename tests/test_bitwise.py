"""The fixtures' comparison (``tests/bitwise.py``) lets through only the last bits a library
update moves: a change of a few ulps of the array's scale passes, anything larger is caught."""

from __future__ import annotations

import numpy as np

from .bitwise import ULPS, differing


def test_only_the_last_bits_may_move(tmp_path):
    before = {"a": np.array([0.16172008886672704, 1e-20, np.nan]), "n": np.array([1, 2])}
    path = tmp_path / "before.npz"
    np.savez(path, **before)
    step = np.spacing(0.16172008886672704)
    assert differing(path, {"a": before["a"] + [ULPS * step, 0.0, 0.0], "n": before["n"]}) == []
    assert differing(path, {"a": before["a"] + [1e-12, 0.0, 0.0], "n": before["n"]}) == ["a"]
    assert differing(path, {"a": before["a"], "n": np.array([1, 3])}) == ["n"]
    assert differing(path, {"a": np.array([0.16172008886672704, 1e-20, 0.0]),
                            "n": before["n"]}) == ["a"]  # NaN is not a number
