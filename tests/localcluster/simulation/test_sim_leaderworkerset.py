"""The LeaderWorkerSet controller, once hack/crds/leaderworkerset.yaml is installed."""

from __future__ import annotations

from typing import Any

from kubernetes_asyncio import client
from simulation_support import eventually, install_crds, pod_template, status_condition

from hack.localcluster.server import LocalCluster

NS = "default"
GROUP, VERSION, PLURAL = "leaderworkerset.x-k8s.io", "v1", "leaderworkersets"
Json = dict[str, Any]
MERGE = "application/merge-patch+json"


def lws(name: str, replicas: int, size: int, image: str = "vllm:1") -> Json:
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "LeaderWorkerSet",
            "metadata": {"name": name},
            "spec": {"replicas": replicas, "leaderWorkerTemplate": {
                "size": size,
                "leaderTemplate": pod_template({"role": "leader"}, image=image),
                "workerTemplate": pod_template({"role": "worker"}, image=image, gpus=8)}}}


async def read(custom: client.CustomObjectsApi, name: str) -> Json:
    obj: Json = await custom.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, name)
    return obj


async def all_ready(custom: client.CustomObjectsApi, name: str, replicas: int) -> Json | None:
    obj = await read(custom, name)
    status = obj.get("status") or {}
    available = status_condition(obj, "Available")
    if (status.get("observedGeneration") == obj["metadata"]["generation"]
            and status.get("readyReplicas") == replicas
            and status.get("updatedReplicas") == replicas
            and status.get("replicas") == replicas and available is not None
            and available["status"] == "True"):
        return obj
    return None


async def test_groups_of_leader_and_workers(sim_api: client.ApiClient,
                                            custom: client.CustomObjectsApi,
                                            core: client.CoreV1Api) -> None:
    await install_crds(sim_api, "leaderworkerset.yaml")
    await custom.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, lws("llm", 2, 3))
    obj = await eventually(lambda: all_ready(custom, "llm", 2))
    status = obj["status"]
    assert status["observedGeneration"] == 1
    assert status["hpaPodSelector"] == ("leaderworkerset.sigs.k8s.io/name=llm,"
                                        "leaderworkerset.sigs.k8s.io/worker-index=0")
    available = status_condition(obj, "Available")
    assert available is not None
    assert (available["reason"], available["message"]) == ("AllGroupsReady",
                                                           "All replicas are ready")
    pods = {p.metadata.name: p for p in (await core.list_namespaced_pod(
        NS, label_selector="leaderworkerset.sigs.k8s.io/name=llm")).items}
    assert sorted(pods) == ["llm-0", "llm-0-1", "llm-0-2", "llm-1", "llm-1-1", "llm-1-2"]
    worker = pods["llm-1-2"]
    labels = worker.metadata.labels
    assert (labels["leaderworkerset.sigs.k8s.io/group-index"],
            labels["leaderworkerset.sigs.k8s.io/worker-index"], labels["role"]) == (
        "1", "2", "worker")
    assert labels["leaderworkerset.sigs.k8s.io/group-key"] == \
        pods["llm-1"].metadata.labels["leaderworkerset.sigs.k8s.io/group-key"]
    assert worker.metadata.annotations["leaderworkerset.sigs.k8s.io/leader-name"] == "llm-1"
    assert worker.metadata.annotations["leaderworkerset.sigs.k8s.io/size"] == "3"
    env = {e.name: e.value for e in worker.spec.containers[0].env}
    assert env == {"LWS_LEADER_ADDRESS": "llm-1.llm.default", "LWS_GROUP_SIZE": "3",
                   "LWS_WORKER_INDEX": "2"}
    assert (worker.spec.hostname, worker.spec.subdomain) == ("llm-1-2", "llm")
    assert pods["llm-0"].metadata.labels["role"] == "leader"
    ref = worker.metadata.owner_references[0]
    assert (ref.kind, ref.name, ref.controller) == ("LeaderWorkerSet", "llm", True)
    headless = await core.read_namespaced_service("llm", NS)
    assert headless.spec.cluster_ip == "None"


async def test_scale_and_rolling_update(sim_api: client.ApiClient,
                                        custom: client.CustomObjectsApi,
                                        core: client.CoreV1Api) -> None:
    await install_crds(sim_api, "leaderworkerset.yaml")
    await custom.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, lws("s", 1, 2))
    await eventually(lambda: all_ready(custom, "s", 1))
    await custom.patch_namespaced_custom_object_scale(
        GROUP, VERSION, NS, PLURAL, "s", {"spec": {"replicas": 3}}, _content_type=MERGE)
    await eventually(lambda: all_ready(custom, "s", 3))
    scale = await custom.get_namespaced_custom_object_scale(GROUP, VERSION, NS, PLURAL, "s")
    assert scale["status"]["replicas"] == 3

    seen_updating = []

    async def updated() -> Json | None:
        obj = await read(custom, "s")
        c = status_condition(obj, "UpdateInProgress")
        if c is not None and c["status"] == "True":
            seen_updating.append(c["reason"])
        return await all_ready(custom, "s", 3)

    body = lws("s", 3, 2, image="vllm:2")
    await custom.patch_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "s",
                                                {"spec": body["spec"]}, _content_type=MERGE)
    obj = await eventually(updated)
    assert seen_updating and seen_updating[0] == "GroupsUpdating"
    assert status_condition(obj, "UpdateInProgress")["status"] == "False"  # type: ignore[index]
    pods = (await core.list_namespaced_pod(
        NS, label_selector="leaderworkerset.sigs.k8s.io/name=s")).items
    live = [p for p in pods if not p.metadata.deletion_timestamp]
    assert len(live) == 6 and {p.spec.containers[0].image for p in live} == {"vllm:2"}


async def test_a_lost_worker_recreates_its_group(sim_api: client.ApiClient,
                                                 custom: client.CustomObjectsApi,
                                                 core: client.CoreV1Api,
                                                 sim_cluster: LocalCluster) -> None:
    await install_crds(sim_api, "leaderworkerset.yaml")
    await custom.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, lws("g", 1, 2))
    await eventually(lambda: all_ready(custom, "g", 1))
    leader_uid = (await core.read_namespaced_pod("g-0", NS)).metadata.uid
    sim_cluster.faults.kill_pods(NS, name="g-0-1")

    async def recreated() -> Json | None:
        try:
            leader = await core.read_namespaced_pod("g-0", NS)
        except client.ApiException:
            return None
        if leader.metadata.uid == leader_uid:
            return None
        return await all_ready(custom, "g", 1)

    await eventually(recreated)
