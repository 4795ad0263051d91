"""The baseline comparison as a tool: the same benchmark on an exported commit and on this work
tree, figures side by side; and how figures are judged."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hack.bench.baseline.figures import compare, direction, flatten, regressions

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(400)
def test_baseline_runs_both_trees_and_prints_their_figures() -> None:
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout.strip()
    done = subprocess.run(
        [sys.executable, "-m", "hack.bench.baseline", "--base", head, "--rounds", "1",
         "--report-only", "apiserver", "--", "--writes", "30", "--objects", "20",
         "--watches", "1", "--concurrency", "4"],
        cwd=ROOT, capture_output=True, text=True, timeout=380, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    last = json.loads(done.stdout.strip().splitlines()[-1])
    assert last["base"] == head
    assert last["calibration_seconds"] > 0
    # Each side's calibration is shown, never judged: it is the machine's speed.
    assert all(row["worse_by"] is None for key, row in last["figures"].items()
               if key.startswith("calibration"))
    listed = last["figures"]["ours_listed_items"]
    assert listed == {"base": 50.0, "head": 50.0, "worse_by": None}
    assert last["figures"]["ours_writes_per_second"]["worse_by"] > 0


def test_a_bad_base_is_refused_by_name() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hack.bench.baseline", "--base", "no-such-rev", "apiserver"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode != 0
    assert "no-such-rev" in done.stderr


def test_directions_follow_the_names_of_our_figures() -> None:
    assert direction("ours_writes_per_second") == "higher"
    assert direction("ours_list_seconds") == "lower"
    assert direction("sizes.1000.peak_rss_mib") == "lower"
    assert direction("review_p99_ms") == "lower"
    assert direction("operator_cpu_over_floor") == "lower"
    assert direction("ours_listed_items") == "neutral"
    assert direction("watches") == "neutral"
    assert direction("calibration_seconds") == "neutral"
    assert direction("results[100].operator_cpu_per_graph_in_calibrations") == "lower"


def test_medians_are_compared_and_only_judged_figures_regress() -> None:
    base = [{"a_seconds": 1.0, "n": 5, "r_per_second": 100.0},
            {"a_seconds": 3.0, "n": 5, "r_per_second": 100.0}]
    head = [{"a_seconds": 2.5, "n": 9, "r_per_second": 80.0}]
    rows = {row.key: row for row in compare(base, head)}
    assert rows["a_seconds"].base == 2.0
    assert rows["a_seconds"].worse_by == pytest.approx(1.25)
    assert rows["r_per_second"].worse_by == pytest.approx(1.25)
    assert rows["n"].worse_by is None
    assert [row.key for row in regressions(rows.values(), 0.2)] == ["a_seconds",
                                                                      "r_per_second"]
    assert regressions(rows.values(), 0.3) == []


def test_nested_figures_are_flattened_and_booleans_ignored() -> None:
    assert flatten({"sizes": {"100": {"cpu_seconds": 2}}, "ok": True, "name": "x"}) == {
        "sizes.100.cpu_seconds": 2.0}


def test_per_size_results_in_a_list_are_keyed_by_their_size() -> None:
    figures = flatten({"results": [{"size": 100, "cpu_seconds": 2}, {"cpu_seconds": 3}]})
    assert figures == {"results[100].size": 100.0, "results[100].cpu_seconds": 2.0,
                       "results[1].cpu_seconds": 3.0}
