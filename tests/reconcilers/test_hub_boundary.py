"""reconcilers.machinery.hub on plain objects: validation made once per change
(`spec_views.validated`), the cache holding our kinds as stored; and managedFields read in
both shapes."""

from __future__ import annotations

from typing import Any

import pytest

from api.conversion import convert
from api.errors import InvalidObject
from api.hub_errors import validate_stored
from api.v1alpha1 import DynamoGraphDeployment
from controller.cache import Cache
from controller.managed_fields import owners_of
from reconcilers.machinery import hub, spec_views
from reconcilers.machinery.resources import (
    COMPONENT_DEPLOYMENTS,
    DEPLOYMENT_REQUESTS,
    GRAPH_DEPLOYMENTS,
)
from reconcilers.operator import registry

Json = dict[str, Any]


def graph() -> Json:
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": "g", "namespace": "t", "uid": "u", "resourceVersion": "7"},
            "spec": {"backendFramework": "vllm", "services": {
                "Frontend": {"componentType": "frontend", "replicas": 1},
                "decode": {"componentType": "worker", "replicas": 2}}}}


def test_the_cache_holds_our_kinds_as_stored() -> None:
    cache = Cache(None, by_object=registry.cache_transforms())  # type: ignore[arg-type]
    hub.require_views(cache, GRAPH_DEPLOYMENTS, COMPONENT_DEPLOYMENTS, DEPLOYMENT_REQUESTS)
    def as_view(obj: Json) -> Json:
        return convert(obj, "v1alpha1")

    viewing = Cache(None, by_object={GRAPH_DEPLOYMENTS: as_view})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="as stored"):
        hub.require_views(viewing, GRAPH_DEPLOYMENTS)


def component() -> Json:
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoComponentDeployment",
            "metadata": {"name": "g-decode", "namespace": "t", "uid": "c", "generation": 1},
            "spec": {"backendFramework": "vllm", "serviceName": "decode", "replicas": 2}}


def test_a_graph_is_validated_once_per_change(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Json] = []

    def counted(cls: type[Any], obj: Json) -> list[Any]:
        calls.append(obj)
        return validate_stored(cls, obj)

    monkeypatch.setattr(spec_views, "validate_stored", counted)
    live = convert(graph(), "v1beta1")
    live["metadata"]["generation"] = 1
    live["status"] = {"state": "pending"}
    assert spec_views.validated(DynamoGraphDeployment, live) == []
    # A status write (a new resourceVersion, the same spec) reuses it; a new spec does not.
    written = {**live, "metadata": {**live["metadata"], "resourceVersion": "8"},
               "status": {"state": "successful"}}
    assert spec_views.validated(DynamoGraphDeployment, written) == []
    assert len(calls) == 1
    edited = convert(graph(), "v1beta1")
    edited["metadata"]["generation"] = 2
    edited["spec"]["components"][1]["replicas"] = -1
    for _ in range(2):  # an invalid outcome is kept too, and raised each time
        with pytest.raises(InvalidObject, match=r"spec\.components\[1\]\.replicas"):
            spec_views.validated(DynamoGraphDeployment, edited)
    assert len(calls) == 2


def test_managed_fields_in_both_shapes() -> None:
    def entry(manager: str, fields: Json) -> Json:
        return {"manager": manager, "operation": "Update", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:spec": fields}}

    obj = {"metadata": {"managedFields": [
        entry("alpha-writer", {"f:services": {"f:decode": {"f:replicas": {}}}}),
        entry("beta-writer", {"f:components": {'k:{"name":"decode"}': {"f:replicas": {}}}}),
        entry("other", {"f:components": {'k:{"name":"prefill"}': {"f:replicas": {}}}}),
    ]}}
    alpha = ("spec", "services", "decode", "replicas")
    beta = ("spec", "components", {"name": "decode"}, "replicas")
    assert owners_of(obj, alpha) == {"alpha-writer"}
    assert owners_of(obj, beta) == {"beta-writer"}
    assert owners_of(obj, alpha, beta) == {"alpha-writer", "beta-writer"}
