"""Finalizers and the garbage collector: background, foreground and orphan deletion."""

from __future__ import annotations

from typing import Any

from conformance_support import causes_by_field, eventually, expect_error, gone
from kubernetes_asyncio import client

from hack.localcluster.server import LocalCluster

Json = dict[str, Any]
NS = "default"


def owned_by(owner: Any, *, block: bool = False, controller: bool = False) -> Json:
    return {"apiVersion": "v1", "kind": "ConfigMap", "name": owner.metadata.name,
            "uid": owner.metadata.uid, "blockOwnerDeletion": block, "controller": controller}


async def names(core: client.CoreV1Api) -> list[str]:
    return sorted(c.metadata.name for c in (await core.list_namespaced_config_map(NS)).items
                  if c.metadata.name != "kube-root-ca.crt")


async def test_finalizer_holds_deletion(core: client.CoreV1Api, cluster: LocalCluster) -> None:
    await core.create_namespaced_config_map(NS, {"metadata": {
        "name": "f", "finalizers": ["example.com/a", "example.com/b"]}})
    await core.delete_namespaced_config_map("f", NS)
    held = await core.read_namespaced_config_map("f", NS)
    assert held.metadata.deletion_timestamp is not None
    assert held.metadata.deletion_grace_period_seconds == 0
    # Deleting again changes nothing.
    await core.delete_namespaced_config_map("f", NS)
    again = await core.read_namespaced_config_map("f", NS)
    assert again.metadata.resource_version == held.metadata.resource_version
    # No new finalizers once deleting.
    status = await expect_error(core.patch_namespaced_config_map("f", NS, {"metadata": {
        "finalizers": ["example.com/a", "example.com/b", "example.com/c"]}}), 422, "Invalid")
    assert causes_by_field(status)["metadata.finalizers"]["reason"] == "FieldValueForbidden"
    # Other updates are still allowed while finalizers remain.
    await core.patch_namespaced_config_map("f", NS, {"data": {"k": "v"}})
    await core.patch_namespaced_config_map("f", NS, {"metadata": {
        "$deleteFromPrimitiveList/finalizers": ["example.com/a"]}})
    assert (await core.read_namespaced_config_map("f", NS)).metadata.finalizers == [
        "example.com/b"]
    await core.patch_namespaced_config_map("f", NS, {"metadata": {"finalizers": None}})
    await expect_error(core.read_namespaced_config_map("f", NS), 404, "NotFound")


async def test_invalid_finalizer_name(core: client.CoreV1Api) -> None:
    status = await expect_error(core.create_namespaced_config_map(NS, {"metadata": {
        "name": "bad", "finalizers": ["nodomain"]}}), 422, "Invalid")
    assert "metadata.finalizers[0]" in causes_by_field(status)


async def test_background_deletion_removes_dependents(core: client.CoreV1Api,
                                                      cluster: LocalCluster) -> None:
    owner = await core.create_namespaced_config_map(NS, {"metadata": {"name": "owner"}})
    other = await core.create_namespaced_config_map(NS, {"metadata": {"name": "other"}})
    for name, refs in [("dep-1", [owned_by(owner)]), ("dep-2", [owned_by(owner)]),
                       ("shared", [owned_by(owner), owned_by(other)])]:
        await core.create_namespaced_config_map(NS, {"metadata": {"name": name,
                                                                  "ownerReferences": refs}})
    await core.delete_namespaced_config_map("owner", NS)
    await cluster.settle()
    await eventually(lambda: gone(lambda: core.read_namespaced_config_map("dep-1", NS)),
                     what="dep-1 to be collected")
    assert await names(core) == ["other", "shared"]
    shared = await core.read_namespaced_config_map("shared", NS)
    assert [r.name for r in shared.metadata.owner_references] == ["other"]


async def test_dependent_of_absent_owner_is_collected(core: client.CoreV1Api,
                                                      cluster: LocalCluster) -> None:
    await core.create_namespaced_config_map(NS, {"metadata": {
        "name": "orphaned", "ownerReferences": [{
            "apiVersion": "v1", "kind": "ConfigMap", "name": "never",
            "uid": "00000000-0000-0000-0000-000000000000"}]}})
    await cluster.settle()
    await eventually(lambda: gone(lambda: core.read_namespaced_config_map("orphaned", NS)),
                     what="the dependent of an absent owner to be collected")


async def test_foreground_deletion_waits_for_blocking_dependents(
        core: client.CoreV1Api, cluster: LocalCluster) -> None:
    owner = await core.create_namespaced_config_map(NS, {"metadata": {"name": "owner"}})
    await core.create_namespaced_config_map(NS, {"metadata": {
        "name": "blocker", "finalizers": ["example.com/hold"],
        "ownerReferences": [owned_by(owner, block=True)]}})
    await core.create_namespaced_config_map(NS, {"metadata": {
        "name": "free", "ownerReferences": [owned_by(owner)]}})
    await core.delete_namespaced_config_map("owner", NS, propagation_policy="Foreground")
    deleting = await core.read_namespaced_config_map("owner", NS)
    assert deleting.metadata.deletion_timestamp is not None
    assert deleting.metadata.finalizers == ["foregroundDeletion"]
    await cluster.settle()
    # The dependents are being deleted; the owner stays while a blocking one remains.
    blocker = await core.read_namespaced_config_map("blocker", NS)
    assert blocker.metadata.deletion_timestamp is not None
    await eventually(lambda: gone(lambda: core.read_namespaced_config_map("free", NS)),
                     what="the non-blocking dependent to go")
    owner_now = await core.read_namespaced_config_map("owner", NS)
    assert owner_now.metadata.finalizers == ["foregroundDeletion"]
    await core.patch_namespaced_config_map("blocker", NS, {"metadata": {"finalizers": None}})
    await cluster.settle()
    await eventually(lambda: gone(lambda: core.read_namespaced_config_map("owner", NS)),
                     what="the owner to go once its blocking dependents are gone")


async def test_orphan_deletion_keeps_dependents(core: client.CoreV1Api,
                                                cluster: LocalCluster) -> None:
    owner = await core.create_namespaced_config_map(NS, {"metadata": {"name": "owner"}})
    await core.create_namespaced_config_map(NS, {"metadata": {
        "name": "kept", "ownerReferences": [owned_by(owner, controller=True)]}})
    await core.delete_namespaced_config_map("owner", NS, propagation_policy="Orphan")
    await cluster.settle()
    await eventually(lambda: gone(lambda: core.read_namespaced_config_map("owner", NS)),
                     what="the owner to go")
    kept = await core.read_namespaced_config_map("kept", NS)
    assert kept.metadata.owner_references is None
    assert kept.metadata.deletion_timestamp is None


async def test_batch_v1_job_orphans_its_pods_by_default(api: client.ApiClient,
                                                        core: client.CoreV1Api,
                                                        cluster: LocalCluster) -> None:
    batch = client.BatchV1Api(api)
    job = await batch.create_namespaced_job(NS, {"metadata": {"name": "j"}, "spec": {
        "template": {"spec": {"restartPolicy": "Never",
                              "containers": [{"name": "c", "image": "busybox"}]}}}})
    ref = {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": job.metadata.uid,
           "controller": True, "blockOwnerDeletion": True}
    await core.create_namespaced_pod(NS, {"metadata": {"name": "j-pod",
                                                       "ownerReferences": [ref]},
                                          "spec": {"containers": [{"name": "c",
                                                                   "image": "busybox"}]}})
    # No propagation policy: batch/v1 Jobs default to orphaning (kubectl sends Background).
    await batch.delete_namespaced_job("j", NS)
    await cluster.settle()
    await eventually(lambda: gone(lambda: batch.read_namespaced_job("j", NS)),
                     what="the job to go")
    pod = await core.read_namespaced_pod("j-pod", NS)
    assert pod.metadata.owner_references is None
    # With Background the pods go with the job.
    job = await batch.create_namespaced_job(NS, {"metadata": {"name": "k"}, "spec": {
        "template": {"spec": {"restartPolicy": "Never",
                              "containers": [{"name": "c", "image": "busybox"}]}}}})
    await core.create_namespaced_pod(NS, {"metadata": {"name": "k-pod", "ownerReferences": [
        {**ref, "name": "k", "uid": job.metadata.uid}]}, "spec": {"containers": [
            {"name": "c", "image": "busybox"}]}})
    await batch.delete_namespaced_job("k", NS, propagation_policy="Background")
    await cluster.settle()
    await eventually(lambda: gone(lambda: core.read_namespaced_pod("k-pod", NS)),
                     what="the job's pod to be collected")


async def test_owner_in_another_namespace_does_not_count(core: client.CoreV1Api,
                                                         cluster: LocalCluster) -> None:
    await core.create_namespace({"metadata": {"name": "elsewhere"}})
    owner = await core.create_namespaced_config_map("elsewhere", {"metadata": {"name": "o"}})
    await core.create_namespaced_config_map(NS, {"metadata": {
        "name": "cross", "ownerReferences": [owned_by(owner)]}})
    await cluster.settle()
    await eventually(lambda: gone(lambda: core.read_namespaced_config_map("cross", NS)),
                     what="a dependent whose owner is in another namespace to be collected")
