"""What an update may not change in GPU memory service and failover (the original's webhook):
the inter-pod layout and inter-pod failover are not switched on or off after creation, and
inter-pod failover keeps its shadows; a v1beta1 graph is told naming its `experimental`
fields."""

from __future__ import annotations

from typing import Any

from api.conversion import convert
from api.convert import load
from api.hub_errors import in_hub
from api.v1alpha1 import DynamoComponentDeployment, DynamoGraphDeployment
from api.validation import validate

Json = dict[str, Any]
INTER = {"enabled": True, "mode": "interPod"}
INTRA = {"enabled": True, "mode": "intraPod"}


def graph(**fields: Any) -> Json:
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": "g", "namespace": "team"},
            "spec": {"backendFramework": "vllm", "services": {"w": {
                "componentType": "worker", "resources": {"limits": {"gpu": "2"}},
                "extraPodSpec": {"mainContainer": {"image": "img:1"}}, **fields}}}}


def update_errors(old: Json, new: Json) -> list[str]:
    return [str(e) for e in validate(load(DynamoGraphDeployment, new),
                                     load(DynamoGraphDeployment, old))]


def test_the_inter_pod_layout_cannot_be_switched_on_or_off() -> None:
    expected = ("spec.services.w.gpuMemoryService.mode: Invalid value: the inter-pod GMS "
                "layout cannot be toggled after creation; delete and recreate the "
                "DynamoGraphDeployment")
    assert update_errors(graph(gpuMemoryService=INTRA),
                         graph(gpuMemoryService=INTER)) == [expected]
    assert update_errors(graph(gpuMemoryService=INTER), graph()) == [expected]
    # Off and on again is no change; intra-pod edits are free.
    assert update_errors(graph(gpuMemoryService=INTER), graph(gpuMemoryService=INTER)) == []
    assert update_errors(graph(), graph(gpuMemoryService=INTRA)) == []


def test_inter_pod_failover_cannot_be_switched_and_keeps_its_shadows() -> None:
    old = graph(gpuMemoryService=INTER, failover={**INTER, "numShadows": 1})
    assert update_errors(old, graph(gpuMemoryService=INTER)) == [
        "spec.services.w.failover: Invalid value: inter-pod GMS failover cannot be toggled "
        "after creation; delete and recreate the DynamoGraphDeployment"]
    assert update_errors(old, graph(gpuMemoryService=INTER,
                                    failover={**INTER, "numShadows": 2})) == [
        "spec.services.w.failover.numShadows: Invalid value: is immutable for inter-pod GMS "
        "failover; delete and recreate the DynamoGraphDeployment to change it"]
    # Unset shadows are one shadow.
    assert update_errors(old, graph(gpuMemoryService=INTER, failover=INTER)) == []


def test_a_v1beta1_graph_is_told_naming_its_experimental_field() -> None:
    old, new = graph(gpuMemoryService=INTRA), graph(gpuMemoryService=INTER)
    errors = validate(load(DynamoGraphDeployment, new), load(DynamoGraphDeployment, old))
    hub = convert(new, "nvidia.com/v1beta1")
    assert [e.path for e in in_hub(errors, hub, new)] == [
        "spec.components[0].experimental.gpuMemoryService.mode"]


def test_a_component_deployment_of_its_own_is_held_alike() -> None:
    def dcd(**fields: Any) -> DynamoComponentDeployment:
        spec = {**graph(**fields)["spec"]["services"]["w"], "backendFramework": "vllm"}
        return load(DynamoComponentDeployment, {"metadata": {"name": "d"}, "spec": spec})
    errors = [str(e) for e in validate(dcd(gpuMemoryService=INTER), dcd())]
    assert errors == ["spec.gpuMemoryService.mode: Invalid value: the inter-pod GMS layout "
                      "cannot be toggled after creation; delete and recreate the "
                      "DynamoComponentDeployment"]
