"""Both API versions with the operator's conversion webhook (`--enable-webhooks --webhook-url`)
and kubectl: a v1beta1 graph applied becomes Ready; it reads in either version, each in its
own shape; a v1alpha1 edit keeps the v1beta1-only fields and shows in v1beta1; lists and
watches work in both versions; with the operator stopped, v1alpha1 reads fail with
kube-apiserver's 500 (a Status without a reason) and v1beta1 reads (the storage version)
still work.
"""

from __future__ import annotations

import json
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import yaml
from e2e_support import EXAMPLES, Env, OperatorProcess, eventually, watched_column

from api.conversion import private_annotations
from hack.processes import free_port

ALPHA = "dynamographdeployments.v1alpha1.nvidia.com"
BETA = "dynamographdeployments.v1beta1.nvidia.com"
CRD = "dynamographdeployments.nvidia.com"
NAME = "vllm-agg"


def beta_graph() -> dict[str, Any]:
    """deploy/examples/v1beta1/vllm-agg.yaml plus fields only v1beta1 has: a sidecar beside
    the worker's main container, the worker's frontendSidecar (naming a container of its
    own, as the webhook requires) and a graph-level experimental kvTransferPolicy."""
    graph: dict[str, Any] = yaml.safe_load((EXAMPLES / "v1beta1" / "vllm-agg.yaml").read_text())
    worker = graph["spec"]["components"][1]
    worker["podTemplate"]["spec"]["containers"] += [
        {"name": "sidecar", "image": "busybox:1.36"},
        {"name": "sidecar-frontend", "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1"}]
    worker["frontendSidecar"] = "sidecar-frontend"
    graph["spec"]["experimental"] = {"kvTransferPolicy": {
        "labelKey": "topology.kubernetes.io/zone", "domain": "zone", "enforcement": "required"}}
    return graph


@pytest.fixture
async def converting(env: Env, operators: Callable[..., Awaitable[OperatorProcess]]
                     ) -> AsyncIterator[tuple[OperatorProcess, str]]:
    """One operator serving the webhooks on this host, once the CRD points at it."""
    port = free_port()
    url = f"https://127.0.0.1:{port}"
    op = await operators("op", "--enable-webhooks", "--webhook-port", str(port),
                         "--webhook-url", url)

    async def pointed() -> bool:
        crd = json.loads(await env.k("get", "crd", CRD, "-o", "json"))
        config = crd["spec"]["conversion"]["webhook"]["clientConfig"]
        return config.get("url") == f"{url}/convert" and bool(config.get("caBundle"))

    await eventually(pointed, what="the CRD's conversion webhook pointed at the operator")
    yield op, url


def main_image(component: dict[str, Any]) -> str:
    containers = component["podTemplate"]["spec"]["containers"]
    return str(next(c for c in containers if c["name"] == "main")["image"])


async def test_a_v1beta1_graph_in_both_versions(
        env: Env, converting: tuple[OperatorProcess, str]) -> None:
    await env.k("apply", "-f", "-", stdin=json.dumps(beta_graph()))
    await env.k("wait", "--for=condition=Ready", f"{ALPHA}/{NAME}", "--timeout=90s")

    # Each version in its own shape.
    alpha = yaml.safe_load(await env.k("get", f"{ALPHA}/{NAME}", "-o", "yaml"))
    assert alpha["apiVersion"] == "nvidia.com/v1alpha1"
    assert sorted(alpha["spec"]["services"]) == ["Frontend", "VllmDecodeWorker"]
    assert "components" not in alpha["spec"]
    worker_pod = alpha["spec"]["services"]["VllmDecodeWorker"]["extraPodSpec"]
    assert [c["name"] for c in worker_pod["containers"]] == ["sidecar"]
    beta = yaml.safe_load(await env.k("get", f"{BETA}/{NAME}", "-o", "yaml"))
    assert beta["apiVersion"] == "nvidia.com/v1beta1"
    assert [c["name"] for c in beta["spec"]["components"]] == ["Frontend", "VllmDecodeWorker"]
    assert "services" not in beta["spec"]
    assert beta["status"]["state"] == alpha["status"]["state"] == "successful"
    # What v1alpha1's spec cannot hold rides in its private payload annotation; v1beta1's
    # spec holds everything.
    payload, _ = private_annotations("DynamoGraphDeployment")
    assert "kvTransferPolicy" in alpha["metadata"]["annotations"][payload]
    assert payload not in (beta["metadata"].get("annotations") or {})

    # Edited as v1alpha1 (the Frontend's image): the v1beta1-only fields survive.
    await env.k("patch", f"{ALPHA}/{NAME}", "--type=merge", "-p", json.dumps({"spec": {
        "services": {"Frontend": {"extraPodSpec": {"mainContainer": {"image": "frontend:2"}}}}}}))
    beta = json.loads(await env.k("get", f"{BETA}/{NAME}", "-o", "json"))
    frontend, worker = beta["spec"]["components"]
    assert main_image(frontend) == "frontend:2"
    assert worker["frontendSidecar"] == "sidecar-frontend"
    assert [c["name"] for c in worker["podTemplate"]["spec"]["containers"]] == [
        "main", "sidecar", "sidecar-frontend"]
    assert beta["spec"]["experimental"] == beta_graph()["spec"]["experimental"]

    # The worker's image edited as v1alpha1: its sidecar and the graph's experimental stay.
    await env.k("patch", f"{ALPHA}/{NAME}", "--type=merge", "-p", json.dumps({"spec": {
        "services": {"VllmDecodeWorker": {"extraPodSpec": {"mainContainer": {
            "image": "worker:2"}}}}}}))
    beta = json.loads(await env.k("get", f"{BETA}/{NAME}", "-o", "json"))
    worker = beta["spec"]["components"][1]
    assert main_image(worker) == "worker:2"
    assert [c["name"] for c in worker["podTemplate"]["spec"]["containers"]] == [
        "main", "sidecar", "sidecar-frontend"]
    assert beta["spec"]["experimental"] == beta_graph()["spec"]["experimental"]

    # Edited as v1beta1: shows in v1alpha1.
    await env.k("patch", f"{BETA}/{NAME}", "--type=json", "-p", json.dumps([{
        "op": "replace", "path": "/spec/components/0/replicas", "value": 2}]))
    alpha = json.loads(await env.k("get", f"{ALPHA}/{NAME}", "-o", "json"))
    assert alpha["spec"]["services"]["Frontend"]["replicas"] == 2


async def test_lists_and_watches_in_both_versions(
        env: Env, converting: tuple[OperatorProcess, str]) -> None:
    await env.k("apply", "-f", "-", stdin=json.dumps(beta_graph()))
    for resource, version in ((ALPHA, "v1alpha1"), (BETA, "v1beta1")):
        listed = json.loads(await env.k("get", resource, "-o", "json"))
        assert [i["apiVersion"] for i in listed["items"]] == [f"nvidia.com/{version}"]
    table = await env.k("get", BETA, "-o", "wide")
    assert table.splitlines()[0].split() == [
        "NAME", "READY", "BACKEND", "AGE", "STATE", "REASON", "RESTART", "GPUS"]
    async with watched_column(env, BETA, ".metadata.labels.stage") as beta_seen, \
            watched_column(env, ALPHA, ".metadata.labels.stage") as alpha_seen:
        await env.k("label", f"{ALPHA}/{NAME}", "stage=one")
        await env.k("label", f"{BETA}/{NAME}", "stage=two", "--overwrite")

        async def both_seen() -> bool:
            return beta_seen[-1:] == ["two"] and alpha_seen[-1:] == ["two"] and \
                "one" in beta_seen and "one" in alpha_seen

        await eventually(both_seen, what="both watches seeing the two labels")


async def test_without_the_webhook_only_the_storage_version_reads(
        env: Env, converting: tuple[OperatorProcess, str]) -> None:
    op, _ = converting
    await env.k("apply", "-f", "-", stdin=json.dumps(beta_graph()))
    await env.k("get", f"{BETA}/{NAME}")
    await op.kill(signal.SIGTERM)
    code, out = await env.k_result("get", f"{ALPHA}/{NAME}", "-o", "json")
    assert code != 0
    # kube-apiserver's 500 without a reason: kubectl prints no reason in parentheses.
    assert "Error from server: conversion webhook for nvidia.com/v1beta1, " \
        "Kind=DynamoGraphDeployment failed: " in out, out
    code, out = await env.k_result("get", ALPHA)
    assert code != 0 and "conversion webhook" in out, out
    beta = json.loads(await env.k("get", f"{BETA}/{NAME}", "-o", "json"))
    assert beta["apiVersion"] == "nvidia.com/v1beta1"
    assert [c["name"] for c in beta["spec"]["components"]] == ["Frontend", "VllmDecodeWorker"]
