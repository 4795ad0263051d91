"""Scaling through a DynamoGraphDeploymentScalingAdapter, with the operator process and kubectl:
`kubectl scale dgdsa`, an HPA on an External metric, a hand edit of the graph adopted, scale
to zero and back, adapters removed with their graph or when disabled, and an HPA decision
landing together with a spec edit of the graph."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from e2e_support import (
    DGD,
    DGDSA,
    Env,
    OperatorProcess,
    current_worker_dcd,
    eventually,
    worker_dcd,
    worker_dcds,
)

from controller.client import ClientConfig, KubeClient
from hack.localcluster.server import LocalCluster
from hack.localcluster.simulation import HpaSettings, SimulationConfig

GRAPH = "vllm-scaling-adapter"
SERVICE = "VllmDecodeWorker"
ADAPTER = f"{GRAPH}-vllmdecodeworker"
OPERATOR_AGENT = "dynamo-operator"
GRAPH_RESOURCE = "dynamographdeployments.nvidia.com"
METRIC = "dynamo_queued_requests"
METRIC_LABELS = {"dynamo_namespace": f"default-{GRAPH}"}
NEW_IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0"
#: Generous bounds for a loaded 2-core CI machine.
WITHIN = 60.0


@pytest.fixture
def sim_config() -> SimulationConfig:
    # An HPA evaluation twice a second; the manifest's behavior sets no windows anyway.
    return SimulationConfig(hpa=HpaSettings(sync_period=0.5, time_scale=0.01))


def hpa_manifest(minimum: int = 1, maximum: int = 6) -> str:
    return json.dumps({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": ADAPTER},
        "spec": {
            "scaleTargetRef": {"apiVersion": "nvidia.com/v1alpha1",
                               "kind": "DynamoGraphDeploymentScalingAdapter",
                               "name": ADAPTER},
            "minReplicas": minimum, "maxReplicas": maximum,
            "metrics": [{"type": "External", "external": {
                "metric": {"name": METRIC, "selector": {"matchLabels": METRIC_LABELS}},
                "target": {"type": "AverageValue", "averageValue": "10"}}}],
            "behavior": {
                "scaleUp": {"stabilizationWindowSeconds": 0,
                            "policies": [{"type": "Percent", "value": 400,
                                          "periodSeconds": 1}]},
                "scaleDown": {"stabilizationWindowSeconds": 0,
                              "policies": [{"type": "Percent", "value": 100,
                                            "periodSeconds": 1}]}}}})


def set_queue(local: LocalCluster, value: int) -> None:
    assert local.simulation is not None
    local.simulation.metrics.set_external(METRIC, str(value), labels=METRIC_LABELS)


async def service_spec(env: Env, name: str = SERVICE) -> dict[str, Any] | None:
    dgd = await env.get(DGD, GRAPH)
    if dgd is None:
        return None
    spec: dict[str, Any] | None = dgd["spec"]["services"].get(name)
    return spec


async def service_replicas(env: Env) -> int | None:
    spec = await service_spec(env)
    return None if spec is None else spec.get("replicas")


async def adapter(env: Env) -> dict[str, Any] | None:
    obj: dict[str, Any] | None = await env.get(DGDSA, ADAPTER)
    return obj


async def worker(env: Env) -> str | None:
    """The worker's DCD and Deployment: named for the graph's current worker generation."""
    return await current_worker_dcd(env, GRAPH, SERVICE)


async def worker_pods(env: Env) -> list[Any]:
    name = await worker(env)
    dep = None if name is None else await env.get("deploy", name)
    if dep is None:
        return []
    labels = dep["spec"]["selector"]["matchLabels"]
    sel = ",".join(f"{k}={v}" for k, v in labels.items())
    items: list[Any] = (await env.get("pods", selector=sel))["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


async def settled_at(env: Env, n: int, image: str | None = None) -> bool:
    """The graph asks for n, the adapter applied n, the current worker generation's
    Deployment (its only DCD left) and n Running pods follow."""
    if await service_replicas(env) != n:
        return False
    a = await adapter(env)
    if a is None or a["spec"].get("replicas") != n or (a.get("status") or {}).get("replicas") != n:
        return False
    name = await worker(env)
    if name is None or await worker_dcds(env, GRAPH, SERVICE) != [name]:
        return False
    dep = await env.get("deploy", name)
    if dep is None or dep["spec"].get("replicas") != n:
        return False
    pods = await worker_pods(env)
    if len(pods) != n or any((p.get("status") or {}).get("phase") != "Running" for p in pods):
        return False
    return image is None or all(p["spec"]["containers"][0]["image"] == image for p in pods)


async def wait_settled(env: Env, n: int, image: str | None = None) -> None:
    async def check() -> bool:
        return await settled_at(env, n, image)
    await eventually(check, within=WITHIN, interval=0.5, what=f"{n} replicas everywhere")


def graph_writes(local: LocalCluster) -> int:
    """Writes of DynamoGraphDeployments (not their status) by the operator."""
    return local.stats.writes(user_agent=OPERATOR_AGENT, resource=GRAPH_RESOURCE)


async def events(env: Env, name: str, reason: str) -> list[Any]:
    items = (await env.get("events"))["items"]
    return [e for e in items
            if e["involvedObject"]["name"] == name and e.get("reason") == reason]


async def decisions(env: Env) -> int:
    """Scaling decisions of the HPA so far (its SuccessfulRescale events, counted)."""
    return sum(int(e.get("count") or 1) for e in await events(env, ADAPTER, "SuccessfulRescale"))


async def start_graph(env: Env) -> None:
    await env.apply_example(GRAPH)
    await env.wait_ready(GRAPH, 120)
    await eventually(lambda: settled_at(env, 1), within=WITHIN, interval=0.5, what="the adapter")


# --- (1) kubectl scale ------------------------------------------------------------------


async def test_kubectl_scale_adapter(env: Env, operator: OperatorProcess) -> None:
    await start_graph(env)
    before = await worker_dcd(env, GRAPH, SERVICE)
    await env.k("scale", f"{DGDSA}/{ADAPTER}", "--replicas=3")
    await wait_settled(env, 3)
    assert await worker_dcd(env, GRAPH, SERVICE) == before  # scaling starts no generation
    out = await env.k("get", DGDSA, ADAPTER, "-o", "wide")
    header, row = out.splitlines()[:2]
    columns = dict(zip(header.split(), row.split(), strict=False))
    assert columns["REPLICAS"] == "3", out
    assert columns["DESIRED"] == "3", out
    assert columns["DGD"] == GRAPH, out
    assert columns["SERVICE"] == SERVICE, out
    await env.wait_ready(GRAPH, 120)


async def test_back_to_back_scale_requests_end_at_the_second(
        env: Env, operator: OperatorProcess) -> None:
    """Twenty rounds of two /scale writes less than 10 ms apart: the adapter and the graph end
    at the second value every time, and nothing is taken for a hand edit of the graph."""
    await start_graph(env)
    kube = await KubeClient.connect(env.kubeconfig, ClientConfig(qps=None))
    path = f"/apis/nvidia.com/v1alpha1/namespaces/{env.namespace}/" \
           f"dynamographdeploymentscalingadapters/{ADAPTER}/scale"
    try:
        for round_ in range(20):
            first, second = 2 + round_ % 2, 3 - round_ % 2
            for replicas in (first, second):
                await kube.request("PATCH", path, body={"spec": {"replicas": replicas}},
                                   content_type="application/merge-patch+json")

            async def at_second(n: int = second) -> bool:
                a = await adapter(env)
                return (await service_replicas(env) == n and a is not None
                        and a["spec"]["replicas"] == n
                        and (a.get("status") or {}).get("replicas") == n)
            await eventually(at_second, within=WITHIN, interval=0.05,
                             what=f"round {round_}: adapter and graph at {second}")
    finally:
        await kube.close()
    await asyncio.sleep(1.0)
    assert await service_replicas(env) == 2
    assert await events(env, ADAPTER, "Synced") == []
    await wait_settled(env, 2)


# --- (2) an HPA on an External metric --------------------------------------------------


async def test_hpa_scales_up_and_down_one_graph_write_per_decision(
        env: Env, needs_local: LocalCluster, operator: OperatorProcess) -> None:
    set_queue(needs_local, 10)  # 10 queued at 10 per replica: 1 replica, nothing to do
    await start_graph(env)
    await asyncio.sleep(1.0)  # the operator's own start-up writes are over
    before = graph_writes(needs_local)
    await env.k("apply", "-f", "-", stdin=hpa_manifest())

    set_queue(needs_local, 30)
    await wait_settled(env, 3)
    set_queue(needs_local, 10)
    await wait_settled(env, 1)

    async def hpa_settled() -> bool:
        hpa = await env.get("hpa", ADAPTER)
        status = hpa.get("status") or {}
        return bool(status.get("currentReplicas") == 1 and status.get("desiredReplicas") == 1)
    await eventually(hpa_settled, within=WITHIN, interval=0.5, what="the HPA at 1 replica")
    await asyncio.sleep(3.0)  # several HPA syncs: nothing moves any more
    assert await settled_at(env, 1)
    n = await decisions(env)
    assert n >= 2, await events(env, ADAPTER, "SuccessfulRescale")
    # One graph write per scaling decision: the adapter and the graph never fight.
    assert graph_writes(needs_local) - before == n, needs_local.stats.snapshot()
    assert await events(env, ADAPTER, "Synced") == []


# --- (3) a hand edit of the graph is adopted -------------------------------------------


async def test_hand_edit_of_graph_is_adopted_once(env: Env, operator: OperatorProcess) -> None:
    await start_graph(env)
    await env.k("patch", DGD, GRAPH, "--type=merge", "-p",
                json.dumps({"spec": {"services": {SERVICE: {"replicas": 2}}}}))
    await wait_settled(env, 2)

    async def synced() -> bool:
        return bool(await events(env, ADAPTER, "Synced"))
    await eventually(synced, within=WITHIN, interval=0.5, what="the Synced event")
    await asyncio.sleep(2.0)  # nothing more happens
    found = await events(env, ADAPTER, "Synced")
    assert len(found) == 1 and int(found[0].get("count") or 1) == 1, found
    assert "replicas=2" in found[0]["message"], found
    assert await settled_at(env, 2)


# --- (4) scale to zero and back ---------------------------------------------------------


async def test_scale_to_zero_and_back(env: Env, operator: OperatorProcess) -> None:
    await start_graph(env)
    await env.k("scale", f"{DGDSA}/{ADAPTER}", "--replicas=0")
    await wait_settled(env, 0)
    await env.k("scale", f"{DGDSA}/{ADAPTER}", "--replicas=2")
    await wait_settled(env, 2)
    await env.wait_ready(GRAPH, 120)


# --- (5) deleting the graph removes its adapters ---------------------------------------


async def test_delete_graph_removes_adapters(env: Env, operator: OperatorProcess) -> None:
    await start_graph(env)
    assert await env.names(DGDSA) == [ADAPTER]
    await env.k("delete", DGD, GRAPH, "--wait=true", "--timeout=120s")

    async def gone() -> bool:
        return not await env.names(DGDSA)
    await eventually(gone, within=WITHIN, interval=0.5, what="the adapter to be deleted")


# --- (6) disabling the adapter ---------------------------------------------------------


async def test_disable_adapter_keeps_replicas(env: Env, operator: OperatorProcess) -> None:
    await start_graph(env)
    await env.k("scale", f"{DGDSA}/{ADAPTER}", "--replicas=3")
    await wait_settled(env, 3)
    await env.k("patch", DGD, GRAPH, "--type=merge", "-p", json.dumps(
        {"spec": {"services": {SERVICE: {"scalingAdapter": {"enabled": False}}}}}))

    async def gone() -> bool:
        return not await env.names(DGDSA)
    await eventually(gone, within=WITHIN, interval=0.5, what="the adapter to be deleted")
    await asyncio.sleep(2.0)
    assert await service_replicas(env) == 3
    dep = await env.get("deploy", await worker_dcd(env, GRAPH, SERVICE))
    assert dep["spec"]["replicas"] == 3
    assert len(await worker_pods(env)) == 3
    await env.wait_ready(GRAPH, 120)


# --- (7) an HPA decision and a spec edit together --------------------------------------


async def test_hpa_change_and_image_edit_both_land(
        env: Env, needs_local: LocalCluster, operator: OperatorProcess) -> None:
    set_queue(needs_local, 10)
    await start_graph(env)
    await env.k("apply", "-f", "-", stdin=hpa_manifest())

    async def hpa_seen() -> bool:
        hpa = await env.get("hpa", ADAPTER)
        return (hpa.get("status") or {}).get("currentReplicas") == 1
    await eventually(hpa_seen, within=WITHIN, interval=0.5, what="the HPA to evaluate")

    set_queue(needs_local, 30)
    await env.k("patch", DGD, GRAPH, "--type=json", "-p", json.dumps([{
        "op": "replace", "path": f"/spec/services/{SERVICE}/extraPodSpec/mainContainer/image",
        "value": NEW_IMAGE}]))
    await wait_settled(env, 3, image=NEW_IMAGE)
    await env.wait_ready(GRAPH, 120)
    spec = await service_spec(env)
    assert spec is not None
    assert spec["extraPodSpec"]["mainContainer"]["image"] == NEW_IMAGE
    assert spec["replicas"] == 3
