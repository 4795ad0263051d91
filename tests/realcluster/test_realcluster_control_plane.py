"""The real control plane works as a cluster does: its API server, its controllers (deployment,
replica set, service account, token) and its scheduler; RBAC is enforced; and custom resources
are written without the reflect2 crash that the vendor fix removes."""

from __future__ import annotations

import json

import pytest

from hack.localcluster.testing import Kubectl, eventually
from hack.realcluster.control_plane import ControlPlane

pytestmark = pytest.mark.timeout(120, func_only=True)


async def test_readyz(kubectl: Kubectl, control_plane: ControlPlane) -> None:
    assert (await kubectl("get", "--raw", "/readyz")).strip() == "ok"
    version = json.loads(await kubectl("get", "--raw", "/version"))
    assert version["gitVersion"] == "v1.20.2"
    assert control_plane.url.startswith("https://127.0.0.1:")


async def test_deployment_becomes_replicaset_and_pending_pods(kubectl: Kubectl) -> None:
    await kubectl("create", "namespace", "deploy-test")
    await kubectl("create", "deployment", "web", "--image=example.invalid/web:1",
                  "--replicas=2", "-n", "deploy-test")

    async def replica_set() -> dict[str, object] | None:
        items = json.loads(await kubectl("get", "rs", "-n", "deploy-test", "-o", "json"))
        return items["items"][0] if items["items"] else None

    rs = await eventually(replica_set, within=60, interval=0.5, what="a ReplicaSet")
    owner = rs["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"]) == ("Deployment", "web")

    async def unschedulable_pods() -> list[dict[str, object]] | None:
        pods = json.loads(await kubectl("get", "pods", "-n", "deploy-test", "-o", "json"))
        done = [p for p in pods["items"] if p["status"]["phase"] == "Pending" and any(
            c["type"] == "PodScheduled" and c["reason"] == "Unschedulable"
            for c in p["status"].get("conditions", []))]
        return done if len(done) == 2 else None

    # No nodes: the scheduler has looked at each pod and said so.
    pods = await eventually(unschedulable_pods, within=60, interval=0.5,
                            what="two Pending pods, marked Unschedulable by the scheduler")
    assert all(p["metadata"]["labels"]["app"] == "web" for p in pods)


async def test_new_namespace_gets_default_service_account_and_token(kubectl: Kubectl) -> None:
    await kubectl("create", "namespace", "sa-test")
    await eventually(lambda: _succeeds(kubectl, "get", "serviceaccount", "default",
                                       "-n", "sa-test"),
                     within=60, interval=0.5, what="the default ServiceAccount")

    async def token_secret() -> bool:
        secrets = json.loads(await kubectl("get", "secrets", "-n", "sa-test", "-o", "json"))
        return any(s["type"] == "kubernetes.io/service-account-token"
                   for s in secrets["items"])

    await eventually(token_secret, within=60, interval=0.5, what="its token Secret")


async def test_rbac_is_enforced(kubectl: Kubectl) -> None:
    await kubectl("create", "namespace", "rbac-test")
    user = "system:serviceaccount:rbac-test:reader"
    denied = await kubectl.run("get", "pods", "-n", "rbac-test", f"--as={user}")
    assert denied.code != 0 and "forbidden" in denied.stderr.lower()
    await kubectl("create", "role", "read-pods", "--verb=get,list", "--resource=pods",
                  "-n", "rbac-test")
    await kubectl("create", "rolebinding", "reader", "--role=read-pods",
                  "--serviceaccount=rbac-test:reader", "-n", "rbac-test")
    await eventually(lambda: _succeeds(kubectl, "get", "pods", "-n", "rbac-test",
                                       f"--as={user}"),
                     within=10, interval=0.2, what="access through the RoleBinding")


GIZMO_CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.realcluster.test}
spec:
  group: realcluster.test
  scope: Namespaced
  names: {plural: gizmos, singular: gizmo, kind: Gizmo}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, default: 1}
              labels: {type: object, additionalProperties: {type: string}}
"""


async def test_custom_resource_writes(kubectl: Kubectl) -> None:
    """Create, update and list a custom resource: with reflect2 v1.0.1 built by Go >= 1.18,
    the API server died here (fatal error: fault in runtime.mapiterinit)."""
    await kubectl("apply", "-f", "-", stdin=GIZMO_CRD)
    await kubectl("wait", "--for=condition=Established", "crd/gizmos.realcluster.test",
                  "--timeout=30s")
    gizmo = ("apiVersion: realcluster.test/v1\nkind: Gizmo\nmetadata: {name: g1}\n"
             "spec: {labels: {a: b, c: d}}\n")
    await eventually(lambda: _succeeds(kubectl, "apply", "-f", "-", stdin=gizmo),
                     within=10, interval=0.2, what="the Gizmo created")
    await kubectl("patch", "gizmo", "g1", "--type=merge", "-p", '{"spec":{"size":3}}')
    listed = json.loads(await kubectl("get", "gizmos", "-o", "json"))
    assert [(g["metadata"]["name"], g["spec"]["size"], g["spec"]["labels"])
            for g in listed["items"]] == [("g1", 3, {"a": "b", "c": "d"})]
    assert (await kubectl("get", "--raw", "/readyz")).strip() == "ok"
    await kubectl("delete", "crd", "gizmos.realcluster.test")


async def _succeeds(kubectl: Kubectl, *args: str, stdin: str | None = None) -> bool:
    return (await kubectl.run(*args, stdin=stdin)).code == 0
