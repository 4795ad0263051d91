"""The conversion benchmark against the real kube-apiserver 1.20 (`--cluster real`), at a tiny
size: it starts a control plane of its own from the session's built binaries, lists 20 graphs
stored as v1beta1 in both versions through an operator process's webhook and the floor
webhook, and prints its figures as a JSON object on the last line. Its own checks (every item
converted as `api.conversion` converts it, one review of one object per graph and LIST, by
the webhooks' counts and by kube-apiserver's) fail the run; timings are not checked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hack.realcluster.inputs import CachedBuild

pytestmark = pytest.mark.timeout(300, func_only=True)

ROOT = Path(__file__).resolve().parents[2]
GRAPHS = 20


def test_conversion_bench_against_real_kube_apiserver(real_binaries: CachedBuild) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hack.bench.conversion", "--cluster", "real",
         "--graphs", str(GRAPHS), "--repeat", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["cluster"] == "real-1.20" and figures["graphs"] == GRAPHS
    assert figures["reviews_per_list_v1alpha1"] == [GRAPHS]
    assert figures["objects_per_list_v1alpha1"] == [GRAPHS]
    assert figures["apiserver_reviews_per_list_v1alpha1"] == [GRAPHS]
    assert figures["reviews_per_list_floor_webhook"] == [GRAPHS]
    assert figures["calibration_seconds"] > 0
    assert figures["list_v1alpha1_seconds"] > 0
    assert figures["list_v1alpha1_seconds_floor_webhook"] > 0
    assert figures["handler_ms_mean"] > 0 and figures["webhook_review_ms_mean"] > 0
