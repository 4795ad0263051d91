"""Helpers of the scaling adapter tests: CRDs, the controller in a manager, objects, polling."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TypeVar

from backends.settings import OperatorSettings
from controller.client import ClientConfig, KubeClient
from controller.informer import WatchSettings
from controller.manager import Manager, ManagerConfig
from controller.resource import Resource
from hack.localcluster.testing import eventually as shared_eventually
from hack.our_crds import GRAPH_DEPLOYMENTS, install_our_crds
from reconcilers.machinery.context import OperatorContext
from reconcilers.machinery.resources import SCALING_ADAPTERS
from reconcilers.operator.process import client_config
from reconcilers.operator.registry import cache_label_selectors, cache_transforms
from reconcilers.operator.version import OPERATOR_NAME, VERSION
from reconcilers.scaling_adapter import reconciler as scaling_adapter

Json = dict[str, Any]
T = TypeVar("T")
NS = "default"
ROOT = Path(__file__).resolve().parents[2]
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                "CustomResourceDefinition", namespaced=False)
EVENTS = Resource("", "v1", "events", "Event")
OPERATOR_AGENT = f"{OPERATOR_NAME}/{VERSION}"
TEST_AGENT = "scaling-test"
GRAPHS = "dynamographdeployments.nvidia.com"
ADAPTERS = "dynamographdeploymentscalingadapters.nvidia.com"
FAST_WATCH = WatchSettings(bookmark_interval=0.5, min_watch_timeout=30.0,
                           backoff_initial=0.05, backoff_max=0.5)


eventually = shared_eventually

async def client_for(kubeconfig: Path) -> KubeClient:
    return await KubeClient.connect(kubeconfig, ClientConfig(qps=None, user_agent=TEST_AGENT))


async def install_crds(kube: KubeClient, *names: str) -> None:
    """Create our CRDs (by plural.group, converting through the in-process conversion
    webhook) and wait until the server serves them."""
    await install_our_crds(kube, names=names)
    for resource in (GRAPH_DEPLOYMENTS, SCALING_ADAPTERS):
        await eventually(lambda r=resource: _served(kube, r))


async def _served(kube: KubeClient, resource: Resource) -> bool:
    listing = await kube.request("GET", f"/apis/{resource.group}/{resource.version}")
    return any(r["name"] == resource.plural for r in listing.get("resources", ()))


@contextlib.asynccontextmanager
async def running_operator(kubeconfig: Path) -> AsyncIterator[Manager]:
    """A manager running just the scaling adapter controller, stopped on exit."""
    mgr = await Manager.create(ManagerConfig(
        kubeconfig=kubeconfig, client=client_config(), watch=FAST_WATCH,
        status_host="127.0.0.1", status_port=0, graceful_shutdown_timeout=2.0,
        cache_sync_timeout=10.0, by_object=cache_transforms(),
                           label_selectors=cache_label_selectors()))
    ctx = OperatorContext(client=mgr.client, cache=mgr.cache, settings=OperatorSettings())
    scaling_adapter.register(mgr, ctx)
    task = asyncio.create_task(mgr.run())
    try:
        yield mgr
    finally:
        mgr.stop()
        await asyncio.wait_for(task, 10)


def graph(name: str, services: dict[str, Json]) -> Json:
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"backendFramework": "vllm", "services": services}}


def service(replicas: int | None = None, **extra: Any) -> Json:
    spec: Json = {"componentType": "worker", "scalingAdapter": {"enabled": True}, **extra}
    if replicas is not None:
        spec["replicas"] = replicas
    return spec


def adapter(graph_name: str, svc: str, replicas: int) -> Json:
    """An adapter as the graph controller creates it (name, labels, seeded replicas)."""
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeploymentScalingAdapter",
            "metadata": {"name": f"{graph_name}-{svc.lower()}", "namespace": NS, "labels": {
                "nvidia.com/dynamo-graph-deployment-name": graph_name,
                "nvidia.com/dynamo-component": svc}},
            "spec": {"replicas": replicas, "dgdRef": {"name": graph_name, "serviceName": svc}}}


async def graph_replicas(kube: KubeClient, name: str, svc: str) -> int | None:
    obj = await kube.get(GRAPH_DEPLOYMENTS, NS, name)
    value = obj["spec"]["services"].get(svc, {}).get("replicas")
    return value if isinstance(value, int) else None


async def events_of(kube: KubeClient, name: str, reason: str | None = None) -> list[Json]:
    items = (await kube.list(EVENTS, NS))["items"]
    return [e for e in items if e["involvedObject"].get("name") == name
            and (reason is None or e["reason"] == reason)]


def ready_condition(obj: Json) -> Json | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or ()
                 if c["type"] == "Ready"), None)
