"""The GPUs of a graph's replicas, as the scheduler would count its pods' requests."""

from __future__ import annotations

from backends.gpu_demand import component_gpus_per_replica, gpus_per_replica, pod_gpus
from reconcilers.graph.readiness import ServiceReadiness
from reconcilers.graph.status import graph_gpus


def container(name: str, **resources: dict[str, str]) -> dict[str, object]:
    return {"name": name, "resources": resources}


def test_a_pod_counts_its_containers_and_sidecars_and_its_largest_init() -> None:
    pod = {"containers": [container("main", limits={"nvidia.com/gpu": "2"}),
                          container("side", requests={"amd.com/gpu": "1"}),
                          container("cpu", limits={"cpu": "4"})],
           "initContainers": [{**container("gms", limits={"nvidia.com/gpu": "1"}),
                               "restartPolicy": "Always"},
                              container("warm", limits={"nvidia.com/gpu": "8"})]}
    assert pod_gpus(pod) == 8
    pod["initContainers"] = pod["initContainers"][:1]
    assert pod_gpus(pod) == 4


def test_the_limit_wins_and_odd_quantities_count_nothing() -> None:
    assert pod_gpus({"containers": [container(
        "main", requests={"nvidia.com/gpu": "1"}, limits={"nvidia.com/gpu": "2"})]}) == 2
    assert pod_gpus({"containers": [container("main", limits={"nvidia.com/gpu": "1.5"})]}) == 0
    assert pod_gpus({}) == 0


def test_a_multinode_replica_is_its_nodes_pods() -> None:
    component = {"name": "w", "multinode": {"nodeCount": 4}, "podTemplate": {"spec": {
        "containers": [container("main", limits={"nvidia.com/gpu": "8"})]}}}
    assert component_gpus_per_replica(component) == 32
    assert component_gpus_per_replica({"name": "f"}) == 0


def test_the_graph_status_counts_desired_and_ready_replicas() -> None:
    worker = {"name": "decode", "replicas": 3, "podTemplate": {"spec": {
        "containers": [container("main", limits={"nvidia.com/gpu": "2"})]}}}
    graph = {"spec": {"components": [{"name": "Frontend"}, worker,
                                     {**worker, "name": "prefill"}]}}
    assert gpus_per_replica(graph) == {"Frontend": 0, "decode": 2, "prefill": 2}
    ready = [ServiceReadiness("decode", False, replica_status={"readyReplicas": 2}),
             ServiceReadiness("Frontend", True, replica_status={"readyReplicas": 1})]
    # A component with replicas unset takes the default, 1.
    graph["spec"]["components"][2].pop("replicas")
    assert graph_gpus(graph, ready) == {"requested": 8, "running": 4}
