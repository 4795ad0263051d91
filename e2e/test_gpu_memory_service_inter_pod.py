"""Inter-pod GPU memory service and inter-pod failover on Grove and DRA (issue #29), end to
end: the operator process renders each graph as a PodCliqueSet whose scaling group holds, per
node rank, a weight-server clique and an engine clique; the simulated Grove makes one claim
per rank and group replica from the PodCliqueSet's templates and hands it to both cliques'
pods, which the scheduler places on the node holding the claim's devices; the graphs reach
Ready. An inter-pod failover engine that ends takes its engine group (the same shadow across
the ranks) down, for Grove to make anew. Without Grove the graph is refused naming the
field."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from e2e_support import Env, OperatorProcess, eventually
from grove_support import apply, gms_fixture, on_grove

from hack.localcluster.server import LocalCluster


async def pods_of(env: Env, graph: str, component: str) -> list[dict[str, Any]]:
    selector = (f"nvidia.com/dynamo-graph-deployment-name={graph},"
                f"nvidia.com/dynamo-component={component}")
    items: list[dict[str, Any]] = (await env.get("pods", selector=selector))["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


async def check_shared(env: Env, graph: str, component: str, gpus: int
                       ) -> dict[str, list[dict[str, Any]]]:
    """Every pod runs on its one shared claim, allocated `gpus` devices of the pod's node and
    reserved for all the pods that name it; the pods by claim."""
    by_claim: dict[str, list[dict[str, Any]]] = {}
    for pod in await pods_of(env, graph, component):
        assert pod["status"]["phase"] == "Running", pod["status"]
        claims = pod["spec"]["resourceClaims"]
        assert len(claims) == 1 and claims[0]["name"] == claims[0]["resourceClaimName"]
        for container in pod["spec"]["containers"]:
            assert container["resources"].get("claims") == [{"name": claims[0]["name"]}]
            assert "nvidia.com/gpu" not in (container["resources"].get("limits") or {})
        by_claim.setdefault(claims[0]["resourceClaimName"], []).append(pod)
    for name, pods in by_claim.items():
        claim = await env.get("resourceclaims", name)
        assert claim["metadata"]["ownerReferences"][0]["kind"] == "PodCliqueScalingGroup"
        results = claim["status"]["allocation"]["devices"]["results"]
        assert len(results) == gpus
        nodes = {p["spec"]["nodeName"] for p in pods}
        assert len(nodes) == 1 and all(r["pool"] in nodes for r in results)
        assert sorted(r["uid"] for r in claim["status"]["reservedFor"]) == sorted(
            p["metadata"]["uid"] for p in pods)
    return by_claim


async def settled_shared(env: Env, graph: str, component: str, gpus: int
                         ) -> dict[str, list[dict[str, Any]]]:
    """`check_shared` once it holds (a pod Grove is still replacing may be starting when the
    graph turns Ready), within a minute; its last failure otherwise."""
    found: dict[str, list[dict[str, Any]]] = {}
    failure: AssertionError | None = None

    async def holds() -> bool:
        nonlocal found, failure
        try:
            found = await check_shared(env, graph, component, gpus)
        except AssertionError as err:
            failure = err
            return False
        return True
    try:
        await eventually(holds, within=60, what=f"the {component} pods on their shared claims")
    except AssertionError:
        raise AssertionError(f"not settled: {failure!r}") from None
    return found


def kinds(pods: list[dict[str, Any]]) -> list[str]:
    """Each pod's containers, as "gms" (a weight server) or "engine"."""
    return sorted("gms" if any(c["name"] == "gms-weights" for c in p["spec"]["containers"])
                  else "engine" for p in pods)


async def test_an_inter_pod_gms_graph_runs_weight_servers_beside_engines(
        env: Env, needs_local: LocalCluster,
        operators: Callable[..., Awaitable[OperatorProcess]]) -> None:
    await on_grove(env, operators)
    graph = gms_fixture("gms-interpod.v1beta1.yaml")
    # The simulated driver's class (the fixture names another, which the render tests read).
    del graph["spec"]["components"][1]["experimental"]["gpuMemoryService"]["deviceClassName"]
    await apply(env, graph)
    await env.wait_ready("vllm-interpod-gms", 120)
    group = await env.get("podcliquescalinggroups", "vllm-interpod-gms-0-vllmworker")
    assert group["spec"]["replicas"] == 2
    by_claim = await settled_shared(env, "vllm-interpod-gms", "VllmWorker", 2)
    # One claim per group replica, each shared by its weight server and its engine.
    assert sorted(by_claim) == [f"vllm-interpod-gms-0-vllmworker-{j}-vllmworker-gpu-rank-0"
                                for j in (0, 1)]
    for pods in by_claim.values():
        assert kinds(pods) == ["engine", "gms"]
    # A third replica is a third weight-server + engine pair on a claim of its own.
    graph["spec"]["components"][1]["replicas"] = 3
    await apply(env, graph)

    async def three() -> bool:
        group = await env.get("podcliquescalinggroups", "vllm-interpod-gms-0-vllmworker")
        return int((group.get("status") or {}).get("availableReplicas") or 0) == 3
    await eventually(three, within=90, what="three replicas of the scaling group available")
    await env.wait_ready("vllm-interpod-gms", 120)
    by_claim = await settled_shared(env, "vllm-interpod-gms", "VllmWorker", 2)
    assert len(by_claim) == 3 and all(kinds(p) == ["engine", "gms"] for p in by_claim.values())


async def test_an_inter_pod_failover_graph_runs_every_rank_on_its_claim(
        env: Env, needs_local: LocalCluster,
        operators: Callable[..., Awaitable[OperatorProcess]]) -> None:
    await on_grove(env, operators)
    await apply(env, gms_fixture("failover-interpod.v1alpha1.yaml"))  # enabled switches
    await env.wait_ready("vllm-interpod-failover", 120)
    by_claim = await settled_shared(env, "vllm-interpod-failover", "worker", 2)
    prefix = "vllm-interpod-failover-0-worker-0-worker-gpu-rank-"
    assert sorted(by_claim) == [f"{prefix}0", f"{prefix}1"]
    for pods in by_claim.values():
        # The weight server, the primary and its two shadows of one rank.
        assert kinds(pods) == ["engine", "engine", "engine", "gms"]
        engines = [p for p in pods if kinds([p]) == ["engine"]]
        assert all(p["spec"]["restartPolicy"] == "Never" for p in engines)
        assert all(p["metadata"]["labels"][
            "nvidia.com/dynamo-failover-engine-group-member"] == "true" for p in engines)


async def test_an_ended_failover_engine_takes_its_engine_group_down_for_grove_to_remake(
        env: Env, needs_local: LocalCluster,
        operators: Callable[..., Awaitable[OperatorProcess]]) -> None:
    await on_grove(env, operators)
    await apply(env, gms_fixture("failover-interpod.v1beta1.yaml"))
    await env.wait_ready("vllm-interpod-failover", 120)
    before = {p["metadata"]["uid"]: p for p in await pods_of(
        env, "vllm-interpod-failover", "worker")}

    def index(pod: dict[str, Any]) -> str:
        return str(pod["metadata"]["labels"]["grove.io/podclique-pod-index"])

    engines = [p for p in before.values() if kinds([p]) == ["engine"]]
    group = {p["metadata"]["uid"] for p in engines if index(p) == "1"}
    assert len(group) == 2  # the first shadow of each of the two ranks
    victim = next(p for p in engines if index(p) == "1")["metadata"]["name"]
    # The simulated engine exits; with restartPolicy Never its pod fails.
    await env.k("annotate", "pod", victim, "localcluster.dev/mode=crashloop")

    async def remade() -> bool:
        now = await pods_of(env, "vllm-interpod-failover", "worker")
        uids = {p["metadata"]["uid"] for p in now}
        running = all(p["status"].get("phase") == "Running" for p in now)
        return not (uids & group) and len(now) == len(before) and running
    await eventually(remade, within=90, what="the engine group deleted and made anew")
    after = {p["metadata"]["uid"] for p in await pods_of(
        env, "vllm-interpod-failover", "worker")}
    # Only that group went: the weight servers, primaries and other shadows stayed.
    assert set(before) - after == group
    events = (await env.get("events"))["items"]
    assert any(e["reason"] == "FailoverCascade" and e["involvedObject"]["name"] == victim
               and e["type"] == "Warning" for e in events)
    await env.wait_ready("vllm-interpod-failover", 120)


async def test_without_grove_the_inter_pod_layout_is_refused_naming_the_field(
        env: Env, operator: OperatorProcess) -> None:
    graph = gms_fixture("gms-interpod.v1beta1.yaml")
    del graph["spec"]["components"][1]["experimental"]["gpuMemoryService"]["deviceClassName"]
    await apply(env, graph)
    condition = await env.wait_reason("vllm-interpod-gms", "gpuMemoryService.mode",
                                      "requires the Grove pathway", within=60)
    assert condition["status"] == "False"

