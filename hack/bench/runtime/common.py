"""What both benchmark operators and the driver agree on: the CRD, names, the child shape."""

from __future__ import annotations

from typing import Any

GROUP, VERSION, PLURAL, KIND = "bench.example.com", "v1", "widgets", "Widget"
OURS_NAMESPACE, KOPF_NAMESPACE = "bench-ours", "bench-kopf"
#: kopf names itself; our runtime's user agent is given per run (see `ours_agent`), so that
#: no name the product may change can make our requests disappear from the count.
KOPF_AGENTS = ("kopf",)


def ours_agent(run_id: str) -> str:
    return f"bench-runtime-ours-{run_id}"


def crd() -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{PLURAL}.{GROUP}"},
        "spec": {"group": GROUP, "scope": "Namespaced",
                 "names": {"plural": PLURAL, "singular": "widget", "kind": KIND,
                           "listKind": f"{KIND}List"},
                 "versions": [{"name": VERSION, "served": True, "storage": True,
                               "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": {
                                   "type": "object",
                                   "x-kubernetes-preserve-unknown-fields": True}}}]}}


def child_config_map(owner: dict[str, Any]) -> dict[str, Any]:
    """The one ConfigMap a Widget should have, controlled by it."""
    meta = owner["metadata"]
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"{meta['name']}-config", "namespace": meta["namespace"],
                         "ownerReferences": [{"apiVersion": f"{GROUP}/{VERSION}", "kind": KIND,
                                              "name": meta["name"], "uid": meta["uid"],
                                              "controller": True,
                                              "blockOwnerDeletion": True}]},
            "data": {"size": str((owner.get("spec") or {}).get("size", 0))}}
