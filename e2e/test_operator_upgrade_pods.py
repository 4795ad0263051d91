"""An operator upgrade restarts no pod (issue #29): graphs the previous operator made keep
their pod templates when the current operator takes over.

The previous operator (the product code before its newest change,
`old_operator_support.previous_operator_commits`; the one before it when that commit shows a
bug, as a half-landed change can) runs with its webhooks and makes Ready, in a namespace of
their own, graphs that use the v1.x fields: a frontendSidecar in both versions, a dynamoSidecar,
multinode role templates, the graph's labels, annotations and env, sharedMemorySize,
a compilation cache and runtimeVersionOverride. It stops; the current operator starts with its
webhooks and reconciles every graph and DCD. Then no Deployment or LeaderWorkerSet has a new
generation or pod template, no DCD a new generation or spec hash, and every pod is the one
that ran before. Last, a graph created now carries the current operator's origin-version
stamp, and its frontendSidecar gets the frontend's defaults.

Runs the local cluster only (the webhooks are called on 127.0.0.1); needs git history.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import signal
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from e2e_support import EXAMPLES, Env, OperatorProcess, eventually
from old_operator_support import operator_tree, previous_operator_commits
from upgrade_support import (
    DCD_BETA,
    DGD_BETA,
    count_all,
    create,
    dcds,
    listed,
    operator,
    pods,
    ready_or_bug,
    reconciled_all,
    stamps,
    webhooks_configured,
    workloads,
)

from hack.localcluster.server import LocalCluster
from hack.processes import free_port
from reconcilers.operator.version import VERSION

Json = dict[str, Any]
ORIGIN = "nvidia.com/dynamo-operator-origin-version"
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.0"
FRONTEND_IMAGE = "nvcr.io/nvidia/ai-dynamo/frontend:1.0.0"
CACHE_PVC = "compile-cache"
CLAIM: Json = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
               "metadata": {"name": CACHE_PVC},
               "spec": {"accessModes": ["ReadWriteMany"],
                        "resources": {"requests": {"storage": "10Gi"}}}}


def _main(*args: str, gpus: str = "1") -> Json:
    return {"name": "main", "image": IMAGE, "command": ["python3", "-m", "dynamo.vllm"],
            "args": ["--model", "Qwen/Qwen3-0.6B", *args],
            "resources": {"limits": {"nvidia.com/gpu": gpus}}}


def _sidecar(name: str = "fe") -> Json:
    return {"name": name, "image": FRONTEND_IMAGE, "args": ["-m", "dynamo.frontend"],
            "env": [{"name": "DYN_ROUTER_MODE", "value": "direct"}]}


def fields_graph(name: str) -> Json:
    """A v1beta1 graph using the single-node v1.x fields."""
    return {
        "apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
        "metadata": {"name": name},
        "spec": {
            "backendFramework": "vllm",
            "labels": {"cost-center": "42"}, "annotations": {"owner": "team-a"},
            "env": [{"name": "GRAPH_WIDE", "value": "yes"}],
            "components": [
                {"name": "Frontend", "type": "frontend", "replicas": 1,
                 "podTemplate": {"spec": {"containers": [{"name": "main", "image": IMAGE}]}}},
                {"name": "Worker", "type": "worker", "replicas": 1,
                 "sharedMemorySize": "2Gi",
                 "runtimeVersionOverride": "1.6.0", "frontendSidecar": "fe",
                 "podTemplate": {"spec": {"containers": [_main(), _sidecar()]}}},
                {"name": "Engine", "type": "worker", "replicas": 1, "dynamoSidecar": "runtime",
                 "podTemplate": {"spec": {
                     "initContainers": [{"name": "runtime", "image": IMAGE,
                                         "restartPolicy": "Always"}],
                     "containers": [{"name": "main", "image": "vllm/vllm-openai:v0.11.0",
                                     "command": ["vllm"], "args": ["serve", "m"],
                                     "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}},
            ]}}


def roles_graph(name: str) -> Json:
    """A v1beta1 multinode graph whose leader and worker run templates of their own."""
    def role(kind: str, *args: str) -> Json:
        return {"name": kind, "podTemplate": {
            "metadata": {"labels": {"pool": kind}},
            "spec": {"containers": [_main("--nnodes", "2", "--node-rank", "$(DYNAMO_RANK)",
                                          *args)]}}}
    return {
        "apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
        "metadata": {"name": name},
        "spec": {"backendFramework": "vllm", "components": [
            {"name": "Frontend", "type": "frontend", "replicas": 1,
             "podTemplate": {"spec": {"containers": [{"name": "main", "image": IMAGE}]}}},
            {"name": "Worker", "type": "worker", "replicas": 1, "multinode": {"nodeCount": 2},
             "roles": [role("leader"), role("worker", "--headless")]}]}}


def alpha_sidecar_graph(name: str) -> Json:
    """The aggregated example in v1alpha1, its worker with a frontendSidecar object and a
    compilation cache (v1alpha1's form of compilationCache: a v1beta1 one naming a claim
    outside `spec.pvcs` was refused at admission before 0.1.0's fix)."""
    graph: Json = yaml.safe_load((EXAMPLES / "vllm-agg.yaml").read_text())
    graph["metadata"]["name"] = name
    graph["spec"]["pvcs"] = [{"name": CACHE_PVC, "create": False}]
    worker = graph["spec"]["services"]["VllmDecodeWorker"]
    worker["frontendSidecar"] = {"image": FRONTEND_IMAGE, "args": ["-m", "dynamo.frontend"]}
    worker["volumeMounts"] = [{"name": CACHE_PVC, "useAsCompilationCache": True}]
    return graph


async def previous_operator(env: Env, graphs: list[Json]
                            ) -> tuple[OperatorProcess, int, Env, Path]:
    """The previous operator running, with `graphs` Ready in a namespace of their own: the
    first of the earlier operators that shows no bug (each try in a fresh namespace). Its
    process, metrics port, namespace (as an Env) and tree."""
    for attempt, commit in enumerate(previous_operator_commits()):
        scoped = dataclasses.replace(env, namespace=f"upgrade-{attempt}")
        await env.k("create", "namespace", scoped.namespace)
        await scoped.k("create", "-f", "-", stdin=json.dumps(CLAIM))
        tree = operator_tree(commit, env.tmp / f"old-{attempt}")
        port = free_port()
        old = operator(env, f"old-{attempt}", port, tree=tree)
        await old.start()
        await webhooks_configured(env, old, mutating=stamps(tree))
        for obj in graphs:
            await create(scoped, obj)
        if await ready_or_bug(scoped, old, [g["metadata"]["name"] for g in graphs]):
            return old, port, scoped, tree
        await old.kill(signal.SIGTERM)
        print(f"--- {old.name} ({commit}) shows a bug; trying the one before ---\n"
              f"{old.tail()}")
    raise AssertionError("none of the previous operators makes the graphs Ready")


@pytest.mark.timeout(240)
async def test_an_operator_upgrade_restarts_no_pod(env: Env, needs_local: LocalCluster) -> None:
    graphs = [fields_graph("fields"), roles_graph("roles"), alpha_sidecar_graph("alpha-sidecar")]
    new_metrics = free_port()
    new = operator(env, "new", new_metrics)
    old: OperatorProcess | None = None
    try:
        old, old_metrics, scoped, tree = await previous_operator(env, graphs)
        total_graphs = await count_all(env, DGD_BETA)
        total_dcds = await count_all(env, DCD_BETA)
        await eventually(reconciled_all(old_metrics, total_graphs, total_dcds), within=30,
                         what="the previous operator idle", tolerate=(aiohttp.ClientError,))
        await asyncio.sleep(1)  # its last writes (status) are in

        workloads_before, dcds_before = await workloads(scoped), await dcds(scoped)
        pods_before = await pods(scoped)
        assert any(k.startswith("lws/") for k in workloads_before), workloads_before
        assert len(pods_before) >= 7, pods_before

        await old.kill(signal.SIGTERM)
        await new.start()
        await eventually(reconciled_all(new_metrics, total_graphs, total_dcds), within=60,
                         what="the current operator reconciling every graph and DCD",
                         tolerate=(aiohttp.ClientError,))
        await asyncio.sleep(1)  # a write it made would have reached the controllers

        assert await dcds(scoped) == dcds_before
        after = await workloads(scoped)
        changed = sorted(k for k in workloads_before if after.get(k) != workloads_before[k])
        assert changed == [], f"pod templates changed by the upgrade: {changed}"
        assert sorted(after) == sorted(workloads_before)
        assert await pods(scoped) == pods_before
        if not stamps(tree):
            # A previous operator that did not stamp: the current one stamped nothing since.
            for name, graph in (await listed(scoped, DGD_BETA)).items():
                assert ORIGIN not in (graph["metadata"].get("annotations") or {}), name

        # A graph created now is stamped, and its frontendSidecar renders whole, under its own
        # name (FRONTEND_SIDECAR_LOSSLESS).
        await webhooks_configured(env, new, mutating=True)
        await create(scoped, fields_graph("fresh"))
        fresh = json.loads(await scoped.k("get", DGD_BETA, "fresh", "-o", "json"))
        assert fresh["metadata"]["annotations"][ORIGIN] == VERSION

        async def sidecar_rendered() -> bool:
            for deployment in (await listed(scoped, "deployments")).values():
                labels = deployment["metadata"].get("labels") or {}
                if labels.get("nvidia.com/dynamo-graph-deployment-name") == "fresh" and \
                        labels.get("nvidia.com/dynamo-component") == "Worker":
                    names = {c["name"] for c in deployment["spec"]["template"]["spec"]
                             ["containers"]}
                    return names == {"main", "fe"}
            return False
        await eventually(sidecar_rendered, within=30,
                         what="the fresh graph's worker with its frontend sidecar")
    finally:
        for op in (old, new):
            if op is not None:
                await op.kill(signal.SIGTERM)
                print(f"--- {op.name} log (tail) ---\n{op.tail()}")
