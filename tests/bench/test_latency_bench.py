"""The latency benchmark as a tool: with two graphs and two samples per path it runs to the
end, checks its own figures and prints them as one JSON object on the last line (timings are
not checked)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hack.bench.latency.__main__ import percentile

ROOT = Path(__file__).resolve().parents[2]
PATHS = ("scale", "scale_floor", "image", "image_floor")


def test_latency_bench_prints_json() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hack.bench.latency", "--graphs", "2", "--samples", "2",
         "--timeout", "60", "--sample-timeout", "20"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["graphs"] == 2
    for path in PATHS:
        assert result[f"{path}_samples"] == 2 and result[f"{path}_timeouts"] == 0
        assert 0 < result[f"{path}_p50_ms"] <= result[f"{path}_p99_ms"]
    assert result["floor_deployment_writes"] >= 4
    assert "scale_operator_share_p99_ms" in result


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50.0
    assert percentile(values, 99) == 99.0
    assert percentile([3.0], 99) == 3.0
