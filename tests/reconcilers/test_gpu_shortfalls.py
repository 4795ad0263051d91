"""The cluster's free GPUs by pool and what of a graph cannot fit: pure functions over cached
objects as the operator trims them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from backends.dra_demand import ClaimContext
from backends.worker_generation import WorkerPlan
from reconcilers.graph.gpu_capacity import held_gpus, shortfalls, surge_replicas
from reconcilers.graph.gpu_supply import (
    ClusterGpus,
    GpuLedger,
    device_selected,
    gpu_pod_keys,
    trim_claim,
    trim_device_class,
    trim_node,
    trim_slice,
)
from reconcilers.graph.readiness import ServiceReadiness
from reconcilers.graph.rollout import Rollout
from reconcilers.graph.rollout_plan import RolloutStep, ServiceState, budget
from reconcilers.graph.status import graph_gpus
from reconcilers.machinery.gms_device_classes import missing_gms_device_classes
from reconcilers.machinery.pod_problems import trim_pod

Json = dict[str, Any]
NVIDIA_CLASS = {"metadata": {"name": "gpu.nvidia.com"}, "spec": {"selectors": [{"cel": {
    "expression": "device.driver == 'gpu.nvidia.com' && "
                  "device.attributes['gpu.nvidia.com'].type == 'gpu'"}}]}}


def node(name: str, gpus: int, ready: str = "True", cordoned: bool = False) -> Json:
    return trim_node({"metadata": {"name": name, "resourceVersion": "7"},
                      "spec": {"unschedulable": cordoned},
                      "status": {"allocatable": {"cpu": "64", "nvidia.com/gpu": str(gpus)},
                                 "conditions": [{"type": "Ready", "status": ready,
                                                 "lastHeartbeatTime": "now"}]}})


def pod(name: str, gpus: int, node_name: str = "", graph: str = "", phase: str = "Running",
        claims: list[Json] | None = None) -> Json:
    spec: Json = {"containers": [{"name": "main", "image": "x", "resources": {
        "limits": {"nvidia.com/gpu": str(gpus)}}}]}
    if node_name:
        spec["nodeName"] = node_name
    if claims:
        spec["resourceClaims"] = claims
    labels = {"nvidia.com/dynamo-graph-deployment-name": graph} if graph else {}
    return trim_pod({"metadata": {"name": name, "namespace": "ns", "labels": labels},
                     "spec": spec, "status": {"phase": phase}})


def devices(node_name: str, count: int, generation: int = 1) -> Json:
    return trim_slice({"metadata": {"name": f"{node_name}-gpu"}, "spec": {
        "driver": "gpu.nvidia.com", "nodeName": node_name,
        "pool": {"name": node_name, "generation": generation, "resourceSliceCount": 1},
        "devices": [{"name": f"gpu-{i}", "attributes": {"type": {"string": "gpu"},
                                                        "index": {"int": i}},
                     "capacity": {"memory": {"value": "80Gi"}}} for i in range(count)]}})


def allocated(node_name: str, *indexes: int, reserved_for: str = "") -> Json:
    status: Json = {"allocation": {"devices": {"results": [
        {"request": "g", "driver": "gpu.nvidia.com", "pool": node_name, "device": f"gpu-{i}"}
        for i in indexes]}}}
    if reserved_for:
        status["reservedFor"] = [{"resource": "pods", "name": reserved_for, "uid": "u"}]
    return trim_claim({"metadata": {"name": f"c-{reserved_for}", "namespace": "ns"},
                       "spec": {"devices": {"requests": [{"name": "g", "exactly": {
                           "deviceClassName": "gpu.nvidia.com", "count": len(indexes)}}]}},
                       "status": status})


def cluster(nodes: list[Json], pods: list[Json], slices: Sequence[Json] = (),
            claims: Sequence[Json] = (), classes: Sequence[Json] = ()) -> ClusterGpus:
    ledger = GpuLedger()
    for n in nodes:
        ledger.put_node(n)
    for p in pods:
        ledger.put_pod(p)
    return ClusterGpus(ledger, lambda: list(slices), lambda: list(claims),
                       lambda: list(classes))


def worker_graph(replicas: int, gpus: int = 0, template: str = "") -> Json:
    spec: Json = {"containers": [{"name": "main", "image": "x"}]}
    if gpus:
        spec["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    if template:
        spec["resourceClaims"] = [{"name": "g", "resourceClaimTemplateName": template}]
    return {"metadata": {"name": "g", "namespace": "ns"}, "spec": {"components": [
        {"name": "Frontend"},
        {"name": "Worker", "replicas": replicas, "podTemplate": {"spec": spec}}]}}


def test_free_gpus_are_the_usable_nodes_allocatable_less_what_bound_pods_request() -> None:
    nodes = [node("a", 8), node("b", 8), node("c", 8, ready="False"), node("d", 8, cordoned=True)]
    pods = [pod("p1", 2, "a"), pod("p2", 4, "b"), pod("done", 8, "a", phase="Succeeded"),
            pod("pending", 8), pod("on-c", 8, "c")]
    supply = cluster(nodes, pods).supply("nvidia.com/gpu")
    assert supply is not None
    assert (supply.allocatable, supply.free, supply.largest) == (16, 10, 8)
    assert cluster(nodes, pods).supply("amd.com/gpu") == type(supply)(0, 0, 0)


def test_the_ledger_follows_nodes_and_pods_as_they_come_and_go() -> None:
    ledger = GpuLedger()
    nodes, pods = ledger.node_handler(), ledger.pod_handler()
    assert nodes.on_add and nodes.on_update and nodes.on_delete
    assert pods.on_add and pods.on_update and pods.on_delete

    def free() -> tuple[int, int, int]:
        supply = ledger.supply("nvidia.com/gpu")
        return supply.allocatable, supply.free, supply.largest

    pending = pod("w", 2, graph="g")
    pods.on_add(pending)
    pods.on_add(pod("x", 3, "a"))  # bound before its node is seen
    assert free() == (0, 0, 0)
    nodes.on_add(node("a", 8))
    assert free() == (8, 5, 8)
    bound = pod("w", 2, "a", graph="g")
    pods.on_update(pending, bound)
    assert free() == (8, 3, 8)
    nodes.on_add(node("b", 4))
    assert free() == (12, 7, 8)
    nodes.on_update(node("a", 8), node("a", 8, cordoned=True))
    assert free() == (4, 4, 4)
    nodes.on_update(node("a", 8, cordoned=True), node("a", 8))
    pods.on_update(bound, pod("w", 2, "a", graph="g", phase="Failed"))
    assert free() == (12, 9, 8)
    pods.on_delete(pod("x", 3, "a"))
    nodes.on_delete(node("b", 4))
    assert free() == (8, 8, 8)
    # more requested than a node has (a stale count): nothing below zero
    pods.on_add(pod("y", 9, "a"))
    assert free() == (8, 0, 8)
    assert gpu_pod_keys(bound) == ["graph/ns/g"] and gpu_pod_keys(pod("x", 0, "a")) == []


def test_a_heartbeat_leaves_the_trimmed_node_as_it_was() -> None:
    first = node("a", 8)
    later = trim_node({"metadata": {"name": "a", "resourceVersion": "8"}, "spec": {},
                       "status": {"allocatable": {"nvidia.com/gpu": "8", "memory": "1Gi"},
                                  "conditions": [{"type": "Ready", "status": "True",
                                                  "lastHeartbeatTime": "later"},
                                                 {"type": "MemoryPressure", "status": "False"}]}})
    assert first == later


def test_free_devices_of_a_class_are_its_selected_devices_less_the_allocated() -> None:
    nodes = [node("a", 0), node("b", 0), node("c", 0, cordoned=True)]
    slices = [devices("a", 8), devices("b", 4), devices("b", 8, generation=0),
              devices("c", 8)]
    classes = [trim_device_class(NVIDIA_CLASS)]
    view = cluster(nodes, [], slices, [allocated("a", 0, 1, 2)], classes)
    supply = view.supply("gpu.nvidia.com")
    assert supply is not None
    assert (supply.allocatable, supply.free, supply.largest) == (12, 9, 8)
    assert view.most_devices("gpu.nvidia.com") == 8
    missing = view.supply("fast-gpus")
    assert missing is not None and not missing.exists
    odd = {"metadata": {"name": "odd"}, "spec": {"selectors": [{"cel": {
        "expression": "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi'))"
                      " >= 0"}}]}}
    assert cluster(nodes, [], slices, [], [odd]).supply("odd") is None


def test_device_selectors_read_driver_and_attribute_conjunctions() -> None:
    device = {"name": "gpu-0", "attributes": {"type": {"string": "gpu"},
                                              "example.com/model": {"string": "h100"}}}
    sel = [{"cel": {"expression": 'device.driver == "gpu.nvidia.com" && '
                                  'device.attributes["example.com"].model == "h100"'}}]
    assert device_selected(sel, "gpu.nvidia.com", device) is True
    assert device_selected(sel, "gpu.amd.com", device) is False
    assert device_selected([{"cel": {"expression": "device.attributes['gpu.nvidia.com']"
                                                   ".type == 'mig'"}}],
                           "gpu.nvidia.com", device) is False
    assert device_selected([{"cel": {"expression": "device.driver != 'x'"}}], "d", device) is None


def test_a_graph_needing_more_than_is_free_is_told_with_the_numbers() -> None:
    view = cluster([node("a", 8)], [pod("other", 4, "a")])
    assert shortfalls(worker_graph(2, gpus=2), ClaimContext(), {}, {}, view) == []
    assert shortfalls(worker_graph(8, gpus=2), ClaimContext(), {}, {}, view) == [
        "needs 16 GPUs (nvidia.com/gpu), 4 free of 8 allocatable"]
    # what its own bound pods hold is not needed again
    own = [pod("mine", 2, "a", graph="g")]
    view = cluster([node("a", 8)], [pod("other", 4, "a"), *own])
    held = held_gpus(own, [], {"mine"}, ClaimContext())
    assert held == {"nvidia.com/gpu": 2}
    assert shortfalls(worker_graph(2, gpus=2), ClaimContext(), held, {}, view) == []
    assert shortfalls(worker_graph(3, gpus=2), ClaimContext(), held, {}, view) == [
        "needs 6 GPUs (nvidia.com/gpu), its pods hold 2, 2 free of 8 allocatable"]
    # a rollout that cannot go on without its surge needs it
    assert shortfalls(worker_graph(2, gpus=2), ClaimContext(), held, {"Worker": 1}, view) == [
        "needs 6 GPUs (nvidia.com/gpu), its pods hold 2, 2 free of 8 allocatable"]


def test_a_pod_larger_than_any_node_is_told() -> None:
    view = cluster([node("a", 8), node("b", 8)], [])
    assert shortfalls(worker_graph(1, gpus=16), ClaimContext(), {}, {}, view) == [
        "a Worker pod needs 16 GPUs (nvidia.com/gpu), the most one node has is 8"]


def test_dra_gpus_are_compared_with_the_devices_of_their_class() -> None:
    view = cluster([node("a", 0)], [], [devices("a", 8)], [allocated("a", 0)],
                   [trim_device_class(NVIDIA_CLASS)])
    context = ClaimContext(templates={"four": {"devices": {"requests": [
        {"name": "g", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 4}}]}}})
    assert shortfalls(worker_graph(1, template="four"), context, {}, {}, view) == []
    assert shortfalls(worker_graph(2, template="four"), context, {}, {}, view) == [
        "needs 8 GPUs (DRA device class gpu.nvidia.com), 7 free of 8 devices"]
    # A claim allocated and reserved for one of its pods is held, bound or not yet: the
    # scheduler allocates before it binds, and that moment must not read as a shortage.
    mine = allocated("a", 1, 2, 3, 4, reserved_for="w-0")
    view = cluster([node("a", 0)], [], [devices("a", 8)], [mine],
                   [trim_device_class(NVIDIA_CLASS)])
    held = held_gpus([], [mine], {"w-0", "w-1"}, context)
    assert held == {"gpu.nvidia.com": 4}
    assert shortfalls(worker_graph(2, template="four"), context, held, {}, view) == []
    assert shortfalls(worker_graph(2, template="four"), context, {}, {}, view) == [
        "needs 8 GPUs (DRA device class gpu.nvidia.com), 4 free of 8 devices"]
    assert held_gpus([], [mine], {"w-1"}, context) == {}
    # A claim template of the user's own asking a class no DeviceClass defines (the original
    # says nothing of it; its pods would wait).
    elsewhere = ClaimContext(templates={"other": {"devices": {"requests": [
        {"name": "g", "exactly": {"deviceClassName": "gpu.example.com", "count": 2}}]}}})
    assert shortfalls(worker_graph(1, template="other"), elsewhere, {}, {}, view) == [
        "needs 2 GPUs (DRA device class gpu.example.com), which no DeviceClass defines"]


def test_a_gpu_memory_service_of_a_class_no_device_class_defines_fails_the_reconcile() -> None:
    """As the original syncing the GMS ResourceClaimTemplate: its words, and our numbers."""
    gms = worker_graph(3, gpus=2)
    gms["spec"]["components"][1]["experimental"] = {
        "gpuMemoryService": {"deviceClassName": "fast-gpus"}}
    assert missing_gms_device_classes(gms["spec"]["components"], {"gpu.nvidia.com"}) == [
        'failed to sync GMS ResourceClaimTemplate for Worker: DeviceClass "fast-gpus" not '
        "found: ensure the GPU DRA driver is installed and the device class is registered "
        "(Worker needs 6 GPUs (DRA device class fast-gpus))"]
    assert missing_gms_device_classes(gms["spec"]["components"], {"fast-gpus"}) == []
    # The default class, gpu.nvidia.com, is looked up too; a graph without GMS asks none.
    del gms["spec"]["components"][1]["experimental"]["gpuMemoryService"]["deviceClassName"]
    assert missing_gms_device_classes(gms["spec"]["components"], set()) == [
        'failed to sync GMS ResourceClaimTemplate for Worker: DeviceClass "gpu.nvidia.com" '
        "not found: ensure the GPU DRA driver is installed and the device class is registered "
        "(Worker needs 6 GPUs (DRA device class gpu.nvidia.com))"]
    assert missing_gms_device_classes(worker_graph(1, gpus=2)["spec"]["components"], set()) == []


def test_the_status_counts_dra_claims_and_a_rollouts_surge() -> None:
    graph = worker_graph(3, gpus=2)
    graph["spec"]["components"][1]["podTemplate"]["spec"]["resourceClaims"] = [
        {"name": "g", "resourceClaimTemplateName": "one"},
        {"name": "s", "resourceClaimName": "shared"}]
    context = ClaimContext(
        templates={"one": {"devices": {"requests": [{"name": "g", "exactly": {
            "deviceClassName": "gpu.nvidia.com"}}]}}},
        claims={"shared": {"devices": {"requests": [{"name": "g", "exactly": {
            "deviceClassName": "gpu.nvidia.com", "count": 4}}]}}})
    ready = [ServiceReadiness("Worker", False, replica_status={"readyReplicas": 1})]
    # 3 replicas of 2 + 1 GPUs, and the shared claim's 4 once
    assert graph_gpus(graph, ready, context) == {"requested": 13, "running": 7}
    assert graph_gpus(graph, ready, context, {"Worker": 1}) == {"requested": 16, "running": 7}
    # mid-rollout, the ready replicas of every generation run
    assert graph_gpus(graph, ready, context, {"Worker": 1}, {"Worker": 3}) == {
        "requested": 16, "running": 13}
    assert graph_gpus(graph, ready) == {"requested": 6, "running": 2}


def test_a_rollouts_surge_while_old_generations_hold_pods() -> None:
    services = {"decode": ServiceState(4, budget(4, "25%", "25%")),
                "prefill": ServiceState(2, budget(2, 1, 0)),
                "solo": ServiceState(1, budget(1, 0, 0)),
                "recreated": ServiceState(3, budget(3, 1, 0, recreate=True))}

    def rollout(rolling: bool) -> Rollout:
        step = RolloutStep(WorkerPlan(), rolling=rolling, waiting=False, updated=())
        return Rollout(step, "abc", {}, None, services=services)

    # 25% of 4 rounded up; 1; zero and zero make one surge; Recreate none
    assert surge_replicas(rollout(True)) == {"decode": 1, "prefill": 1, "solo": 1}
    # what a rollout cannot go on without: the components that may lose no replica
    assert surge_replicas(rollout(True), required=True) == {"prefill": 1, "solo": 1}
    assert surge_replicas(rollout(False)) == {} and surge_replicas(None) == {}
