"""Cost of one write inside the local API server: `python -m hack.bench.writes`.

Runs `Operations` in this process (no HTTP, no simulation) on a realistic pod: a
ReplicaSet-owned pod with two containers, the kubelet's status and ten managedFields entries
(the ReplicaSet controller's create, the scheduler's binding, the kubelet's status and
`--writers` label/annotation writers, seven by default; a pod of the simulation has three). Per
kind of write it prints microseconds per write (best of `--rounds` rounds of `--writes`
writes each):

- status: a status update by the kubelet (`update(..., subresource="status")`), alternating
  between two statuses so that every write commits;
- update: a plain update of a label's value (alternating) by the ReplicaSet controller;
- patch: the same change as a merge patch;
- create: a create of a fresh pod by the ReplicaSet controller;

and, as the peer in the same run, the floor of a write: copying the body and `Storage.put`.
The last line printed is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from collections.abc import Callable
from typing import Any

from hack.bench import calibration
from hack.bench.checks import ImpossibleFigures, at_least, check, report_and_exit_code
from hack.localcluster.operations import Operations, WriteOptions
from hack.localcluster.registry import Registry
from hack.localcluster.storage import Storage

Json = dict[str, Any]
NAMESPACE = "bench"
OWNER_UID = "5f0c1d0e-6b7a-4a53-9d8e-0123456789ab"


def pod(name: str) -> Json:
    """A pod as the ReplicaSet controller creates it."""
    def container(cname: str, image: str, port: int) -> Json:
        return {
            "name": cname, "image": image,
            "command": ["python3", "-m", "dynamo.frontend", "--http-port", str(port)],
            "env": [{"name": f"ENV_{i}", "value": f"value-{i}"} for i in range(8)]
            + [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
            "ports": [{"name": "http", "containerPort": port, "protocol": "TCP"}],
            "resources": {"limits": {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "1"},
                          "requests": {"cpu": "1", "memory": "2Gi", "nvidia.com/gpu": "1"}},
            "readinessProbe": {"httpGet": {"path": "/health", "port": port},
                               "periodSeconds": 10, "timeoutSeconds": 5},
            "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}],
        }

    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": name, "namespace": NAMESPACE,
            "labels": {"app": "frontend", "pod-template-hash": "7d9f8b6c5"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                 "name": "frontend-7d9f8b6c5", "uid": OWNER_UID,
                                 "controller": True, "blockOwnerDeletion": True}],
        },
        "spec": {
            "containers": [container("main", "nvcr.io/dynamo/runtime:0.4.0", 8000),
                           container("sidecar", "nvcr.io/dynamo/sidecar:0.4.0", 9000)],
            "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory"}}],
            "nodeSelector": {"nvidia.com/gpu.present": "true"},
        },
    }


def status(phase: str, ready: bool, now: str) -> Json:
    """The kubelet's status of `pod()`."""
    flag = "True" if ready else "False"
    conditions = [{"type": t, "status": s, "lastProbeTime": None, "lastTransitionTime": now}
                  for t, s in (("PodReadyToStartContainers", "True"), ("Initialized", "True"),
                               ("Ready", flag), ("ContainersReady", flag),
                               ("PodScheduled", "True"))]
    return {
        "observedGeneration": 1, "phase": phase, "conditions": conditions,
        "hostIP": "10.0.0.7", "hostIPs": [{"ip": "10.0.0.7"}],
        "podIP": "10.244.1.12", "podIPs": [{"ip": "10.244.1.12"}],
        "startTime": "2026-11-22T10:00:00Z", "qosClass": "Burstable",
        "containerStatuses": [{
            "name": name, "ready": ready, "restartCount": 0, "started": True,
            "image": image, "imageID": image + "@sha256:" + "0" * 64,
            "containerID": "containerd://" + "1" * 64,
            "state": {"running": {"startedAt": "2026-11-22T10:00:05Z"}},
            "lastState": {},
        } for name, image in (("main", "nvcr.io/dynamo/runtime:0.4.0"),
                              ("sidecar", "nvcr.io/dynamo/sidecar:0.4.0"))],
    }


class Bench:
    """One Operations with a namespace and a pod carrying 3 + `writers` managedFields entries
    (at most ten: more are merged into "ancient-changes")."""

    def __init__(self, writers: int = 7) -> None:
        self.ops = Operations(Storage(history_limit=1000), Registry())
        ns_rt = self.ops.registry.get("", "v1", "namespaces")
        pod_rt = self.ops.registry.get("", "v1", "pods")
        assert ns_rt is not None and pod_rt is not None
        self.pods = pod_rt
        self.ops.create(ns_rt, "", {"metadata": {"name": NAMESPACE}}, _opts("bench"))
        self.ops.create(pod_rt, NAMESPACE, pod("web-0"), _opts("kube-controller-manager"))
        bound = self._current()
        self._put(bound, {**bound, "spec": {**bound["spec"], "nodeName": "node-1"}},
                  "kube-scheduler")
        self._status(status("Pending", False, "2026-11-22T10:00:01Z"))
        for i in range(writers):
            current = self._current()
            meta = current["metadata"]
            self._put(current, {**current, "metadata": {
                **meta, "labels": {**meta["labels"], f"writer-{i}": "a"},
                "annotations": {**meta.get("annotations", {}), f"note-{i}": "x"}}},
                f"writer-{i}")
        assert len(self._current()["metadata"]["managedFields"]) == min(3 + writers, 10)
        self.statuses = [status("Running", True, "2026-11-22T10:00:06Z"),
                         status("Running", False, "2026-11-22T10:00:07Z")]
        self.created = 0

    def _current(self) -> Json:
        obj = self.ops.storage.get(("", "pods"), NAMESPACE, "web-0")
        assert obj is not None
        return obj

    def _put(self, old: Json, body: Json, manager: str) -> None:
        self.ops.update(self.pods, NAMESPACE, old["metadata"]["name"], body, _opts(manager))

    def _status(self, new: Json) -> None:
        body = copy.copy(self._current())
        body["status"] = new
        self.ops.update(self.pods, NAMESPACE, "web-0", body, _opts("kubelet"),
                        subresource="status")

    def status_write(self, i: int) -> None:
        self._status(self.statuses[i % 2])

    def update_write(self, i: int) -> None:
        current = self._current()
        meta = current["metadata"]
        self._put(current, {**current, "metadata": {
            **meta, "labels": {**meta["labels"], "updated": "ab"[i % 2]}}},
                  "kube-controller-manager")

    def patch_write(self, i: int) -> None:
        self.ops.patch(self.pods, NAMESPACE, "web-0", "merge",
                       {"metadata": {"labels": {"patched": "cd"[i % 2]}}},
                       _opts("kube-controller-manager"))

    def create_write(self, i: int) -> None:
        self.created += 1
        self.ops.create(self.pods, NAMESPACE, pod(f"new-{self.created}"),
                        _opts("kube-controller-manager"))

    def floor_write(self, i: int) -> None:
        obj = copy.deepcopy(self._current())
        obj["metadata"]["resourceVersion"] = str(self.ops.storage.next_rv())
        self.ops.storage.put(("", "pods"), obj)


def _opts(manager: str) -> WriteOptions:
    return WriteOptions(manager=manager, user_agent=manager)


def best_of(write: Callable[[int], None], rounds: int, writes: int) -> float:
    """Microseconds per write, best round."""
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        for i in range(writes):
            write(i)
        best = min(best, (time.perf_counter() - started) / writes)
    return best * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--writes", type=int, default=2000)
    parser.add_argument("--writers", type=int, default=7,
                        help="label writers with an entry of their own in managedFields")
    parser.add_argument("--only", choices=["status", "update", "patch", "create", "floor"],
                        help="run one kind of write (for profiling)")
    args = parser.parse_args()
    try:
        cal = calibration.checked()
    except ImpossibleFigures as err:
        return report_and_exit_code(err)
    bench = Bench(args.writers)
    kinds: dict[str, Callable[[int], None]] = {
        "status": bench.status_write, "update": bench.update_write,
        "patch": bench.patch_write, "create": bench.create_write, "floor": bench.floor_write}
    figures: dict[str, float] = {}
    for kind, write in kinds.items():
        if args.only and kind != args.only:
            continue
        figures[kind] = round(best_of(write, args.rounds, args.writes), 1)
        print(f"{kind:7s} {figures[kind]:8.1f} us/write")
    try:
        # A write that took no time did not happen: the benchmark measured nothing.
        check(at_least(f"{kind} microseconds per write", us, 0.1) for kind, us in figures.items())
    except ImpossibleFigures as err:
        return report_and_exit_code(err)
    print(json.dumps(calibration.add_to({"us_per_write": figures}, cal)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
