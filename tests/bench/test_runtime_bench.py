"""The runtime benchmark as a tool: at a tiny size it runs to the end, counts our requests by
its own per-run user agent, and prints its figures as one JSON object (timings unchecked)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_runtime_bench_counts_our_requests() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hack.bench.runtime", "--objects", "5", "--skip-kopf",
         "--settle", "0.2", "--timeout", "60"],
        cwd=ROOT, capture_output=True, text=True, timeout=100, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    last = json.loads(done.stdout.strip().splitlines()[-1])
    assert last["objects"] == 5
    assert last["calibration_seconds"] > 0 and last["ours_cpu_seconds_in_calibrations"] > 0
    assert last["kopf_cpu_seconds_in_calibrations"] is None
    # One create per object at least; the old count by product name once read 0.00 here.
    assert last["ours_requests_per_object"] >= 1.0
    assert last["kopf_requests_per_object"] is None


def test_runtime_bench_prints_a_row_per_size() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hack.bench.runtime", "--sizes", "3,5", "--skip-kopf",
         "--settle", "0.2", "--timeout", "60"],
        cwd=ROOT, capture_output=True, text=True, timeout=150, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    last = json.loads(done.stdout.strip().splitlines()[-1])
    assert [row["objects"] for row in last["rows"]] == [3, 5]
    for row in last["rows"]:
        assert row["ours_requests_per_object"] >= 1.0
        assert row["ours_cpu_seconds"] > 0
        assert row["kopf_seconds"] is None and row["speedup"] is None
    # The table: a header and one line per size, before the JSON line.
    assert [line.split()[0] for line in done.stdout.strip().splitlines()[-3:-1]] == ["3", "5"]
