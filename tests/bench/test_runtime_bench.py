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
    # One create per object at least; the old count by product name once read 0.00 here.
    assert last["ours_requests_per_object"] >= 1.0
    assert last["kopf_requests_per_object"] is None
