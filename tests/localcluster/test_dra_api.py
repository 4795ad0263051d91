"""resource.k8s.io/v1 served over HTTP: discovery, OpenAPI, CRUD, defaults, and the 422s of
kube-apiserver's resource validation (and a pod's resourceClaims), worded as it words them.

kube-apiserver 1.20 (`tests/realcluster`) serves no resource.k8s.io/v1, so no differential
case exists; the texts come from `pkg/apis/resource/validation/validation.go` and
`pkg/apis/core/validation/validation.go`."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

Json = dict[str, Any]
NS = "default"


def claim(name: str, **exactly: Any) -> Json:
    request = {"deviceClassName": "gpu.nvidia.com", **exactly}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": request}]}}}


async def _raw(api: client.ApiClient, method: str, path: str, body: Any = None) -> tuple[int,
                                                                                      Json]:
    try:
        resp = await api.call_api(path, method, body=body, _preload_content=False,
                                  header_params={"Content-Type": "application/json"},
                                  response_types_map={})
    except ApiException as err:
        return int(err.status), json.loads(err.body)
    return resp.status, json.loads(await resp.read())


async def test_discovery_and_openapi(api: client.ApiClient) -> None:
    status, doc = await _raw(api, "GET", "/apis/resource.k8s.io/v1")
    assert status == 200
    served = {r["name"]: r["namespaced"] for r in doc["resources"]}
    assert served == {"deviceclasses": False, "resourceclaims": True,
                      "resourceclaims/status": True, "resourceclaimtemplates": True,
                      "resourceslices": False}
    status, groups = await _raw(api, "GET", "/apis")
    group = next(g for g in groups["groups"] if g["name"] == "resource.k8s.io")
    assert group["preferredVersion"]["version"] == "v1"
    status, spec = await _raw(api, "GET", "/openapi/v3/apis/resource.k8s.io/v1")
    schemas = spec["components"]["schemas"]
    assert schemas["io.k8s.api.resource.v1.ResourceClaim"][
        "x-kubernetes-group-version-kind"] == [
        {"group": "resource.k8s.io", "kind": "ResourceClaim", "version": "v1"}]
    capacity = schemas["io.k8s.api.resource.v1.DeviceCapacity"]["properties"]["value"]
    assert "Quantity" in json.dumps(capacity)


async def test_claim_crud_defaults_and_immutable_spec(api: client.ApiClient) -> None:
    resource = client.ResourceV1Api(api)
    created = await resource.create_namespaced_resource_claim(NS, claim("one"))
    exactly = created.spec.devices.requests[0].exactly
    assert (exactly.allocation_mode, exactly.count) == ("ExactCount", 1)
    listed = await resource.list_namespaced_resource_claim(NS)
    assert [c.metadata.name for c in listed.items] == ["one"]

    body = claim("one", count=2)
    body["metadata"]["resourceVersion"] = created.metadata.resource_version
    status, err = await _raw(api, "PUT",
                             f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims/one",
                             body)
    assert status == 422
    assert err["message"].startswith('ResourceClaim.resource.k8s.io "one" is invalid: spec:'
                                     " Invalid value: ")
    assert err["message"].endswith(": field is immutable")

    # reservedFor without an allocation is refused on the status subresource.
    current = await resource.read_namespaced_resource_claim("one", NS)
    status, err = await _raw(
        api, "PUT", f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims/one/status",
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "one", "resourceVersion": current.metadata.resource_version},
         "status": {"reservedFor": [{"resource": "pods", "name": "p", "uid": "u-1"}]}})
    assert status == 422
    assert err["details"]["causes"] == [{
        "reason": "FieldValueForbidden", "field": "status.reservedFor",
        "message": "Forbidden: may not be specified when `allocated` is not set"}]

    status, _ = await _raw(api, "DELETE",
                           f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims/one")
    assert status == 200
    assert not (await resource.list_namespaced_resource_claim(NS)).items


@pytest.mark.parametrize(("body", "causes"), [
    (claim("bad", count=-1, allocationMode="ExactCount"),
     [("FieldValueInvalid", "spec.devices.requests[0].exactly.count",
       "Invalid value: -1: must be greater than zero")]),
    (claim("bad", allocationMode="Some"),
     [("FieldValueNotSupported", "spec.devices.requests[0].exactly.allocationMode",
       'Unsupported value: "Some": supported values: "All", "ExactCount"')]),
    (claim("bad", allocationMode="All", count=2),
     [("FieldValueInvalid", "spec.devices.requests[0].exactly.count",
       "Invalid value: 2: must not be specified when allocationMode is 'All'")]),
    (claim("bad", deviceClassName=""),
     [("FieldValueRequired", "spec.devices.requests[0].exactly.deviceClassName",
       "Required value")]),
    ({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "bad"},
      "spec": {"devices": {"requests": [{"name": "gpu"}]}}},
     [("FieldValueRequired", "spec.devices.requests[0]",
       "Required value: exactly one of `exactly` or `firstAvailable` is required")]),
    ({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "bad"},
      "spec": {"devices": {"requests": [{"name": "GPU", "exactly": {
          "deviceClassName": "gpu.nvidia.com", "selectors": [{}]}}]}}},
     [("FieldValueInvalid", "spec.devices.requests[0].name",
       'Invalid value: "GPU": a lowercase RFC 1123 label must consist of lower case'
       " alphanumeric characters or '-', and must start and end with an alphanumeric"
       " character (e.g. 'my-name',  or '123-abc', regex used for validation is"
       " '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"),
      ("FieldValueRequired", "spec.devices.requests[0].exactly.selectors[0].cel",
       "Required value")]),
])
async def test_claim_validation(api: client.ApiClient, body: Json,
                                causes: list[tuple[str, str, str]]) -> None:
    status, err = await _raw(api, "POST",
                             f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims", body)
    assert status == 422, err
    assert [(c["reason"], c["field"], c["message"]) for c in err["details"]["causes"]] == causes
    first = causes[0]
    assert err["message"].startswith(
        f'ResourceClaim.resource.k8s.io "bad" is invalid: {"[" if len(causes) > 1 else ""}'
        f"{first[1]}: {first[2]}")


async def test_template_slice_and_class(api: client.ApiClient) -> None:
    resource = client.ResourceV1Api(api)
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "one-gpu"},
                "spec": {"spec": claim("x")["spec"]}}
    created = await resource.create_namespaced_resource_claim_template(NS, template)
    assert created.spec.spec.devices.requests[0].exactly.count == 1
    template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = 3
    template["metadata"]["resourceVersion"] = created.metadata.resource_version
    status, err = await _raw(
        api, "PUT", f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaimtemplates/one-gpu",
        template)
    assert status == 422 and err["details"]["causes"][0]["field"] == "spec"

    await resource.create_device_class({
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}})
    slice_body: Json = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                        "metadata": {"name": "n1-gpu"},
                        "spec": {"driver": "gpu.example.com", "nodeName": "n1",
                                 "pool": {"name": "n1", "resourceSliceCount": 1},
                                 "devices": [{"name": "gpu-0",
                                              "attributes": {"index": {"int": 0}}}]}}
    stored = await resource.create_resource_slice(slice_body)
    assert stored.spec.pool.generation == 0

    bad = json.loads(json.dumps(slice_body))
    bad["metadata"]["name"] = "bad"
    bad["spec"].update(driver="", pool={"name": "n1", "resourceSliceCount": 0}, allNodes=True)
    bad["spec"]["devices"][0]["attributes"]["index"] = {}
    status, err = await _raw(api, "POST", "/apis/resource.k8s.io/v1/resourceslices", bad)
    assert status == 422
    assert [(c["field"], c["message"]) for c in err["details"]["causes"]] == [
        ("spec.driver", "Required value"),
        ("spec.driver", 'Invalid value: "": a lowercase RFC 1123 subdomain must consist of lower'
         " case alphanumeric characters, '-' or '.', and must start and end with an"
         " alphanumeric character (e.g. 'example.com', regex used for validation is"
         " '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
        ("spec.pool.resourceSliceCount", "Invalid value: 0: must be greater than zero"),
        ("spec", 'Invalid value: "{`nodeName`, `allNodes`}": exactly one of `nodeName`,'
         " `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple"
         " fields are set"),
        ("spec.devices[0].attributes[index]",
         'Invalid value: "": exactly one value must be specified'),
    ]
    moved = json.loads(json.dumps(slice_body))
    moved["metadata"]["resourceVersion"] = stored.metadata.resource_version
    moved["spec"]["nodeName"] = "n2"
    status, err = await _raw(api, "PUT", "/apis/resource.k8s.io/v1/resourceslices/n1-gpu",
                             moved)
    assert status == 422
    assert err["message"] == ('ResourceSlice.resource.k8s.io "n1-gpu" is invalid: spec.nodeName:'
                              ' Invalid value: "n2": field is immutable')


@pytest.mark.parametrize(("claims", "container_claims", "causes"), [
    ([{"name": "gpu"}], [],
     [("FieldValueInvalid", "spec.resourceClaims[0]",
       'Invalid value: core.PodResourceClaim{Name:"gpu", ResourceClaimName:(*string)(nil),'
       " ResourceClaimTemplateName:(*string)(nil)}: must specify one of:"
       " `resourceClaimName`, `resourceClaimTemplateName`")]),
    ([{"name": "gpu", "resourceClaimName": "a", "resourceClaimTemplateName": "b"}], [],
     [("FieldValueInvalid", "spec.resourceClaims[0]",
       'Invalid value: core.PodResourceClaim{Name:"gpu",'
       " ResourceClaimName:(*string)(0xc000010000),"
       " ResourceClaimTemplateName:(*string)(0xc000010000)}: at most one of"
       " `resourceClaimName` or `resourceClaimTemplateName` may be specified")]),
    ([{"name": "gpu", "resourceClaimTemplateName": "t"}], [{"name": "other"}],
     [("FieldValueNotFound", "spec.containers[0].resources.claims[0]",
       'Not found: "other": must be one of the names in pod.spec.resourceClaims: gpu')]),
    ([], [{"name": "gpu"}],
     [("FieldValueNotFound", "spec.containers[0].resources.claims[0]",
       'Not found: "gpu": must be one of the names in pod.spec.resourceClaims which is'
       " empty")]),
])
async def test_pod_resource_claims_validation(api: client.ApiClient, claims: list[Json],
                                              container_claims: list[Json],
                                              causes: list[tuple[str, str, str]]) -> None:
    container: Json = {"name": "app", "image": "nginx:1.27"}
    if container_claims:
        container["resources"] = {"claims": container_claims}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [container], "resourceClaims": claims}}
    status, err = await _raw(api, "POST", f"/api/v1/namespaces/{NS}/pods", pod)
    assert status == 422, err
    assert [(c["reason"], c["field"], c["message"]) for c in err["details"]["causes"]] == causes
