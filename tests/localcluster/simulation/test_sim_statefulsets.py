"""The simulated StatefulSet and ReplicationController controllers."""

from __future__ import annotations

from typing import Any

from kubernetes_asyncio import client
from simulation_support import eventually, pod_template

from hack.localcluster.server import LocalCluster

NS = "default"
Json = dict[str, Any]


def statefulset(name: str, replicas: int = 3, *, parallel: bool = False,
                **template: Any) -> Json:
    labels = {"app": name}
    spec: Json = {"replicas": replicas, "serviceName": name,
                  "selector": {"matchLabels": labels},
                  "template": pod_template(labels, **template)}
    if parallel:
        spec["podManagementPolicy"] = "Parallel"
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name},
            "spec": spec}


async def pods_of(core: client.CoreV1Api, app: str) -> dict[str, client.V1Pod]:
    return {p.metadata.name: p for p in (await core.list_namespaced_pod(
        NS, label_selector=f"app={app}")).items}


def ready(p: client.V1Pod) -> bool:
    return p.status.phase == "Running" and any(
        c.type == "Ready" and c.status == "True" for c in p.status.conditions or [])


async def settled(apps: client.AppsV1Api, name: str, replicas: int) -> client.V1StatefulSet | None:
    s = await apps.read_namespaced_stateful_set(name, NS)
    st = s.status
    if (st.observed_generation == s.metadata.generation and st.replicas == replicas
            and (st.ready_replicas or 0) == replicas and (st.updated_replicas or 0) == replicas
            and st.current_revision == st.update_revision):
        return s
    return None


async def test_ordered_ready_creates_one_pod_at_a_time(
        apps: client.AppsV1Api, core: client.CoreV1Api, sim_cluster: LocalCluster) -> None:
    assert sim_cluster.simulation is not None
    # Pod 1 never gets ready: pod 2 must not be created while it is not.
    sim_cluster.simulation.behaviors.set_ready(NS, False, name="db-1")
    await apps.create_namespaced_stateful_set(NS, statefulset("db", probe=True))

    async def two() -> bool:
        pods = await pods_of(core, "db")
        return set(pods) == {"db-0", "db-1"} and pods["db-1"].status.phase == "Running"

    await eventually(two)
    await sim_cluster.simulation.settle()
    assert set(await pods_of(core, "db")) == {"db-0", "db-1"}
    sim_cluster.simulation.behaviors.set_ready(NS, True, name="db-1")
    s = await eventually(lambda: settled(apps, "db", 3))
    pods = await pods_of(core, "db")
    assert sorted(pods) == ["db-0", "db-1", "db-2"]
    # Each came after the one before it was ready.
    started = [pods[f"db-{i}"].metadata.creation_timestamp for i in range(3)]
    assert started == sorted(started)
    p = pods["db-2"]
    assert p.metadata.labels["statefulset.kubernetes.io/pod-name"] == "db-2"
    assert p.metadata.labels["apps.kubernetes.io/pod-index"] == "2"
    assert p.metadata.labels["controller-revision-hash"] == s.status.update_revision
    assert s.status.update_revision.startswith("db-")
    assert (p.spec.hostname, p.spec.subdomain) == ("db-2", "db")
    ref = p.metadata.owner_references[0]
    assert (ref.kind, ref.name, ref.controller, ref.uid) == (
        "StatefulSet", "db", True, s.metadata.uid)
    assert (s.status.available_replicas, s.status.current_replicas) == (3, 3)
    assert s.status.collision_count == 0
    revisions = (await apps.list_namespaced_controller_revision(NS)).items
    assert [(r.metadata.name, r.revision) for r in revisions] == [
        (s.status.update_revision, 1)]
    assert revisions[0].metadata.owner_references[0].name == "db"


async def test_scale_down_from_the_highest_ordinal(
        apps: client.AppsV1Api, core: client.CoreV1Api) -> None:
    await apps.create_namespaced_stateful_set(NS, statefulset("web", replicas=4))
    await eventually(lambda: settled(apps, "web", 4))
    await apps.patch_namespaced_stateful_set_scale("web", NS, {"spec": {"replicas": 1}})
    seen: list[list[str]] = []

    async def down_to_one() -> client.V1StatefulSet | None:
        pods = await pods_of(core, "web")
        # One at a time from the top: what is left is always web-0 .. web-k, and at most
        # one of them is terminating.
        assert sorted(pods) == [f"web-{i}" for i in range(len(pods))], sorted(pods)
        assert sum(1 for p in pods.values() if p.metadata.deletion_timestamp) <= 1
        seen.append(sorted(pods))
        return await settled(apps, "web", 1)

    s = await eventually(down_to_one, interval=0.005)
    assert sorted(await pods_of(core, "web")) == ["web-0"]
    deleted = {e.message for e in (await core.list_namespaced_event(NS)).items
               if e.reason == "SuccessfulDelete" and e.involved_object.name == "web"}
    assert deleted == {f"delete Pod web-{i} in StatefulSet web successful" for i in (3, 2, 1)}
    assert s.status.replicas == 1


async def test_parallel_creates_all_at_once(
        apps: client.AppsV1Api, core: client.CoreV1Api, sim_cluster: LocalCluster) -> None:
    assert sim_cluster.simulation is not None
    sim_cluster.simulation.behaviors.set_ready(NS, False, selector="app=par")
    await apps.create_namespaced_stateful_set(NS, statefulset("par", parallel=True))

    async def three() -> bool:
        return len(await pods_of(core, "par")) == 3

    await eventually(three)  # none of them is ready, yet all three exist


async def test_rolling_update_from_the_highest_ordinal(
        apps: client.AppsV1Api, core: client.CoreV1Api) -> None:
    await apps.create_namespaced_stateful_set(NS, statefulset("roll"))
    first = await eventually(lambda: settled(apps, "roll", 3))
    old = first.status.current_revision
    await apps.patch_namespaced_stateful_set("roll", NS, {"spec": {"template": {"spec": {
        "containers": [{"name": "app", "image": "nginx:1.28"}]}}}})

    async def midway() -> client.V1StatefulSet | None:
        s = await apps.read_namespaced_stateful_set("roll", NS)
        return s if s.status.update_revision != old else None

    s = await eventually(midway)
    new = s.status.update_revision
    assert s.status.current_revision == old

    async def rolled() -> client.V1StatefulSet | None:
        pods = await pods_of(core, "roll")
        updated = sorted(int(n.rsplit("-", 1)[1]) for n, p in pods.items()
                         if p.metadata.labels["controller-revision-hash"] == new)
        assert updated == list(range(3 - len(updated), 3)), updated  # highest first
        return await settled(apps, "roll", 3)

    s = await eventually(rolled, interval=0.005)
    assert s.status.current_revision == new
    pods = await pods_of(core, "roll")
    assert {p.metadata.labels["controller-revision-hash"] for p in pods.values()} == {new}
    assert {p.spec.containers[0].image for p in pods.values()} == {"nginx:1.28"}
    deleted = {e.message for e in (await core.list_namespaced_event(NS)).items
               if e.reason == "SuccessfulDelete" and e.involved_object.name == "roll"}
    assert deleted == {f"delete Pod roll-{i} in StatefulSet roll successful" for i in (2, 1, 0)}
    # From the highest ordinal down: the replaced pods were made in the order 2, 1, 0.
    made = [pods[f"roll-{i}"].metadata.creation_timestamp for i in (2, 1, 0)]
    assert made == sorted(made)
    revisions = sorted((r.revision, r.metadata.name) for r in
                       (await apps.list_namespaced_controller_revision(NS)).items
                       if r.metadata.owner_references[0].name == "roll")
    assert revisions == [(1, old), (2, new)]


async def test_replication_controller_keeps_its_replicas(core: client.CoreV1Api) -> None:
    rc = {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "legacy"},
          "spec": {"replicas": 2, "selector": {"app": "legacy"},
                   "template": pod_template({"app": "legacy", "tier": "x"})}}
    await core.create_namespaced_replication_controller(NS, rc)

    async def two_ready() -> client.V1ReplicationController | None:
        r = await core.read_namespaced_replication_controller("legacy", NS)
        st = r.status
        return r if (st.replicas, st.ready_replicas, st.available_replicas,
                     st.fully_labeled_replicas, st.observed_generation) == (2, 2, 2, 2, 1) \
            else None

    r = await eventually(two_ready)
    pods = await pods_of(core, "legacy")
    assert len(pods) == 2
    for name, p in pods.items():
        assert name.startswith("legacy-") and len(name) == len("legacy-") + 5
        ref = p.metadata.owner_references[0]
        assert (ref.kind, ref.name, ref.uid, ref.controller) == (
            "ReplicationController", "legacy", r.metadata.uid, True)
    await core.patch_namespaced_replication_controller("legacy", NS, {"spec": {"replicas": 1}})

    async def one() -> bool:
        r = await core.read_namespaced_replication_controller("legacy", NS)
        return bool(r.status.replicas == 1 and len(await pods_of(core, "legacy")) == 1)

    await eventually(one)
    events = {(e.source.component, e.reason) for e in (await core.list_namespaced_event(NS)).items
              if e.involved_object.name == "legacy"}
    assert ("replication-controller", "SuccessfulCreate") in events
    assert ("replication-controller", "SuccessfulDelete") in events


async def test_claims_from_templates_and_their_retention(
        apps: client.AppsV1Api, core: client.CoreV1Api) -> None:
    body = statefulset("vol", replicas=2)
    body["spec"]["volumeClaimTemplates"] = [{"metadata": {"name": "data"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]
    body["spec"]["persistentVolumeClaimRetentionPolicy"] = {"whenDeleted": "Delete"}
    await apps.create_namespaced_stateful_set(NS, body)
    s = await eventually(lambda: settled(apps, "vol", 2))
    claims = {c.metadata.name: c for c in (await core.list_namespaced_persistent_volume_claim(
        NS)).items}
    assert sorted(claims) == ["data-vol-0", "data-vol-1"]
    assert claims["data-vol-0"].metadata.labels == {"app": "vol"}
    assert claims["data-vol-0"].metadata.owner_references[0].uid == s.metadata.uid
    pod = await core.read_namespaced_pod("vol-1", NS)
    assert [(v.name, v.persistent_volume_claim.claim_name) for v in pod.spec.volumes
            if v.persistent_volume_claim] == [("data", "data-vol-1")]
    await apps.delete_namespaced_stateful_set("vol", NS)

    async def claims_gone() -> bool:
        return not (await core.list_namespaced_persistent_volume_claim(NS)).items

    await eventually(claims_gone)
