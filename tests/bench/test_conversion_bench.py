"""The conversion benchmark as a tool: a short run lists graphs stored as v1beta1 in both
versions, through an operator process's webhook, and prints its figures as a JSON object on
the last line (timings are not checked)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_conversion_bench_prints_json() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hack.bench.conversion", "--graphs", "10", "--repeat", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=90, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["graphs"] == 10
    assert figures["calibration_seconds"] > 0
    # Ten reviews may cost the operator less than one tick of the process CPU clock (10 ms).
    assert figures["operator_cpu_seconds_v1alpha1_in_calibrations"] >= 0
    assert figures["list_v1alpha1_seconds"] > 0 and figures["webhook_review_ms_p99"] > 0
    assert figures["handler_ms_mean"] > 0 and figures["convert_ms_p99"] > 0
    assert figures["list_v1alpha1_seconds_floor_webhook"] > 0
