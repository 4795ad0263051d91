"""RBAC in the local API server (`authorization_mode="RBAC"`), seen through the real kubectl.

The messages are kube-apiserver's: responsewriters.forbiddenMessage and apierrors.NewForbidden
for denials, the RBAC authorizer's reasons, and ConfirmNoEscalation for escalation refusals.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from hack.localcluster import users
from hack.localcluster.__main__ import parse_args
from hack.localcluster.rbac import OWNER_REFERENCES_PLUGIN, request_attributes
from hack.localcluster.server import ClusterConfig, LocalCluster
from hack.localcluster.testing import Kubectl, eventually, running_cluster

Json = dict[str, Any]
SA = "system:serviceaccount:ns:robot"
SA_GROUPS = '["system:serviceaccounts" "system:serviceaccounts:ns" "system:authenticated"]'
NewUser = Callable[..., Awaitable[Kubectl]]


@pytest.fixture
async def rbac_cluster(tmp_path: Path) -> AsyncIterator[LocalCluster]:
    async with running_cluster(tmp_path, bookmark_interval=0.2,
                               authorization_mode="RBAC") as c:
        yield c


@pytest.fixture
async def admin(rbac_cluster: LocalCluster, tmp_path: Path) -> Kubectl:
    kubectl = Kubectl(tmp_path / "kubeconfig", tmp_path / "admin-cache")
    await kubectl("create", "namespace", "ns")
    return kubectl


@pytest.fixture
def service_account(rbac_cluster: LocalCluster, admin: Kubectl, tmp_path: Path) -> NewUser:
    """A kubectl authenticated with a TokenRequest token of a new ServiceAccount ns/<name>."""
    async def make(name: str = "robot", *extra: str) -> Kubectl:
        await admin("create", "serviceaccount", name, "-n", "ns")
        token = (await admin("create", "token", name, "-n", "ns", *extra)).strip()
        path = rbac_cluster.write_kubeconfig(tmp_path / f"{name}.kubeconfig", "ns", token)
        return Kubectl(path, tmp_path / f"{name}-cache")
    return make


async def _apply(kubectl: Kubectl, *objects: Json) -> None:
    await kubectl("apply", "-f", "-", stdin="\n---\n".join(json.dumps(o) for o in objects))


def _role(name: str, *rules: Json, kind: str = "Role", **extra: Any) -> Json:
    meta: Json = {"name": name}
    if kind == "Role":
        meta["namespace"] = "ns"
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta,
            "rules": list(rules), **extra}


def _binding(name: str, role: str, role_kind: str = "Role", kind: str = "RoleBinding",
             subject: str = "robot") -> Json:
    meta: Json = {"name": name}
    if kind == "RoleBinding":
        meta["namespace"] = "ns"
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind,
                        "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": subject, "namespace": "ns"}]}


def _rule(verbs: list[str], resources: list[str], groups: list[str] | None = None,
          names: list[str] | None = None) -> Json:
    rule: Json = {"apiGroups": [""] if groups is None else groups, "resources": resources,
                  "verbs": verbs}
    if names:
        rule["resourceNames"] = names
    return rule


def _forbidden(verb: str, resource: str, group: str = "", namespace: str | None = "ns") -> str:
    where = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    return (f'User "{SA}" cannot {verb} resource "{resource}" in API group "{group}"'
            f" {where}")


# --- request attributes ------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path", "query", "expected"), [
    ("GET", "/api/v1/namespaces/ns/pods", {}, ("list", "", "ns", "pods", "", "")),
    ("GET", "/api/v1/namespaces/ns/pods", {"watch": "true"},
     ("watch", "", "ns", "pods", "", "")),
    ("GET", "/api/v1/watch/namespaces/ns/pods", {}, ("watch", "", "ns", "pods", "", "")),
    ("GET", "/api/v1/namespaces/ns/pods", {"fieldSelector": "metadata.name=p"},
     ("list", "", "ns", "pods", "", "p")),
    ("GET", "/api/v1/namespaces/ns/pods/p/log", {}, ("get", "", "ns", "pods", "log", "p")),
    ("DELETE", "/apis/apps/v1/namespaces/ns/deployments", {},
     ("deletecollection", "apps", "ns", "deployments", "", "")),
    ("PUT", "/apis/apps/v1/namespaces/ns/deployments/d/scale", {},
     ("update", "apps", "ns", "deployments", "scale", "d")),
    ("PATCH", "/api/v1/nodes/n1/status", {}, ("patch", "", "", "nodes", "status", "n1")),
    ("GET", "/api/v1/namespaces/ns", {}, ("get", "", "ns", "namespaces", "", "ns")),
    ("PUT", "/api/v1/namespaces/ns/finalize", {},
     ("update", "", "ns", "namespaces", "finalize", "ns")),
    ("POST", "/api/v1/namespaces/ns/serviceaccounts/sa/token", {},
     ("create", "", "ns", "serviceaccounts", "token", "sa")),
])
def test_resource_request_attributes(method: str, path: str, query: dict[str, str],
                                     expected: tuple[str, ...]) -> None:
    attrs = request_attributes(method, path, query)
    assert attrs.resource_request
    assert (attrs.verb, attrs.api_group, attrs.namespace, attrs.resource, attrs.subresource,
            attrs.name) == expected


@pytest.mark.parametrize("path", ["/api", "/api/v1", "/apis", "/apis/apps", "/apis/apps/v1",
                                  "/healthz", "/version", "/openapi/v2"])
def test_discovery_and_health_are_non_resource_requests(path: str) -> None:
    attrs = request_attributes("GET", path, {})
    assert not attrs.resource_request and attrs.verb == "get" and attrs.path == path


# --- authentication ----------------------------------------------------------------------


async def test_admin_holds_everything_through_kubeadms_binding(admin: Kubectl) -> None:
    assert (await admin("auth", "can-i", "*", "*", "--all-namespaces")).strip() == "yes"
    assert (await admin("auth", "can-i", "get", "/anything")).strip() == "yes"
    binding = json.loads(await admin("get", "clusterrolebinding", "kubeadm:cluster-admins",
                                     "-o", "json"))
    assert binding["roleRef"]["name"] == "cluster-admin"
    assert binding["subjects"][0]["name"] == "kubeadm:cluster-admins"


async def test_a_token_request_authenticates_as_the_service_account(
        service_account: NewUser, admin: Kubectl) -> None:
    robot = await service_account()
    who = await robot("auth", "whoami", "-o", "json")
    info = json.loads(who)["status"]["userInfo"]
    assert info["username"] == SA
    assert info["groups"] == ["system:serviceaccounts", "system:serviceaccounts:ns",
                              "system:authenticated"]
    await admin("delete", "serviceaccount", "robot", "-n", "ns")
    gone = await robot.run("get", "pods")
    assert gone.code == 1
    assert "error: You must be logged in to the server" in gone.stderr


async def test_token_request_refusals(admin: Kubectl) -> None:
    missing = await admin.run("create", "token", "ghost", "-n", "ns")
    assert 'serviceaccounts "ghost" not found' in missing.stderr
    await admin("create", "serviceaccount", "short", "-n", "ns")
    short = await admin.run("create", "token", "short", "-n", "ns", "--duration", "1m")
    assert ('TokenRequest.authentication.k8s.io "short" is invalid: spec.expirationSeconds:'
            " Invalid value: 60: may not specify a duration less than 10 minutes"
            in short.stderr)


async def test_always_allow_mode_lets_a_service_account_token_do_anything(
        cluster: LocalCluster, kubectl: Kubectl, tmp_path: Path) -> None:
    await kubectl("create", "serviceaccount", "robot")
    token = (await kubectl("create", "token", "robot")).strip()
    path = cluster.write_kubeconfig(tmp_path / "robot.kubeconfig", token=token)
    robot = Kubectl(path, tmp_path / "robot-cache")
    assert "system:serviceaccount:default:robot" in await robot("auth", "whoami")
    await robot("create", "configmap", "c")
    assert (await robot("auth", "can-i", "delete", "nodes")).strip() == "yes"


# --- denials -----------------------------------------------------------------------------


async def test_denials_carry_kube_apiservers_messages(service_account: NewUser) -> None:
    robot = await service_account()
    cases = [
        (("get", "pods"), f"pods is forbidden: {_forbidden('list', 'pods')}"),
        (("get", "nodes"),
         f"nodes is forbidden: {_forbidden('list', 'nodes', namespace=None)}"),
        (("get", "deployment", "d"),
         f'deployments.apps "d" is forbidden: {_forbidden("get", "deployments", "apps")}'),
        (("get", "deployment", "d", "--subresource", "scale"),
         f'deployments.apps "d" is forbidden: {_forbidden("get", "deployments/scale", "apps")}'),
        (("delete", "configmaps", "--all"),  # kubectl lists before it deletes
         f"configmaps is forbidden: {_forbidden('list', 'configmaps')}"),
        (("get", "--raw", "/metrics"), f'forbidden: User "{SA}" cannot get path "/metrics"'),
    ]
    for args, message in cases:
        result = await robot.run(*args)
        assert result.code == 1, args
        assert result.stderr.strip() == f"Error from server (Forbidden): {message}", args


async def test_discovery_and_health_are_open_to_authenticated_users(
        service_account: NewUser) -> None:
    robot = await service_account()
    for path in ("/api", "/apis", "/apis/apps/v1", "/version", "/healthz", "/openapi/v2"):
        await robot("get", "--raw", path)
    assert (await robot("auth", "can-i", "get", "/readyz")).strip() == "yes"


async def test_a_missing_role_is_the_reason_of_the_denial(
        service_account: NewUser, admin: Kubectl) -> None:
    robot = await service_account()
    await _apply(admin, _binding("ghostly", "ghost"))
    result = await robot.run("get", "pods")
    assert result.stderr.strip() == (
        f"Error from server (Forbidden): pods is forbidden: {_forbidden('list', 'pods')}:"
        ' RBAC: role.rbac.authorization.k8s.io "ghost" not found')


# --- rules -------------------------------------------------------------------------------


async def test_rules_grant_verbs_names_subresources_and_groups(
        service_account: NewUser, admin: Kubectl) -> None:
    robot = await service_account()
    await admin("create", "configmap", "a", "-n", "ns")
    await admin("create", "configmap", "b", "-n", "ns")
    await _apply(admin, _role(
        "reader", _rule(["get", "list"], ["pods"]), _rule(["get"], ["configmaps"], names=["a"]),
        _rule(["get"], ["*/scale"], ["*"]), _rule(["*"], ["jobs"], ["batch"]),
        _rule(["get"], ["deployments/status"], ["apps"])), _binding("reader", "reader"))
    await robot("get", "pods")
    await robot("get", "configmap", "a")
    denied = await robot.run("get", "configmap", "b")
    assert 'configmaps "b" is forbidden' in denied.stderr
    await robot("get", "jobs")

    async def can(*args: str) -> str:
        return (await robot.run("auth", "can-i", *args)).stdout.strip()
    assert await can("get", "deployments", "--subresource=scale") == "yes"
    assert await can("get", "deployments.apps", "--subresource=status") == "yes"
    assert await can("update", "deployments.apps", "--subresource=status") == "no"
    assert await can("get", "deployments.apps") == "no"
    assert await can("delete", "jobs.batch") == "yes"
    assert await can("delete", "pods") == "no"
    assert await can("get", "configmaps/b") == "no"
    assert await can("get", "configmaps/a") == "yes"
    assert await can("list", "pods", "-n", "default") == "no"
    listed = await robot("auth", "can-i", "--list")
    assert any(line.split()[:1] == ["jobs.batch"] and line.endswith("[*]")
               for line in listed.splitlines())


async def test_cluster_role_through_a_role_binding_applies_to_its_namespace(
        service_account: NewUser, admin: Kubectl) -> None:
    robot = await service_account()
    await _apply(admin, _role("lister", _rule(["list"], ["secrets"]), kind="ClusterRole"),
                 _binding("lister", "lister", role_kind="ClusterRole"))
    await robot("get", "secrets")
    other = await robot.run("get", "secrets", "-n", "default")
    assert "Forbidden" in other.stderr


# --- escalation ------------------------------------------------------------------------


async def test_a_role_granting_more_than_the_writer_holds_is_refused(
        service_account: NewUser, admin: Kubectl) -> None:
    robot = await service_account()
    await _apply(admin, _role("role-writer", _rule(["create", "get", "patch"], ["roles"],
                                                   ["rbac.authorization.k8s.io"]),
                              _rule(["get"], ["pods"])),
                 _binding("role-writer", "role-writer"))
    await _apply(robot, _role("fine", _rule(["get"], ["pods"])))
    result = await robot.run("create", "role", "greedy", "--verb=get,delete",
                             "--resource=pods,secrets")
    assert result.stderr.strip() == (
        'Error from server (Forbidden): roles.rbac.authorization.k8s.io "greedy" is forbidden:'
        f' user "{SA}" (groups={SA_GROUPS}) is attempting to grant RBAC permissions not'
        ' currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}\n'
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}')
    applied = await robot.run("apply", "--server-side", "-f", "-", stdin=json.dumps(
        _role("greedy", _rule(["list"], ["pods"]))))
    assert ('roles.rbac.authorization.k8s.io "greedy" is forbidden: user'
            in applied.stderr)
    assert '{APIGroups:[""], Resources:["pods"], Verbs:["list"]}' in applied.stderr
    # escalate lets the writer grant what it does not hold
    await _apply(admin, _role("escalator", _rule(["escalate"], ["roles"],
                                                 ["rbac.authorization.k8s.io"])),
                 _binding("escalator", "escalator"))
    await robot("create", "role", "greedy", "--verb=get,delete", "--resource=pods,secrets")


async def test_a_binding_to_a_role_the_writer_does_not_hold_needs_bind(
        service_account: NewUser, admin: Kubectl) -> None:
    robot = await service_account()
    await _apply(admin, _role("binder", _rule(["create"], ["rolebindings"],
                                              ["rbac.authorization.k8s.io"])),
                 _binding("binder", "binder"), _role("deleter", _rule(["delete"], ["pods"])))
    result = await robot.run("create", "rolebinding", "mine", "--role=deleter",
                             "--serviceaccount=ns:robot")
    assert result.stderr.strip() == (
        'error: failed to create rolebinding: rolebindings.rbac.authorization.k8s.io "mine" is'
        f' forbidden: user "{SA}" (groups={SA_GROUPS}) is attempting to grant RBAC permissions'
        ' not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}')
    missing = await robot.run("create", "rolebinding", "nowhere", "--role=ghost",
                              "--serviceaccount=ns:robot")
    assert 'roles.rbac.authorization.k8s.io "ghost" not found' in missing.stderr
    await _apply(admin, _role("may-bind", _rule(["bind"], ["roles"],
                                                ["rbac.authorization.k8s.io"], ["deleter"])),
                 _binding("may-bind", "may-bind"))
    await robot("create", "rolebinding", "mine", "--role=deleter", "--serviceaccount=ns:robot")
    assert (await robot("auth", "can-i", "delete", "pods")).strip() == "yes"


# --- aggregation ---------------------------------------------------------------------------


async def test_aggregated_cluster_roles_gather_the_rules_of_the_roles_they_select(
        service_account: NewUser, admin: Kubectl) -> None:
    robot = await service_account()
    selector = {"clusterRoleSelectors": [{"matchLabels": {"example.com/aggregate": "true"}}]}
    await _apply(admin, _role("gathered", kind="ClusterRole", aggregationRule=selector),
                 _binding("gathered", "gathered", role_kind="ClusterRole",
                          kind="ClusterRoleBinding"))
    part = _role("part", _rule(["get", "list"], ["services"]), kind="ClusterRole")
    part["metadata"]["labels"] = {"example.com/aggregate": "true"}
    await _apply(admin, part)

    async def gathered() -> Any:
        role = json.loads(await admin("get", "clusterrole", "gathered", "-o", "json"))
        return role.get("rules")
    assert await eventually(gathered) == [_rule(["get", "list"], ["services"])]
    assert (await robot("auth", "can-i", "list", "services", "-A")).strip() == "yes"
    await _apply(admin, _role("writer", _rule(["create"], ["clusterroles"],
                                              ["rbac.authorization.k8s.io"]),
                              kind="ClusterRole"),
                 _binding("writer", "writer", role_kind="ClusterRole",
                          kind="ClusterRoleBinding"))
    refused = await robot.run("create", "-f", "-", stdin=json.dumps(
        _role("mine", kind="ClusterRole", aggregationRule=selector)))
    assert ('clusterroles.rbac.authorization.k8s.io "mine" is forbidden: must have'
            " cluster-admin privileges to use the aggregationRule") in refused.stderr


# --- OwnerReferencesPermissionEnforcement ----------------------------------------------------


async def test_owner_references_need_delete_and_the_owners_finalizers(tmp_path: Path) -> None:
    async with running_cluster(tmp_path, authorization_mode="RBAC",
                               enable_admission_plugins=(OWNER_REFERENCES_PLUGIN,)) as cluster:
        admin = Kubectl(tmp_path / "kubeconfig", tmp_path / "admin-cache")
        await admin("create", "namespace", "ns")
        await admin("create", "serviceaccount", "robot", "-n", "ns")
        token = (await admin("create", "token", "robot", "-n", "ns")).strip()
        robot = Kubectl(cluster.write_kubeconfig(tmp_path / "robot", "ns", token),
                        tmp_path / "robot-cache")
        await admin("create", "configmap", "owner", "-n", "ns")
        owner = json.loads(await admin("get", "configmap", "owner", "-n", "ns", "-o", "json"))
        await _apply(admin, _role("writer", _rule(["get", "create", "update"], ["configmaps"])),
                     _binding("writer", "writer"))

        def child(name: str, block: bool) -> str:
            ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                   "uid": owner["metadata"]["uid"], "blockOwnerDeletion": block}
            return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
                "name": name, "namespace": "ns", "ownerReferences": [ref]}})
        await robot("create", "-f", "-", stdin=child("free", False))
        blocked = await robot.run("create", "-f", "-", stdin=child("blocked", True))
        assert blocked.stderr.strip() == (
            'Error from server (Forbidden): error when creating "STDIN": configmaps "blocked"'
            " is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a"
            " resource you can't set finalizers on: , <nil>")
        await admin("create", "configmap", "adopted", "-n", "ns")
        adopt = await robot.run("replace", "-f", "-", stdin=child("adopted", False))
        assert ('configmaps "adopted" is forbidden: cannot set an ownerRef on a resource you'
                " can't delete: , <nil>") in adopt.stderr
        await _apply(admin, _role("finalizer", _rule(["update"], ["configmaps/finalizers"]),
                                  _rule(["delete"], ["configmaps"])),
                     _binding("finalizer", "finalizer"))
        await robot("create", "-f", "-", stdin=child("blocked", True))
        await robot("replace", "-f", "-", stdin=child("adopted", False))


# --- the command line ----------------------------------------------------------------------


def test_command_line_modes(tmp_path: Path) -> None:
    base = ["--kubeconfig", str(tmp_path / "kc")]
    assert parse_args(base).authorization_mode == "AlwaysAllow"
    args = parse_args([*base, "--authorization-mode", "RBAC", "--enable-admission-plugins",
                       OWNER_REFERENCES_PLUGIN])
    assert args.authorization_mode == "RBAC"
    assert args.enable_admission_plugins == OWNER_REFERENCES_PLUGIN
    with pytest.raises(SystemExit):
        parse_args([*base, "--authorization-mode", "Node"])
    with pytest.raises(ValueError, match="unknown admission plugins"):
        LocalCluster(ClusterConfig(enable_admission_plugins=("AlwaysPullImages",)))


# --- impersonation -------------------------------------------------------------------------


async def test_kubectl_as_impersonates_when_allowed(
        service_account: NewUser, admin: Kubectl) -> None:
    robot = await service_account()
    await _apply(admin, _role("reader", _rule(["list"], ["pods"])), _binding("reader", "reader"))
    as_robot = ["--as", SA, "-n", "ns"]
    assert (await admin("auth", "can-i", "list", "pods", *as_robot)).strip() == "yes"
    assert (await admin.run("auth", "can-i", "list", "secrets", *as_robot)).stdout.strip() \
        == "no"
    who = json.loads(await admin("auth", "whoami", "-o", "json", *as_robot))
    assert who["status"]["userInfo"]["groups"] == [
        "system:serviceaccounts", "system:serviceaccounts:ns", "system:authenticated"]
    alice = json.loads(await admin("auth", "whoami", "-o", "json", "--as", "alice",
                                   "--as-group", "devs"))
    assert alice["status"]["userInfo"] == {"username": "alice",
                                           "groups": ["devs", "system:authenticated"]}
    refused = await robot.run("get", "--raw", "/api/v1/namespaces/ns/pods", "--as", "alice")
    assert refused.stderr.strip() == (
        f'Error from server (Forbidden): users "alice" is forbidden: User "{SA}" cannot'
        ' impersonate resource "users" in API group "" at the cluster scope')


async def test_an_allowed_request_names_the_binding_that_allowed_it(
        rbac_cluster: LocalCluster, admin: Kubectl) -> None:
    await _apply(admin, _role("reader", _rule(["list"], ["pods"])), _binding("reader", "reader"))
    assert rbac_cluster.authorizer is not None
    robot = users.service_account("ns", "robot")
    decision = rbac_cluster.authorizer.authorize(
        robot, request_attributes("GET", "/api/v1/namespaces/ns/pods", {}))
    assert decision.allowed
    assert decision.reason == ('RBAC: allowed by RoleBinding "reader/ns" of Role "reader" to'
                               ' ServiceAccount "robot/ns"')
    discovery = rbac_cluster.authorizer.authorize(robot, request_attributes("GET", "/apis", {}))
    assert discovery.reason == ('RBAC: allowed by ClusterRoleBinding "system:discovery" of'
                                ' ClusterRole "system:discovery" to Group'
                                ' "system:authenticated"')
