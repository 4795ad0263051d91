"""Helpers of the DGD controller tests: the CRDs, an in-process operator running only the DGD
controller, graph manifests, and DCD statuses written the way the DCD controller writes them."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from backends.hub_graph import hub_graph
from backends.settings import OperatorSettings
from backends.worker_generation import worker_dcd_name, worker_hash
from controller.client import ClientConfig, KubeClient
from controller.errors import ApiError, NotFound
from controller.informer import WatchSettings
from controller.manager import Manager, ManagerConfig
from controller.resource import Resource
from hack.localcluster.testing import eventually as shared_eventually
from hack.our_crds import COMPONENT_DEPLOYMENTS, GRAPH_DEPLOYMENTS, our_crds
from reconcilers.graph import reconciler as graph_deployment
from reconcilers.machinery.context import OperatorContext
from reconcilers.operator.registry import cache_label_selectors, cache_transforms

Json = dict[str, Any]

ROOT = Path(__file__).resolve().parents[2]
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                "CustomResourceDefinition", namespaced=False)
NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False)
EVENTS = Resource("", "v1", "events", "Event")
AGENT = "dynamo-operator/dgd-test"
SETUP_AGENT = "graph-test-setup"
NS = "t"
GRAPH_LABEL = "nvidia.com/dynamo-graph-deployment-name"
COMPONENT_LABEL = "nvidia.com/dynamo-component"
WORKER_HASH_LABEL = "nvidia.com/dynamo-worker-hash"
FAST_WATCH = WatchSettings(bookmark_interval=0.5, min_watch_timeout=30.0,
                           backoff_initial=0.05, backoff_max=0.5)


async def setup_client(kubeconfig: Path) -> KubeClient:
    return await KubeClient.connect(kubeconfig, ClientConfig(qps=None, user_agent=SETUP_AGENT))


async def install(client: KubeClient, extra_crds: list[Json] | None = None) -> None:
    """The five Dynamo CRDs (and any extra), served, plus the test namespace."""
    for crd in [*our_crds(), *(extra_crds or [])]:
        await client.create(CRDS, crd)
    await client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                     "metadata": {"name": NS}})

    async def served() -> bool:
        try:
            await client.list(GRAPH_DEPLOYMENTS, NS)
            await client.list(COMPONENT_DEPLOYMENTS, NS)
        except ApiError:
            return False
        return True

    await eventually(served)


@contextlib.asynccontextmanager
async def installed_client(kubeconfig: Path) -> AsyncIterator[KubeClient]:
    """A client of the test cluster with our CRDs installed, closed after the block."""
    client = await setup_client(kubeconfig)
    await install(client)
    try:
        yield client
    finally:
        await client.close()


@contextlib.asynccontextmanager
async def operator(kubeconfig: Path, settings: OperatorSettings | None = None,
                   **context: Any) -> AsyncIterator[OperatorContext]:
    """A manager running only the DGD controller, for the body of the block."""
    config = ManagerConfig(kubeconfig=kubeconfig, client=ClientConfig(qps=None, user_agent=AGENT),
                           watch=FAST_WATCH, status_host="127.0.0.1", status_port=0,
                           graceful_shutdown_timeout=2.0, cache_sync_timeout=10.0,
                           by_object=cache_transforms(),
                           label_selectors=cache_label_selectors())
    mgr = await Manager.create(config)
    ctx = OperatorContext(client=mgr.client, cache=mgr.cache,
                          settings=settings or OperatorSettings(), **context)
    graph_deployment.register(mgr, ctx)
    task = asyncio.create_task(mgr.run())
    try:
        yield ctx
    finally:
        mgr.stop()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 10)


eventually = partial(shared_eventually, within=8.0,
                     tolerate=(NotFound, AssertionError, KeyError, TypeError))

def graph(name: str = "g", **spec: Any) -> Json:
    """A DGD with services Frontend (1 replica) and decode (2), unless `services` is given."""
    services = spec.pop("services", None) or {
        "Frontend": {"componentType": "frontend", "replicas": 1},
        "decode": {"componentType": "worker", "replicas": 2},
    }
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"services": services, **spec}}


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def report(client: KubeClient, name: str, replicas: int, *, updated: int | None = None,
                 ready: int | None = None, total: int | None = None,
                 available: bool | None = None, message: str = "",
                 reason: str = "") -> Json:
    """Write a DCD status as the DCD controller would, at the DCD's current generation."""
    dcd = await client.get(COMPONENT_DEPLOYMENTS, NS, name)
    updated = replicas if updated is None else updated
    ready = replicas if ready is None else ready
    total = replicas if total is None else total
    ok = (updated >= replicas and ready >= replicas and total == updated
          if available is None else available)
    status = {
        "observedGeneration": dcd["metadata"]["generation"],
        "conditions": [{"type": "Available", "status": "True" if ok else "False",
                        "reason": reason or ("DeploymentReady" if ok else "DeploymentNotReady"),
                        "message": message or ("Deployment is ready" if ok else "not ready"),
                        "lastTransitionTime": now()}],
        "service": {"componentKind": "Deployment", "componentName": name, "replicas": total,
                    "updatedReplicas": updated, "readyReplicas": ready,
                    "availableReplicas": ready},
    }
    return await client.patch(COMPONENT_DEPLOYMENTS, NS, name, {"status": status},
                              subresource="status")


def ready_condition(dgd: Json) -> Json:
    return next(c for c in dgd["status"]["conditions"] if c["type"] == "Ready")


async def events(client: KubeClient, involved: str) -> list[Json]:
    items = (await client.list(EVENTS, NS))["items"]
    return [e for e in items if e["involvedObject"].get("name") == involved]


def worker_name(manifest: Json, service: str) -> str:
    """The name of a worker service's DCD for the graph `manifest` states (either version):
    `<graph>-<service>-<hash>`, the hash its workers' generation."""
    return worker_dcd_name(manifest["metadata"]["name"], service,
                           worker_hash(hub_graph(manifest)))


async def worker_dcd(client: KubeClient, service: str, graph: str = "g",
                     namespace: str = NS) -> Json:
    """The graph's DCD of `service`, found by its labels: of those not terminating, the one of
    the graph's current worker generation if there is one, else the newest. NotFound if none
    (so that `eventually` waits for it)."""
    selector = f"{GRAPH_LABEL}={graph},{COMPONENT_LABEL}={service}"
    items = (await client.list(COMPONENT_DEPLOYMENTS, namespace,
                               label_selector=selector))["items"]
    live = [d for d in items if not d["metadata"].get("deletionTimestamp")]
    if not live:
        raise NotFound(message=f"no DCD of {graph}/{service}")
    try:
        current = worker_name(await client.get(GRAPH_DEPLOYMENTS, namespace, graph), service)
    except NotFound:
        current = ""
    for dcd in live:
        if dcd["metadata"]["name"] == current:
            return dcd
    return max(live, key=lambda d: (d["metadata"].get("creationTimestamp", ""),
                                    int(d["metadata"].get("resourceVersion") or 0)))

