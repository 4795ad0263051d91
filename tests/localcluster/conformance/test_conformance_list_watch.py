"""List and watch: selectors, pagination, resourceVersion semantics, watch replay, 410 Gone,
bookmarks, timeouts, scoping, selector transitions, and kubernetes_asyncio's Watch."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from conformance_support import GROUP, PLURAL, Raw, assert_status, causes_by_field, widget
from kubernetes_asyncio import client, watch
from kubernetes_asyncio.client.exceptions import ApiException

from hack.localcluster.server import LocalCluster

Json = dict[str, Any]
NS = "default"
CM = f"/api/v1/namespaces/{NS}/configmaps"


async def make_cms(core: client.CoreV1Api, specs: dict[str, Json], ns: str = NS) -> None:
    for name, labels in specs.items():
        await core.create_namespaced_config_map(ns, {"metadata": {"name": name,
                                                                  "labels": labels}})


async def listed(core: client.CoreV1Api, **kw: Any) -> list[str]:
    return [c.metadata.name for c in (await core.list_namespaced_config_map(NS, **kw)).items
            if c.metadata.name != "kube-root-ca.crt"]


# --- selectors --------------------------------------------------------------------------------


@pytest.mark.parametrize(("selector", "expected"), [
    ("tier=web", ["a", "b"]),
    ("tier==web", ["a", "b"]),
    ("tier!=web", ["c", "d"]),
    ("tier in (web,db)", ["a", "b", "c"]),
    ("tier notin (web)", ["c", "d"]),
    ("tier", ["a", "b", "c"]),
    ("!tier", ["d"]),
    ("tier=web,env=prod", ["a"]),
    ("tier in (web),!env", []),
    ("", ["a", "b", "c", "d"]),
])
async def test_label_selectors(core: client.CoreV1Api, selector: str,
                               expected: list[str]) -> None:
    await make_cms(core, {"a": {"tier": "web", "env": "prod"}, "b": {"tier": "web", "env": "dev"},
                          "c": {"tier": "db"}, "d": {}})
    assert await listed(core, label_selector=selector) == expected


async def test_label_selector_lists_follow_relabels_across_namespaces_and_pages(
        core: client.CoreV1Api) -> None:
    await core.create_namespace({"metadata": {"name": "other"}})
    await make_cms(core, {"p": {"tier": "web"}, "q": {"tier": "db"}, "r": {"tier": "web"}})
    await make_cms(core, {"p": {"tier": "web"}}, ns="other")
    await core.patch_namespaced_config_map("q", NS, {"metadata": {"labels": {"tier": "web"}}})
    await core.patch_namespaced_config_map("r", NS, {"metadata": {"labels": {"tier": None}}})
    everywhere = await core.list_config_map_for_all_namespaces(label_selector="tier=web")
    assert [(c.metadata.namespace, c.metadata.name) for c in everywhere.items] == [
        (NS, "p"), (NS, "q"), ("other", "p")]
    first = await core.list_config_map_for_all_namespaces(label_selector="tier in (web)", limit=2)
    rest = await core.list_config_map_for_all_namespaces(
        label_selector="tier in (web)", limit=2, _continue=first.metadata._continue)
    assert [c.metadata.name for c in first.items + rest.items] == ["p", "q", "p"]
    assert await listed(core, label_selector="tier!=web") == ["r"]


async def test_invalid_label_selector_is_400(raw: Raw) -> None:
    resp = await raw.get(CM, params={"labelSelector": "tier in web"})
    assert_status(resp, 400, "BadRequest")


async def test_field_selectors_on_metadata(core: client.CoreV1Api) -> None:
    await core.create_namespace({"metadata": {"name": "other"}})
    await make_cms(core, {"x": {}, "y": {}})
    await make_cms(core, {"x": {}}, ns="other")
    assert await listed(core, field_selector="metadata.name=x") == ["x"]
    assert await listed(core, field_selector="metadata.name!=x") == ["y"]
    everywhere = await core.list_config_map_for_all_namespaces(
        field_selector="metadata.name=x")
    assert sorted(c.metadata.namespace for c in everywhere.items) == [NS, "other"]
    only = await core.list_config_map_for_all_namespaces(
        field_selector="metadata.namespace=other,metadata.name=x")
    assert [(c.metadata.namespace, c.metadata.name) for c in only.items] == [("other", "x")]


async def test_field_selectors_on_pods(core: client.CoreV1Api) -> None:
    for name, node in [("p1", "node-a"), ("p2", "node-b"), ("p3", None)]:
        spec: Json = {"containers": [{"name": "c", "image": "busybox"}]}
        if node:
            spec["nodeName"] = node
        await core.create_namespaced_pod(NS, {"metadata": {"name": name}, "spec": spec})
    await core.patch_namespaced_pod_status("p1", NS, {"status": {"phase": "Running"}})

    async def pods(selector: str) -> list[str]:
        return [p.metadata.name for p in (await core.list_namespaced_pod(
            NS, field_selector=selector)).items]

    assert await pods("spec.nodeName=node-a") == ["p1"]
    assert await pods("spec.nodeName=") == ["p3"]
    assert await pods("status.phase=Running") == ["p1"]
    assert await pods("status.phase=Pending") == ["p2", "p3"]
    assert await pods("status.phase!=Running,spec.nodeName!=") == ["p2"]


async def test_field_selectors_on_events(core: client.CoreV1Api) -> None:
    for name, kind, obj in [("e1", "Pod", "web-1"), ("e2", "Pod", "web-2"),
                            ("e3", "Deployment", "web")]:
        await core.create_namespaced_event(NS, {
            "metadata": {"name": name}, "reason": "Test", "message": "m", "type": "Normal",
            "involvedObject": {"kind": kind, "name": obj, "namespace": NS, "uid": f"u-{name}"}})

    async def events(selector: str) -> list[str]:
        return [e.metadata.name for e in (await core.list_namespaced_event(
            NS, field_selector=selector)).items]

    assert await events("involvedObject.kind=Pod") == ["e1", "e2"]
    assert await events("involvedObject.kind=Pod,involvedObject.name=web-2") == ["e2"]
    assert await events("involvedObject.uid=u-e3") == ["e3"]
    assert await events("involvedObject.namespace=default,reason=Test") == ["e1", "e2", "e3"]
    assert await events("type=Warning") == []


async def test_unknown_field_selector_is_400(raw: Raw) -> None:
    status = assert_status(await raw.get(CM, params={"fieldSelector": "spec.foo=x"}), 400,
                           "BadRequest")
    assert "spec.foo" in status["message"]


async def test_custom_resource_field_selector(custom: client.CustomObjectsApi,
                                              widgets: Json) -> None:
    for name in ("w1", "w2"):
        await custom.create_namespaced_custom_object(GROUP, "v1", NS, PLURAL, widget(name))
    got = await custom.list_namespaced_custom_object(GROUP, "v1", NS, PLURAL,
                                                     field_selector="metadata.name=w2")
    assert [i["metadata"]["name"] for i in got["items"]] == ["w2"]


# --- pagination -------------------------------------------------------------------------------


async def test_limit_and_continue(core: client.CoreV1Api) -> None:
    await make_cms(core, {f"cm-{i}": {"page": "yes"} for i in range(5)})
    first = await core.list_namespaced_config_map(NS, limit=2)
    assert [c.metadata.name for c in first.items] == ["cm-0", "cm-1"]
    assert first.metadata._continue
    assert first.metadata.remaining_item_count == 3
    # Changes after the first page do not show in later pages: they list the same snapshot.
    await core.create_namespaced_config_map(NS, {"metadata": {"name": "cm-9"}})
    await core.delete_namespaced_config_map("cm-4", NS)
    second = await core.list_namespaced_config_map(NS, limit=2, _continue=first.metadata._continue)
    assert [c.metadata.name for c in second.items] == ["cm-2", "cm-3"]
    assert second.metadata.resource_version == first.metadata.resource_version
    assert second.metadata.remaining_item_count == 1
    third = await core.list_namespaced_config_map(NS, limit=2, _continue=second.metadata._continue)
    assert [c.metadata.name for c in third.items] == ["cm-4"]
    assert not third.metadata._continue and third.metadata.remaining_item_count is None
    # With a selector the remaining count is not known.
    page = await core.list_namespaced_config_map(NS, limit=1, label_selector="page=yes")
    assert page.metadata._continue and page.metadata.remaining_item_count is None


async def test_expired_continue_is_410(core: client.CoreV1Api, raw: Raw,
                                       cluster: LocalCluster) -> None:
    await make_cms(core, {f"cm-{i}": {} for i in range(3)})
    first = await core.list_namespaced_config_map(NS, limit=1)
    await core.create_namespaced_config_map(NS, {"metadata": {"name": "later"}})
    cluster.storage.compact()
    resp = await raw.get(CM, params={"limit": "1", "continue": first.metadata._continue})
    status = assert_status(resp, 410, "Expired")
    assert status["message"].startswith("The provided continue parameter is too old")


async def test_bad_continue_token_is_400(raw: Raw) -> None:
    assert_status(await raw.get(CM, params={"continue": "garbage!"}), 400, "BadRequest")


# --- resourceVersion semantics ----------------------------------------------------------------


async def test_resource_version_match(core: client.CoreV1Api, raw: Raw) -> None:
    await make_cms(core, {"a": {}})
    at = (await core.list_namespaced_config_map(NS)).metadata.resource_version
    await core.patch_namespaced_config_map("a", NS, {"data": {"v": "2"}})
    await make_cms(core, {"b": {}})
    now = (await core.list_namespaced_config_map(NS)).metadata.resource_version
    assert int(now) > int(at)
    # NotOlderThan (and a bare resourceVersion) answer with data at least that new.
    for params in ({"resourceVersion": at}, {"resourceVersion": at,
                                             "resourceVersionMatch": "NotOlderThan"},
                   {"resourceVersion": "0"}):
        body = (await raw.get(CM, params=params)).json
        assert int(body["metadata"]["resourceVersion"]) >= int(now)
        assert [i["metadata"]["name"] for i in body["items"]] == ["a", "b"]
    # Exact answers with the list as it was at that version.
    body = (await raw.get(CM, params={"resourceVersion": at,
                                      "resourceVersionMatch": "Exact"})).json
    assert body["metadata"]["resourceVersion"] == at
    assert [(i["metadata"]["name"], i.get("data")) for i in body["items"]] == [("a", None)]


async def test_too_large_resource_version_is_504(core: client.CoreV1Api, raw: Raw) -> None:
    current = (await core.list_namespaced_config_map(NS)).metadata.resource_version
    too_large = str(int(current) + 1000)
    for match in ("NotOlderThan", "Exact"):
        resp = await raw.get(CM, params={"resourceVersion": too_large,
                                         "resourceVersionMatch": match})
        status = assert_status(resp, 504, "Timeout")
        assert status["message"].startswith(
            f"Timeout: Too large resource version: {too_large}")
        assert status["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"
        assert status["details"]["retryAfterSeconds"] == 1


async def test_exact_resource_version_compacted_is_410(core: client.CoreV1Api, raw: Raw,
                                                       cluster: LocalCluster) -> None:
    await make_cms(core, {"a": {}})
    at = (await core.list_namespaced_config_map(NS)).metadata.resource_version
    await make_cms(core, {"b": {}})
    cluster.storage.compact()
    resp = await raw.get(CM, params={"resourceVersion": at, "resourceVersionMatch": "Exact"})
    status = assert_status(resp, 410, "Expired")
    assert status["message"].startswith(f"too old resource version: {at}")


@pytest.mark.parametrize(("params", "message"), [
    ({"resourceVersionMatch": "NotOlderThan"},
     "resourceVersionMatch is forbidden unless resourceVersion is provided"),
    ({"resourceVersion": "0", "resourceVersionMatch": "Exact"},
     'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'),
    ({"resourceVersion": "1", "resourceVersionMatch": "Newest"},
     'Unsupported value: "Newest"'),
])
async def test_invalid_list_options_are_422(raw: Raw, params: dict[str, str],
                                            message: str) -> None:
    status = assert_status(await raw.get(CM, params=params), 422, "Invalid")
    assert status["message"].startswith('ListOptions.meta.k8s.io "" is invalid: ')
    assert message in causes_by_field(status)["resourceVersionMatch"]["message"]


# --- watch ------------------------------------------------------------------------------------


async def test_watch_replays_history_from_a_resource_version(core: client.CoreV1Api,
                                                             raw: Raw) -> None:
    await make_cms(core, {"a": {}})
    start = (await core.list_namespaced_config_map(NS)).metadata.resource_version
    await make_cms(core, {"b": {}})
    patched = await core.patch_namespaced_config_map("a", NS, {"data": {"k": "v"}})
    await core.delete_namespaced_config_map("b", NS)
    events = await raw.watch(CM, {"resourceVersion": start},
                             until=lambda evs: len(evs) >= 3)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "b"), ("MODIFIED", "a"), ("DELETED", "b")]
    assert events[1]["object"]["metadata"]["resourceVersion"] == (
        patched.metadata.resource_version)
    assert events[1]["object"]["kind"] == "ConfigMap"
    assert events[1]["object"]["apiVersion"] == "v1"
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert rvs == sorted(rvs) and rvs[0] > int(start)


async def test_watch_without_version_starts_with_current_objects(core: client.CoreV1Api,
                                                                 raw: Raw) -> None:
    await make_cms(core, {"a": {}, "b": {}})
    started = asyncio.Event()

    async def later() -> None:
        await started.wait()
        await make_cms(core, {"c": {}})

    task = asyncio.create_task(later())
    events = await raw.watch(CM, {"labelSelector": ""}, started=started,
                             until=lambda evs: any(e["object"]["metadata"]["name"] == "c"
                                                   for e in evs))
    await task
    names = [(e["type"], e["object"]["metadata"]["name"]) for e in events]
    assert names[:2] == [("ADDED", "a"), ("ADDED", "b")]
    assert ("ADDED", "c") in names


async def test_too_old_watch_gets_410_error_event(core: client.CoreV1Api, raw: Raw,
                                                  cluster: LocalCluster) -> None:
    await make_cms(core, {"a": {}})
    old = (await core.list_namespaced_config_map(NS)).metadata.resource_version
    await make_cms(core, {"b": {}})
    cluster.storage.compact()
    events = await raw.watch(CM, {"resourceVersion": old}, within=3)
    assert len(events) == 1, events  # the stream ends after the error
    assert events[0]["type"] == "ERROR"
    status = events[0]["object"]
    assert (status["kind"], status["status"], status["code"], status["reason"]) == (
        "Status", "Failure", 410, "Expired")
    assert status["message"].startswith(f"too old resource version: {old} (")
    # The server keeps serving, and a watch from the current version works.
    current = (await core.list_namespaced_config_map(NS)).metadata.resource_version
    started = asyncio.Event()

    async def later() -> None:
        await started.wait()
        await make_cms(core, {"c": {}})

    task = asyncio.create_task(later())
    events = await raw.watch(CM, {"resourceVersion": current}, started=started,
                             until=lambda evs: len(evs) >= 1)
    await task
    assert events[0]["type"] == "ADDED" and events[0]["object"]["metadata"]["name"] == "c"


async def test_bookmarks(core: client.CoreV1Api, raw: Raw) -> None:
    rv = (await core.list_namespaced_config_map(NS)).metadata.resource_version
    events = await raw.watch(CM, {"resourceVersion": rv, "allowWatchBookmarks": "true"},
                             until=lambda evs: any(e["type"] == "BOOKMARK" for e in evs),
                             within=3)
    bookmarks = [e for e in events if e["type"] == "BOOKMARK"]
    assert bookmarks, events
    obj = bookmarks[0]["object"]
    assert (obj["kind"], obj["apiVersion"]) == ("ConfigMap", "v1")
    assert int(obj["metadata"]["resourceVersion"]) >= int(rv)
    # Without allowWatchBookmarks there are none.
    events = await raw.watch(CM, {"resourceVersion": rv}, within=0.6)
    assert [e for e in events if e["type"] == "BOOKMARK"] == []


async def test_send_initial_events_ends_with_a_bookmark(core: client.CoreV1Api,
                                                        raw: Raw) -> None:
    await make_cms(core, {"a": {}, "b": {}})
    events = await raw.watch(CM, {"sendInitialEvents": "true", "allowWatchBookmarks": "true",
                                  "resourceVersionMatch": "NotOlderThan"},
                             until=lambda evs: any(e["type"] == "BOOKMARK" for e in evs))
    assert [e["type"] for e in events[:2]] == ["ADDED", "ADDED"]
    bookmark = next(e for e in events if e["type"] == "BOOKMARK")
    assert bookmark["object"]["metadata"]["annotations"] == {
        "k8s.io/initial-events-end": "true"}


async def test_timeout_seconds_ends_the_stream(raw: Raw) -> None:
    loop = asyncio.get_running_loop()
    began = loop.time()
    events = await raw.watch(CM, {"timeoutSeconds": "1"}, within=5)
    elapsed = loop.time() - began
    assert 0.9 <= elapsed < 3, elapsed
    assert all(e["type"] == "ADDED" for e in events)


async def test_cluster_wide_and_namespaced_watches(core: client.CoreV1Api, raw: Raw) -> None:
    await core.create_namespace({"metadata": {"name": "other"}})
    rv = (await core.list_config_map_for_all_namespaces()).metadata.resource_version
    await make_cms(core, {"here": {}})
    await make_cms(core, {"there": {}}, ns="other")
    everywhere = await raw.watch("/api/v1/configmaps", {"resourceVersion": rv},
                                 until=lambda evs: len(evs) >= 2)
    assert sorted((e["object"]["metadata"]["namespace"], e["object"]["metadata"]["name"])
                  for e in everywhere) == [(NS, "here"), ("other", "there")]
    mine = await raw.watch("/api/v1/namespaces/other/configmaps", {"resourceVersion": rv},
                           within=0.5)
    assert [e["object"]["metadata"]["name"] for e in mine] == ["there"]


async def test_label_selector_watch_turns_modifications_into_adds_and_deletes(
        core: client.CoreV1Api, raw: Raw) -> None:
    await make_cms(core, {"m": {"tier": "db"}})
    rv = (await core.list_namespaced_config_map(NS)).metadata.resource_version
    await core.patch_namespaced_config_map("m", NS, {"metadata": {"labels": {"tier": "web"}}})
    await core.patch_namespaced_config_map("m", NS, {"data": {"k": "v"}})
    last = await core.patch_namespaced_config_map("m", NS,
                                                  {"metadata": {"labels": {"tier": "db"}}})
    await core.patch_namespaced_config_map("m", NS, {"data": {"k": "w"}})
    events = await raw.watch(CM, {"resourceVersion": rv, "labelSelector": "tier=web"},
                             until=lambda evs: len(evs) >= 3, within=3)
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED", "DELETED"]
    gone = events[2]["object"]
    assert gone["metadata"]["resourceVersion"] == last.metadata.resource_version


async def test_watch_a_single_object_by_field_selector(core: client.CoreV1Api,
                                                       raw: Raw) -> None:
    await make_cms(core, {"one": {}, "two": {}})
    rv = (await core.list_namespaced_config_map(NS)).metadata.resource_version
    await core.patch_namespaced_config_map("two", NS, {"data": {"a": "1"}})
    await core.patch_namespaced_config_map("one", NS, {"data": {"a": "1"}})
    events = await raw.watch(CM, {"resourceVersion": rv,
                                  "fieldSelector": "metadata.name=one"}, within=0.5)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("MODIFIED", "one")]


async def test_watch_custom_resources(custom: client.CustomObjectsApi, raw: Raw,
                                      widgets: Json) -> None:
    path = f"/apis/{GROUP}/v1/namespaces/{NS}/{PLURAL}"
    rv = (await custom.list_namespaced_custom_object(GROUP, "v1", NS, PLURAL))[
        "metadata"]["resourceVersion"]
    await custom.create_namespaced_custom_object(GROUP, "v1beta1", NS, PLURAL,
                                                 widget("w", version="v1beta1"))
    for version in ("v1", "v1beta1"):
        events = await raw.watch(path.replace("/v1/", f"/{version}/"), {"resourceVersion": rv},
                                 until=lambda evs: len(evs) >= 1)
        assert events[0]["object"]["apiVersion"] == f"{GROUP}/{version}"


async def test_kubernetes_asyncio_watch_stream(core: client.CoreV1Api) -> None:
    await make_cms(core, {"a": {}})
    rv = (await core.list_namespaced_config_map(NS)).metadata.resource_version
    await make_cms(core, {"b": {}})
    await core.delete_namespaced_config_map("a", NS)
    seen = []
    async with watch.Watch().stream(core.list_namespaced_config_map, NS, resource_version=rv,
                                    timeout_seconds=1) as stream:
        async for event in stream:
            seen.append((event["type"], event["object"].metadata.name))
            assert isinstance(event["object"], client.V1ConfigMap)
            if len(seen) == 2:
                break
    assert seen == [("ADDED", "b"), ("DELETED", "a")]


async def test_kubernetes_asyncio_watch_raises_on_410(core: client.CoreV1Api,
                                                      cluster: LocalCluster) -> None:
    await make_cms(core, {"a": {}})
    rv = (await core.list_namespaced_config_map(NS)).metadata.resource_version
    await make_cms(core, {"b": {}})
    cluster.storage.compact()
    with pytest.raises(ApiException) as err:
        async with watch.Watch().stream(core.list_namespaced_config_map, NS,
                                        resource_version=rv, timeout_seconds=2) as stream:
            async for _ in stream:
                pass
    assert err.value.status == 410


@pytest.mark.parametrize(("params", "message"), [
    ({"sendInitialEvents": "true"},
     "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"),
    ({"resourceVersionMatch": "NotOlderThan", "resourceVersion": "1"},
     "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"),
    ({"sendInitialEvents": "false", "resourceVersionMatch": "Exact"},
     'Unsupported value: "Exact"'),
])
async def test_invalid_watch_options_are_422(raw: Raw, params: dict[str, str],
                                             message: str) -> None:
    resp = await raw.get(CM, params={"watch": "true", **params})
    status = assert_status(resp, 422, "Invalid")
    assert message in status["message"]
