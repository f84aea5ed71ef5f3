"""The measured choice of calibrated interval estimators (irsample.commands.calibration)."""

from __future__ import annotations

from irsample.commands import calibration
from irsample.measures import parse


def test_every_choice_is_a_known_estimator_of_its_measure():
    for target, estimator in calibration.INTERVALS.items():
        assert target in calibration.EVIDENCE
        if estimator is not None:
            assert len(parse(estimator)) == 1
            assert calibration.TARGET_OF[estimator] == target


def test_interval_note():
    for estimator, target in calibration.TARGET_OF.items():
        note = calibration.interval_note(estimator)
        assert note.startswith("intervals: report ") and calibration.EVIDENCE[target] in note
        chosen = calibration.INTERVALS[target]
        assert (f"{chosen}'s 95% intervals" in note) if chosen else ("point estimates" in note)
    assert calibration.interval_note("iP@10") == "intervals: no coverage measured for iP@10"
