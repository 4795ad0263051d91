"""The GPUs a graph's pods reach through DRA claims and GPU memory services, by pool."""

from __future__ import annotations

from typing import Any

from backends.dra_demand import (
    ClaimContext,
    claim_gpus,
    class_driver,
    gpu_class,
    pod_claim_gpus,
)
from backends.gpu_demand import (
    component_gpus_per_replica,
    component_replica_gpus,
    gms_device_classes,
    gpu_fields,
    pod_pools,
    replica_gpus,
)

Json = dict[str, Any]


def exactly(klass: str = "gpu.nvidia.com", **more: Any) -> Json:
    return {"name": "gpus", "exactly": {"deviceClassName": klass, **more}}


def claim(*requests: Json) -> Json:
    return {"devices": {"requests": list(requests)}}


def main(**limits: str) -> Json:
    return {"name": "main", "image": "x", "resources": {"limits": limits}}


def test_a_claim_counts_its_gpu_requests_by_class() -> None:
    context = ClaimContext()
    assert claim_gpus(claim(exactly(count=4)), context) == {"gpu.nvidia.com": 4}
    # count defaults to 1; a request of another class (a NIC, a MIG slice) is no GPU
    assert claim_gpus(claim(exactly(), exactly("mig.nvidia.com", count=2),
                            exactly("sriov.networkdriver.cilium.io")), context) == {
        "gpu.nvidia.com": 1}
    assert claim_gpus(claim(exactly(count=2), exactly(count=3)), context) == {
        "gpu.nvidia.com": 5}
    # v1beta1's flat request
    assert claim_gpus(claim({"name": "g", "deviceClassName": "gpu.amd.com", "count": 2}),
                      context) == {"gpu.amd.com": 2}
    assert claim_gpus({}, context) == {}


def test_first_available_counts_its_smallest_gpu_alternative() -> None:
    request = {"name": "gpus", "firstAvailable": [
        {"name": "big", "deviceClassName": "gpu.nvidia.com", "count": 8},
        {"name": "small", "deviceClassName": "gpu.nvidia.com", "count": 2}]}
    assert claim_gpus(claim(request), ClaimContext()) == {"gpu.nvidia.com": 2}


def test_allocation_mode_all_takes_the_most_one_node_offers_else_one() -> None:
    request = exactly(allocationMode="All")
    assert claim_gpus(claim(request), ClaimContext()) == {"gpu.nvidia.com": 1}
    context = ClaimContext(all_devices=lambda klass: {"gpu.nvidia.com": 8}.get(klass, 0))
    assert claim_gpus(claim(request), context) == {"gpu.nvidia.com": 8}


def test_gpu_classes_by_name_driver_extended_resource_or_the_graphs_word() -> None:
    assert gpu_class("gpu.nvidia.com") and gpu_class("gpu.example.com")
    assert not gpu_class("mig.nvidia.com") and not gpu_class("fast-gpus")
    nvidia = {"spec": {"selectors": [{"cel": {"expression":
              "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com']"
              ".type == 'gpu'"}}]}}
    assert class_driver(nvidia) == "gpu.nvidia.com"
    assert gpu_class("fast-gpus", nvidia)
    assert gpu_class("h100s", {"spec": {"extendedResourceName": "example.com/gpu"}})
    assert not gpu_class("nics", {"spec": {"selectors": [{"cel": {
        "expression": 'device.driver == "gpu.nvidia.com" || device.driver == "x"'}}]}})
    assert gpu_class("fast-gpus", None, named={"fast-gpus"})


def test_template_claims_count_per_pod_and_named_claims_are_shared() -> None:
    pod = {"resourceClaims": [{"name": "a", "resourceClaimTemplateName": "two"},
                              {"name": "b", "resourceClaimName": "shared"},
                              {"name": "c", "resourceClaimTemplateName": "missing"}],
           "containers": [{"name": "main", "resources": {"claims": [{"name": "a"}]}}]}
    context = ClaimContext(templates={"two": claim(exactly(count=2))},
                           claims={"shared": claim(exactly(count=4))})
    counted = pod_claim_gpus(pod, context)
    assert counted.own == {"gpu.nvidia.com": 2}
    assert counted.shared == {"shared": {"gpu.nvidia.com": 4}}
    assert pod_pools(pod, context) == {"gpu.nvidia.com": 2}
    assert pod_pools(pod) == {}


def test_a_pod_counts_each_extended_resource_and_its_largest_init() -> None:
    pod = {"containers": [main(**{"nvidia.com/gpu": "2"}),
                          {"name": "s", "resources": {"requests": {"amd.com/gpu": "1"}}}],
           "initContainers": [{**main(**{"nvidia.com/gpu": "1"}), "name": "gms",
                               "restartPolicy": "Always"},
                              {**main(**{"nvidia.com/gpu": "8"}), "name": "warm"}]}
    assert pod_pools(pod) == {"nvidia.com/gpu": 8, "amd.com/gpu": 1}


def test_the_cached_gpu_fields_count_as_the_whole_pod() -> None:
    pod = {"nodeName": "n", "containers": [
        main(**{"nvidia.com/gpu": "2", "cpu": "4"}), {"name": "log", "image": "y"}],
        "initContainers": [{**main(**{"nvidia.com/gpu": "1"}), "restartPolicy": "Always"}],
        "resourceClaims": [{"name": "a", "resourceClaimTemplateName": "t"}],
        "volumes": [{"name": "v"}]}
    kept = gpu_fields(pod)
    assert kept == {
        "containers": [{"resources": {"limits": {"nvidia.com/gpu": "2"}}}],
        "initContainers": [{"resources": {"limits": {"nvidia.com/gpu": "1"}},
                            "restartPolicy": "Always"}],
        "resourceClaims": [{"name": "a", "resourceClaimTemplateName": "t"}]}
    context = ClaimContext(templates={"t": claim(exactly(count=3))})
    assert pod_pools(kept, context) == pod_pools(pod, context) == {
        "nvidia.com/gpu": 3, "gpu.nvidia.com": 3}
    assert gpu_fields({"containers": [{"name": "main", "image": "x"}]}) == {}


def test_a_gpu_memory_service_takes_its_main_containers_gpus_through_its_class() -> None:
    component: Json = {"name": "w", "experimental": {"gpuMemoryService": {"mode": "IntraPod"}},
                 "podTemplate": {"spec": {"containers": [
                     main(**{"nvidia.com/gpu": "2"}),
                     {"name": "aux", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}
    assert component_replica_gpus(component).pools() == {"gpu.nvidia.com": 2,
                                                          "nvidia.com/gpu": 1}
    component["experimental"]["gpuMemoryService"]["deviceClassName"] = "fast-gpus"
    component["experimental"]["failover"] = {"numShadows": 1}  # shares the same GPUs
    assert component_replica_gpus(component).pools() == {"fast-gpus": 2, "nvidia.com/gpu": 1}
    # an extra client container shares the claim instead of its own GPUs
    component["experimental"]["gpuMemoryService"]["extraClientContainers"] = ["aux"]
    assert component_replica_gpus(component).pools() == {"fast-gpus": 2}
    del component["experimental"]["gpuMemoryService"]["extraClientContainers"]
    assert component_gpus_per_replica(component) == 3
    assert gms_device_classes({"spec": {"components": [component, {"name": "f"}]}}) == {
        "fast-gpus"}


def test_a_multinode_replica_is_a_leader_and_workers_from_their_role_templates() -> None:
    component = {"name": "w", "multinode": {"nodeCount": 3}, "roles": [
        {"name": "leader", "podTemplate": {"spec": {"containers": [
            main(**{"nvidia.com/gpu": "4"})]}}},
        {"name": "worker", "podTemplate": {"spec": {
            "resourceClaims": [{"name": "g", "resourceClaimTemplateName": "eight"}],
            "containers": [{"name": "main", "resources": {"claims": [{"name": "g"}]}}]}}}]}
    context = ClaimContext(templates={"eight": claim(exactly(count=8))})
    gpus = component_replica_gpus(component, context)
    assert gpus.pools() == {"nvidia.com/gpu": 4, "gpu.nvidia.com": 16}
    assert gpus.total == 20
    assert gpus.largest_pod("gpu.nvidia.com") == 8
    # without a role template a role's pods are the component's
    plain = {"name": "w", "multinode": {"nodeCount": 2}, "podTemplate": {"spec": {
        "containers": [main(**{"nvidia.com/gpu": "8"})]}}}
    assert component_replica_gpus(plain).pods == (({"nvidia.com/gpu": 8}, 1),
                                                  ({"nvidia.com/gpu": 8}, 1))
    graph = {"spec": {"components": [component, {**plain, "name": "p"}]}}
    assert {n: g.total for n, g in replica_gpus(graph, context).items()} == {"w": 20, "p": 16}
