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
    accounts = ops.registry.get("", "v1", "serviceaccounts")
    assert accounts is not None
    ops.create(accounts, "d", {"metadata": {"name": "runner"}}, _OPTS)
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


def test_a_pod_naming_a_missing_service_account_is_forbidden() -> None:
    ops, _, pods = _cluster()
    with pytest.raises(ApiError) as refused:
        ops.create(pods, "d", _pod({"serviceAccountName": "runner"}), _OPTS)
    assert refused.value.code == 403
    assert refused.value.reason == "Forbidden"
    assert refused.value.message == ('pods "p" is forbidden: error looking up service account'
                                     ' d/runner: serviceaccount "runner" not found')
    assert ops.storage.get(("", "pods"), "d", "p") is None


def test_the_refusal_names_a_generated_pod_by_its_generate_name() -> None:
    ops, _, pods = _cluster()
    body = _pod({"serviceAccountName": "runner"})
    body["metadata"] = {"generateName": "web-7d4b9-"}
    with pytest.raises(ApiError) as refused:
        ops.create(pods, "d", body, _OPTS)
    assert refused.value.message.startswith('pods "web-7d4b9-" is forbidden: ')


def test_a_pod_is_admitted_once_its_service_account_exists() -> None:
    ops, _, pods = _cluster()
    accounts = ops.registry.get("", "v1", "serviceaccounts")
    assert accounts is not None
    ops.create(accounts, "d", {"metadata": {"name": "runner"}}, _OPTS)
    spec = ops.create(pods, "d", _pod({"serviceAccountName": "runner"}), _OPTS).obj["spec"]
    assert spec["serviceAccountName"] == "runner"
