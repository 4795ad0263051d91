"""RBAC decisions and their 403 messages, through impersonation (`Impersonate-User`,
`Impersonate-Group`) as the admin, and SubjectAccessReviews."""

from __future__ import annotations

from typing import Any

from ..model import Case, case, delete, fields, get, patch, post
from .paths import BINDINGS, CM, DEPLOY, NAMESPACES, ROLES, SECRETS, cm

ALICE = {"Impersonate-User": "alice"}
SA_USER = {"Impersonate-User": "system:serviceaccount:${ns}:robot"}
SAR = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
CLUSTER_ROLES = "/apis/rbac.authorization.k8s.io/v1/clusterroles"
CLUSTER_BINDINGS = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"


def _role(name: str, rules: list[dict[str, Any]]) -> Any:
    return post(ROLES, {"metadata": {"name": name}, "rules": rules})


def _bind(name: str, role: str, subject: dict[str, Any]) -> Any:
    return post(BINDINGS, {"metadata": {"name": name},
                           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                       "name": role}, "subjects": [subject]})


ALICE_SUBJECT = {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "alice"}
READ_CM = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]


def _granted(id: str, *steps: Any) -> Case:
    """alice may get and list ConfigMaps in the namespace (once the binding is seen)."""
    return case(id, _role("read", READ_CM), _bind("read", "read", ALICE_SUBJECT),
                post(CM, cm("a"), record=None),
                get(f"{CM}/a", headers=ALICE, until=lambda a: a.code == 200, record=None),
                *steps)


def _denials() -> list[Case]:
    as_alice: dict[str, Any] = {"headers": ALICE}
    return [
        case("rbac-get-denied", get(f"{CM}/a", **as_alice)),
        case("rbac-list-denied", get(CM, **as_alice)),
        case("rbac-create-denied", post(CM, cm("a"), **as_alice)),
        case("rbac-delete-denied", delete(f"{CM}/a", **as_alice)),
        case("rbac-deletecollection-denied", delete(CM, **as_alice)),
        case("rbac-patch-denied", patch(f"{CM}/a", {}, **as_alice)),
        case("rbac-watch-denied", get(CM, params={"watch": "true"}, **as_alice)),
        case("rbac-cluster-list-denied", get(NAMESPACES, **as_alice)),
        case("rbac-all-namespaces-denied", get("/api/v1/configmaps", **as_alice)),
        case("rbac-subresource-denied", get(f"{DEPLOY}/d/scale", **as_alice)),
        case("rbac-status-denied", get(f"{DEPLOY}/d/status", **as_alice)),
        case("rbac-group-resource-denied", get(DEPLOY, **as_alice)),
        case("rbac-nonresource-denied", get("/version/x", **as_alice)),
        case("rbac-nonresource-allowed", get("/version", **as_alice,
                                              record=fields("major"))),
        case("rbac-healthz-allowed", get("/healthz", **as_alice, record=fields())),
        case("rbac-sa-denied", get(SECRETS, headers=SA_USER)),
        case("rbac-group-denied", get(CM, headers={"Impersonate-User": "bob",
                                                   "Impersonate-Group": "devs"})),
        case("rbac-authenticated-group-denied", get(CM, headers={
            "Impersonate-User": "bob", "Impersonate-Group": "system:authenticated"})),
        case("rbac-impersonate-group-only", get(CM, headers={"Impersonate-Group": "devs"})),
        case("rbac-unknown-resource-denied", get("/api/v1/namespaces/${ns}/gizmos",
                                                 **as_alice)),
    ]


def _grants() -> list[Case]:
    as_alice: dict[str, Any] = {"headers": ALICE}
    return [
        _granted("rbac-granted-get", get(f"{CM}/a", **as_alice, record=fields("data"))),
        _granted("rbac-granted-list", get(CM, **as_alice, record=fields("kind"))),
        _granted("rbac-granted-but-not-create", post(CM, cm("b"), **as_alice)),
        _granted("rbac-granted-but-not-secrets", get(SECRETS, **as_alice)),
        _granted("rbac-granted-other-namespace", get("/api/v1/namespaces/default/configmaps",
                                                     **as_alice)),
        case("rbac-resource-names",
             _role("one", [{"apiGroups": [""], "resources": ["configmaps"],
                            "verbs": ["get"], "resourceNames": ["a"]}]),
             _bind("one", "one", ALICE_SUBJECT), post(CM, cm("a")), post(CM, cm("b")),
             get(f"{CM}/a", headers=ALICE, until=lambda a: a.code == 200, record=None),
             get(f"{CM}/b", headers=ALICE), get(CM, headers=ALICE)),
        case("rbac-sa-granted",
             post("/api/v1/namespaces/${ns}/serviceaccounts", {"metadata": {"name": "robot"}}),
             _role("read", READ_CM),
             _bind("read", "read", {"kind": "ServiceAccount", "name": "robot",
                                    "namespace": "${ns}"}),
             get(CM, headers=SA_USER, until=lambda a: a.code == 200, record=fields("kind"))),
        case("rbac-group-granted", _role("read", READ_CM),
             _bind("read", "read", {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io",
                                    "name": "devs"}),
             get(CM, headers={"Impersonate-User": "bob", "Impersonate-Group": "devs"},
                 until=lambda a: a.code == 200, record=fields("kind"))),
        case("rbac-escalation-denied",
             _role("roles", [{"apiGroups": ["rbac.authorization.k8s.io"],
                              "resources": ["roles"], "verbs": ["create"]}]),
             _bind("roles", "roles", ALICE_SUBJECT),
             post(ROLES, {"metadata": {"name": "probe"}, "rules": []}, headers=ALICE,
                  until=lambda a: a.code == 201, record=None),
             post(ROLES, {"metadata": {"name": "big"}, "rules": [
                 {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]},
                  headers=ALICE)),
        case("rbac-role-invalid", post(ROLES, {"metadata": {"name": "bad"}, "rules": [
            {"resources": ["configmaps"], "verbs": []}]})),
        case("rbac-binding-missing-roleref", post(BINDINGS, {
            "metadata": {"name": "b"}, "subjects": [ALICE_SUBJECT]})),
        case("rbac-binding-roleref-immutable", _role("r1", READ_CM), _role("r2", READ_CM),
             _bind("b", "r1", ALICE_SUBJECT),
             patch(f"{BINDINGS}/b", {"roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                                                 "kind": "Role", "name": "r2"}})),
        case("rbac-role-nonresource-refused", post(ROLES, {"metadata": {"name": "r"}, "rules": [
            {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]})),
        case("rbac-clusterrole-nonresource-ok", post(CLUSTER_ROLES, {
            "metadata": {"name": "${ns}-cr"}, "rules": [
                {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]}, record=fields("rules"))),
        case("rbac-clusterrole-mixed-refused", post(CLUSTER_ROLES, {
            "metadata": {"name": "${ns}-cr"}, "rules": [
                {"verbs": ["get"], "nonResourceURLs": ["/x"], "resources": ["pods"]}]})),
        case("rbac-clusterbinding-sa-needs-namespace", post(CLUSTER_BINDINGS, {
            "metadata": {"name": "${ns}-crb"}, "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "ServiceAccount", "name": "robot"}]})),
        case("rbac-binding-defaults", post(BINDINGS, {
            "metadata": {"name": "b"}, "roleRef": {"kind": "Role", "name": "r"},
            "subjects": [ALICE_SUBJECT | {"apiGroup": ""}]}, record=fields("roleRef", "subjects"))),
        case("rbac-binding-bad-subject-kind", post(BINDINGS, {
            "metadata": {"name": "b"}, "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
            "subjects": [{"kind": "Robot", "name": "x"}]})),
    ]


def _reviews() -> list[Case]:
    def review(id: str, attributes: dict[str, Any], *setup: Any, user: str = "alice") -> Case:
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                "spec": {"user": user, "resourceAttributes": {"namespace": "${ns}",
                                                              **attributes}}}
        return case(id, *setup, post(SAR, body, record=fields("status"),
                                     until=lambda a: bool(dig_allowed(a)) or not setup))
    return [
        review("sar-denied", {"verb": "get", "resource": "configmaps"}),
        review("sar-allowed-by-binding", {"verb": "get", "resource": "configmaps"},
               _role("read", READ_CM), _bind("read", "read", ALICE_SUBJECT)),
        review("sar-subresource", {"verb": "update", "resource": "deployments",
                                   "group": "apps", "subresource": "scale"}),
        review("sar-admin-group", {"verb": "delete", "resource": "secrets"},
               user="system:admin"),
        case("sar-missing-attributes", post(SAR, {
            "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": "alice"}})),
        case("sar-no-user", post(SAR, {
            "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}}})),
    ]


def dig_allowed(answer: Any) -> bool:
    return bool(((answer.json or {}).get("status") or {}).get("allowed"))


CASES = [*_denials(), *_grants(), *_reviews()]
