"""The rollout benchmark as a tool: with two graphs it rolls both out, then the peer (the
operator of before worker generations) does the same, and it prints its figures as one JSON
object on the last line and the chart as a PNG (timings are not checked). Its checks refuse
impossible figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from hack.bench.rollout.figures import problems

ROOT = Path(__file__).resolve().parents[2]
KEYS = {"graphs", "min_capacity", "capacity_floor", "max_surge", "max_generations",
        "isolation_violations", "breaches", "rollout_seconds_median", "rollout_seconds_max",
        "writes_per_graph_per_rollout", "writes_breakdown_per_graph", "sampler",
        "calibration_seconds", "peer", "peer_reason", "chart"}


def test_rollout_bench_prints_json_and_a_chart(tmp_path: Path) -> None:
    chart = tmp_path / "rollout.png"
    done = subprocess.run(
        [sys.executable, "-m", "hack.bench.rollout", "--graphs", "2", "--chart", str(chart),
         "--timeout", "120", "--server-gc", "freeze"],
        cwd=ROOT, capture_output=True, text=True, timeout=400, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    last = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(last) >= KEYS
    assert last["graphs"] == 2 and last["rollouts_done"] == 2
    assert last["server_gc"] == "freeze"
    assert last["min_capacity"] >= last["capacity_floor"] and last["breaches"] == 0
    assert 1 <= last["max_generations"] <= 2 and last["max_surge"] >= 1
    assert 0 < last["rollout_seconds_median"] <= last["rollout_seconds_max"]
    # Each graph's rollout made and removed its two worker DCDs.
    writes = last["writes_breakdown_per_graph"]
    assert writes["create dynamocomponentdeployments.nvidia.com"] == 2
    assert writes["delete dynamocomponentdeployments.nvidia.com"] == 2
    assert last["phases_of_first_graph"][-3:] == ["Pending", "InProgress", "Completed"]
    # Every change of every pod was judged, from watches that lost nothing.
    sampler = last["sampler"]
    assert sampler["mode"] == "watch" and sampler["gaps"] == []
    assert sampler["events"]["pods"] > 10 and last["samples_per_graph_min"] > 10
    assert last["calibration_seconds"] > 0
    assert chart.read_bytes().startswith(b"\x89PNG")
    peer = last["peer"]
    assert peer is not None, last["peer_reason"]
    assert peer["rollouts_done"] == 2 and peer["rollout_seconds_median"] > 0
    # The peer updates its DCDs in place: one generation, nothing created.
    assert peer["max_generations"] == 1
    assert "create dynamocomponentdeployments.nvidia.com" not in peer[
        "writes_breakdown_per_graph"]


def _result(**changes: Any) -> dict[str, Any]:
    base = {"graphs": 2, "rollouts_done": 2, "samples_per_graph_min": 50,
            "rollout_seconds_min": 5.0, "writes_per_graph_per_rollout": 30.0,
            "samples_below_floor": 0, "min_capacity": 1.0, "capacity_floor": 1.0,
            "max_generations": 2, "isolation_violations": 0, "breaches": 0,
            "breach_examples": [], "sampler": {"gaps": []}}
    return {**base, **changes}


def test_impossible_or_broken_figures_fail_the_run() -> None:
    assert not [p for p in problems(_result(), "ours") if p]
    for changes in ({"rollout_seconds_min": 0.0}, {"rollouts_done": 1},
                    {"writes_per_graph_per_rollout": 1.0}, {"samples_below_floor": 3},
                    {"max_generations": 3}, {"isolation_violations": 1},
                    {"breaches": 1, "breach_examples": ["x: surge 2 above 1"]},
                    {"sampler": {"gaps": ["pods watch: 410 too old"]}}):
        assert [p for p in problems(_result(**changes), "ours") if p], changes
    # The peer's breaches are its result; only impossible figures fail it.
    assert not [p for p in problems(_result(breaches=2, samples_below_floor=1), "peer") if p]
    assert [p for p in problems(_result(rollout_seconds_min=-1.0), "peer") if p]
    # A sampler that lost events may have missed a breach: the peer's run fails too.
    assert [p for p in problems(_result(sampler={"gaps": ["x"]}), "peer") if p]
