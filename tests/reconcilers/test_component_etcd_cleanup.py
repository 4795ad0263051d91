"""The DCD finalizer's cleanup with etcd discovery (spec §1.1): the component's keys under
`/<dynamoNamespace>/components/<serviceName>` are deleted through etcd's JSON gateway before
the finalizer goes; an etcd outage keeps the DCD (and says so) until etcd is back.

The operator runs on a real Manager against the local API server, and etcd is the fake
gateway of `hack/localcluster/etcd_gateway.py`.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from operator_harness import (
    DCD_CRD,
    PLAIN_SETTINGS,
    eventually,
    get_or_none,
    install_crds,
    running_operator,
    setup_client,
    wait_for,
)
from structlog.contextvars import merge_contextvars
from structlog.testing import capture_logs

from backends.settings import OperatorSettings
from controller.client import KubeClient
from controller.events import EVENTS
from controller.http import HttpClient
from hack.localcluster.etcd_gateway import EtcdGateway
from hack.our_crds import COMPONENT_DEPLOYMENTS
from reconcilers.component import etcd_keys
from reconcilers.component import reconciler as component_deployment
from reconcilers.machinery.finalizer import FINALIZER
from reconcilers.machinery.resources import DEPLOYMENTS

Json = dict[str, Any]
NS = "default"
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1"
ETCD_ANNOTATION = {"nvidia.com/dynamo-discovery-backend": "etcd"}

#: Keys of the component Frontend of dynamo namespace `ns`, and keys that must survive it.
OURS = ["/ns/components/Frontend", "/ns/components/Frontend/generate:694d9a",
        "/ns/components/Frontend/models/llama:1"]
OTHERS = ["/ns/components/Frontend2/x", "/ns/components/Frontend-b/generate:1",
          "/ns/components/Frontenc/y", "/other/components/Frontend/generate:1",
          "/ns/models/Frontend"]


def dcd(name: str, **spec: Any) -> Json:
    return {
        "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoComponentDeployment",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"componentType": "frontend", "replicas": 1, "backendFramework": "vllm",
                 "extraPodSpec": {"mainContainer": {"image": IMAGE}}, **spec},
    }


def has_our_finalizer(obj: Json) -> bool:
    return FINALIZER in (obj["metadata"].get("finalizers") or [])


async def events_of(kube: KubeClient, name: str) -> list[Json]:
    items = (await kube.list(EVENTS, NS))["items"]
    return [e for e in items if (e.get("involvedObject") or {}).get("name") == name]


@pytest.fixture
async def kube(kubeconfig: Path) -> AsyncIterator[KubeClient]:
    client = await setup_client(kubeconfig)
    await install_crds(client, DCD_CRD)
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture
async def etcd() -> AsyncIterator[EtcdGateway]:
    async with EtcdGateway() as gateway:
        for key in OURS + OTHERS:
            gateway.put(key, "v")
        yield gateway


def etcd_settings(address: str) -> OperatorSettings:
    return replace(PLAIN_SETTINGS, etcd_address=address)


# -- the pieces --------------------------------------------------------------------------


def test_prefix_end_increments_the_last_byte() -> None:
    assert etcd_keys.prefix_end(b"/ns/components/Frontend/") == b"/ns/components/Frontend0"
    assert etcd_keys.prefix_end(b"a\xff") == b"b"
    assert etcd_keys.prefix_end(b"\xff\xff") == b"\0"


def test_endpoints_get_a_scheme_and_keep_their_order() -> None:
    assert etcd_keys.endpoints(" etcd-0:2379, https://etcd-1:2379/,,etcd-0:2379") == [
        "http://etcd-0:2379", "https://etcd-1:2379"]
    assert etcd_keys.endpoints("") == []


def test_prefix_only_with_etcd_discovery_and_both_names() -> None:
    settings = etcd_settings("etcd:2379")
    body = dcd("f", dynamoNamespace="ns", serviceName="Frontend", annotations=ETCD_ANNOTATION)
    assert etcd_keys.keys_prefix(body, settings) == "/ns/components/Frontend"
    assert etcd_keys.keys_prefix(dcd("f", dynamoNamespace="ns", serviceName="Frontend"),
                                 settings) is None
    assert etcd_keys.keys_prefix(dcd("f", dynamoNamespace="ns", serviceName="Frontend"),
                                 replace(settings, discovery_backend="etcd")) is not None
    assert etcd_keys.keys_prefix(dcd("f", serviceName="Frontend", annotations=ETCD_ANNOTATION),
                                 settings) is None
    assert etcd_keys.keys_prefix(dcd("f", dynamoNamespace="ns", annotations=ETCD_ANNOTATION),
                                 settings) is None


async def test_gateway_speaks_etcd_json(etcd: EtcdGateway) -> None:
    """The fake's shapes: base64 keys, int64 as strings, range_end prefix semantics."""
    def b64(s: str) -> str:
        return base64.b64encode(s.encode()).decode()

    async with aiohttp.ClientSession() as session:
        async def call(path: str, body: Json) -> Json:
            async with session.post(etcd.url + path, json=body) as response:
                assert response.status == 200
                answer: Json = await response.json()
                return answer

        prefix = "/ns/components/Frontend"
        found = await call("/v3/kv/range",
                           {"key": b64(prefix), "range_end": b64(prefix[:-1] + "e")})
        assert found["count"] == "5"  # Frontend, its two, Frontend-b, Frontend2
        assert base64.b64decode(found["kvs"][0]["key"]).decode() == prefix
        one = await call("/v3/kv/range", {"key": b64(prefix)})
        assert one["count"] == "1" and base64.b64decode(one["kvs"][0]["value"]) == b"v"
        await call("/v3/kv/put", {"key": b64("/a"), "value": b64("1")})
        everything = await call("/v3/kv/range", {"key": "AA==", "range_end": "AA=="})
        assert int(everything["count"]) == len(OURS + OTHERS) + 1
        gone = await call("/v3/kv/deleterange", {"key": b64("/a")})
        assert gone["deleted"] == "1"
        none = await call("/v3/kv/deleterange", {"key": b64("/a")})
        assert "deleted" not in none and none["header"]["revision"]
        async with session.post(etcd.url + "/v3/kv/deleterange", json={}) as response:
            assert response.status == 400
            assert (await response.json())["code"] == 3


async def test_delete_keys_removes_the_path_and_nothing_else(etcd: EtcdGateway) -> None:
    http = HttpClient()
    try:
        # The first endpoint refuses connections: the next one is tried.
        deleted = await etcd_keys.delete_keys(http, f"127.0.0.1:1,{etcd.address}",
                                              "/ns/components/Frontend")
    finally:
        await http.close()
    assert deleted == len(OURS)
    assert etcd.keys() == sorted(OTHERS)


# -- the controller ----------------------------------------------------------------------


async def test_deleting_a_dcd_deletes_its_etcd_keys(kube: KubeClient, kubeconfig: Path,
                                                    etcd: EtcdGateway) -> None:
    settings = etcd_settings(f"127.0.0.1:1,{etcd.address}")
    async with running_operator(kubeconfig, [component_deployment.register], settings):
        await kube.create(COMPONENT_DEPLOYMENTS, dcd(
            "frontend", dynamoNamespace="ns", serviceName="Frontend",
            annotations=ETCD_ANNOTATION))
        await wait_for(kube, COMPONENT_DEPLOYMENTS, NS, "frontend", has_our_finalizer)
        assert etcd.keys() == sorted(OURS + OTHERS)  # nothing deleted while it lives
        await kube.delete(COMPONENT_DEPLOYMENTS, NS, "frontend")

        async def gone() -> bool:
            return await get_or_none(kube, COMPONENT_DEPLOYMENTS, NS, "frontend") is None

        await eventually(gone)
    assert etcd.keys() == sorted(OTHERS)
    assert etcd.requests["/v3/kv/deleterange"] == 2


async def test_etcd_outage_blocks_deletion_until_etcd_is_back(
        kube: KubeClient, kubeconfig: Path, etcd: EtcdGateway) -> None:
    settings = etcd_settings(etcd.address)
    with capture_logs(processors=[merge_contextvars]) as lines:
        async with running_operator(kubeconfig, [component_deployment.register], settings):
            await kube.create(COMPONENT_DEPLOYMENTS, dcd(
                "frontend", dynamoNamespace="ns", serviceName="Frontend",
                annotations=ETCD_ANNOTATION))
            await wait_for(kube, COMPONENT_DEPLOYMENTS, NS, "frontend", has_our_finalizer)
            await etcd.stop()
            await kube.delete(COMPONENT_DEPLOYMENTS, NS, "frontend")

            async def warned() -> bool:
                return any(e["type"] == "Warning" and e["reason"] == etcd_keys.CLEANUP_FAILED
                           for e in await events_of(kube, "frontend"))

            await eventually(warned)
            warning = next(e for e in await events_of(kube, "frontend")
                           if e["reason"] == etcd_keys.CLEANUP_FAILED)
            assert etcd.url in warning["message"]
            assert "/ns/components/Frontend" in warning["message"]
            await asyncio.sleep(0.5)  # retried meanwhile, with backoff
            obj = await kube.get(COMPONENT_DEPLOYMENTS, NS, "frontend")
            assert obj["metadata"].get("deletionTimestamp")
            assert has_our_finalizer(obj)
            assert etcd.keys() == sorted(OURS + OTHERS)

            await etcd.start()

            async def gone() -> bool:
                return await get_or_none(kube, COMPONENT_DEPLOYMENTS, NS, "frontend") is None

            await eventually(gone, within=30.0)
    assert etcd.keys() == sorted(OTHERS)
    failures = [line for line in lines if line.get("name") == "frontend"
                and line["event"] == "transient error, retrying"]
    # Told once at warning level, the retries at debug; never with a traceback.
    assert [line["log_level"] for line in failures if line["log_level"] != "debug"] == [
        "warning"]
    assert failures[0]["log_level"] == "warning" and etcd.url in failures[0]["error"]
    assert not any(line.get("exc_info") for line in lines if line.get("name") == "frontend")


async def test_kubernetes_discovery_gets_no_finalizer(kube: KubeClient, kubeconfig: Path,
                                                      etcd: EtcdGateway) -> None:
    settings = etcd_settings(etcd.address)  # an etcd is known, but this DCD does not use it
    async with running_operator(kubeconfig, [component_deployment.register], settings):
        await kube.create(COMPONENT_DEPLOYMENTS, dcd(
            "frontend", dynamoNamespace="ns", serviceName="Frontend"))
        await wait_for(kube, DEPLOYMENTS, NS, "frontend")
        await asyncio.sleep(0.3)
        assert not has_our_finalizer(await kube.get(COMPONENT_DEPLOYMENTS, NS, "frontend"))
        await kube.delete(COMPONENT_DEPLOYMENTS, NS, "frontend")
        assert await get_or_none(kube, COMPONENT_DEPLOYMENTS, NS, "frontend") is None
        await asyncio.sleep(0.3)
    assert etcd.keys() == sorted(OURS + OTHERS)
    assert etcd.requests["/v3/kv/deleterange"] == 0


async def test_no_etcd_address_lets_the_dcd_go_with_a_warning(kube: KubeClient,
                                                               kubeconfig: Path) -> None:
    """Nowhere to delete from: said on the DCD, which is not held forever."""
    async with running_operator(kubeconfig, [component_deployment.register], PLAIN_SETTINGS):
        await kube.create(COMPONENT_DEPLOYMENTS, dcd(
            "frontend", dynamoNamespace="ns", serviceName="Frontend",
            annotations=ETCD_ANNOTATION))
        await wait_for(kube, COMPONENT_DEPLOYMENTS, NS, "frontend", has_our_finalizer)
        await kube.delete(COMPONENT_DEPLOYMENTS, NS, "frontend")

        async def gone() -> bool:
            return await get_or_none(kube, COMPONENT_DEPLOYMENTS, NS, "frontend") is None

        await eventually(gone)
        reasons = {(e["type"], e["reason"]) for e in await events_of(kube, "frontend")}
        assert ("Warning", etcd_keys.CLEANUP_SKIPPED) in reasons
