"""controller.storage_migration against the local API server: a CRD whose storage version moved
from v1 to v2 has its objects written back once (re-encoded in v2, each with a new
resourceVersion), its status.storedVersions trimmed to ["v2"], and a second run writes
nothing; the server re-encodes an unchanged object stored in an older version, as
kube-apiserver does, and skips the write once it is stored in the storage version."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness import CRDS, eventually, setup_client, widget, widget_crd

from controller.resource import Resource
from controller.storage_migration import StorageMigration
from hack.localcluster.server import LocalCluster

NAME = "widgets.test.example.com"
WIDGETS_V1 = Resource("test.example.com", "v1", "widgets", "Widget")
WIDGETS_V2 = Resource("test.example.com", "v2", "widgets", "Widget")


def two_versions(crd: dict[str, Any], storage: str) -> dict[str, Any]:
    """The widget CRD serving v1 and v2 (no conversion: the same schemaless shape)."""
    [v1] = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    crd["spec"]["versions"] = [{**v1, "storage": storage == "v1"},
                               {**v1, "name": "v2", "storage": storage == "v2"}]
    return crd


def stored_api_versions(cluster: LocalCluster) -> dict[str, str]:
    rt = cluster.registry.get("test.example.com", "v2", "widgets")
    assert rt is not None
    return {o["metadata"]["name"]: o["apiVersion"]
            for o in cluster.storage.list_objects(rt.stored_as, "default")}


async def test_objects_move_to_the_storage_version_once(cluster: LocalCluster,
                                                         kubeconfig: Path) -> None:
    client = await setup_client(kubeconfig)
    try:
        await client.create(CRDS, two_versions(widget_crd(), "v1"))

        async def served() -> bool:
            await client.list(WIDGETS_V2, "default")
            return True
        await eventually(served)
        for name in ("a", "b", "c"):
            await client.create(WIDGETS_V1, widget(name, size=1))
        crd = await client.get(CRDS, None, NAME)
        crd["spec"] = two_versions(crd, "v2")["spec"]
        await client.update(CRDS, crd)
        await client.create(WIDGETS_V2, {**widget("d", size=1), "apiVersion":
                                         "test.example.com/v2"})
        crd = await client.get(CRDS, None, NAME)
        assert crd["status"]["storedVersions"] == ["v1", "v2"]
        assert stored_api_versions(cluster) == {
            "a": "test.example.com/v1", "b": "test.example.com/v1",
            "c": "test.example.com/v1", "d": "test.example.com/v2"}
        before = {o["metadata"]["name"]: o["metadata"]["resourceVersion"]
                  for o in (await client.list(WIDGETS_V2, "default"))["items"]}

        migration = StorageMigration(client, [NAME, "absent.test.example.com"])
        # Every object is written back; the server skips d, stored as v2 already.
        assert await migration.migrate(NAME) == 4
        after = {o["metadata"]["name"]: o["metadata"]["resourceVersion"]
                 for o in (await client.list(WIDGETS_V2, "default"))["items"]}
        assert [n for n in before if before[n] != after[n]] == ["a", "b", "c"]
        assert set(stored_api_versions(cluster).values()) == {"test.example.com/v2"}
        assert (await client.get(CRDS, None, NAME))["status"]["storedVersions"] == ["v2"]

        # Done: the next run (a restarted operator) writes nothing; an absent CRD is skipped.
        await migration.migrate_all()
        again = {o["metadata"]["name"]: o["metadata"]["resourceVersion"]
                 for o in (await client.list(WIDGETS_V2, "default"))["items"]}
        assert again == after
        assert await migration.migrate(NAME) == 0
    finally:
        await client.close()


async def test_an_unchanged_update_is_skipped_once_stored_in_the_storage_version(
        cluster: LocalCluster, kubeconfig: Path) -> None:
    client = await setup_client(kubeconfig)
    try:
        await client.create(CRDS, two_versions(widget_crd(), "v1"))

        async def served() -> bool:
            await client.list(WIDGETS_V1, "default")
            return True
        await eventually(served)
        created = await client.create(WIDGETS_V1, widget("a", size=1))
        same = await client.update(WIDGETS_V1, created)
        assert same["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
        crd = await client.get(CRDS, None, NAME)
        crd["spec"] = two_versions(crd, "v2")["spec"]
        await client.update(CRDS, crd)
        moved = await client.update(WIDGETS_V1, same)
        assert moved["metadata"]["resourceVersion"] != same["metadata"]["resourceVersion"]
        assert stored_api_versions(cluster) == {"a": "test.example.com/v2"}
        again = await client.update(WIDGETS_V1, moved)
        assert again["metadata"]["resourceVersion"] == moved["metadata"]["resourceVersion"]
    finally:
        await client.close()
