"""The API server benchmark as a tool: a tiny run against the local API server and its floor
peer checks its own figures and prints them as one JSON object (timings unchecked)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_apiserver_bench_prints_both_sides() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hack.bench.apiserver", "--writes", "40", "--objects", "50",
         "--watches", "2", "--concurrency", "4"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    last = json.loads(done.stdout.strip().splitlines()[-1])
    assert last["calibration_seconds"] > 0
    for side in ("ours", "floor"):
        assert last[f"{side}_listed_items"] == 40 + 50  # both phases' ConfigMaps
        assert last[f"{side}_writes_per_second"] > 0
