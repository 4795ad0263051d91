"""The cache-size measure as a tool: with two graphs it runs to the end, checks its figures and
prints them as one JSON object on the last line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_cache_sizes_prints_json() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hack.bench.graphs.cache_sizes", "--graphs", "2"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["graphs"] == result["ready"] == 2
    assert result["calibration_seconds"] > 0
    pods = result["kinds"]["pods"]
    assert pods["objects"] == 6
    # Held without their spec and compacted: smaller than with managedFields stripped only.
    assert 0 < pods["kib_per_object_cached"] < pods["kib_per_object_stripped"]
    # What the reconcilers keep per generation beside the cache, per graph and per DCD.
    derived = result["kinds"]["dynamographdeployments.nvidia.com"]["kib_per_object_derived"]
    assert set(derived) == {"validated", "graph_of", "inputs_of"}
    assert all(kib > 0 for kib in derived.values())
    dcd = result["kinds"]["dynamocomponentdeployments.nvidia.com"]["kib_per_object_derived"]
    assert set(dcd) == {"validated", "component_of"} and all(kib > 0 for kib in dcd.values())
    assert result["kinds"]["controllerrevisions.apps"]["objects"] == 2
