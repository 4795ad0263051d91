"""The write path's shortcuts keep kube-apiserver's results: copies as deepcopy makes them,
cached FieldsV1 encodings, early exits of the comparison, and status writes that share the
stored object's unchanged parts without ever changing a stored object."""

from __future__ import annotations

import copy
import json
import math
from datetime import UTC, datetime
from typing import Any

from hack.localcluster.apply.comparison import Diff, compare
from hack.localcluster.apply.field_types import root_type
from hack.localcluster.fields_v1 import decoded_fields, fields_to_set, pe_key, set_to_fields
from hack.localcluster.json_copy import copy_json
from hack.localcluster.operations import Operations, WriteOptions
from hack.localcluster.registry import Registry
from hack.localcluster.storage import Storage

Json = dict[str, Any]


# --- copies ----------------------------------------------------------------------------------


def test_copy_json_is_deepcopy() -> None:
    shared = {"x": [1, 2.5, True, None, "s"]}
    value: Json = {"b": shared, "a": shared, "c": [shared, -0.0, 10**30]}
    copied = copy_json(value)
    assert json.dumps(copied) == json.dumps(value)
    assert list(copied) == ["b", "a", "c"]
    assert copied["b"] is copied["a"] is copied["c"][0]
    assert copied["b"] is not shared
    assert [type(v) for v in copied["b"]["x"]] == [int, float, bool, type(None), str]
    assert math.copysign(1.0, copied["c"][1]) == -1.0


def test_copy_json_falls_back_for_what_marshal_does_not_take() -> None:
    when = datetime(2026, 1, 1, tzinfo=UTC)
    copied = copy_json({"t": when, "l": [1]})
    assert copied == {"t": when, "l": [1]}


def test_copy_json_keeps_nan_objects_as_deepcopy_does() -> None:
    nan = float("nan")
    value = {"spec": {"ratio": nan}}
    copied = copy_json(value)
    assert copied["spec"]["ratio"] is nan
    assert copied == value  # a NaN is equal to itself only as the same object


# --- FieldsV1 caches -------------------------------------------------------------------------


def test_equal_sets_share_one_encoding_that_decodes_to_fresh_sets() -> None:
    paths = {("f:metadata", "f:labels", "f:app"), ("f:spec", "f:replicas")}
    encoded = set_to_fields(set(paths))
    assert set_to_fields(frozenset(paths)) is encoded
    first = fields_to_set(encoded)
    first.add(("f:other",))
    assert fields_to_set(encoded) == paths
    assert decoded_fields(encoded) == paths
    assert decoded_fields(json.loads(json.dumps(encoded))) == paths


def test_key_cache_tells_numbers_from_booleans() -> None:
    assert pe_key([("port", 1)]) == 'k:{"port":1}'
    assert pe_key([("port", True)]) == 'k:{"port":true}'
    assert pe_key([("port", 1.0)]) == 'k:{"port":1}'
    assert pe_key([("b", "x"), ("a", 2)]) == 'k:{"a":2,"b":"x"}'


# --- comparison ------------------------------------------------------------------------------


def _diff(old: Json, new: Json) -> Diff:
    pods = Registry().get("", "v1", "pods")
    assert pods is not None
    diff = Diff()
    compare(old, new, root_type(pods), (), diff)
    return diff


def test_values_python_calls_equal_are_still_modified() -> None:
    diff = _diff({"spec": {"x": {"a": True}}}, {"spec": {"x": {"a": 1}}})
    assert diff.modified == {("f:spec", "f:x", "f:a")}
    nan = float("nan")
    diff = _diff({"spec": {"x": {"a": nan}}}, {"spec": {"x": {"a": nan}}})
    assert diff.modified == {("f:spec", "f:x", "f:a")}


def test_equal_subtrees_have_no_diff() -> None:
    spec = {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}]}]}
    diff = _diff({"spec": spec}, {"spec": copy.deepcopy(spec)})
    assert not (diff.added or diff.modified or diff.removed)


# --- status writes ---------------------------------------------------------------------------


def _cluster() -> tuple[Operations, Any]:
    ops = Operations(Storage(), Registry())
    ns = ops.registry.get("", "v1", "namespaces")
    pods = ops.registry.get("", "v1", "pods")
    assert ns is not None and pods is not None
    ops.create(ns, "", {"metadata": {"name": "d"}}, WriteOptions(manager="test"))
    ops.create(pods, "d", {"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "image": "img:1", "ports": [{"containerPort": 80}]}]}},
        WriteOptions(manager="creator"))
    return ops, pods


def test_status_write_shares_the_unchanged_spec_and_changes_no_stored_object() -> None:
    ops, pods = _cluster()
    old = ops.get(pods, "d", "p")
    old_text = json.dumps(old)
    status = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    new = ops.update(pods, "d", "p", {**old, "status": status}, WriteOptions(manager="kubelet"),
                     subresource="status").obj
    assert new["spec"] is old["spec"]
    assert new["status"] == status and new["status"] is not status
    status["conditions"][0]["status"] = "False"  # the caller's own dicts stay its own
    assert new["status"]["conditions"][0]["status"] == "True"
    assert json.dumps(old) == old_text
    [kubelet] = [e for e in new["metadata"]["managedFields"] if e["manager"] == "kubelet"]
    assert kubelet["subresource"] == "status"
    assert set(kubelet["fieldsV1"]) == {"f:status"}


def test_status_write_defaults_a_copy_of_a_spec_that_lacks_defaults() -> None:
    ops, pods = _cluster()
    stored = ops.storage.get(pods.stored_as, "d", "p")
    assert stored is not None
    bare = copy_json(stored)
    del bare["spec"]["dnsPolicy"]
    bare["metadata"]["resourceVersion"] = str(ops.storage.next_rv())
    ops.storage.put(pods.stored_as, bare)
    bare_text = json.dumps(bare)
    new = ops.update(pods, "d", "p", {**bare, "status": {"phase": "Running"}},
                     WriteOptions(manager="kubelet"), subresource="status").obj
    assert new["spec"]["dnsPolicy"] == "ClusterFirst"
    assert json.dumps(bare) == bare_text


def test_managed_fields_sent_back_over_http_decode_as_the_stored_ones() -> None:
    ops, pods = _cluster()
    current = ops.get(pods, "d", "p")
    body = json.loads(json.dumps(current))
    body["metadata"]["labels"] = {"app": "x"}
    by_copy = ops.update(pods, "d", "p", body, WriteOptions(manager="editor")).obj
    managers = [e["manager"] for e in by_copy["metadata"]["managedFields"]]
    assert managers == ["creator", "editor"]
    body = json.loads(json.dumps(by_copy))
    body["metadata"]["managedFields"][0]["manager"] = "renamed"
    renamed = ops.update(pods, "d", "p", body, WriteOptions(manager="editor")).obj
    # Same second: ordered by manager name.
    assert [e["manager"] for e in renamed["metadata"]["managedFields"]] == ["editor", "renamed"]
