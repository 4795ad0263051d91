"""APIs and objects every kube-apiserver has: ReplicationControllers, APIServices (with the
local ones it registers), CertificateSigningRequests, CSIStorageCapacities, TokenReviews and
the access reviews, listed in discovery; and the `default/kubernetes` Service with its
Endpoints and EndpointSlice."""

from __future__ import annotations

import base64
from typing import Any

from conformance_support import TABLE, Raw, install_crd
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from kubernetes_asyncio import client

from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import Kubectl, eventually
from hack.localcluster.users import service_account

Json = dict[str, Any]
CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
RCS = "/api/v1/namespaces/default/replicationcontrollers"


async def test_discovery_lists_the_always_served_apis(raw: Raw) -> None:
    groups = {g["name"] for g in (await raw.get("/apis")).json["groups"]}
    assert {"apiregistration.k8s.io", "certificates.k8s.io", "authentication.k8s.io",
            "authorization.k8s.io"} <= groups
    core = {r["name"]: r for r in (await raw.get("/api/v1")).json["resources"]}
    assert core["replicationcontrollers"]["shortNames"] == ["rc"]
    assert {"replicationcontrollers/status", "replicationcontrollers/scale"} <= set(core)
    certs = {r["name"]: r for r in (
        await raw.get("/apis/certificates.k8s.io/v1")).json["resources"]}
    assert certs["certificatesigningrequests/approval"]["verbs"] == ["get", "patch", "update"]
    authn = {r["name"]: r for r in (
        await raw.get("/apis/authentication.k8s.io/v1")).json["resources"]}
    assert authn["tokenreviews"] == {"name": "tokenreviews", "singularName": "tokenreview",
                                     "namespaced": False, "kind": "TokenReview",
                                     "verbs": ["create"]}
    assert set(authn) == {"selfsubjectreviews", "tokenreviews"}
    authz = {r["name"] for r in (
        await raw.get("/apis/authorization.k8s.io/v1")).json["resources"]}
    assert authz == {"localsubjectaccessreviews", "selfsubjectaccessreviews",
                     "selfsubjectrulesreviews", "subjectaccessreviews"}
    storage = {r["name"] for r in (await raw.get("/apis/storage.k8s.io/v1")).json["resources"]}
    assert "csistoragecapacities" in storage
    for path in (RCS, "/apis/apiregistration.k8s.io/v1/apiservices", CSRS,
                 "/apis/storage.k8s.io/v1/csistoragecapacities"):
        assert (await raw.get(path)).status == 200, path
    assert (await raw.get("/apis/authentication.k8s.io/v1/tokenreviews")).status == 405


async def test_replication_controller_defaults_validation_and_scale(raw: Raw) -> None:
    template = {"metadata": {"labels": {"app": "rc"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    created = await raw.request("POST", RCS, body={"metadata": {"name": "rc"},
                                                   "spec": {"template": template}})
    assert created.status == 201, created.text
    rc = created.json
    assert rc["spec"]["selector"] == {"app": "rc"} and rc["spec"]["replicas"] == 1
    assert rc["metadata"]["labels"] == {"app": "rc"} and rc["metadata"]["generation"] == 1
    bad = await raw.request("POST", RCS, body={"metadata": {"name": "bad"}, "spec": {
        "selector": {"app": "other"}, "template": template}})
    assert bad.status == 422
    assert bad.json["details"]["causes"][0]["field"] == "spec.template.metadata.labels"
    scale = await raw.get(f"{RCS}/rc/scale")
    assert scale.json["spec"] == {"replicas": 1}
    assert scale.json["status"]["selector"] == "app=rc"
    scaled = await raw.request("PATCH", f"{RCS}/rc/scale", body={"spec": {"replicas": 3}},
                               content_type="application/merge-patch+json")
    assert scaled.status == 200, scaled.text
    assert (await raw.get(f"{RCS}/rc")).json["spec"]["replicas"] == 3
    status = await raw.request("PUT", f"{RCS}/rc/status", body={
        **(await raw.get(f"{RCS}/rc")).json, "status": {"replicas": 3, "readyReplicas": 3}})
    assert status.json["status"]["readyReplicas"] == 3


async def test_local_api_services_are_registered_and_follow_crds(
        raw: Raw, api: client.ApiClient, cluster: LocalCluster) -> None:
    path = "/apis/apiregistration.k8s.io/v1/apiservices"
    items = {s["metadata"]["name"]: s for s in (await raw.get(path)).json["items"]}
    assert {"v1.", "v1.apps", "v2.autoscaling", "v1.apiregistration.k8s.io"} <= set(items)
    apps = items["v1.apps"]
    assert apps["spec"] == {"group": "apps", "version": "v1", "groupPriorityMinimum": 17800,
                            "versionPriority": 15}
    assert apps["metadata"]["labels"] == {"kube-aggregator.kubernetes.io/automanaged": "onstart"}
    condition = apps["status"]["conditions"][0]
    assert (condition["type"], condition["status"], condition["reason"], condition["message"]) \
        == ("Available", "True", "Local", "Local APIServices are always available")
    await install_crd(api)
    await cluster.settle()
    crd_service = (await raw.get(f"{path}/v1.conformance.example.com")).json
    assert crd_service["spec"]["groupPriorityMinimum"] == 1000
    assert crd_service["spec"]["versionPriority"] == 100
    assert crd_service["metadata"]["labels"] == {
        "kube-aggregator.kubernetes.io/automanaged": "true"}
    await client.ApiextensionsV1Api(api).delete_custom_resource_definition(
        "widgets.conformance.example.com")

    async def gone() -> bool:
        return (await raw.get(f"{path}/v1.conformance.example.com")).status == 404
    await eventually(gone, within=10, what="the CRD's APIService removed")


def _csr_pem() -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    csr = (x509.CertificateSigningRequestBuilder()
           .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "alice")]))
           .sign(key, hashes.SHA256()))
    return base64.b64encode(csr.public_bytes(serialization.Encoding.PEM)).decode()


async def test_certificate_signing_request_records_the_requester_and_approval(
        raw: Raw, cluster: LocalCluster) -> None:
    body = {"metadata": {"name": "alice"}, "spec": {
        "request": _csr_pem(), "signerName": "kubernetes.io/kube-apiserver-client",
        "usages": ["client auth"], "username": "forged"}}
    created = await raw.request("POST", CSRS, body=body)
    assert created.status == 201, created.text
    spec = created.json["spec"]
    assert spec["username"] == cluster.users[cluster.config.token].username
    assert "system:authenticated" in spec["groups"]
    assert "status" not in created.json or created.json["status"] == {}
    bad = await raw.request("POST", CSRS, body={"metadata": {"name": "bad"}, "spec": {
        "request": base64.b64encode(b"junk").decode(), "signerName": "nope",
        "usages": ["flying"]}})
    assert bad.status == 422
    assert {c["field"] for c in bad.json["details"]["causes"]} == {
        "spec.request", "spec.signerName", "spec.usages[0]"}
    current = (await raw.get(f"{CSRS}/alice")).json
    sneaky = await raw.request("PUT", f"{CSRS}/alice/status", body={**current, "status": {
        "conditions": [{"type": "Approved", "reason": "Sneaky", "message": "no"}]}})
    assert sneaky.status == 422
    assert sneaky.json["details"]["causes"] == [{
        "reason": "FieldValueForbidden", "field": "status.conditions",
        "message": 'Forbidden: updates may not add a condition of type "Approved"'}]
    approved = await raw.request("PUT", f"{CSRS}/alice/approval", body={**current, "status": {
        "conditions": [{"type": "Approved", "reason": "Test", "message": "ok"}],
        "certificate": base64.b64encode(b"not issued by approval").decode()}})
    assert approved.status == 200, approved.text
    condition = approved.json["status"]["conditions"][0]
    assert (condition["type"], condition["status"]) == ("Approved", "True")
    assert condition["lastUpdateTime"] and "certificate" not in approved.json["status"]
    denied = await raw.request("PUT", f"{CSRS}/alice/approval", body={
        **approved.json, "status": {"conditions": [
            *approved.json["status"]["conditions"],
            {"type": "Denied", "reason": "Test", "message": "no"}]}})
    assert denied.status == 422
    removed = await raw.request("PUT", f"{CSRS}/alice/approval", body={
        **approved.json, "status": {"conditions": []}})
    assert removed.status == 422
    assert 'may not remove a condition of type \\"Approved\\"' in removed.text


async def test_kubectl_certificate_approve_uses_the_approval_subresource(
        raw: Raw, kubectl: Kubectl) -> None:
    await raw.request("POST", CSRS, body={"metadata": {"name": "bob"}, "spec": {
        "request": _csr_pem(), "signerName": "example.com/signer", "usages": ["client auth"]}})
    await kubectl("certificate", "approve", "bob")  # a protobuf PUT of .../approval
    conditions = (await raw.get(f"{CSRS}/bob")).json["status"]["conditions"]
    assert [(c["type"], c["reason"]) for c in conditions] == [("Approved", "KubectlApprove")]
    by_signer = await raw.get(CSRS, params={"fieldSelector": "spec.signerName=example.com/signer"})
    assert [c["metadata"]["name"] for c in by_signer.json["items"]] == ["bob"]


async def test_tables_of_the_new_kinds_have_kubectls_columns(raw: Raw) -> None:
    api_services = (await raw.get("/apis/apiregistration.k8s.io/v1/apiservices/v1.apps",
                                  accept=TABLE)).json
    assert [c["name"] for c in api_services["columnDefinitions"]] == [
        "Name", "Service", "Available", "Age"]
    assert api_services["rows"][0]["cells"][:3] == ["v1.apps", "Local", "True"]
    await raw.request("POST", CSRS, body={"metadata": {"name": "carol"}, "spec": {
        "request": _csr_pem(), "signerName": "example.com/signer", "usages": ["client auth"],
        "expirationSeconds": 3600}})
    csr = (await raw.get(f"{CSRS}/carol", accept=TABLE)).json
    assert [c["name"] for c in csr["columnDefinitions"]] == [
        "Name", "Age", "SignerName", "Requestor", "RequestedDuration", "Condition"]
    assert csr["rows"][0]["cells"][2:] == ["example.com/signer", "kubernetes-admin", "60m",
                                           "Pending"]
    rcs = (await raw.get(RCS, accept=TABLE)).json
    assert [c["name"] for c in rcs["columnDefinitions"]] == [
        "Name", "Desired", "Current", "Ready", "Age", "Containers", "Images", "Selector"]


async def test_csi_storage_capacity_is_stored(raw: Raw) -> None:
    path = "/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities"
    created = await raw.request("POST", path, body={
        "metadata": {"name": "cap"}, "storageClassName": "standard", "capacity": "10Gi"})
    assert created.status == 201, created.text
    assert (await raw.get(f"{path}/cap")).json["capacity"] == "10Gi"
    nameless = await raw.request("POST", path, body={"metadata": {"name": "none"}})
    assert nameless.status == 422
    assert nameless.json["details"]["causes"][0]["field"] == "storageClassName"


async def test_token_review_answers_who_a_token_is(raw: Raw, cluster: LocalCluster) -> None:
    path = "/apis/authentication.k8s.io/v1/tokenreviews"
    token = cluster.add_user(service_account("default", "robot"))
    review = await raw.request("POST", path, body={
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
        "spec": {"token": token}})
    assert review.status == 201, review.text
    status = review.json["status"]
    assert status["authenticated"] is True
    assert status["user"]["username"] == "system:serviceaccount:default:robot"
    assert status["audiences"] == ["https://kubernetes.default.svc.cluster.local"]
    unknown = await raw.request("POST", path, body={"spec": {"token": "nope"}})
    assert unknown.json["status"] == {"user": {}}
    empty = await raw.request("POST", path, body={"spec": {}})
    assert (empty.status, empty.json["message"]) == (
        400, "token is required for TokenReview in authentication")


async def test_subject_access_reviews_answer_for_another_user(raw: Raw) -> None:
    review = await raw.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                               body={"spec": {"user": "bob", "resourceAttributes": {
                                   "verb": "get", "resource": "pods"}}})
    assert review.status == 201, review.text
    assert review.json["kind"] == "SubjectAccessReview"
    assert review.json["status"]["allowed"] is True  # AlwaysAllow
    local = "/apis/authorization.k8s.io/v1/namespaces/ns1/localsubjectaccessreviews"
    mismatch = await raw.request("POST", local, body={"spec": {"user": "bob",
                                 "resourceAttributes": {"verb": "get", "namespace": "other",
                                                        "resource": "pods"}}})
    assert mismatch.status == 422
    nobody = await raw.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                               body={"spec": {"resourceAttributes": {"verb": "get"}}})
    assert nobody.status == 422


async def test_default_kubernetes_service_points_at_the_server(
        raw: Raw, cluster: LocalCluster) -> None:
    service = (await raw.get("/api/v1/namespaces/default/services/kubernetes")).json
    assert service["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    spec = service["spec"]
    assert (spec["type"], spec["clusterIP"]) == ("ClusterIP", "10.96.0.1")
    assert spec["ports"] == [{"name": "https", "port": 443, "protocol": "TCP",
                              "targetPort": cluster.port}]
    endpoints = (await raw.get("/api/v1/namespaces/default/endpoints/kubernetes")).json
    assert endpoints["subsets"] == [{"addresses": [{"ip": "127.0.0.1"}], "ports": [
        {"name": "https", "port": cluster.port, "protocol": "TCP"}]}]
    slices = (await raw.get("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
                            params={"labelSelector": "kubernetes.io/service-name=kubernetes"}
                            )).json["items"]
    assert len(slices) == 1
    assert slices[0]["addressType"] == "IPv4"
    assert slices[0]["endpoints"] == [{"addresses": ["127.0.0.1"],
                                       "conditions": {"ready": True}}]
    assert slices[0]["ports"] == [{"name": "https", "port": cluster.port, "protocol": "TCP"}]
    # Deleted, it comes back (kube-apiserver's reconcilers put it back).
    deleted = await raw.request("DELETE", "/api/v1/namespaces/default/services/kubernetes")
    assert deleted.status == 200

    async def back() -> bool:
        return (await raw.get("/api/v1/namespaces/default/services/kubernetes")).status == 200
    await eventually(back, what="default/kubernetes put back")
