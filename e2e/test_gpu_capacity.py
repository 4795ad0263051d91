"""GPUs you can see (issue 29 item 7): a graph that asks more GPUs than the cluster can give is
told so with the numbers (Ready reason `insufficient_capacity`) before its pods sit Pending,
and the warning goes when capacity frees; the GPUS column and `dynamo_operator_graph_gpus`
count DRA claims. On the local cluster: four simulated nodes of eight GPUs, each published as
eight `gpu.nvidia.com` devices by the simulated DRA driver."""

from __future__ import annotations

import json
import re
from typing import Any

import aiohttp
from e2e_support import DGD, Env, OperatorProcess, eventually, free_port
from test_metrics import scrape, value

from hack.localcluster.server import LocalCluster

IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.0"
Json = dict[str, Any]


def graph(name: str, replicas: int, *, gpus: int = 0, template: str = "") -> str:
    main: Json = {"name": "main", "image": IMAGE, "command": ["python3"],
                  "args": ["-m", "dynamo.vllm"]}
    spec: Json = {"containers": [main]}
    if gpus:
        main["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    if template:  # GPUs through a DRA claim made for each pod
        spec["resourceClaims"] = [{"name": "gpus", "resourceClaimTemplateName": template}]
        main["resources"] = {"claims": [{"name": "gpus"}]}
    return json.dumps({
        "apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
        "metadata": {"name": name},
        "spec": {"backendFramework": "vllm", "components": [
            {"name": "Frontend", "type": "frontend", "replicas": 1,
             "podTemplate": {"spec": {"containers": [{"name": "main", "image": IMAGE}]}}},
            {"name": "Worker", "type": "worker", "replicas": replicas,
             "podTemplate": {"spec": spec}}]}})


def claim_template(name: str, count: int) -> str:
    return json.dumps({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": name},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
            "deviceClassName": "gpu.nvidia.com", "count": count}}]}}}})


def filler(replicas: int, gpus: int) -> str:
    labels = {"app": "gpu-filler"}
    return json.dumps({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "gpu-filler", "labels": labels},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels}, "spec": {"containers": [{
                     "name": "main", "image": "busybox",
                     "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}}}})


async def first_pending_message(env: Env, name: str) -> str:
    """The message of the graph's NotReady event: its first pending status, as written."""
    events = (await env.get("events"))["items"]
    told = [e for e in events if e["involvedObject"].get("name") == name
            and e["reason"] == "NotReady"]
    assert told, [(e["involvedObject"].get("name"), e["reason"]) for e in events]
    return str(told[0]["message"])


async def gpus_column(env: Env, name: str) -> str:
    header, row = (await env.k("get", DGD, name, "-o", "wide")).splitlines()[:2]
    start = header.index("GPUS")
    return row[start:].split()[0]


async def test_more_dra_gpus_than_exist_is_told_with_the_numbers(
        env: Env, needs_local: LocalCluster) -> None:
    metrics = free_port()
    op = OperatorProcess(env.kubeconfig, env.namespace, env.tmp / "op.log", "op",
                         ["--metrics-bind-address", f"127.0.0.1:{metrics}"])
    await op.start()
    try:
        await env.k("apply", "-f", "-", stdin=claim_template("eight-gpus", 8))
        # Five pods of eight devices: 40, where the driver publishes 32.
        await env.k("apply", "-f", "-", stdin=graph("dra", 5, template="eight-gpus"))
        # (Pods placed before the graph's status is written hold their devices already.)
        told = re.compile(r"Not enough GPUs: needs 40 GPUs \(DRA device class gpu\.nvidia\.com\)"
                          r"(, its pods hold \d+)?, \d+ free of 32 devices\. ")
        cond = await env.wait_reason("dra", "insufficient_capacity")
        assert told.match(cond["message"]), cond
        # Said in the graph's first status, before any pod waited.
        first = await first_pending_message(env, "dra")
        assert told.match(first) and "unschedulable" not in first, first
        assert await gpus_column(env, "dra") == "40"

        async def requested() -> bool:
            samples = await scrape(metrics)
            return value(samples, "dynamo_operator_graph_gpus", namespace=env.namespace,
                         graph="dra", state="requested") == 40
        await eventually(requested, within=30, what="the metric to count the claims",
                         tolerate=(aiohttp.ClientError,))

        # Four fit: the warning goes, every claim is allocated, the graph is Ready.
        await env.k("apply", "-f", "-", stdin=graph("dra", 4, template="eight-gpus"))
        await env.wait_ready("dra", seconds=90)
        assert await gpus_column(env, "dra") == "32"
        claims = (await env.get("resourceclaims.resource.k8s.io"))["items"]
        assert sum(1 for c in claims if (c.get("status") or {}).get("allocation")) == 4, claims
    finally:
        await op.kill()
        print(f"--- operator log (tail) ---\n{op.tail()}")


async def test_more_gpus_than_free_is_told_before_pods_wait_and_clears_when_they_free(
        env: Env, operator: OperatorProcess, needs_local: LocalCluster) -> None:
    await env.k("apply", "-f", "-", stdin=filler(4, 8))  # every nvidia.com/gpu taken
    await env.k("rollout", "status", "deploy/gpu-filler", "--timeout=60s")
    await env.k("apply", "-f", "-", stdin=graph("late", 2, gpus=4))
    told = "Not enough GPUs: needs 8 GPUs (nvidia.com/gpu), 0 free of 32 allocatable. "
    cond = await env.wait_reason("late", "insufficient_capacity")
    assert cond["message"].startswith(told), cond
    first = await first_pending_message(env, "late")
    assert first.startswith(told) and "unschedulable" not in first, first
    assert await gpus_column(env, "late") == "8"

    # A node's GPUs free: the graph's pods are placed, the warning goes.
    await env.k("scale", "deploy/gpu-filler", "--replicas=3")
    await env.wait_ready("late", seconds=90)
    assert (await env.ready("late"))["reason"] == "all_resources_are_ready"


async def test_a_pod_larger_than_every_node_is_told_at_once(
        env: Env, operator: OperatorProcess, needs_local: LocalCluster) -> None:
    await env.k("apply", "-f", "-", stdin=graph("wide", 1, gpus=16))
    cond = await env.wait_reason("wide", "insufficient_capacity")
    assert cond["message"].startswith(
        "Not enough GPUs: a Worker pod needs 16 GPUs (nvidia.com/gpu), the most one node has "
        "is 8."), cond
