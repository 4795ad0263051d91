"""Storage's indexes: key order per namespace, labels and fields, never stale after writes."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from hack.localcluster.selectors import LabelSelector
from hack.localcluster.storage import ResourceKey, Storage
from hack.localcluster.storage_indexes import KeyOrder, TermIndex, label_terms

Json = dict[str, Any]

PODS: ResourceKey = ("", "pods")
SLICES: ResourceKey = ("discovery.k8s.io", "endpointslices")


def put(storage: Storage, namespace: str, name: str, labels: Json | None = None,
        node: str | None = None, resource: ResourceKey = PODS) -> Json:
    meta: Json = {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}",
                  "resourceVersion": str(storage.next_rv())}
    if labels is not None:
        meta["labels"] = labels
    obj: Json = {"metadata": meta, "spec": {"nodeName": node} if node else {}}
    storage.put(resource, obj)
    return obj


def delete(storage: Storage, namespace: str, name: str, resource: ResourceKey = PODS) -> None:
    obj = storage.get(resource, namespace, name)
    assert obj is not None
    storage.remove(resource, obj, storage.next_rv())


def names(objs: list[Json]) -> list[tuple[str, str]]:
    return [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in objs]


def selected(storage: Storage, namespace: str | None, text: str) -> list[tuple[str, str]]:
    return names(storage.list_selected(PODS, namespace, LabelSelector.parse(text)))


# --- KeyOrder --------------------------------------------------------------------------------


def test_key_order_sorts_within_and_across_namespaces() -> None:
    order = KeyOrder()
    for key in [("b", "y"), ("a", "z"), ("b", "x"), ("a", "a"), ("b", "x")]:
        order.add(key)
    assert list(order.keys()) == [("a", "a"), ("a", "z"), ("b", "x"), ("b", "y")]
    assert list(order.keys("b")) == [("b", "x"), ("b", "y")]
    assert list(order.keys("c")) == []
    order.remove(("a", "a"))
    order.remove(("a", "z"))
    order.remove(("a", "missing"))
    assert list(order.keys()) == [("b", "x"), ("b", "y")]
    assert list(order.keys("a")) == []


# --- TermIndex -------------------------------------------------------------------------------


def test_term_index_follows_relabel_and_delete() -> None:
    index = TermIndex(label_terms)
    v1 = {"metadata": {"labels": {"app": "a", "tier": "web"}}}
    v2 = {"metadata": {"labels": {"app": "b", "tier": "web"}}}
    index.update(PODS, ("ns", "p"), None, v1)
    assert index.keys(PODS, "ns", ("app", "a")) == {("ns", "p")}
    index.update(PODS, ("ns", "p"), v1, v2)
    assert index.keys(PODS, "ns", ("app", "a")) == set()
    assert index.keys(PODS, None, ("app", "b")) == {("ns", "p")}
    assert index.count(PODS, "ns", ("tier", "web")) == 1
    index.update(PODS, ("ns", "p"), v2, None)
    assert index.count(PODS, None, ("tier", "web")) == 0
    assert index.keys(PODS, "ns", ("app", "b")) == set()


def test_term_index_keeps_resources_and_namespaces_apart() -> None:
    index = TermIndex(label_terms)
    obj = {"metadata": {"labels": {"app": "a"}}}
    index.update(PODS, ("one", "p"), None, obj)
    index.update(PODS, ("two", "p"), None, obj)
    index.update(SLICES, ("one", "s"), None, obj)
    assert index.keys(PODS, "one", ("app", "a")) == {("one", "p")}
    assert index.keys(PODS, None, ("app", "a")) == {("one", "p"), ("two", "p")}
    assert index.keys(SLICES, None, ("app", "a")) == {("one", "s")}


# --- Storage ---------------------------------------------------------------------------------


def test_list_objects_order_survives_adds_removes_and_updates() -> None:
    storage = Storage()
    for ns, name in [("b", "2"), ("a", "9"), ("b", "1"), ("a", "0"), ("", "x")]:
        put(storage, ns, name)
    assert names(storage.list_objects(PODS)) == [("", "x"), ("a", "0"), ("a", "9"),
                                                 ("b", "1"), ("b", "2")]
    put(storage, "a", "0", labels={"new": "version"})  # a modification keeps its place
    delete(storage, "b", "1")
    assert names(storage.list_objects(PODS, "b")) == [("b", "2")]
    assert names(storage.list_objects(PODS, "a")) == [("a", "0"), ("a", "9")]
    assert storage.list_objects(PODS, "a")[0]["metadata"]["labels"] == {"new": "version"}
    assert storage.list_objects(("", "services")) == []


def test_list_selected_follows_add_relabel_delete() -> None:
    storage = Storage()
    put(storage, "ns", "p1", {"app": "a"})
    put(storage, "ns", "p2", {"app": "a", "tier": "web"})
    assert selected(storage, "ns", "app=a") == [("ns", "p1"), ("ns", "p2")]
    assert selected(storage, "ns", "app=a,tier=web") == [("ns", "p2")]
    put(storage, "ns", "p1", {"app": "b"})  # relabel
    assert selected(storage, "ns", "app=a") == [("ns", "p2")]
    assert selected(storage, "ns", "app in (a,b)") == [("ns", "p1"), ("ns", "p2")]
    put(storage, "ns", "p2", None)  # labels dropped
    assert selected(storage, "ns", "app=a") == []
    delete(storage, "ns", "p1")
    assert selected(storage, "ns", "app=b") == []
    assert selected(storage, "ns", "app") == []


def test_list_selected_after_a_name_moves_namespace() -> None:
    storage = Storage()
    put(storage, "one", "p", {"app": "a"})
    delete(storage, "one", "p")
    put(storage, "two", "p", {"app": "a"})
    assert selected(storage, "one", "app=a") == []
    assert selected(storage, "two", "app=a") == [("two", "p")]
    assert selected(storage, None, "app=a") == [("two", "p")]


def test_list_selected_matches_a_full_scan() -> None:
    rng = random.Random(7)
    storage = Storage()
    texts = ["app=a", "app=b,tier!=web", "app in (a,c)", "tier=web,app", "!tier",
             "app notin (a)", "app==c,tier in (db,web)"]
    for _ in range(400):
        ns, name = rng.choice(["x", "y"]), f"p{rng.randrange(30)}"
        if storage.get(PODS, ns, name) is not None and rng.random() < 0.3:
            delete(storage, ns, name)
            continue
        labels = {k: rng.choice(["a", "b", "c", "db", "web"]) for k in ("app", "tier")
                  if rng.random() < 0.7}
        put(storage, ns, name, labels)
        for text in texts:
            sel = LabelSelector.parse(text)
            for namespace in ("x", "y", None):
                want = [o for o in storage.list_objects(PODS, namespace)
                        if sel.matches(o["metadata"].get("labels"))]
                assert storage.list_selected(PODS, namespace, sel) == want, (text, namespace)


def test_nothing_selector_selects_nothing() -> None:
    storage = Storage()
    put(storage, "ns", "p", {"app": "a"})
    assert storage.list_selected(PODS, "ns", LabelSelector.from_label_selector(None)) == []
    assert names(storage.list_selected(PODS, "ns", LabelSelector())) == [("ns", "p")]


def test_list_by_field_follows_binding_and_deletion() -> None:
    storage = Storage()
    put(storage, "ns", "p1")
    put(storage, "ns", "p2", node="n1")
    put(storage, "other", "p3", node="n1")
    assert names(storage.list_by_field(PODS, None, "spec.nodeName", "n1")) == [
        ("ns", "p2"), ("other", "p3")]
    put(storage, "ns", "p1", node="n2")
    assert names(storage.list_by_field(PODS, "ns", "spec.nodeName", "n2")) == [("ns", "p1")]
    delete(storage, "ns", "p2")
    assert names(storage.list_by_field(PODS, None, "spec.nodeName", "n1")) == [("other", "p3")]


def test_indexes_are_rebuilt_from_disk(tmp_path: Path) -> None:
    storage = Storage(data_dir=tmp_path)
    put(storage, "ns", "p1", {"app": "a"}, node="n1")
    put(storage, "ns", "p2", {"app": "a"})
    delete(storage, "ns", "p2")
    storage.close()
    restored = Storage(data_dir=tmp_path)
    assert names(restored.list_objects(PODS)) == [("ns", "p1")]
    assert selected(restored, "ns", "app=a") == [("ns", "p1")]
    assert names(restored.list_by_field(PODS, None, "spec.nodeName", "n1")) == [("ns", "p1")]
    restored.close()
