"""Helpers of the DynamoModel tests: a simulated cluster whose worker pods answer HTTP, the DCD
and DynamoModel controllers in process (with short LoRA timeouts), and manifests."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from operator_harness import (
    Operator,
    condition,
    eventually,
    install_crds,
    running_operator,
    setup_client,
)

from controller.client import KubeClient
from controller.resource import Resource
from hack.localcluster.server import LocalCluster
from hack.localcluster.simulation.workers import Workers
from hack.our_crds import COMPONENT_DEPLOYMENTS
from reconcilers import component, model
from reconcilers.machinery.resources import MODELS, PODS
from reconcilers.model import LoraSettings

Json = dict[str, Any]

NS = "default"
BASE = "Qwen/Qwen3-0.6B"
LORA_NAME = "support-lora"
LORA_URI = "s3://loras/support/v1"
EVENTS = Resource("", "v1", "events", "Event")
#: Short bounds so a hanging worker costs a test a second, and retries come quickly.
FAST = LoraSettings(concurrency=10, request_timeout=0.5, overall_timeout=1.0, retry_after=0.3)


def worker_dcd(name: str = "w", replicas: int = 1, base: str = BASE) -> Json:
    """A worker component serving `base` (its pods get the model's hash label)."""
    return {
        "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoComponentDeployment",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"componentType": "worker", "replicas": replicas, "modelRef": {"name": base},
                 "extraPodSpec": {"mainContainer": {"image": "nvcr.io/x/vllm:1",
                                                    "command": ["python3"],
                                                    "args": ["-m", "dynamo.vllm"]}}},
    }


def dynamo_model(name: str, *, lora: bool = False, base: str = BASE) -> Json:
    spec: Json = {"modelName": LORA_NAME if lora else base, "baseModelName": base,
                  "modelType": "lora" if lora else "base"}
    if lora:
        spec["source"] = {"uri": LORA_URI}
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoModel",
            "metadata": {"name": name, "namespace": NS}, "spec": spec}


@dataclass
class ModelEnv:
    """What a test drives: the setup client, the cluster, its workers, the operator."""

    kube: KubeClient
    cluster: LocalCluster
    workers: Workers
    operator: Operator

    async def model(self, name: str) -> Json:
        return await self.kube.get(MODELS, NS, name)

    async def worker_pods(self, dcd: str = "w") -> list[str]:
        """Names of the DCD's pods that are running and not terminating."""
        pods = (await self.kube.list(PODS, NS,
                                     label_selector=f"nvidia.com/selector={dcd}"))["items"]
        return sorted(p["metadata"]["name"] for p in pods
                      if not p["metadata"].get("deletionTimestamp")
                      and (p.get("status") or {}).get("phase") == "Running")

    async def scale(self, replicas: int, dcd: str = "w") -> None:
        await self.kube.patch(COMPONENT_DEPLOYMENTS, NS, dcd, {"spec": {"replicas": replicas}})

    async def events(self, name: str, reason: str) -> list[Json]:
        items = (await self.kube.list(EVENTS, NS))["items"]
        return [e for e in items if e.get("reason") == reason
                and (e.get("involvedObject") or {}).get("name") == name]

    async def wait_model(self, name: str, check: Any, within: float = 10.0) -> Json:
        """The model once `check(model)` holds."""
        seen: list[Json] = []

        async def ok() -> bool:
            obj = await self.model(name)
            seen.append(obj)
            return bool(check(obj))

        try:
            await eventually(ok, within=within)
        except AssertionError:
            raise AssertionError(f"model {name} never matched: {seen[-1:]}") from None
        return seen[-1]


def ready_is(status: str, reason: str | None = None, total: int | None = None,
             ready: int | None = None) -> Any:
    def check(obj: Json) -> bool:
        c = condition(obj, "EndpointsReady")
        s = obj.get("status") or {}
        return (c.get("status") == status and (reason is None or c.get("reason") == reason)
                and (total is None or s.get("totalEndpoints") == total)
                and (ready is None or s.get("readyEndpoints") == ready))
    return check


@contextlib.asynccontextmanager
async def model_env(cluster: LocalCluster, kubeconfig: Path,
                    settings: LoraSettings = FAST) -> AsyncIterator[ModelEnv]:
    """CRDs installed; the DCD and DynamoModel controllers running."""
    sim = cluster.simulation
    assert sim is not None
    kube = await setup_client(kubeconfig)
    try:
        await install_crds(kube, "nvidia.com_dynamo[cm]*.yaml")
        registrations = [component.register, partial(model.register, settings=settings)]
        async with running_operator(kubeconfig, registrations) as op:
            yield ModelEnv(kube, cluster, sim.workers, op)
    finally:
        await kube.close()
