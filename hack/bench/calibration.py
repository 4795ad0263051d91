"""The machine's speed, measured in the same run as a benchmark's figures.

Absolute figures (CPU seconds, rates) move with the machine: the same pure-Python loop ran
about half as fast on one day as on another (issue 30), so a figure from one day cannot be set
against another day's. Every benchmark under `hack/bench/` therefore times one fixed workload,
deterministic and in pure Python, of the kind an operator's CPU goes to (JSON text decoded into
dicts and encoded back, dicts of Kubernetes objects built, walked and compared, strings joined
and split), and prints it as `calibration_seconds`: the fastest of a few repeats (the least
disturbed by other work on the machine). CPU figures are also printed as multiples of it
(`..._in_calibrations`), which is what compares across days.

The workload and its size are part of the figure's meaning: change them and old figures no
longer compare (`WORKLOAD_VERSION` says which one a figure was measured with).
"""

from __future__ import annotations

import json
import statistics
import time
from typing import Any

#: Bump when the workload changes: figures of different versions do not compare.
WORKLOAD_VERSION = 1
#: Rounds of the workload per repeat: about 0.1 s on the 2-core development machine.
ROUNDS = 60
REPEATS = 5
#: A repeat slower than this multiple of the fastest means the figure is noise, not a speed.
MAX_SPREAD = 4.0


def _pod(i: int) -> dict[str, Any]:
    """A pod-like object as a watch event carries it; deterministic in `i`."""
    name = f"graph-{i:05d}-vllmdecodeworker-7d9f8c6b5-{i % 97:05d}"
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "bench", "uid": f"uid-{i:032d}",
                     "resourceVersion": str(1000 + i), "generateName": name[:-5],
                     "labels": {"app": "vllm", "nvidia.com/dynamo-component": f"c{i % 3}",
                                "pod-template-hash": "7d9f8c6b5"},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                          "name": name[:-6], "uid": f"rs-{i:030d}",
                                          "controller": True, "blockOwnerDeletion": True}]},
        "spec": {"containers": [{"name": "main", "image": "nvcr.io/nvidia/vllm-runtime:0.6.1",
                                 "args": ["--model", "Qwen/Qwen3-0.6B", f"--port={8000 + i % 7}"],
                                 "resources": {"limits": {"nvidia.com/gpu": "1"}}}],
                 "nodeName": f"node-{i % 11}"},
        "status": {"phase": "Running", "conditions": [
            {"type": t, "status": "True", "lastTransitionTime": "2026-11-27T02:27:00Z"}
            for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")]},
    }


#: The workload's input: 50 pods as one watch stream's lines.
_LINES = [json.dumps({"type": "MODIFIED", "object": _pod(i)}).encode() for i in range(50)]


def workload(rounds: int = ROUNDS) -> int:
    """The fixed work: decode the lines, index and trim the objects, build a child object
    per pod, encode it, compare it with the last round's. Returns a checksum (so nothing is
    optimised away, and a changed workload shows)."""
    checksum = 0
    previous: dict[str, Any] = {}
    for _ in range(rounds):
        index: dict[str, dict[str, Any]] = {}
        for line in _LINES:
            event = json.loads(line)
            obj = event["object"]
            meta = obj["metadata"]
            key = f"{meta['namespace']}/{meta['name']}"
            index[key] = {"metadata": {k: v for k, v in meta.items() if k != "managedFields"},
                          "status": obj["status"]}
        for key, held in index.items():
            labels = held["metadata"]["labels"]
            child = {"apiVersion": "apps/v1", "kind": "Deployment",
                     "metadata": {"name": key.split("/", 1)[1][:40], "labels": dict(labels),
                                  "annotations": {"hash": ",".join(sorted(labels))}},
                     "spec": {"replicas": 1, "selector": {"matchLabels": labels}}}
            text = json.dumps(child, separators=(",", ":"), sort_keys=True)
            checksum = (checksum + len(text)) % 1_000_003
            if previous.get(key) != child:
                previous[key] = child
    return checksum


def measure(repeats: int = REPEATS, rounds: int = ROUNDS) -> dict[str, Any]:
    """Time the workload `repeats` times in this process (CPU time, as CPU figures are).

    `calibration_seconds`: the fastest repeat; `calibration_spread`: the median repeat over
    the fastest (1.0 on a quiet machine)."""
    times = []
    for _ in range(repeats):
        started = time.process_time()
        workload(rounds)
        times.append(time.process_time() - started)
    fastest = min(times)
    return {"calibration_seconds": round(fastest, 4),
            "calibration_spread": round(statistics.median(times) / fastest, 2)
            if fastest > 0 else None,
            "calibration_repeats": repeats, "calibration_workload": WORKLOAD_VERSION}


def problems(calibration: dict[str, Any]) -> list[str | None]:
    """What makes a calibration impossible: no time at all, or repeats so unlike each other
    that the fastest says nothing about the machine (for `hack.bench.checks.check`)."""
    seconds, spread = calibration.get("calibration_seconds"), calibration.get(
        "calibration_spread")
    return [None if isinstance(seconds, int | float) and seconds > 0 else
            f"calibration_seconds is {seconds}, impossible for a timed workload",
            None if isinstance(spread, int | float) and 1.0 <= spread <= MAX_SPREAD else
            f"calibration_spread is {spread}: the repeats of one fixed workload differ by more "
            f"than {MAX_SPREAD}x, so the machine's speed was not measured"]


def in_calibrations(cpu_seconds: float | None, calibration: dict[str, Any]) -> float | None:
    """A CPU figure as a multiple of the calibration (how many runs of the workload it is
    worth): comparable across days where the seconds are not."""
    seconds = calibration.get("calibration_seconds")
    if cpu_seconds is None or not isinstance(seconds, int | float) or seconds <= 0:
        return None
    return round(cpu_seconds / float(seconds), 2)


def checked(repeats: int = REPEATS, rounds: int = ROUNDS) -> dict[str, Any]:
    """`measure`, failing the benchmark (`ImpossibleFigures`) on an impossible calibration."""
    from hack.bench.checks import check

    figures = measure(repeats, rounds)
    check(problems(figures))
    return figures


def add_to(figures: dict[str, Any], calibration: dict[str, Any],
           cpu_keys: tuple[str, ...] = ()) -> dict[str, Any]:
    """The figures with the calibration beside them, and each CPU figure named in `cpu_keys`
    also in calibrations (`<key>_in_calibrations`)."""
    out = {**figures, **calibration}
    for key in cpu_keys:
        value = figures.get(key)
        out[f"{key}_in_calibrations"] = in_calibrations(
            float(value) if isinstance(value, int | float) else None, calibration)
    return out
