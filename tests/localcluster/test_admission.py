"""Admission of the local API server: NamespaceLifecycle and the pod plugins (ServiceAccount,
Priority, DefaultTolerationSeconds), through the create and delete verbs."""

from __future__ import annotations

from typing import Any

import pytest

from hack.localcluster.errors import ApiError
from hack.localcluster.operations import Operations, WriteOptions
from hack.localcluster.registry import Registry, ResourceType
from hack.localcluster.storage import Storage

Json = dict[str, Any]

_OPTS = WriteOptions(manager="test")


def _cluster() -> tuple[Operations, ResourceType, ResourceType]:
    ops = Operations(Storage(), Registry())
    ns = ops.registry.get("", "v1", "namespaces")
    pods = ops.registry.get("", "v1", "pods")
    assert ns is not None and pods is not None
    ops.create(ns, "", {"metadata": {"name": "d"}}, _OPTS)
    return ops, ns, pods


def _pod(spec: Json) -> Json:
    return {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i:1"}],
                                                **spec}}


def test_a_new_pod_gets_its_service_account_priority_and_default_tolerations() -> None:
    ops, _, pods = _cluster()
    spec = ops.create(pods, "d", _pod({}), _OPTS).obj["spec"]
    assert spec["serviceAccountName"] == spec["serviceAccount"] == "default"
    assert spec["priority"] == 0
    assert spec["preemptionPolicy"] == "PreemptLowerPriority"
    assert spec["enableServiceLinks"] is True
    assert spec["tolerations"] == [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300},
    ]


def test_pod_admission_keeps_what_the_pod_sets() -> None:
    ops, _, pods = _cluster()
    own = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}
    spec = ops.create(pods, "d", _pod({
        "serviceAccount": "runner", "priorityClassName": "high", "tolerations": [own]}),
        _OPTS).obj["spec"]
    assert spec["serviceAccountName"] == spec["serviceAccount"] == "runner"
    assert "priority" not in spec
    assert [t["key"] for t in spec["tolerations"]] == [
        "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]
    assert spec["tolerations"][0] == own


def test_an_update_does_not_admit_again() -> None:
    ops, _, pods = _cluster()
    created = ops.create(pods, "d", _pod({}), _OPTS).obj
    created["spec"]["tolerations"] = []
    updated = ops.update(pods, "d", "p", created, _OPTS).obj
    assert updated["spec"]["tolerations"] == []


def test_creates_into_a_missing_namespace_are_not_found() -> None:
    ops, _, pods = _cluster()
    with pytest.raises(ApiError) as err:
        ops.create(pods, "missing", _pod({}), _OPTS)
    assert err.value.code == 404


@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public"])
def test_immortal_namespaces_may_not_be_deleted(name: str) -> None:
    ops, ns, _ = _cluster()
    ops.create(ns, "", {"metadata": {"name": name}}, _OPTS)
    with pytest.raises(ApiError) as err:
        ops.delete(ns, "", name, {})
    assert err.value.code == 403
    assert err.value.message == f'namespaces "{name}" is forbidden: this namespace may not be' \
        " deleted"
