"""Discovery's preferred version of a group, as kube-apiserver picks it: for a CRD group, the
highest served version of all the group's CRDs in kube-aware order, whichever one stores."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hack.localcluster.crds import served_types
from hack.localcluster.registry import Registry, kube_aware_key
from hack.localcluster.testing import Kubectl

Json = dict[str, Any]


def crd(plural: str, kind: str, versions: list[tuple[str, bool, bool]],
        group: str = "fruit.example.com") -> Json:
    """A schemaless CRD; `versions` are (name, served, storage)."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"plural": plural, "singular": kind.lower(), "kind": kind,
                           "listKind": f"{kind}List"},
                 "versions": [{"name": name, "served": served, "storage": storage,
                               "schema": {"openAPIV3Schema": {
                                   "type": "object",
                                   "x-kubernetes-preserve-unknown-fields": True}}}
                              for name, served, storage in versions]}}


def test_kube_aware_order() -> None:
    shuffled = ["foo10", "v1alpha1", "v11alpha2", "v1", "v10beta3", "v2", "foo1", "v3beta1",
                "v12alpha1", "v11beta2", "v10", "v11"]
    assert sorted(shuffled, key=kube_aware_key) == [
        "v11", "v10", "v2", "v1", "v11beta2", "v10beta3", "v3beta1", "v12alpha1", "v11alpha2",
        "v1alpha1", "foo1", "foo10"]


@pytest.mark.parametrize(("versions", "expected"), [
    # The storage version is not preferred when a higher one is served.
    ([("v1alpha1", True, True), ("v1beta1", True, False)], ["v1beta1", "v1alpha1"]),
    ([("v1beta1", True, False), ("v1", True, True), ("v2alpha1", True, False)],
     ["v1", "v1beta1", "v2alpha1"]),
    # A version not served is not listed, however high.
    ([("v1alpha1", True, True), ("v1", False, False)], ["v1alpha1"]),
])
def test_one_crd(versions: list[tuple[str, bool, bool]], expected: list[str]) -> None:
    registry = Registry(builtins=())
    registry.set_crd("apples.fruit.example.com", served_types(crd("apples", "Apple", versions)))
    assert registry.groups()["fruit.example.com"] == expected


def test_the_group_of_several_crds_prefers_the_highest_of_all() -> None:
    registry = Registry(builtins=())
    registry.set_crd("apples.fruit.example.com", served_types(
        crd("apples", "Apple", [("v1alpha1", True, True)])))
    registry.set_crd("pears.fruit.example.com", served_types(
        crd("pears", "Pear", [("v1alpha1", True, True), ("v1beta1", True, False)])))
    assert registry.groups()["fruit.example.com"] == ["v1beta1", "v1alpha1"]
    registry.remove_crd("pears.fruit.example.com")
    assert registry.groups()["fruit.example.com"] == ["v1alpha1"]


@pytest.mark.kubectl
async def test_discovery_and_kubectl_follow_the_preferred_version(kubectl: Kubectl) -> None:
    await kubectl("apply", "-f", "-", stdin=json.dumps(crd(
        "apples", "Apple", [("v1alpha1", True, True), ("v1beta1", True, False)])))
    await kubectl("wait", "--for=condition=Established", "crd/apples.fruit.example.com")
    group = json.loads(await kubectl("get", "--raw", "/apis/fruit.example.com"))
    assert group["preferredVersion"] == {"groupVersion": "fruit.example.com/v1beta1",
                                         "version": "v1beta1"}
    assert [v["version"] for v in group["versions"]] == ["v1beta1", "v1alpha1"]
    listed = json.loads(await kubectl("get", "--raw", "/apis"))
    [entry] = [g for g in listed["groups"] if g["name"] == "fruit.example.com"]
    assert (entry["preferredVersion"], entry["versions"]) == (
        group["preferredVersion"], group["versions"])
    # Without conversion (strategy None) both versions read the same object; kubectl's
    # short form asks for the preferred one.
    await kubectl("create", "-f", "-", stdin=json.dumps({
        "apiVersion": "fruit.example.com/v1alpha1", "kind": "Apple",
        "metadata": {"name": "a", "namespace": "default"}}))
    apple = json.loads(await kubectl("get", "apple", "a", "-o", "json"))
    assert apple["apiVersion"] == "fruit.example.com/v1beta1"
    explained = await kubectl("explain", "apple")
    assert ["VERSION:", "v1beta1"] in [line.split() for line in explained.splitlines()]
