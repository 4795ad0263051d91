"""Labels and annotations removed from a graph's service, or from a DCD of its own, leave the
DCD, the Deployment, its pod template and the pods; keys that others put there stay."""

from __future__ import annotations

import json
from typing import Any

from e2e_support import DCD, DGD, Env, OperatorProcess, eventually

GRAPH = "vllm-agg"
WORKER = "VllmDecodeWorker"
WORKER_DCD = "vllm-agg-vllmdecodeworker"


def has(obj: dict[str, Any] | None, field: str, key: str) -> bool:
    return key in (((obj or {}).get("metadata") or {}).get(field) or {})


async def running_pods(env: Env, selector: str) -> list[Any]:
    items: list[Any] = (await env.get("pods", selector=selector))["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


async def test_removed_service_label_and_annotation_leave_every_child(
        env: Env, operator: OperatorProcess) -> None:
    await env.apply_example(GRAPH)
    await env.wait_ready(GRAPH)
    await env.k("patch", DGD, GRAPH, "--type=merge", "-p", json.dumps({"spec": {"services": {
        WORKER: {"labels": {"team": "a"}, "annotations": {"note": "x"}}}}}))

    async def labelled() -> bool:
        return bool(await running_pods(env, f"team=a,nvidia.com/selector={WORKER_DCD}"))
    await eventually(labelled, what="worker pods labelled team=a")
    dep = await env.get("deploy", WORKER_DCD)
    assert dep["metadata"]["labels"]["team"] == "a"
    assert dep["metadata"]["annotations"]["note"] == "x"
    # Someone else's keys on our Deployment.
    await env.k("label", "deploy", WORKER_DCD, "owner=platform")
    await env.k("annotate", "deploy", WORKER_DCD, "platform/ticket=42")

    await env.k("patch", DGD, GRAPH, "--type=json", "-p", json.dumps([
        {"op": "remove", "path": f"/spec/services/{WORKER}/labels"},
        {"op": "remove", "path": f"/spec/services/{WORKER}/annotations"}]))

    async def gone() -> bool:
        dcd = await env.get(DCD, WORKER_DCD)
        dep = await env.get("deploy", WORKER_DCD)
        template = {"metadata": dep["spec"]["template"]["metadata"]}
        return not (has(dcd, "labels", "team") or has(dcd, "annotations", "note")
                    or has(dep, "labels", "team") or has(dep, "annotations", "note")
                    or has(template, "labels", "team")
                    or await running_pods(env, f"team=a,nvidia.com/selector={WORKER_DCD}"))
    await eventually(gone, within=60, what="team and note gone from the DCD, Deployment, pods")
    assert "team" not in ((await env.get(DCD, WORKER_DCD))["spec"].get("labels") or {})
    dep = await env.get("deploy", WORKER_DCD)
    assert dep["metadata"]["labels"]["owner"] == "platform"
    assert dep["metadata"]["annotations"]["platform/ticket"] == "42"
    await env.wait_ready(GRAPH)


STANDALONE = {
    "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoComponentDeployment",
    "metadata": {"name": "solo"},
    "spec": {"backendFramework": "vllm", "componentType": "frontend", "replicas": 1,
             "labels": {"team": "b"}, "annotations": {"note": "y"},
             "extraPodSpec": {"mainContainer": {
                 "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0"}}},
}


async def test_standalone_component_label_removed_and_changed(
        env: Env, operator: OperatorProcess) -> None:
    await env.k("apply", "-f", "-", stdin=json.dumps(STANDALONE))

    async def labelled() -> bool:
        dep = await env.get("deploy", "solo")
        return has(dep, "labels", "team") and bool(await running_pods(env, "team=b"))
    await eventually(labelled, within=60, what="the standalone DCD's pods labelled team=b")
    await env.k("patch", DCD, "solo", "--type=merge", "-p", json.dumps({"spec": {
        "labels": {"team": None, "tier": "gold"}, "annotations": {"note": "z"}}}))

    async def changed() -> bool:
        dep = await env.get("deploy", "solo")
        labels = dep["metadata"]["labels"]
        template = dep["spec"]["template"]["metadata"]["labels"]
        return ("team" not in labels and labels.get("tier") == "gold"
                and dep["metadata"]["annotations"].get("note") == "z"
                and "team" not in template and template.get("tier") == "gold"
                and not await running_pods(env, "team=b"))
    await eventually(changed, within=60, what="team gone and tier set on the standalone DCD's "
                                              "Deployment, template and pods")
