"""Helpers of the DGDR controller tests: requests, and the profiler's part played by hand.

Without the simulation nothing runs the profiling Job, so a test finishes it itself: it writes
the output ConfigMap the copier would write and the Job status the Job controller would.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import yaml
from operator_harness import Operator, install_crds, running_operator, setup_client

from controller.client import KubeClient
from controller.resource import Resource
from reconcilers import component, graph
from reconcilers import request as dgdr_controller
from reconcilers.machinery.resources import CONFIG_MAPS, JOBS, PODS

Json = dict[str, Any]

NS = "t"
NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False)
EVENTS = Resource("", "v1", "events", "Event")
NODES = Resource("", "v1", "nodes", "Node", namespaced=False)


def request(name: str = "r", **spec: Any) -> Json:
    """A DGDR for Qwen on vLLM with a small SLA; `spec` entries override or add fields."""
    body: Json = {
        "model": "Qwen/Qwen3-0.6B", "backend": "vllm",
        "profilingConfig": {"profilerImage": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.8.0",
                            "config": {"sla": {"ttft": 100, "itl": 1500}}},
    }
    body.update(spec)
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeploymentRequest",
            "metadata": {"name": name, "namespace": NS}, "spec": body}


def generated_graph(name: str = "qwen-disagg") -> Json:
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": name, "labels": {"from": "profiler"}},
            "spec": {"services": {
                "Frontend": {"componentType": "frontend", "replicas": 1},
                "decode": {"componentType": "worker", "subComponentType": "decode",
                           "replicas": 1,
                           "resources": {"limits": {"gpu": "1"}}}}}}


def extra_config_map(name: str = "planner-profile-data") -> Json:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
            "data": {"prefill.json": "{}"}}


def stream(*docs: Json) -> str:
    return "\n---\n".join(yaml.safe_dump(d, sort_keys=False) for d in docs)


async def write_output(client: KubeClient, dgdr: str, data: dict[str, str]) -> None:
    """The output ConfigMap as the copier writes it."""
    await client.create(CONFIG_MAPS, {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": f"dgdr-output-{dgdr}", "namespace": NS,
                     "labels": {"dgdr.nvidia.com/name": dgdr,
                                "nvidia.com/managed-by": "dynamo-operator"}},
        "data": data})


async def finish_job(client: KubeClient, dgdr: str, *, ok: bool = True,
                     message: str = "Job has reached the specified backoff limit") -> Json:
    """Mark the profiling Job Complete (or Failed) as the Job controller does."""
    now = "2026-01-01T00:00:00Z"
    ctype = "Complete" if ok else "Failed"
    reason = "CompletionsReached" if ok else "BackoffLimitExceeded"
    status = {"conditions": [{"type": ctype, "status": "True", "reason": reason,
                              "message": message, "lastTransitionTime": now,
                              "lastProbeTime": now}],
              "startTime": now, **({"completionTime": now, "succeeded": 1} if ok
                                   else {"failed": 4})}
    return await client.patch(JOBS, NS, f"profile-{dgdr}", {"status": status},
                              subresource="status")


async def failed_pod(client: KubeClient, job: Json, name: str, exit_code: int = 1) -> None:
    """A profiling pod of `job` whose profiler container exited with `exit_code`."""
    template = job["spec"]["template"]
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": NS,
                        "labels": template["metadata"]["labels"],
                        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job",
                                             "name": job["metadata"]["name"],
                                             "uid": job["metadata"]["uid"],
                                             "controller": True}]},
           "spec": template["spec"]}
    await client.create(PODS, pod)
    term = {"exitCode": exit_code, "reason": "Error", "startedAt": "2026-01-01T00:00:00Z",
            "finishedAt": "2026-01-01T00:00:01Z"}
    statuses = [{"name": c["name"], "image": c["image"], "imageID": "", "ready": False,
                 "restartCount": 0, "state": {"terminated": term}}
                for c in template["spec"]["containers"]]
    await client.patch(PODS, NS, name, {"status": {"phase": "Failed",
                                                   "containerStatuses": statuses}},
                       subresource="status")


async def events_of(client: KubeClient, name: str) -> list[Json]:
    items = (await client.list(EVENTS, NS))["items"]
    return [e for e in items if e["involvedObject"].get("name") == name
            and e["involvedObject"].get("kind") == "DynamoGraphDeploymentRequest"]


async def reasons_of(client: KubeClient, name: str) -> list[str]:
    return [e["reason"] for e in await events_of(client, name)]


async def reasons_once(client: KubeClient, name: str, reason: str,
                       within: float = 10.0) -> list[str]:
    """The request's event reasons once `reason` is among them (or as they are after
    `within` seconds): an event is recorded after the status write that a test waits for."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        reasons = await reasons_of(client, name)
        if reason in reasons or asyncio.get_running_loop().time() > deadline:
            return reasons
        await asyncio.sleep(0.05)


def profile_config_of(job: Json) -> Json:
    args = job["spec"]["template"]["spec"]["containers"][0]["args"]
    loaded: Json = yaml.safe_load(args[args.index("--profile-config") + 1])
    return loaded


@contextlib.asynccontextmanager
async def request_client(kubeconfig: Path, crds: str = "*.yaml") -> AsyncIterator[KubeClient]:
    """A client of the test cluster, with our CRDs (those whose file matches `crds`) and the
    test namespace."""
    client = await setup_client(kubeconfig)
    await install_crds(client, crds)
    await client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                     "metadata": {"name": NS}})
    try:
        yield client
    finally:
        await client.close()


@contextlib.asynccontextmanager
async def sim_operator(kubeconfig: Path) -> AsyncIterator[Operator]:
    """The component, graph and request controllers, with the chart's role names."""
    async with running_operator(kubeconfig, [component.register, graph.register,
                                             dgdr_controller.register]) as op:
        op.ctx.planner_cluster_role_name = "dynamo-planner"
        op.ctx.dgdr_profiling_cluster_role_name = "dynamo-dgdr-profiling"
        yield op
