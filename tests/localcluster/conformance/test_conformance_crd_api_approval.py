"""CRDs in protected groups (`*.k8s.io`, `*.kubernetes.io`) need the api-approved annotation.

As apiextensions-apiserver does for v1: a create without it is 422 (Required on
`metadata.annotations[api-approved.kubernetes.io]`), one that is neither a URL nor
`unapproved...` is Invalid; an accepted CRD carries KubernetesAPIApprovalPolicyConformant.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from conformance_support import Raw

from hack.localcluster.server import LocalCluster

Json = dict[str, Any]
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
ANNOTATION = "api-approved.kubernetes.io"
REPO = Path(__file__).resolve().parents[3]


def _crd(group: str, annotation: str | None = None) -> Json:
    meta: Json = {"name": f"things.{group}"}
    if annotation is not None:
        meta["annotations"] = {ANNOTATION: annotation}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": meta, "spec": {
                "group": group, "scope": "Namespaced",
                "names": {"plural": "things", "kind": "Thing"},
                "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                    "openAPIV3Schema": {"type": "object",
                                        "x-kubernetes-preserve-unknown-fields": True}}}]}}


async def _condition(raw: Raw, cluster: LocalCluster, name: str) -> Json | None:
    await cluster.settle()
    crd = (await raw.get(f"{CRDS}/{name}")).json
    return next((c for c in crd.get("status", {}).get("conditions", [])
                 if c["type"] == "KubernetesAPIApprovalPolicyConformant"), None)


async def test_protected_group_without_the_annotation_is_refused(raw: Raw) -> None:
    resp = await raw.request("POST", CRDS, body=_crd("example.k8s.io"))
    assert resp.status == 422
    assert resp.json["details"]["causes"] == [{
        "reason": "FieldValueRequired",
        "message": 'Required value: protected groups must have approval annotation'
                   ' "api-approved.kubernetes.io", see'
                   ' https://github.com/kubernetes/enhancements/pull/1111',
        "field": "metadata.annotations[api-approved.kubernetes.io]"}]
    bad = await raw.request("POST", CRDS, body=_crd("example.kubernetes.io", "yes please"))
    assert bad.status == 422
    assert bad.json["details"]["causes"][0]["message"].startswith(
        'Invalid value: "yes please": protected groups must have approval annotation'
        ' "api-approved.kubernetes.io" with either a URL or a reason starting with'
        ' "unapproved"')


async def test_approved_and_unapproved_crds_get_the_condition(
        raw: Raw, cluster: LocalCluster) -> None:
    url = "https://github.com/kubernetes/enhancements/pull/1111"
    assert (await raw.request("POST", CRDS, body=_crd("a.k8s.io", url))).status == 201
    approved = await _condition(raw, cluster, "things.a.k8s.io")
    assert approved is not None
    assert (approved["status"], approved["reason"], approved["message"]) == (
        "True", "ApprovedAnnotation", f"approved in {url}")
    created = await raw.request("POST", CRDS, body=_crd("b.k8s.io", "unapproved, testing"))
    assert created.status == 201
    bypassed = await _condition(raw, cluster, "things.b.k8s.io")
    assert bypassed is not None
    assert (bypassed["status"], bypassed["reason"], bypassed["message"]) == (
        "False", "UnapprovedAnnotation", 'not approved: "unapproved, testing"')
    plain = await raw.request("POST", CRDS, body=_crd("example.com"))
    assert plain.status == 201
    assert await _condition(raw, cluster, "things.example.com") is None
    # An update that leaves the approval state as it is passes; one that drops it does not.
    crd = (await raw.get(f"{CRDS}/things.a.k8s.io")).json
    crd["metadata"]["labels"] = {"touched": "yes"}
    assert (await raw.request("PUT", f"{CRDS}/things.a.k8s.io", body=crd)).status == 200
    crd = (await raw.get(f"{CRDS}/things.a.k8s.io")).json
    del crd["metadata"]["annotations"]
    assert (await raw.request("PUT", f"{CRDS}/things.a.k8s.io", body=crd)).status == 422


async def test_the_inference_pool_crd_of_the_repository_is_accepted(raw: Raw) -> None:
    crd = yaml.safe_load((REPO / "hack" / "crds" / "inferencepool.yaml").read_text())
    resp = await raw.request("POST", CRDS, body=crd)
    assert resp.status == 201, resp.text
