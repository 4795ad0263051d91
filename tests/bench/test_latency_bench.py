"""The latency benchmark as a tool: with two graphs and two samples per path it runs to the
end, checks its own figures and prints them as one JSON object on the last line (timings are
not checked)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hack.bench.latency.__main__ import HOPS, Sample, percentile

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
    assert result["calibration_seconds"] > 0
    for path in PATHS:
        assert result[f"{path}_samples"] == 2 and result[f"{path}_timeouts"] == 0
        assert 0 < result[f"{path}_p50_ms"] <= result[f"{path}_p99_ms"]
    assert result["floor_deployment_writes"] >= 4
    assert "scale_operator_share_p99_ms" in result
    # Each operator path hop by hop: three hops, each a non-negative time.
    for path, hops in HOPS.items():
        assert len(hops) == 3
        for hop, _, _ in hops:
            assert 0 <= result[f"{path}_hop_{hop}_p50_ms"] <= result[f"{path}_hop_{hop}_p99_ms"]
    assert result["operator_graph_writes"] >= 2 + 2  # Ready statuses and the scales
    assert isinstance(result["operator_lost_races_during_samples"], dict)
    assert result["server_gc"] == "freeze" and result["server_loop_stalls"] >= 0
    assert "| scale hop DGDSA → DGD |" in done.stderr.replace("  scale", "scale")


def test_hops_add_up_to_the_total() -> None:
    sample = Sample(0.0, "g", {"dgd": 10.0, "dcd": 25.0, "deployment": 40.0})
    hops = [sample.hop(start, end) for _, start, end in HOPS["scale"]]
    assert hops == [10.0, 15.0, 15.0] and sum(h or 0.0 for h in hops) == sample.total
    assert Sample(0.0, "g", {"dgd": 10.0, "dcd": None}).hop("dgd", "dcd") is None


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50.0
    assert percentile(values, 99) == 99.0
    assert percentile([3.0], 99) == 3.0
