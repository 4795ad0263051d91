"""Helpers of the reconciler integration tests: the CRDs, an in-process operator, polling."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from backends.settings import OperatorSettings
from controller.client import ClientConfig, KubeClient
from controller.errors import NotFound
from controller.informer import WatchSettings
from controller.manager import Manager, ManagerConfig
from controller.metrics import Metrics
from controller.resource import Resource
from hack.localcluster.testing import eventually as shared_eventually
from hack.our_crds import install_our_crds
from reconcilers.machinery.context import OperatorContext
from reconcilers.operator.process import client_config
from reconcilers.operator.registry import (
    Register,
    cache_label_selectors,
    cache_transforms,
)

Json = dict[str, Any]

ROOT = Path(__file__).resolve().parents[2]
CRD_DIR = ROOT / "deploy" / "crds"
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                "CustomResourceDefinition", namespaced=False)
FAST_WATCH = WatchSettings(bookmark_interval=0.5, min_watch_timeout=30.0,
                           backoff_initial=0.05, backoff_max=0.5)
SETUP_AGENT = "test-setup"
OPERATOR_AGENT = "dynamo-operator"
#: Settings of a cluster without Grove, LeaderWorkerSet, Volcano or Istio.
PLAIN_SETTINGS = OperatorSettings(lws_enabled=False, volcano_enabled=False)
#: The CRD file of DynamoComponentDeployments, enough for the DCD controller alone.
DCD_CRD = "nvidia.com_dynamocomponentdeployments.yaml"


async def setup_client(kubeconfig: Path) -> KubeClient:
    """The test's own client (its requests are told apart by user agent)."""
    return await KubeClient.connect(kubeconfig, ClientConfig(qps=None, user_agent=SETUP_AGENT),
                                    Metrics())


async def install_crds(client: KubeClient, pattern: str = "*.yaml") -> None:
    """Create the nvidia.com CRDs (those whose file matches), converting through the
    in-process conversion webhook, and wait until they are Established."""
    await install_our_crds(client, pattern)


@dataclass
class Operator:
    """An operator running in this process: its manager and shared context."""

    manager: Manager
    ctx: OperatorContext


@contextlib.asynccontextmanager
async def running_operator(kubeconfig: Path, registrations: Iterable[Register],
                           settings: OperatorSettings = PLAIN_SETTINGS) -> AsyncIterator[Operator]:
    """The given controllers on a real Manager, without leader election, for the block."""
    config = ManagerConfig(kubeconfig=kubeconfig, client=client_config(),
                           watch=FAST_WATCH, status_host="127.0.0.1", status_port=0,
                           graceful_shutdown_timeout=2.0, cache_sync_timeout=10.0,
                           by_object=cache_transforms(),
                           label_selectors=cache_label_selectors())
    manager = await Manager.create(config)
    ctx = OperatorContext(client=manager.client, cache=manager.cache, settings=settings)
    for register in registrations:
        register(manager, ctx)
    task = asyncio.create_task(manager.run())
    try:
        await manager.cache.wait_for_sync()
        yield Operator(manager, ctx)
    finally:
        manager.stop()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 10)
        await ctx.http.close()


eventually = partial(shared_eventually, within=10.0)

async def get_or_none(client: KubeClient, resource: Resource, namespace: str,
                      name: str) -> Json | None:
    try:
        return await client.get(resource, namespace, name)
    except NotFound:
        return None


async def wait_for(client: KubeClient, resource: Resource, namespace: str, name: str,
                   predicate: Callable[[Json], bool] = lambda _: True,
                   within: float = 10.0) -> Json:
    """The object once it exists and satisfies `predicate`."""
    found: list[Json] = []

    async def check() -> bool:
        obj = await get_or_none(client, resource, namespace, name)
        if obj is not None and predicate(obj):
            found.append(obj)
            return True
        return False

    await eventually(check, within=within)
    return found[-1]


def condition(obj: Json, ctype: str) -> Json:
    """The condition of that type in the object's status ({} if none)."""
    conditions = (obj.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c.get("type") == ctype), {})
