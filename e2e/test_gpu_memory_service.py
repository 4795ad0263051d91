"""GPU memory service and shadow-engine failover on DRA (issue #29 item 3), end to end: the
operator process renders a GMS graph and a failover graph; the simulated NVIDIA DRA driver's
devices are allocated to each worker pod's claim (made from the graph's ResourceClaimTemplate
by the resourceclaim controller) and the pods run on the nodes holding those devices; the
graphs reach Ready. A claim the cluster cannot allocate leaves its pod Pending with the
scheduler's words."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from e2e_support import DGD, Env, OperatorProcess, eventually
from grove_support import apply, gms_fixture, on_grove

from hack.localcluster.server import LocalCluster

CLAIM = "intrapod-shared-gpu"
BETA_DGD = "dynamographdeployments.v1beta1.nvidia.com"


async def worker_pods(env: Env, graph: str, component: str) -> list[dict[str, Any]]:
    selector = (f"nvidia.com/dynamo-graph-deployment-name={graph},"
                f"nvidia.com/dynamo-component={component}")
    items: list[dict[str, Any]] = (await env.get("pods", selector=selector))["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


async def claims_of(env: Env, pod: dict[str, Any]) -> list[dict[str, Any]]:
    """The ResourceClaims generated for a pod (named in its status)."""
    names = [s["resourceClaimName"] for s in pod["status"].get("resourceClaimStatuses") or []]
    return [await env.get("resourceclaims", n) for n in names]


async def check_allocated(env: Env, graph: str, component: str, gpus: int,
                          template: str) -> list[dict[str, Any]]:
    """Every worker pod runs with its claim allocated `gpus` devices of its own node's slice;
    the pods as they are."""
    pods = await worker_pods(env, graph, component)
    assert pods, f"no {component} pods"
    slices = {s["spec"]["nodeName"]: {d["name"] for d in s["spec"]["devices"]}
              for s in (await env.get("resourceslices"))["items"]}
    seen: set[tuple[str, str]] = set()
    for pod in pods:
        assert pod["status"]["phase"] == "Running", pod["status"]
        node = pod["spec"]["nodeName"]
        assert pod["spec"]["resourceClaims"] == [
            {"name": CLAIM, "resourceClaimTemplateName": template}]
        claims = await claims_of(env, pod)
        assert len(claims) == 1
        claim = claims[0]
        owner = claim["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["uid"]) == ("Pod", pod["metadata"]["uid"])
        allocation = claim["status"]["allocation"]
        results = allocation["devices"]["results"]
        assert len(results) == gpus
        assert all(r["pool"] == node and r["device"] in slices[node] for r in results)
        terms = allocation["nodeSelector"]["nodeSelectorTerms"]
        assert terms[0]["matchFields"][0]["values"] == [node]
        assert [r["uid"] for r in claim["status"]["reservedFor"]] == [pod["metadata"]["uid"]]
        for r in results:
            assert (node, r["device"]) not in seen, "a device in two claims"
            seen.add((node, r["device"]))
    return pods


async def test_a_gms_graph_runs_with_its_claims_allocated(
        env: Env, operator: OperatorProcess) -> None:
    await apply(env, gms_fixture("gms.v1beta1.yaml"))
    await env.wait_ready("vllm-agg-gms", 120)
    template = await env.get("resourceclaimtemplates", "vllm-agg-gms-vllmworker-gpu")
    owner = template["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"]) == ("DynamoGraphDeployment", "vllm-agg-gms")
    request = template["spec"]["spec"]["devices"]["requests"][0]
    assert request["exactly"]["count"] == 1
    assert request["exactly"]["deviceClassName"] == "gpu.nvidia.com"
    pods = await check_allocated(env, "vllm-agg-gms", "VllmWorker", 1,
                                 "vllm-agg-gms-vllmworker-gpu")
    for pod in pods:
        server = pod["status"]["initContainerStatuses"][0]
        assert server["name"] == "gms-server" and server["started"] is True
        main = next(c for c in pod["spec"]["containers"] if c["name"] == "main")
        assert main["resources"] == {"claims": [{"name": CLAIM}]}


async def test_a_failover_graph_runs_both_engines_on_one_claim(
        env: Env, operator: OperatorProcess) -> None:
    graph = gms_fixture("failover.v1alpha1.yaml")  # written as v1alpha1: enabled switches
    await apply(env, graph)
    await env.wait_ready("vllm-agg-failover", 120)
    # Read back in v1beta1 (the conversion webhook's): the switches are gone, modes respelled.
    stored = await env.get(BETA_DGD, "vllm-agg-failover")
    worker = next(c for c in stored["spec"]["components"] if c["name"] == "worker")
    assert worker["experimental"]["failover"] == {"mode": "IntraPod", "numShadows": 1}
    assert worker["experimental"]["gpuMemoryService"] == {
        "mode": "IntraPod", "deviceClassName": "gpu.nvidia.com"}
    alpha = (await env.get(DGD, "vllm-agg-failover"))["spec"]["services"]["worker"]
    assert alpha["failover"] == {"enabled": True, "mode": "intraPod", "numShadows": 1}
    pods = await check_allocated(env, "vllm-agg-failover", "worker", 2,
                                 "vllm-agg-failover-worker-gpu")
    for pod in pods:
        assert sorted(c["name"] for c in pod["spec"]["containers"]) == ["engine-0", "engine-1"]
        statuses = {s["name"]: s for s in pod["status"]["containerStatuses"]}
        assert all(statuses[e]["ready"] for e in ("engine-0", "engine-1")), statuses
        for container in pod["spec"]["containers"]:
            assert container["resources"] == {"claims": [{"name": CLAIM}]}


async def test_a_claim_the_cluster_cannot_allocate_leaves_the_pod_pending(
        env: Env, operator: OperatorProcess) -> None:
    graph = gms_fixture("gms.v1beta1.yaml")
    graph["metadata"]["name"] = "too-big"
    worker = graph["spec"]["components"][1]
    worker["podTemplate"]["spec"]["containers"][0]["resources"]["limits"][
        "nvidia.com/gpu"] = "9"  # more than any node's 8
    await apply(env, graph)

    async def pending() -> bool:
        pods = await worker_pods(env, "too-big", "VllmWorker")
        if not pods:
            return False
        conditions = {c["type"]: c for c in pods[0]["status"].get("conditions") or []}
        scheduled = conditions.get("PodScheduled") or {}
        return ("cannot allocate all claims" in str(scheduled.get("message"))
                and scheduled.get("status") == "False")
    await eventually(pending, within=60, what="the worker pod Pending: cannot allocate claims")
    pod = (await worker_pods(env, "too-big", "VllmWorker"))[0]
    assert pod["status"]["phase"] == "Pending" and not pod["spec"].get("nodeName")
    claim = (await claims_of(env, pod))[0]
    assert not (claim.get("status") or {}).get("allocation")


async def test_on_grove_the_failover_cliques_run_on_their_claims(
        env: Env, needs_local: LocalCluster,
        operators: Callable[..., Awaitable[OperatorProcess]]) -> None:
    await on_grove(env, operators)
    await apply(env, gms_fixture("failover.v1beta1.yaml"))
    await env.wait_ready("vllm-agg-failover", 120)
    assert await env.get("podcliquesets", "vllm-agg-failover") is not None
    pods = await check_allocated(env, "vllm-agg-failover", "worker", 2,
                                 "vllm-agg-failover-worker-gpu")
    for pod in pods:
        assert sorted(c["name"] for c in pod["spec"]["containers"]) == ["engine-0", "engine-1"]
