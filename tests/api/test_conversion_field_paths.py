"""`api.conversion.field_paths.hub_path`: a field of the v1alpha1 view, named as the v1beta1
object the user wrote spells it."""

from __future__ import annotations

from typing import Any

import pytest

from api.conversion.field_paths import HubPath, hub_path
from api.conversion.views import read_as

Json = dict[str, Any]

DCD: Json = {
    "apiVersion": "nvidia.com/v1beta1", "kind": "DynamoComponentDeployment",
    "metadata": {"name": "d"},
    "spec": {
        "name": "w", "type": "worker", "backendFramework": "vllm",
        "compilationCache": {"pvcName": "cache"}, "frontendSidecar": "fe",
        "podTemplate": {"metadata": {"labels": {"a": "b"}}, "spec": {
            "containers": [
                {"name": "side", "image": "s"},
                {"name": "main", "image": "m", "env": [{"name": "A", "value": "1"}],
                 "volumeMounts": [{"name": "own", "mountPath": "/o"},
                                  {"name": "data", "mountPath": "/d"}]},
                {"name": "fe", "image": "f"}],
            "volumes": [{"name": "own", "emptyDir": {}},
                        {"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]}}}}


@pytest.mark.parametrize(("spoke", "hub"), [
    ("metadata.name", "metadata.name"),
    ("spec", "spec"),
    ("spec.serviceName", "spec.name"),
    ("spec.componentType", "spec.type"),
    ("spec.replicas", "spec.replicas"),
    ("spec.sharedMemory.size", "spec.sharedMemorySize"),
    ("spec.gpuMemoryService", "spec.experimental.gpuMemoryService"),
    ("spec.envs[0].name", "spec.podTemplate.spec.containers[1].env[0].name"),
    ("spec.extraPodSpec.mainContainer.image", "spec.podTemplate.spec.containers[1].image"),
    ("spec.extraPodSpec.containers[0].image", "spec.podTemplate.spec.containers[0].image"),
    ("spec.extraPodSpec.volumes[0].name", "spec.podTemplate.spec.volumes[0].name"),
    ("spec.extraPodMetadata.labels.a", "spec.podTemplate.metadata.labels.a"),
    ("spec.resources.limits.gpu",
     "spec.podTemplate.spec.containers[1].resources.limits[nvidia.com/gpu]"),
    ("spec.resources.requests.custom.example.com/fpga",
     "spec.podTemplate.spec.containers[1].resources.requests[example.com/fpga]"),
    ("spec.volumeMounts[0].mountPoint",
     "spec.podTemplate.spec.containers[1].volumeMounts[1].mountPath"),
    ("spec.volumeMounts[1].name", "spec.compilationCache.pvcName"),
    ("spec.frontendSidecar.envs[0]", "spec.podTemplate.spec.containers[2].env[0]"),
])
def test_a_component_deployments_fields(spoke: str, hub: str) -> None:
    assert hub_path(spoke, DCD, read_as(DCD, "v1alpha1")) == HubPath(hub)


def test_a_field_v1beta1_has_no_place_for_names_the_nearest_one() -> None:
    assert hub_path("spec.ingress.host", DCD, read_as(DCD, "v1alpha1")) == HubPath(
        "spec", "ingress.host")


def test_a_graphs_services_are_its_components_by_name() -> None:
    graph: Json = {
        "apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g"},
        "spec": {"env": [{"name": "E", "value": "1"}], "components": [
            {"name": "Worker", "type": "worker"}, {"name": "Frontend", "type": "frontend"}]}}
    spoke = read_as(graph, "v1alpha1")
    assert hub_path("spec.services.Frontend.replicas", graph, spoke) == HubPath(
        "spec.components[1].replicas")
    assert hub_path("spec.services.Worker", graph, spoke) == HubPath("spec.components[0].name")
    assert hub_path("spec.services.Worker.ingress", graph, spoke) == HubPath(
        "spec.components[0]", "ingress")
    assert hub_path("spec.envs[0].name", graph, spoke) == HubPath("spec.env[0].name")
    assert hub_path("spec.pvcs[0].size", graph, spoke) == HubPath("spec", "pvcs[0].size")
    assert hub_path("spec.services", graph, spoke) == HubPath("spec.components")


def test_a_requests_and_an_adapters_renamed_fields() -> None:
    request: Json = {"apiVersion": "nvidia.com/v1beta1",
                     "kind": "DynamoGraphDeploymentRequest", "metadata": {"name": "r"},
                     "spec": {"model": "m", "image": "i"}}
    spoke = read_as(request, "v1alpha1")
    assert hub_path("spec.profilingConfig.profilerImage", request, spoke) == HubPath(
        "spec.image")
    assert hub_path("spec.deploymentOverrides.name", request, spoke) == HubPath(
        "spec.overrides.dgd.metadata.name")
    assert hub_path("spec.profilingConfig.config", request, spoke) == HubPath(
        "spec", "profilingConfig.config")
    adapter: Json = {"apiVersion": "nvidia.com/v1beta1",
                     "kind": "DynamoGraphDeploymentScalingAdapter", "metadata": {"name": "a"},
                     "spec": {"dgdRef": {"name": "g", "componentName": "w"}}}
    assert hub_path("spec.dgdRef.serviceName", adapter, read_as(adapter, "v1alpha1")) == \
        HubPath("spec.dgdRef.componentName")
