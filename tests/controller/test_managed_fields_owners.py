"""`owners_of` reads managedFields as the API server records them: granular list-map items
at either version's path, and an atomic ancestor (as Kubernetes 1.20 records our CRDs' lists,
from a schema it deduces) owning everything under it."""

from __future__ import annotations

from typing import Any

from controller.managed_fields import owners_of

REPLICAS_BETA = ("spec", "components", {"name": "decode"}, "replicas")
REPLICAS_ALPHA = ("spec", "services", "decode", "replicas")


def entry(manager: str, fields: dict[str, Any], version: str = "nvidia.com/v1beta1"
          ) -> dict[str, Any]:
    return {"manager": manager, "operation": "Update", "apiVersion": version,
            "fieldsType": "FieldsV1", "fieldsV1": fields}


def graph(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"managedFields": list(entries)}}


def test_a_granular_item_field_is_owned_by_its_writer_only() -> None:
    obj = graph(entry("adapter", {"f:spec": {"f:components": {
                    'k:{"name":"decode"}': {"f:replicas": {}}}}}),
                entry("user", {"f:spec": {"f:components": {
                    'k:{"name":"decode"}': {".": {}, "f:name": {}, "f:image": {}}}}}))
    assert owners_of(obj, REPLICAS_BETA, REPLICAS_ALPHA) == {"adapter"}


def test_the_other_versions_path_is_read_too() -> None:
    obj = graph(entry("kubectl-edit", {"f:spec": {"f:services": {"f:decode": {
        "f:replicas": {}}}}}, "nvidia.com/v1alpha1"))
    assert owners_of(obj, REPLICAS_BETA, REPLICAS_ALPHA) == {"kubectl-edit"}


def test_an_atomic_list_owns_every_field_of_its_items() -> None:
    obj = graph(entry("adapter", {"f:spec": {"f:components": {}}}),
                entry("user", {"f:metadata": {"f:labels": {"f:team": {}}}}))
    assert owners_of(obj, REPLICAS_BETA, REPLICAS_ALPHA) == {"adapter"}


def test_a_sibling_leaf_owns_nothing_below_another_field() -> None:
    obj = graph(entry("user", {"f:spec": {"f:backendFramework": {}, "f:components": {
        'k:{"name":"prefill"}': {"f:replicas": {}}}}}))
    assert owners_of(obj, REPLICAS_BETA, REPLICAS_ALPHA) == set()
    assert owners_of(graph(), REPLICAS_BETA) == set()
