"""Built-in kinds are decoded as kube-apiserver decodes them: a value its Go field cannot hold
is refused with the JSON decoder's message, and nothing is stored."""

from __future__ import annotations

from typing import Any

from conformance_support import JSON_PATCH, MERGE, Raw, assert_status

Json = dict[str, Any]
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
PODS = "/api/v1/namespaces/default/pods"


def _deployment(name: str, **spec: Any) -> Json:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "a", "image": "b"}]}},
                     **spec}}


def _refusal(detail: str) -> str:
    return f'Deployment in version "v1" cannot be handled as a Deployment: json: {detail}'


async def test_a_replica_count_past_int32_is_refused_and_not_stored(raw: Raw) -> None:
    resp = await raw.request("POST", DEPLOYMENTS, body=_deployment("big", replicas=2147483648))
    status = assert_status(resp, 400, "BadRequest")
    assert status["message"] == _refusal(
        "cannot unmarshal number 2147483648 into Go struct field DeploymentSpec.spec.replicas"
        " of type int32")
    assert (await raw.get(f"{DEPLOYMENTS}/big")).status == 404


async def test_wrong_json_types_name_the_struct_field_and_go_type(raw: Raw) -> None:
    for body, detail in [
        (_deployment("s", replicas="2"),
         "cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type"
         " int32"),
        (_deployment("f", replicas=1.5),
         "cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of"
         " type int32"),
        (_deployment("l", minReadySeconds=True),
         "cannot unmarshal bool into Go struct field DeploymentSpec.spec.minReadySeconds of"
         " type int32"),
        ({**_deployment("m"), "metadata": {"name": "m", "labels": {"tier": 1}}},
         "cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type"
         " string"),
    ]:
        resp = await raw.request("POST", DEPLOYMENTS, body=body)
        assert assert_status(resp, 400, "BadRequest")["message"] == _refusal(detail)


async def test_int64_fields_take_what_int32_fields_refuse(raw: Raw) -> None:
    pod = {"metadata": {"name": "long"},
           "spec": {"terminationGracePeriodSeconds": 4294967296,
                    "containers": [{"name": "a", "image": "b",
                                    "ports": [{"containerPort": 4294967296}]}]}}
    resp = await raw.request("POST", PODS, body=pod)
    assert assert_status(resp, 400, "BadRequest")["message"] == (
        'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number'
        " 4294967296 into Go struct field ContainerPort.spec.containers.ports.containerPort"
        " of type int32")
    pod["spec"]["containers"][0]["ports"] = [{"containerPort": 80}]
    resp = await raw.request("POST", PODS, body=pod)
    assert resp.status == 201, resp.text
    pod["spec"]["securityContext"] = {"runAsUser": 2 ** 63}
    pod["metadata"]["name"] = "longer"
    resp = await raw.request("POST", PODS, body=pod)
    assert "PodSecurityContext.spec.securityContext.runAsUser of type int64" in assert_status(
        resp, 400, "BadRequest")["message"]


async def test_an_update_is_refused_like_a_create(raw: Raw) -> None:
    created = await raw.request("POST", DEPLOYMENTS, body=_deployment("upd"))
    assert created.status == 201, created.text
    body = created.json
    body["spec"]["replicas"] = -2147483649
    resp = await raw.request("PUT", f"{DEPLOYMENTS}/upd", body=body)
    assert assert_status(resp, 400, "BadRequest")["message"] == _refusal(
        "cannot unmarshal number -2147483649 into Go struct field DeploymentSpec.spec.replicas"
        " of type int32")
    assert (await raw.get(f"{DEPLOYMENTS}/upd")).json["spec"]["replicas"] == 1


async def test_a_patch_that_does_not_decode_is_invalid(raw: Raw) -> None:
    assert (await raw.request("POST", DEPLOYMENTS, body=_deployment("pat"))).status == 201
    for content_type, patch in [
            (MERGE, {"spec": {"replicas": 2147483648}}),
            (JSON_PATCH, [{"op": "replace", "path": "/spec/replicas", "value": 2147483648}])]:
        resp = await raw.request("PATCH", f"{DEPLOYMENTS}/pat", body=patch,
                                 content_type=content_type)
        status = assert_status(resp, 422, "Invalid")
        detail = ("json: cannot unmarshal number 2147483648 into Go struct field"
                  " DeploymentSpec.spec.replicas of type int32")
        assert status["message"].startswith(' "" is invalid: patch: Invalid value: "{')
        assert status["message"].endswith(f": {detail}")
        cause = status["details"]["causes"][0]
        assert (cause["field"], cause["reason"]) == ("patch", "FieldValueInvalid")
    assert (await raw.get(f"{DEPLOYMENTS}/pat")).json["spec"]["replicas"] == 1


async def test_a_scale_is_decoded_as_an_autoscaling_v1_scale(raw: Raw) -> None:
    assert (await raw.request("POST", DEPLOYMENTS, body=_deployment("sc"))).status == 201
    scale = (await raw.get(f"{DEPLOYMENTS}/sc/scale")).json
    scale["spec"]["replicas"] = "3"
    resp = await raw.request("PUT", f"{DEPLOYMENTS}/sc/scale", body=scale)
    assert assert_status(resp, 400, "BadRequest")["message"] == (
        'Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal string into'
        " Go struct field ScaleSpec.spec.replicas of type int32")
    resp = await raw.request("PATCH", f"{DEPLOYMENTS}/sc/scale", content_type=MERGE,
                             body={"spec": {"replicas": 2147483648}})
    assert assert_status(resp, 422, "Invalid")["message"].endswith(
        ": json: cannot unmarshal number 2147483648 into Go struct field ScaleSpec.spec.replicas"
        " of type int32")
    assert (await raw.get(f"{DEPLOYMENTS}/sc")).json["spec"]["replicas"] == 1
