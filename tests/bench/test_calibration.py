"""The machine's calibration: a fixed workload, the fastest of its repeats, and what makes
one impossible."""

from __future__ import annotations

from hack.bench import calibration


def test_the_workload_is_fixed() -> None:
    # A changed workload changes the checksum: bump WORKLOAD_VERSION with it.
    assert calibration.workload(1) == calibration.workload(1) == 20200
    assert calibration.WORKLOAD_VERSION == 1


def test_a_measure_reports_the_fastest_repeat_and_the_spread() -> None:
    figures = calibration.measure(repeats=3, rounds=2)
    assert figures["calibration_seconds"] > 0 and figures["calibration_spread"] >= 1.0
    assert figures["calibration_repeats"] == 3
    assert calibration.problems(figures) == [None, None]


def test_impossible_calibrations_are_named() -> None:
    zero, unstable = calibration.problems({"calibration_seconds": 0.0,
                                           "calibration_spread": 12.0})
    assert zero is not None and "calibration_seconds is 0.0" in zero
    assert unstable is not None and "12.0" in unstable


def test_cpu_figures_in_calibrations() -> None:
    assert calibration.in_calibrations(2.0, {"calibration_seconds": 0.5}) == 4.0
    assert calibration.in_calibrations(None, {"calibration_seconds": 0.5}) is None
    assert calibration.in_calibrations(2.0, {"calibration_seconds": 0}) is None
