"""A create/get/list/delete round trip for each built-in resource, through the typed clients.

The typed clients deserialize every response into their models, so a response missing a
required field, or of the wrong shape, fails here as it would against a real cluster.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

import pytest
from conformance_support import eventually, gone, widget_crd
from kubernetes_asyncio import client

from hack.localcluster.server import LocalCluster

Json = dict[str, Any]
NS = "default"


@dataclass(frozen=True)
class Case:
    """How to reach one resource through kubernetes_asyncio and a valid object of it."""

    api: str
    suffix: str
    namespaced: bool
    body: Json

    @property
    def id(self) -> str:
        return self.suffix


def _container() -> Json:
    return {"name": "main", "image": "registry.example.com/app:1.0"}


def _template(labels: Json, restart: str = "Always") -> Json:
    return {"metadata": {"labels": labels},
            "spec": {"containers": [_container()], "restartPolicy": restart}}


def _webhook(name: str) -> Json:
    return {"name": name, "clientConfig": {"url": "https://hooks.example.com/check"},
            "admissionReviewVersions": ["v1"], "sideEffects": "None",
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                       "resources": ["pods"]}]}


CASES = [
    Case("CoreV1Api", "namespace", False, {"metadata": {"name": "round-trip"}}),
    Case("CoreV1Api", "namespaced_pod", True, {
        "metadata": {"name": "rt-pod"}, "spec": {"containers": [_container()]}}),
    Case("CoreV1Api", "namespaced_service", True, {
        "metadata": {"name": "rt-svc"},
        "spec": {"selector": {"app": "x"}, "ports": [{"port": 80}]}}),
    Case("CoreV1Api", "namespaced_endpoints", True, {
        "metadata": {"name": "rt-ep"},
        "subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}]}),
    Case("CoreV1Api", "namespaced_config_map", True, {
        "metadata": {"name": "rt-cm"}, "data": {"k": "v"}}),
    Case("CoreV1Api", "namespaced_secret", True, {
        "metadata": {"name": "rt-secret"}, "data": {"k": base64.b64encode(b"v").decode()}}),
    Case("CoreV1Api", "namespaced_service_account", True, {"metadata": {"name": "rt-sa"}}),
    Case("CoreV1Api", "namespaced_persistent_volume_claim", True, {
        "metadata": {"name": "rt-pvc"},
        "spec": {"accessModes": ["ReadWriteOnce"],
                 "resources": {"requests": {"storage": "1Gi"}}}}),
    Case("CoreV1Api", "node", False, {"metadata": {"name": "rt-node"}}),
    Case("CoreV1Api", "namespaced_event", True, {
        "metadata": {"name": "rt-event"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": NS},
        "reason": "Testing", "message": "hello", "type": "Normal",
        "source": {"component": "conformance"}}),
    Case("EventsV1Api", "namespaced_event", True, {
        "metadata": {"name": "rt-event2"}, "eventTime": "2024-01-01T00:00:00.000000Z",
        "reportingController": "example.com/conformance", "reportingInstance": "i-1",
        "action": "Test", "reason": "Testing", "type": "Normal",
        "regarding": {"kind": "Pod", "name": "p", "namespace": NS}}),
    Case("DiscoveryV1Api", "namespaced_endpoint_slice", True, {
        "metadata": {"name": "rt-slice", "labels": {"kubernetes.io/service-name": "rt-svc"}},
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.0.0.1"]}], "ports": [{"port": 80}]}),
    Case("AppsV1Api", "namespaced_deployment", True, {
        "metadata": {"name": "rt-deploy"},
        "spec": {"selector": {"matchLabels": {"app": "rt"}},
                 "template": _template({"app": "rt"})}}),
    Case("BatchV1Api", "namespaced_job", True, {
        "metadata": {"name": "rt-job"}, "spec": {"template": _template({}, "Never")}}),
    Case("CoordinationV1Api", "namespaced_lease", True, {
        "metadata": {"name": "rt-lease"},
        "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15}}),
    Case("NetworkingV1Api", "namespaced_ingress", True, {
        "metadata": {"name": "rt-ing"},
        "spec": {"rules": [{"host": "a.example.com", "http": {"paths": [{
            "path": "/", "pathType": "Prefix",
            "backend": {"service": {"name": "rt-svc", "port": {"number": 80}}}}]}}]}}),
    Case("RbacAuthorizationV1Api", "namespaced_role", True, {
        "metadata": {"name": "rt-role"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}),
    Case("RbacAuthorizationV1Api", "namespaced_role_binding", True, {
        "metadata": {"name": "rt-rb"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                    "name": "rt-role"},
        "subjects": [{"kind": "ServiceAccount", "name": "rt-sa", "namespace": NS}]}),
    Case("RbacAuthorizationV1Api", "cluster_role", False, {
        "metadata": {"name": "rt-cr"},
        "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}]}),
    Case("RbacAuthorizationV1Api", "cluster_role_binding", False, {
        "metadata": {"name": "rt-crb"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "rt-cr"},
        "subjects": [{"kind": "User", "name": "alice",
                      "apiGroup": "rbac.authorization.k8s.io"}]}),
    Case("AutoscalingV2Api", "namespaced_horizontal_pod_autoscaler", True, {
        "metadata": {"name": "rt-hpa"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                    "name": "rt-deploy"},
                 "minReplicas": 1, "maxReplicas": 3,
                 "metrics": [{"type": "Resource", "resource": {
                     "name": "cpu", "target": {"type": "Utilization",
                                               "averageUtilization": 80}}}]}}),
    Case("PolicyV1Api", "namespaced_pod_disruption_budget", True, {
        "metadata": {"name": "rt-pdb"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "rt"}}}}),
    Case("AdmissionregistrationV1Api", "validating_webhook_configuration", False, {
        "metadata": {"name": "rt-vwc"}, "webhooks": [_webhook("check.example.com")]}),
    Case("AdmissionregistrationV1Api", "mutating_webhook_configuration", False, {
        "metadata": {"name": "rt-mwc"}, "webhooks": [_webhook("mutate.example.com")]}),
    Case("ApiextensionsV1Api", "custom_resource_definition", False,
         widget_crd(scope="Cluster", group="rt.example.com", plural="things", kind="Thing")),
]


def _call(api: client.ApiClient, case: Case, verb: str, *args: Any, **kw: Any) -> Any:
    typed = getattr(client, case.api)(api)
    method = getattr(typed, f"{verb}_{case.suffix}")
    if case.namespaced:
        if verb in ("list", "create"):
            return method(NS, *args, **kw)
        return method(*args, NS, **kw)
    return method(*args, **kw)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_round_trip(api: client.ApiClient, cluster: LocalCluster, case: Case) -> None:
    name = case.body["metadata"]["name"]
    rv_before = cluster.storage.rv
    created = await _call(api, case, "create", case.body)
    meta = created.metadata
    assert meta.name == name
    assert meta.uid and meta.creation_timestamp is not None
    assert int(meta.resource_version) > rv_before
    assert (meta.namespace == NS) if case.namespaced else meta.namespace is None
    assert created.kind and created.api_version

    got = await _call(api, case, "read", name)
    assert got.metadata.uid == meta.uid
    # Only the CRD is written again by a controller (its Established condition).
    assert int(got.metadata.resource_version) >= int(meta.resource_version)

    listed = await _call(api, case, "list")
    assert name in [item.metadata.name for item in listed.items]
    assert int(listed.metadata.resource_version) >= int(meta.resource_version)

    await _call(api, case, "delete", name)
    await cluster.settle()
    await eventually(lambda: gone(lambda: _call(api, case, "read", name)),
                     what=f"{case.suffix} {name} to be deleted")
    listed = await _call(api, case, "list")
    assert name not in [item.metadata.name for item in listed.items]


async def test_secret_string_data_is_merged_into_data(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    secret = await core.create_namespaced_secret(NS, {
        "metadata": {"name": "sd"}, "data": {"a": base64.b64encode(b"1").decode()},
        "stringData": {"b": "2", "a": "override"}})
    assert secret.string_data is None
    assert secret.type == "Opaque"
    assert {k: base64.b64decode(v).decode() for k, v in secret.data.items()} == {
        "a": "override", "b": "2"}
