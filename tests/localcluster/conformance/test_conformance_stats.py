"""Request accounting: cluster.stats counts by verb, resource, namespace and user agent."""

from __future__ import annotations

import contextlib
from typing import Any

from conformance_support import GROUP, MERGE, PLURAL, Raw, eventually, widget
from kubernetes_asyncio import client

from hack.localcluster.server import LocalCluster

Json = dict[str, Any]
NS = "default"
AGENT = "conformance-stats/1.0"


async def test_counts_by_verb_resource_namespace_and_agent(
        api: client.ApiClient, cluster: LocalCluster, widgets: Json) -> None:
    api.user_agent = AGENT
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    custom = client.CustomObjectsApi(api)
    cluster.stats.reset()
    await core.create_namespaced_config_map(NS, {"metadata": {"name": "a"}})
    await core.read_namespaced_config_map("a", NS)
    await core.read_namespaced_config_map("a", NS)
    await core.list_namespaced_config_map(NS)
    await core.list_config_map_for_all_namespaces()
    await core.patch_namespaced_config_map("a", NS, {"data": {"k": "v"}})
    await core.replace_namespaced_config_map("a", NS, {"metadata": {"name": "a"}})
    await core.delete_namespaced_config_map("a", NS)
    await core.delete_collection_namespaced_config_map(NS)
    await custom.create_namespaced_custom_object(GROUP, "v1", NS, PLURAL, widget("w"))
    await custom.patch_namespaced_custom_object_status(GROUP, "v1", NS, PLURAL, "w",
                                                       {"status": {"phase": "x"}},
                                                       _content_type=MERGE)
    stream = await apps.list_deployment_for_all_namespaces(watch=True,
                                                           _preload_content=False)
    stream.close()  # a watch is counted once it ends
    with contextlib.suppress(client.exceptions.ApiException):
        await core.read_namespaced_config_map("missing", NS)

    stats = cluster.stats

    async def watch_counted() -> bool:
        return stats.count(verb="watch", resource="deployments.apps") == 1

    await eventually(watch_counted, what="the watch to be counted")
    assert stats.count(verb="create", resource="configmaps", namespace=NS) == 1
    assert stats.count(verb="get", resource="configmaps", namespace=NS) == 3
    assert stats.count(verb="list", resource="configmaps") == 2
    assert stats.count(verb="list", resource="configmaps", namespace="") == 1
    assert stats.count(verb="patch", resource="configmaps") == 1
    assert stats.count(verb="update", resource="configmaps") == 1
    assert stats.count(verb="delete", resource="configmaps") == 1
    assert stats.count(verb="deletecollection", resource="configmaps") == 1
    assert stats.count(verb="create", resource=f"{PLURAL}.{GROUP}") == 1
    assert stats.count(verb="patch", resource=f"{PLURAL}.{GROUP}/status") == 1
    assert stats.count(verb="watch", resource="deployments.apps") == 1
    assert stats.count(user_agent=AGENT) == 13
    assert stats.count(user_agent="conformance-stats") == 13  # a prefix matches
    assert stats.count(user_agent="someone-else") == 0
    assert stats.writes(user_agent=AGENT) == 7
    assert stats.writes(resource="configmaps") == 5
    codes = {(row["verb"], row["code"]) for row in stats.snapshot()
             if row["resource"] == "configmaps"}
    assert ("get", 404) in codes and ("create", 201) in codes


async def test_a_read_only_client_makes_no_writes(api: client.ApiClient, raw: Raw,
                                                  cluster: LocalCluster) -> None:
    core = client.CoreV1Api(api)
    await core.create_namespaced_config_map(NS, {"metadata": {"name": "seed"}})
    cluster.stats.reset()
    api.user_agent = "read-only-client"
    await core.list_namespaced_config_map(NS)
    await core.read_namespaced_config_map("seed", NS)
    await client.CoreApi(api).get_api_versions()
    await raw.get("/apis")
    assert cluster.stats.writes() == 0
    assert cluster.stats.count(user_agent="read-only-client") == 3
    await core.patch_namespaced_config_map("seed", NS, {"data": {"a": "b"}})
    assert cluster.stats.writes() == 1
    assert cluster.stats.writes(user_agent="read-only-client") == 1
