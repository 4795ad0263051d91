"""Labels and annotations removed from a graph's service, or from a DCD of its own, leave the
DCD, the Deployment, its pod template and the pods; keys that others put there stay.

A worker's labels and annotations are part of its generation: adding or removing them rolls
the worker out to a DCD (and Deployment) of a new name, so the keys others put on a child are
checked on the frontend's, whose name stays."""

from __future__ import annotations

import json
from typing import Any

from e2e_support import DCD, DGD, Env, OperatorProcess, eventually, worker_dcd

GRAPH = "vllm-agg"
WORKER = "VllmDecodeWorker"
FRONTEND = "Frontend"
FRONTEND_DCD = "vllm-agg-frontend"
META = {"labels": {"team": "a"}, "annotations": {"note": "x"}}


def has(obj: dict[str, Any] | None, field: str, key: str) -> bool:
    return key in (((obj or {}).get("metadata") or {}).get(field) or {})


async def running_pods(env: Env, selector: str) -> list[Any]:
    items: list[Any] = (await env.get("pods", selector=selector))["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


async def without_team(env: Env, name: str) -> bool:
    """Neither team nor note on the DCD, its Deployment, pod template or running pods."""
    dcd = await env.get(DCD, name)
    dep = await env.get("deploy", name)
    if dcd is None or dep is None:
        return False
    template = {"metadata": dep["spec"]["template"]["metadata"]}
    return not (has(dcd, "labels", "team") or has(dcd, "annotations", "note")
                or has(dep, "labels", "team") or has(dep, "annotations", "note")
                or has(template, "labels", "team")
                or "team" in (dcd["spec"].get("labels") or {})
                or await running_pods(env, f"team=a,nvidia.com/selector={name}"))


async def test_removed_service_label_and_annotation_leave_every_child(
        env: Env, operator: OperatorProcess) -> None:
    await env.apply_example(GRAPH)
    await env.wait_ready(GRAPH)
    await env.k("patch", DGD, GRAPH, "--type=merge", "-p", json.dumps({"spec": {"services": {
        WORKER: META, FRONTEND: META}}}))
    worker = await worker_dcd(env, GRAPH, WORKER, within=60)  # the labelled generation's

    async def labelled() -> bool:
        return all([await running_pods(env, f"team=a,nvidia.com/selector={name}")
                    for name in (worker, FRONTEND_DCD)])
    await eventually(labelled, within=60, what="worker and frontend pods labelled team=a")
    for name in (worker, FRONTEND_DCD):
        dep = await env.get("deploy", name)
        assert dep["metadata"]["labels"]["team"] == "a", name
        assert dep["metadata"]["annotations"]["note"] == "x", name
    # Someone else's keys on our Deployment.
    await env.k("label", "deploy", FRONTEND_DCD, "owner=platform")
    await env.k("annotate", "deploy", FRONTEND_DCD, "platform/ticket=42")

    await env.k("patch", DGD, GRAPH, "--type=json", "-p", json.dumps([
        {"op": "remove", "path": f"/spec/services/{name}/{field}"}
        for name in (WORKER, FRONTEND) for field in ("labels", "annotations")]))
    # The worker rolls out to the generation without the keys; the labelled one goes.
    unlabelled = await worker_dcd(env, GRAPH, WORKER, within=60)
    assert unlabelled != worker

    async def gone() -> bool:
        return (await without_team(env, unlabelled) and await without_team(env, FRONTEND_DCD)
                and not await running_pods(env, "team=a"))
    await eventually(gone, within=60, what="team and note gone from the DCDs, Deployments, pods")
    dep = await env.get("deploy", FRONTEND_DCD)
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
