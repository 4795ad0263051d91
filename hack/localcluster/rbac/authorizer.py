"""The RBAC authorizer: which rules a user holds, whether they allow a request, and the
escalation checks on writes of Roles, ClusterRoles and their bindings.

Rules come from the ClusterRoleBindings naming the user (by name, a group, or as a
ServiceAccount), then, for a namespaced request, the RoleBindings of that namespace. A binding
whose role is missing contributes an error instead, which becomes the reason of a denial
(`RBAC: role.rbac.authorization.k8s.io "x" not found`). Members of `system:masters` are allowed
everything before RBAC is asked, as kube-apiserver's privileged-group authorizer does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import ApiError, not_found
from ..go_format import go_quote
from ..storage import Storage
from ..users import UserInfo
from .attributes import RequestAttributes
from .rules import Rule, compact, go_quoted_list, uncovered

Json = dict[str, Any]
GROUP = "rbac.authorization.k8s.io"
ROLES, ROLE_BINDINGS = (GROUP, "roles"), (GROUP, "rolebindings")
CLUSTER_ROLES, CLUSTER_ROLE_BINDINGS = (GROUP, "clusterroles"), (GROUP, "clusterrolebindings")
PRIVILEGED_GROUP = "system:masters"
FULL_AUTHORITY = [Rule(("*",), ("*",), ("*",)), Rule(("*",), non_resource_urls=("*",))]
#: metadata a garbage-collecting write may change without an escalation check
_GC_FIELDS = ("ownerReferences", "finalizers")
_SERVER_FIELDS = ("resourceVersion", "managedFields", "generation", "uid", "creationTimestamp")


@dataclass(frozen=True)
class Decision:
    """An authorizer's answer and its reason (empty when it has none)."""

    allowed: bool
    reason: str = ""


def aggregate_message(errors: list[str]) -> str:
    """utilerrors.NewAggregate(errs).Error(): one message, or `[a, b]` without duplicates."""
    if len(errors) == 1:
        return errors[0]
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def forbidden_message(user: UserInfo, attrs: RequestAttributes) -> str:
    """responsewriters.forbiddenMessage."""
    name = go_quote(user.username)
    if not attrs.resource_request:
        return f"User {name} cannot {attrs.verb} path {go_quote(attrs.path)}"
    resource = attrs.resource + (f"/{attrs.subresource}" if attrs.subresource else "")
    where = (f"in the namespace {go_quote(attrs.namespace)}" if attrs.namespace
             else "at the cluster scope")
    return (f"User {name} cannot {attrs.verb} resource {go_quote(resource)} in API group"
            f" {go_quote(attrs.api_group)} {where}")


def forbidden(group: str, resource: str, name: str, detail: str) -> ApiError:
    """apierrors.NewForbidden: 403 with the group-resource (and name) before the detail."""
    if not resource:
        return ApiError(403, "Forbidden", f"forbidden: {detail}")
    qualified = f"{resource}.{group}" if group else resource
    message = (f"{qualified} {go_quote(name)} is forbidden: {detail}" if name
               else f"{qualified} is forbidden: {detail}")
    details: Json = {"kind": resource}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    return ApiError(403, "Forbidden", message, details)


class Authorizer:
    """RBAC over the objects in one API server's storage."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        #: Told every decision (a test's record of what an identity used); None: nobody.
        self.on_decision: Callable[[UserInfo, RequestAttributes, Decision], None] | None = None
        #: Told the rules of every role or binding a user writes that needed the escalation
        #: check (rules a writer delegates); None: nobody.
        self.on_grant: Callable[[UserInfo, list[Rule]], None] | None = None

    # --- rules of a user -------------------------------------------------------------------

    def visit(self, user: UserInfo, namespace: str
              ) -> Iterator[tuple[str, Rule | None, str]]:
        """(source, rule, error) for every rule the user holds in `namespace` ("" for the
        cluster scope only), and every binding whose role could not be read."""
        for binding in self.storage.list_objects(CLUSTER_ROLE_BINDINGS):
            subject = _subject_for(user, binding.get("subjects") or [], "")
            if subject is None:
                continue
            ref = binding.get("roleRef") or {}
            rules, error = self._role_ref_rules(ref, "")
            if error:
                yield "", None, error
                continue
            source = (f"ClusterRoleBinding {go_quote(binding['metadata']['name'])} of"
                      f" {ref.get('kind', '')} {go_quote(str(ref.get('name', '')))} to"
                      f" {_describe(subject, '')}")
            for rule in rules:
                yield source, rule, ""
        if not namespace:
            return
        for binding in self.storage.list_objects(ROLE_BINDINGS, namespace):
            subject = _subject_for(user, binding.get("subjects") or [], namespace)
            if subject is None:
                continue
            ref = binding.get("roleRef") or {}
            rules, error = self._role_ref_rules(ref, namespace)
            if error:
                yield "", None, error
                continue
            source = (f"RoleBinding {go_quote(binding['metadata']['name'] + '/' + namespace)}"
                      f" of {ref.get('kind', '')} {go_quote(str(ref.get('name', '')))} to"
                      f" {_describe(subject, namespace)}")
            for rule in rules:
                yield source, rule, ""

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[Rule], list[str]]:
        """Every rule the user holds in `namespace`, and the resolution errors."""
        rules, errors = [], []
        for _, rule, error in self.visit(user, namespace):
            if rule is not None:
                rules.append(rule)
            if error:
                errors.append(error)
        return rules, errors

    def _role_ref_rules(self, ref: Json, namespace: str) -> tuple[list[Rule], str]:
        """The rules of a roleRef, or the lister's not-found message."""
        kind, name = ref.get("kind", ""), str(ref.get("name", ""))
        if kind == "Role":
            role = self.storage.get(ROLES, namespace, name)
            if role is None:
                return [], f"role.{GROUP} {go_quote(name)} not found"
        elif kind == "ClusterRole":
            role = self.storage.get(CLUSTER_ROLES, "", name)
            if role is None:
                return [], f"clusterrole.{GROUP} {go_quote(name)} not found"
        else:
            return [], f"unsupported role reference kind: {go_quote(str(kind))}"
        return [Rule.from_json(r) for r in role.get("rules") or []], ""

    # --- decisions -------------------------------------------------------------------------

    def authorize(self, user: UserInfo, attrs: RequestAttributes) -> Decision:
        """The privileged group, then RBAC (whose denial carries resolution errors)."""
        decision = self._decide(user, attrs)
        if self.on_decision is not None:
            self.on_decision(user, attrs, decision)
        return decision

    def _decide(self, user: UserInfo, attrs: RequestAttributes) -> Decision:
        if PRIVILEGED_GROUP in user.groups:
            return Decision(True)
        errors = []
        for source, rule, error in self.visit(user, attrs.namespace):
            if rule is not None and rule.allows(attrs):
                return Decision(True, f"RBAC: allowed by {source}")
            if error:
                errors.append(error)
        return Decision(False, f"RBAC: {aggregate_message(errors)}" if errors else "")

    def check_request(self, user: UserInfo, attrs: RequestAttributes) -> None:
        """Raise the 403 kube-apiserver answers a request it does not authorize."""
        decision = self.authorize(user, attrs)
        if decision.allowed:
            return
        message = forbidden_message(user, attrs)
        if decision.reason:
            message = f"{message}: {decision.reason}"
        raise forbidden(attrs.api_group, attrs.resource, attrs.name, message)

    # --- escalation checks on RBAC writes --------------------------------------------------

    def check_write(self, user: UserInfo, plural: str, operation: str, namespace: str,
                    obj: Json | None, old: Json | None) -> None:
        """The policy-based storage of rbac objects: refuse a create or update of a role that
        grants, or a binding that binds, more than the writer holds (unless the writer may
        `escalate` roles or `bind` that role)."""
        if obj is None or operation not in ("CREATE", "UPDATE"):
            return
        if PRIVILEGED_GROUP in user.groups or (old is not None and _only_gc_fields(obj, old)):
            return
        name = str(obj.get("metadata", {}).get("name", ""))
        if plural in ("roles", "clusterroles"):
            self._check_role(user, plural, namespace, name, obj, old)
        elif plural in ("rolebindings", "clusterrolebindings"):
            self._check_binding(user, plural, namespace, name, obj)

    def _check_role(self, user: UserInfo, plural: str, namespace: str, name: str, obj: Json,
                    old: Json | None) -> None:
        escalate = RequestAttributes("escalate", True, api_group=GROUP, api_version="*",
                                     namespace=namespace, resource=plural, name=name)
        if self.authorize(user, escalate).allowed:
            return
        wanted = [Rule.from_json(r) for r in obj.get("rules") or []]
        self._confirm_no_escalation(user, namespace, wanted, plural, name)
        rule = obj.get("aggregationRule")
        changed = rule and (old is None or rule != old.get("aggregationRule"))
        if plural == "clusterroles" and changed and self._missing(user, namespace,
                                                                  FULL_AUTHORITY)[0]:
            raise forbidden(GROUP, plural, name, "must have cluster-admin privileges to use"
                                " the aggregationRule")

    def _check_binding(self, user: UserInfo, plural: str, namespace: str, name: str,
                       obj: Json) -> None:
        ref = obj.get("roleRef") or {}
        kind, role_name = ref.get("kind", ""), str(ref.get("name", ""))
        role_plural = {"ClusterRole": "clusterroles", "Role": "roles"}.get(kind)
        if role_plural is None:
            return
        bind = RequestAttributes("bind", True, api_group=str(ref.get("apiGroup", "")),
                                 api_version="*", namespace=namespace, resource=role_plural,
                                 name=role_name)
        if self.authorize(user, bind).allowed:
            return
        rules, error = self._role_ref_rules(ref, namespace)
        if error:
            raise not_found(GROUP, role_plural, role_name)
        self._confirm_no_escalation(user, namespace, rules, plural, name)

    def _missing(self, user: UserInfo, namespace: str, wanted: list[Rule]
                 ) -> tuple[list[Rule], list[str]]:
        owner, errors = self.rules_for(user, namespace)
        return uncovered(owner, wanted), errors

    def _confirm_no_escalation(self, user: UserInfo, namespace: str, wanted: list[Rule],
                               plural: str, name: str) -> None:
        """ConfirmNoEscalation, raised as the storage's Forbidden error."""
        if self.on_grant is not None:
            self.on_grant(user, wanted)
        missing, errors = self._missing(user, namespace, wanted)
        if not missing:
            return
        lines = sorted({rule.compact_string() for rule in compact(missing)})
        message = (f"user {go_quote(user.username)} (groups={go_quoted_list(user.groups)}) is"
                   " attempting to grant RBAC permissions not currently held:\n"
                   + "\n".join(lines))
        if errors:
            message += f"; resolution errors: [{aggregate_message(errors)}]"
        raise forbidden(GROUP, plural, name, message)


def _subject_for(user: UserInfo, subjects: list[Json], namespace: str) -> Json | None:
    """The first subject of a binding that names the user (appliesTo)."""
    for subject in subjects:
        kind, name = subject.get("kind"), subject.get("name", "")
        if kind == "User" and user.username == name:
            return subject
        if kind == "Group" and name in user.groups:
            return subject
        if kind == "ServiceAccount":
            sa_namespace = subject.get("namespace") or namespace
            if sa_namespace and user.username == f"system:serviceaccount:{sa_namespace}:{name}":
                return subject
    return None


def _describe(subject: Json, namespace: str) -> str:
    kind, name = str(subject.get("kind", "")), str(subject.get("name", ""))
    if kind == "ServiceAccount":
        return f"{kind} {go_quote(name + '/' + (subject.get('namespace') or namespace))}"
    return f"{kind} {go_quote(name)}"


def _only_gc_fields(obj: Json, old: Json) -> bool:
    """IsOnlyMutatingGCFields: nothing but ownerReferences and finalizers changed."""
    def strip(o: Json) -> Json:
        meta = {k: v for k, v in o.get("metadata", {}).items()
                if k not in _GC_FIELDS + _SERVER_FIELDS}
        return {**{k: v for k, v in o.items() if k != "metadata"}, "metadata": meta}
    return strip(obj) == strip(old)


__all__ = ["Authorizer", "Decision", "forbidden", "forbidden_message"]
