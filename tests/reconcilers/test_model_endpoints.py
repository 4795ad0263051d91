"""The DynamoModel controller finding where a base model is served: EndpointSlices of the
simulated cluster, as a worker component scales, and nothing at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from model_support import (
    BASE,
    NS,
    dynamo_model,
    model_env,
    ready_is,
    worker_dcd,
)
from operator_harness import condition, eventually

from backends import naming
from backends.constants import LABEL_BASE_MODEL_HASH
from hack.localcluster.server import LocalCluster
from hack.our_crds import COMPONENT_DEPLOYMENTS
from reconcilers.machinery.finalizer import FINALIZER
from reconcilers.machinery.resources import ENDPOINT_SLICES, MODELS, SERVICES
from reconcilers.model.endpoints import address_of

Json = dict[str, Any]


def test_addresses_are_http_on_the_system_port_with_ipv6_bracketed() -> None:
    assert address_of("10.0.1.5") == "http://10.0.1.5:9090"
    assert address_of("fd00::1") == "http://[fd00::1]:9090"


async def test_base_model_counts_endpoints_as_the_workers_scale(
        sim_cluster: LocalCluster, tmp_path: Path) -> None:
    async with model_env(sim_cluster, tmp_path / "sim" / "kubeconfig") as env:
        await env.kube.create(COMPONENT_DEPLOYMENTS, worker_dcd(replicas=1))
        await env.kube.create(MODELS, dynamo_model("base"))
        obj = await env.wait_model("base", ready_is("True", "EndpointsDiscovered", total=1))
        status = obj["status"]
        assert FINALIZER in obj["metadata"]["finalizers"]
        assert status["readyEndpoints"] == 0  # a base model is discovered, never "ready"
        assert condition(obj, "ServicesFound")["reason"] == "ServicesFound"
        # The headless model Service and the component's own Service both select the pods
        # and carry the hash label: two services, one endpoint per pod.
        assert condition(obj, "ServicesFound")["message"] == "Found 2 service(s)"
        assert condition(obj, "EndpointsReady")["observedGeneration"] == 1
        (endpoint,) = status["endpoints"]
        assert endpoint["address"].startswith("http://127.0.1.")
        assert endpoint["address"].endswith(":9090")
        assert endpoint["ready"] is False
        assert endpoint["podName"] in await env.worker_pods()

        await env.scale(3)
        obj = await env.wait_model("base", ready_is("True", total=3))
        assert {e["podName"] for e in obj["status"]["endpoints"]} == set(
            await env.worker_pods())
        assert condition(obj, "EndpointsReady")["message"] == "Found 3 endpoint(s) for base model"

        await env.scale(1)
        obj = await env.wait_model("base", ready_is("True", total=1))
        assert len(obj["status"]["endpoints"]) == 1
        # A base model is never loaded into anything.
        assert env.workers.calls(NS, "/engine/v1/load_lora") == []
        assert await env.events("base", "EndpointsDiscovered")


async def test_only_model_slices_reach_the_operator(
        sim_cluster: LocalCluster, tmp_path: Path) -> None:
    """The cache lists and watches EndpointSlices with the base-model label as selector: a
    Service without it gets its slices in the cluster, none in the operator's cache."""
    async with model_env(sim_cluster, tmp_path / "sim" / "kubeconfig") as env:
        await env.kube.create(COMPONENT_DEPLOYMENTS, worker_dcd(replicas=1))
        await env.kube.create(SERVICES, {"metadata": {"name": "plain", "namespace": NS},
                                         "spec": {"selector": {"nvidia.com/selector": "w"},
                                                  "ports": [{"port": 9090}]}})
        await env.kube.create(MODELS, dynamo_model("base"))
        await env.wait_model("base", ready_is("True", "EndpointsDiscovered", total=1))

        async def slices_of(service: str) -> list[Json]:
            return list((await env.kube.list(
                ENDPOINT_SLICES, NS,
                label_selector=f"kubernetes.io/service-name={service}"))["items"])
        await eventually(lambda: slices_of("plain"), what="the plain Service's slice")
        cached = await env.operator.manager.cache.list(ENDPOINT_SLICES, NS)
        assert cached and all(
            naming.model_hash(BASE) == o["metadata"]["labels"][LABEL_BASE_MODEL_HASH]
            for o in cached)
        plain = {o["metadata"]["name"] for o in await slices_of("plain")}
        assert not plain & {o["metadata"]["name"] for o in cached}


async def test_no_slices_means_no_services_and_no_endpoints(
        sim_cluster: LocalCluster, tmp_path: Path) -> None:
    async with model_env(sim_cluster, tmp_path / "sim" / "kubeconfig") as env:
        await env.kube.create(MODELS, dynamo_model("orphan", lora=True, base="nobody/serves"))
        obj = await env.wait_model("orphan", ready_is("False", "NoEndpoints", total=0))
        message = "No endpoint slices found for base model nobody/serves"
        assert condition(obj, "ServicesFound") | {"lastTransitionTime": ""} == {
            "type": "ServicesFound", "status": "False", "reason": "NoServicesFound",
            "message": message, "observedGeneration": 1, "lastTransitionTime": ""}
        assert condition(obj, "EndpointsReady")["message"] == message
        assert obj["status"]["readyEndpoints"] == 0
        assert "endpoints" not in obj["status"]
        assert len(await env.events("orphan", "NoEndpointsFound")) == 1
        # Deleting it needs nothing from anyone.
        await env.kube.delete(MODELS, NS, "orphan")

        async def gone() -> bool:
            items = (await env.kube.list(MODELS, NS))["items"]
            return not items

        await eventually(gone)
        assert naming.model_hash(BASE) != naming.model_hash("nobody/serves")
