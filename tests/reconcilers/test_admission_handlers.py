"""The validating handlers of our kinds: create and update rules, replica ownership by
identity, warnings, and what is always admitted."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from api.v1alpha1 import DynamoComponentDeployment, DynamoGraphDeployment, DynamoModel
from controller.webhook import AdmissionRequest
from reconcilers.operator.admission import WEBHOOKS, AdmissionPolicy, decide

Json = dict[str, Any]
OPERATOR = "system:serviceaccount:dynamo-system:dynamo-operator"
POLICY = AdmissionPolicy(operator_identity=OPERATOR)


def _dgd(**service: Any) -> Json:
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": "g", "namespace": "ns"},
            "spec": {"backendFramework": "vllm", "services": {"Frontend": {
                "componentType": "frontend", "replicas": 1, **service}}}}


def _request(obj: Json | None, old: Json | None = None, user: str = "alice",
             operation: str | None = None) -> AdmissionRequest:
    op = operation or ("UPDATE" if old is not None else "CREATE")
    return AdmissionRequest(uid="u", operation=op, resource="dynamographdeployments",
                            subresource="", name="g", namespace="ns", username=user,
                            groups=(), object=obj, old_object=old, dry_run=False, raw={})


def test_paths_and_names_are_the_originals() -> None:
    assert [w.path for w in WEBHOOKS] == [
        "/validate-nvidia-com-v1alpha1-dynamocomponentdeployment",
        "/validate-nvidia-com-v1alpha1-dynamographdeployment",
        "/validate-nvidia-com-v1alpha1-dynamographdeploymentrequest",
        "/validate-nvidia-com-v1alpha1-dynamographdeploymentscalingadapter",
        "/validate-nvidia-com-v1alpha1-dynamomodel"]
    assert WEBHOOKS[1].name == "vdynamographdeployment.kb.io"


def test_an_invalid_create_is_refused_naming_the_field() -> None:
    response = decide(DynamoGraphDeployment, _request(_dgd(replicas=-1)), POLICY)
    assert not response.allowed and response.code == 422
    assert "spec.services.Frontend.replicas" in response.message
    assert response.cause == "invalid_config"  # the metrics' reason; never sent
    assert "cause" not in str(response.to_json("u"))


def test_backend_framework_is_immutable() -> None:
    new = _dgd()
    new["spec"]["backendFramework"] = "sglang"
    response = decide(DynamoGraphDeployment, _request(new, _dgd()), POLICY)
    assert not response.allowed
    assert "spec.backendFramework: is immutable" in response.message
    assert response.cause == "immutable_field_changed"


def test_adapter_owned_replicas_change_only_by_the_operator_or_a_planner() -> None:
    old = _dgd(scalingAdapter={"enabled": True})
    new = copy.deepcopy(old)
    new["spec"]["services"]["Frontend"]["replicas"] = 3
    refused = decide(DynamoGraphDeployment, _request(new, old, "alice"), POLICY)
    assert not refused.allowed
    assert "spec.services.Frontend.replicas: cannot be changed directly" in refused.message
    assert refused.cause == "forbidden"
    assert decide(DynamoGraphDeployment, _request(new, old, OPERATOR), POLICY).allowed
    planner = "system:serviceaccount:team:planner-serviceaccount"
    assert decide(DynamoGraphDeployment, _request(new, old, planner), POLICY).allowed
    assert not decide(DynamoGraphDeployment, _request(new, old, ""), POLICY).allowed
    # Without a known identity, the original's operator ServiceAccount is trusted.
    legacy = "system:serviceaccount:x:rel-dynamo-operator-controller-manager"
    assert decide(DynamoGraphDeployment, _request(new, old, legacy), AdmissionPolicy()).allowed
    assert not decide(DynamoGraphDeployment, _request(new, old, legacy), POLICY).allowed


def test_deprecations_are_warnings() -> None:
    response = decide(DynamoGraphDeployment, _request(_dgd(dynamoNamespace="x")), POLICY)
    assert response.allowed
    assert any(w.startswith("spec.services.Frontend.dynamoNamespace: deprecated")
               for w in response.warnings)


def test_terminating_updates_and_deletes_are_admitted() -> None:
    old = _dgd()
    old["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    old["metadata"]["finalizers"] = ["nvidia.com/finalizer"]
    new = copy.deepcopy(old)
    new["spec"]["backendFramework"] = "sglang"
    new["metadata"]["finalizers"] = []
    assert decide(DynamoGraphDeployment, _request(new, old), POLICY).allowed
    assert decide(DynamoGraphDeployment, _request(None, old, operation="DELETE"),
                  POLICY).allowed


def test_model_fields_are_immutable() -> None:
    old: Json = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoModel",
                 "metadata": {"name": "m", "namespace": "ns"},
                 "spec": {"modelName": "m", "baseModelName": "base", "modelType": "base"}}
    new = copy.deepcopy(old)
    new["spec"]["baseModelName"] = "other"
    response = decide(DynamoModel, _request(new, old), POLICY)
    assert not response.allowed and "spec.baseModelName" in response.message
    assert response.cause == "immutable_field_changed"


def test_a_review_without_an_object_is_a_bad_request() -> None:
    response = decide(DynamoGraphDeployment, _request(None), POLICY)
    assert (response.allowed, response.code, response.cause) == (False, 400, "bad_request")


def test_an_immutable_change_beside_invalid_config_is_counted_as_immutable() -> None:
    new = _dgd(replicas=-1)
    new["spec"]["backendFramework"] = "sglang"
    response = decide(DynamoGraphDeployment, _request(new, _dgd()), POLICY)
    assert "replicas" in response.message and "immutable" in response.message
    assert response.cause == "immutable_field_changed"


def test_a_v1beta1_component_type_change_is_immutable() -> None:
    def graph(kind: str) -> Json:
        return {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
                "metadata": {"name": "g", "namespace": "ns"},
                "spec": {"backendFramework": "vllm", "components": [
                    {"name": "Worker", "type": kind, "podTemplate": {"spec": {"containers": [
                        {"name": "main", "image": "nvcr.io/x/y:1"}]}}}]}}
    response = decide(DynamoGraphDeployment, _request(graph("decode"), graph("worker")),
                      POLICY)
    assert "spec.components[0].type" in response.message
    assert response.cause == "immutable_field_changed"


def test_namespaces_of_another_operator_are_admitted_unchecked() -> None:
    policy = AdmissionPolicy(operator_identity=OPERATOR, skip_namespace=lambda ns: ns == "ns")
    assert decide(DynamoGraphDeployment, _request(_dgd(replicas=-1)), policy).allowed


def test_the_origin_version_must_be_a_version_in_both_api_versions() -> None:
    """As the original's webhook: `annotation ... has invalid value`, naming the field."""
    alpha = _dgd()
    alpha["metadata"]["annotations"] = {"nvidia.com/dynamo-operator-origin-version": "x.y"}
    beta = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": "g", "namespace": "ns", "annotations": {
                "nvidia.com/dynamo-operator-origin-version": "x.y"}},
            "spec": {"backendFramework": "vllm", "components": [{
                "name": "Frontend", "type": "frontend", "replicas": 1}]}}
    for obj in (alpha, beta):
        response = decide(DynamoGraphDeployment, _request(obj), POLICY)
        assert not response.allowed and response.code == 422, response
        assert response.message.startswith(
            "metadata.annotations[nvidia.com/dynamo-operator-origin-version]: Invalid value: "
            '"x.y": must be valid semver'), response.message
        good = copy.deepcopy(obj)
        good["metadata"]["annotations"] = {"nvidia.com/dynamo-operator-origin-version": "1.2.0"}
        assert decide(DynamoGraphDeployment, _request(good), POLICY).allowed


def test_a_v1beta1_compilation_cache_names_an_existing_claim() -> None:
    """v1beta1 has no `spec.pvcs`: its compilationCache names a claim of the namespace, which
    the v1alpha1 view's rule (declared in spec.pvcs) does not hold for (as for stored ones)."""
    beta = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": "g", "namespace": "ns"},
            "spec": {"backendFramework": "vllm", "components": [{
                "name": "Worker", "type": "worker", "replicas": 1,
                "compilationCache": {"pvcName": "cache"},
                "podTemplate": {"spec": {"containers": [{"name": "main", "image": "i:1"}]}}}]}}
    response = decide(DynamoGraphDeployment, _request(beta), POLICY)
    assert response.allowed, response.message
    # The v1alpha1 form still declares its claims.
    alpha = _dgd(volumeMounts=[{"name": "cache", "useAsCompilationCache": True}])
    response = decide(DynamoGraphDeployment, _request(alpha), POLICY)
    assert not response.allowed and 'PVC "cache" is not declared in spec.pvcs' in response.message


def test_a_v1alpha1_frontend_sidecar_needs_its_container_name_free() -> None:
    """As the original: the generated `sidecar-frontend` may not clash with a container of
    extraPodSpec (a 422 naming the field); a graph without the clash is admitted."""
    clash = _dgd(frontendSidecar={"image": "fe:1"}, extraPodSpec={
        "mainContainer": {"image": "i:1"},
        "containers": [{"name": "sidecar-frontend", "image": "x:1"}]})
    response = decide(DynamoGraphDeployment, _request(clash), POLICY)
    assert not response.allowed and response.code == 422
    assert response.message.startswith(
        "spec.services.Frontend.frontendSidecar: Invalid value: cannot inject the frontend "
        'sidecar: a container named "sidecar-frontend" already exists in '
        "extraPodSpec.containers"), response.message
    fine = copy.deepcopy(clash)
    fine["spec"]["services"]["Frontend"]["extraPodSpec"]["containers"][0]["name"] = "logs"
    assert decide(DynamoGraphDeployment, _request(fine), POLICY).allowed
    dcd = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoComponentDeployment",
           "metadata": {"name": "d", "namespace": "ns"},
           "spec": copy.deepcopy(clash["spec"]["services"]["Frontend"])}
    request = dataclasses.replace(_request(dcd), resource="dynamocomponentdeployments")
    response = decide(DynamoComponentDeployment, request, POLICY)
    assert not response.allowed and "spec.frontendSidecar: Invalid value" in response.message
