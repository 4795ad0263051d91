"""The write micro-benchmark as a tool: a short run prints one figure per kind of write as a
JSON object on the last line (timings are not checked)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_writes_bench_prints_json() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hack.bench.writes", "--rounds", "1", "--writes", "5"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    last = json.loads(done.stdout.strip().splitlines()[-1])
    assert last["calibration_seconds"] > 0
    assert set(last["us_per_write"]) == {"status", "update", "patch", "create", "floor"}
