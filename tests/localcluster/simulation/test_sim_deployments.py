"""Deployments through ReplicaSets: hashes, owners, statuses, rolling updates, scaling, GC."""

from __future__ import annotations

from typing import Any

from kubernetes_asyncio import client
from simulation_support import condition, deployment, eventually

from hack.localcluster.server import LocalCluster
from hack.localcluster.storage import Change

NS = "default"
Json = dict[str, Any]


async def rolled_out(apps: client.AppsV1Api, name: str) -> client.V1Deployment | None:
    d = await apps.read_namespaced_deployment(name, NS)
    s = d.status
    progressing = condition(d, "Progressing")
    if (s.observed_generation == d.metadata.generation and s.updated_replicas == d.spec.replicas
            and s.replicas == d.spec.replicas and s.available_replicas == d.spec.replicas
            and progressing is not None and progressing.reason == "NewReplicaSetAvailable"):
        return d
    return None


async def test_deployment_creates_replicaset_and_pods(apps: client.AppsV1Api,
                                                       core: client.CoreV1Api) -> None:
    await apps.create_namespaced_deployment(NS, deployment("web", replicas=3))
    d = await eventually(lambda: rolled_out(apps, "web"))
    assert (d.status.ready_replicas, d.status.unavailable_replicas) == (3, None)
    available = condition(d, "Available")
    assert (available.status, available.reason, available.message) == (
        "True", "MinimumReplicasAvailable", "Deployment has minimum availability.")
    assert [c.type for c in d.status.conditions] == ["Available", "Progressing"]
    assert d.metadata.annotations["deployment.kubernetes.io/revision"] == "1"

    rs_list = (await apps.list_namespaced_replica_set(NS)).items
    assert len(rs_list) == 1
    rs = rs_list[0]
    pod_hash = rs.metadata.labels["pod-template-hash"]
    assert rs.metadata.name == f"web-{pod_hash}"
    assert rs.spec.selector.match_labels == {"app": "web", "pod-template-hash": pod_hash}
    assert rs.metadata.annotations["deployment.kubernetes.io/revision"] == "1"
    assert rs.metadata.annotations["deployment.kubernetes.io/desired-replicas"] == "3"
    assert rs.metadata.annotations["deployment.kubernetes.io/max-replicas"] == "4"
    ref = rs.metadata.owner_references[0]
    assert (ref.kind, ref.name, ref.uid, ref.controller, ref.block_owner_deletion) == (
        "Deployment", "web", d.metadata.uid, True, True)
    assert (rs.status.replicas, rs.status.ready_replicas, rs.status.available_replicas,
            rs.status.fully_labeled_replicas, rs.status.observed_generation) == (3, 3, 3, 3, 1)

    pods = (await core.list_namespaced_pod(NS, label_selector="app=web")).items
    assert len(pods) == 3
    for p in pods:
        assert p.metadata.name.startswith(f"web-{pod_hash}-")
        assert p.metadata.labels["pod-template-hash"] == pod_hash
        pref = p.metadata.owner_references[0]
        assert (pref.kind, pref.name, pref.controller, pref.block_owner_deletion) == (
            "ReplicaSet", rs.metadata.name, True, True)


async def test_status_while_pods_are_not_ready(apps: client.AppsV1Api,
                                               sim_cluster: LocalCluster) -> None:
    assert sim_cluster.simulation is not None
    sim_cluster.simulation.behaviors.set_ready(NS, False, selector="app=slow")
    await apps.create_namespaced_deployment(NS, deployment("slow", replicas=2))

    async def waiting() -> client.V1Deployment | None:
        d = await apps.read_namespaced_deployment("slow", NS)
        return d if d.status.replicas == 2 and d.status.updated_replicas == 2 else None

    d = await eventually(waiting)
    assert d.status.available_replicas is None and d.status.unavailable_replicas == 2
    available, progressing = condition(d, "Available"), condition(d, "Progressing")
    assert (available.status, available.reason) == ("False", "MinimumReplicasUnavailable")
    assert progressing.status == "True"
    assert progressing.reason in ("NewReplicaSetCreated", "ReplicaSetUpdated")
    sim_cluster.simulation.behaviors.set_ready(NS, True, selector="app=slow")
    await eventually(lambda: rolled_out(apps, "slow"))


async def test_rolling_update_respects_surge_and_unavailability(
        apps: client.AppsV1Api, core: client.CoreV1Api, sim_cluster: LocalCluster) -> None:
    body = deployment("roll", replicas=4, probe=True)
    body["spec"]["strategy"] = {"type": "RollingUpdate",
                                "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    await apps.create_namespaced_deployment(NS, body)
    await eventually(lambda: rolled_out(apps, "roll"))

    seen = {"max_active": 0, "min_ready": 4}

    def pods_of_roll() -> list[Json]:
        return [p for p in sim_cluster.storage.list_objects(("", "pods"), NS)
                if p["metadata"].get("labels", {}).get("app") == "roll"
                and not p["metadata"].get("deletionTimestamp")]

    def watch(change: Change) -> None:
        if change.resource != ("", "pods"):
            return
        active = pods_of_roll()
        ready = [p for p in active if any(c["type"] == "Ready" and c["status"] == "True"
                                          for c in p.get("status", {}).get("conditions", []))]
        seen["max_active"] = max(seen["max_active"], len(active))
        seen["min_ready"] = min(seen["min_ready"], len(ready))

    sim_cluster.storage.add_listener(watch)
    await apps.patch_namespaced_deployment("roll", NS, {"spec": {"template": {"spec": {
        "containers": [{"name": "app", "image": "nginx:1.28"}]}}}})
    d = await eventually(lambda: rolled_out(apps, "roll"))
    assert d.metadata.generation == 2 and d.status.observed_generation == 2
    assert d.metadata.annotations["deployment.kubernetes.io/revision"] == "2"
    assert seen["max_active"] <= 5, seen
    assert seen["min_ready"] >= 4, seen

    rs_list = (await apps.list_namespaced_replica_set(NS)).items
    by_revision = {rs.metadata.annotations["deployment.kubernetes.io/revision"]: rs
                   for rs in rs_list}
    assert by_revision["1"].spec.replicas == 0 and by_revision["2"].spec.replicas == 4
    events = {e.message for e in (await core.list_namespaced_event(NS)).items
              if e.reason == "ScalingReplicaSet"}
    old, new = by_revision["1"].metadata.name, by_revision["2"].metadata.name
    assert f"Scaled up replica set {new} from 0 to 1" in events
    assert f"Scaled down replica set {old} from 4 to 3" in events
    pods = (await core.list_namespaced_pod(NS, label_selector="app=roll")).items
    images = {p.spec.containers[0].image for p in pods if not p.metadata.deletion_timestamp}
    assert images == {"nginx:1.28"}


async def test_scale_up_and_down(apps: client.AppsV1Api, core: client.CoreV1Api) -> None:
    await apps.create_namespaced_deployment(NS, deployment("scale", replicas=1))
    await eventually(lambda: rolled_out(apps, "scale"))
    await apps.patch_namespaced_deployment_scale("scale", NS, {"spec": {"replicas": 5}})
    d = await eventually(lambda: rolled_out(apps, "scale"))
    assert d.status.ready_replicas == 5
    await apps.patch_namespaced_deployment_scale("scale", NS, {"spec": {"replicas": 2}})
    d = await eventually(lambda: rolled_out(apps, "scale"))
    assert d.status.replicas == 2

    async def two_pods() -> bool:
        pods = (await core.list_namespaced_pod(NS, label_selector="app=scale")).items
        return len(pods) == 2

    await eventually(two_pods)
    await apps.patch_namespaced_deployment_scale("scale", NS, {"spec": {"replicas": 0}})

    async def empty() -> client.V1Deployment | None:
        d = await apps.read_namespaced_deployment("scale", NS)
        return d if d.status.replicas is None and d.status.observed_generation == \
            d.metadata.generation else None

    d = await eventually(empty)
    assert condition(d, "Available").status == "True"


async def test_recreate_strategy(apps: client.AppsV1Api, core: client.CoreV1Api) -> None:
    body = deployment("rec", replicas=2)
    body["spec"]["strategy"] = {"type": "Recreate"}
    await apps.create_namespaced_deployment(NS, body)
    await eventually(lambda: rolled_out(apps, "rec"))
    await apps.patch_namespaced_deployment("rec", NS, {"spec": {"template": {"metadata": {
        "annotations": {"restartedAt": "now"}}}}})
    await eventually(lambda: rolled_out(apps, "rec"))
    rs_list = (await apps.list_namespaced_replica_set(NS)).items
    assert sorted(rs.spec.replicas for rs in rs_list) == [0, 2]


async def test_deleting_a_deployment_collects_its_replicasets_and_pods(
        apps: client.AppsV1Api, core: client.CoreV1Api) -> None:
    await apps.create_namespaced_deployment(NS, deployment("gc", replicas=2))
    await eventually(lambda: rolled_out(apps, "gc"))
    await apps.delete_namespaced_deployment("gc", NS)

    async def all_gone() -> bool:
        rs = (await apps.list_namespaced_replica_set(NS)).items
        pods = (await core.list_namespaced_pod(NS, label_selector="app=gc")).items
        return not rs and not pods

    await eventually(all_gone)


async def test_revision_history_limit(apps: client.AppsV1Api) -> None:
    body = deployment("hist", replicas=1)
    body["spec"]["revisionHistoryLimit"] = 1
    await apps.create_namespaced_deployment(NS, body)
    for tag in ("1.1", "1.2", "1.3"):
        await eventually(lambda: rolled_out(apps, "hist"))
        await apps.patch_namespaced_deployment("hist", NS, {"spec": {"template": {"spec": {
            "containers": [{"name": "app", "image": f"nginx:{tag}"}]}}}})
    await eventually(lambda: rolled_out(apps, "hist"))

    async def two_left() -> list[client.V1ReplicaSet] | None:
        items = (await apps.list_namespaced_replica_set(NS)).items
        return items if len(items) == 2 else None

    revisions = sorted(int(rs.metadata.annotations["deployment.kubernetes.io/revision"])
                       for rs in await eventually(two_left))
    assert revisions == [3, 4]
