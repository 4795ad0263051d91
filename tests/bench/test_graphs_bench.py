"""The graph benchmark as a tool: with two graphs and a short idle window it runs to the end,
with its floor and the machine's calibration, and prints its figures as one JSON object on the
last line (timings are not checked)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULT_KEYS = {"graphs", "seconds_to_ready", "writes_per_graph", "minimum_writes_per_graph",
               "minimum", "steady_writes_per_minute", "operator_peak_rss_mib",
               "writes_breakdown_per_graph", "watch_events_per_graph", "watch_kib_per_graph",
               "watch_events_by_resource_per_graph", "reconciles_per_graph",
               "floor_cpu_seconds", "operator_cpu_over_floor", "floor_writes_breakdown_per_graph",
               "floor_watch_events_per_graph", "operator_cpu_per_graph_in_calibrations",
               "floor_cpu_per_graph_in_calibrations"}


def test_graphs_bench_prints_json() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hack.bench.graphs", "--sizes", "2", "--steady", "0.5",
         "--settle", "0.2", "--timeout", "60", "--server-gc", "freeze"],
        cwd=ROOT, capture_output=True, text=True, timeout=100, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    last = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"workers", "qps", "steady_seconds", "peer", "results"} <= set(last)
    assert last["peer"] == "floor" and last["calibration_seconds"] > 0
    [result] = last["results"]
    assert set(result) >= RESULT_KEYS
    assert result["graphs"] == 2
    # Frozen, the in-process server made no full collection while the operator ran.
    assert result["server_gc"] == "freeze" and result["server_full_gcs"] == 0
    assert result["minimum"]["children_per_graph"]["deployments.apps"] == 3
    # The operator decoded at least its own graph's and children's events, pods included.
    watched = result["watch_events_by_resource_per_graph"]
    assert watched["dynamographdeployments.nvidia.com"][0] >= 1
    assert watched["pods"][0] >= 3 and watched["pods"][1] > 0
    # A graph and its three components are each reconciled at least once.
    by_controller = result["reconciles_by_controller_per_graph"]
    assert by_controller["DynamoGraphDeployment"] >= 1
    assert by_controller["DynamoComponentDeployment"] >= 3
    # The floor did the operator's writes, no more and no fewer (the benchmark fails
    # otherwise), decoded what the same watches sent, and both CPU figures are real.
    operator = result["operator_writes_to_ready_breakdown_per_graph"]
    floor = result["floor_writes_breakdown_per_graph"]
    for key in ("create deployments.apps", "create dynamocomponentdeployments.nvidia.com",
                "create events", "patch dynamographdeployments.nvidia.com/status"):
        assert floor[key] == operator[key] > 0, key
    assert result["floor_failed_requests"] == 0 and result["floor_unresolved_uids"] == 0
    assert result["floor_watch_events_per_graph"] >= 3
    assert result["floor_cpu_seconds"] > 0 and result["operator_cpu_over_floor"] > 0


def test_graphs_bench_v1alpha1_watcher_prints_json() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hack.bench.graphs", "--sizes", "2", "--steady", "0.5",
         "--settle", "0.2", "--timeout", "60", "--v1alpha1-watcher"],
        cwd=ROOT, capture_output=True, text=True, timeout=150, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    last = json.loads(done.stdout.strip().splitlines()[-1])
    assert last["mode"] == "v1alpha1-watcher" and last["calibration_seconds"] > 0
    [result] = last["results"]
    assert result["operator_cpu_seconds_to_ready"] > 0
    assert result["operator_cpu_seconds_to_ready_v1alpha1_watcher"] > 0
    assert result["v1alpha1_watcher_added_share"] is not None
    # The operator served the user's list (a review per graph) and each event sent to it;
    # with no reader, nothing asked it to convert.
    assert result["conversion_reviews_per_graph"] >= 1 + result["watcher_events_per_graph"]
    assert result["watcher_events_per_graph"] > 0
    assert result["conversion_reviews_per_graph_without_reader"] == 0
    assert [r["v1alpha1_watcher"] for r in result["runs"]] == [False, True]


def _run(order: int, watcher: bool, **figures: float) -> dict[str, object]:
    return {"order": order, "v1alpha1_watcher": watcher, "ready": 2,
            "operator_cpu_seconds_to_ready": 1.0, "seconds_to_ready": 3.0,
            "conversion_reviews": 0.0, "conversion_review_failures": 0.0,
            "watcher_listed": 2 if watcher else 0, "watcher_events": 2 if watcher else 0,
            "watcher_relists": 0, "watcher_relisted": 0,
            "watcher_other_versions": 0, "watcher_list_seconds": 0.01, **figures}


def test_the_watcher_comparison_refuses_impossible_figures() -> None:
    from hack.bench.checks import ImpossibleFigures
    from hack.bench.graphs.v1alpha1_watcher import compared

    cal = {"calibration_seconds": 0.1}
    good = compared(2, [_run(0, False)], [_run(1, True, conversion_reviews=4.0,
                                                operator_cpu_seconds_to_ready=1.1)], cal)
    assert good["v1alpha1_watcher_added_share"] == 0.1 and good["goal_added_share_met"]
    assert good["conversion_reviews_per_graph"] == 2.0
    for broken, says in ((dict(conversion_reviews=0.0), "conversion reviews"),
                         (dict(conversion_reviews=4.0, watcher_events=0), "watch events"),
                         (dict(conversion_reviews=4.0, watcher_listed=1), "listed"),
                         (dict(conversion_reviews=4.0, watcher_other_versions=1),
                          "another version")):
        try:
            compared(2, [_run(0, False)], [_run(1, True, **broken)], cal)
        except ImpossibleFigures as err:
            assert says in str(err)
        else:
            raise AssertionError(f"{broken} was taken")


def test_repeated_runs_report_medians() -> None:
    from hack.bench.graphs.__main__ import median_of

    def run(cpu: float, rss: float, writes: float) -> dict[str, object]:
        return {"seconds_to_ready": cpu * 3, "graphs_per_second": 1.0,
                "operator_peak_rss_mib": rss, "operator_cpu_seconds_to_ready": cpu,
                "server_cpu_seconds_to_ready": 2.0, "writes_per_graph": writes}

    result = median_of([run(30, 150, 16.0), run(20, 149, 16.2), run(25, 151, 16.1)])
    assert result["operator_cpu_seconds_to_ready"] == 25
    assert result["operator_peak_rss_mib"] == 150 and result["seconds_to_ready"] == 75
    assert result["writes_per_graph"] == 16.1, "the other figures are the median run's"
    assert len(result["runs"]) == 3
    assert "runs" not in median_of([run(20, 149, 16.2)])
