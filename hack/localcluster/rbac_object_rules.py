"""Validation of the RBAC objects themselves (Role, ClusterRole, RoleBinding,
ClusterRoleBinding) as kube-apiserver's rbac validation does it: rules need verbs and, for
resources, API groups and resources; a binding's roleRef and subjects are checked after the v1
defaults (roleRef.apiGroup, a User's or Group's apiGroup), and roleRef never changes."""

from __future__ import annotations

from typing import Any

from .errors import Cause, invalid, required, unsupported

Json = dict[str, Any]
GROUP = "rbac.authorization.k8s.io"
ROLE_KINDS = ("Role", "ClusterRole")
BINDING_KINDS = ("RoleBinding", "ClusterRoleBinding")


def _rule_errors(rule: Any, namespaced: bool, path: str) -> list[Cause]:
    if not isinstance(rule, dict):
        return [invalid(path, rule, "must be an object")]
    errors = []
    if not rule.get("verbs"):
        errors.append(Cause("FieldValueRequired", "Required value: verbs must contain at least"
                            " one value", f"{path}.verbs"))
    urls = rule.get("nonResourceURLs") or []
    if urls:
        listed = "[]string{" + ", ".join(f'"{u}"' for u in urls) + "}"
        if namespaced:
            errors.append(Cause("FieldValueInvalid", f"Invalid value: {listed}: namespaced rules"
                                " cannot apply to non-resource URLs", f"{path}.nonResourceURLs"))
        if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
            errors.append(Cause("FieldValueInvalid", f"Invalid value: {listed}: rules cannot"
                                " apply to both regular resources and non-resource URLs",
                                f"{path}.nonResourceURLs"))
        return errors
    if not rule.get("apiGroups"):
        errors.append(Cause("FieldValueRequired", "Required value: resource rules must supply"
                            " at least one api group", f"{path}.apiGroups"))
    if not rule.get("resources"):
        errors.append(Cause("FieldValueRequired", "Required value: resource rules must supply"
                            " at least one resource", f"{path}.resources"))
    return errors


def apply_defaults(obj: Json) -> None:
    """SetDefaults_RoleBinding and SetDefaults_Subject of rbac/v1."""
    ref = obj.get("roleRef")
    if isinstance(ref, dict) and not ref.get("apiGroup"):
        ref["apiGroup"] = GROUP
    for subject in obj.get("subjects") or []:
        if isinstance(subject, dict) and not subject.get("apiGroup") and subject.get(
                "kind") in ("User", "Group"):
            subject["apiGroup"] = GROUP


def _subject_errors(subject: Any, namespaced: bool, path: str) -> list[Cause]:
    if not isinstance(subject, dict):
        return [invalid(path, subject, "must be an object")]
    errors = [] if subject.get("name") else [required(f"{path}.name")]
    kind, group = subject.get("kind", ""), subject.get("apiGroup") or ""
    if kind in ("User", "Group"):
        group = group or GROUP
    if kind == "ServiceAccount":
        if group:
            errors.append(unsupported(f"{path}.apiGroup", group, [""]))
        if not namespaced and not subject.get("namespace"):
            errors.append(required(f"{path}.namespace"))
    elif kind in ("User", "Group"):
        if group != GROUP:
            errors.append(unsupported(f"{path}.apiGroup", group, [GROUP]))
    else:
        errors.append(unsupported(f"{path}.kind", kind, ["ServiceAccount", "User", "Group"]))
    return errors


def _role_ref(obj: Json) -> Json:
    ref = obj.get("roleRef")
    ref = dict(ref) if isinstance(ref, dict) else {}
    ref["apiGroup"] = ref.get("apiGroup") or GROUP
    return ref


def validation_errors(kind: str, obj: Json, old: Json | None) -> list[Cause]:
    """ValidateRole/ClusterRole/RoleBinding/ClusterRoleBinding (and their updates)."""
    namespaced = kind in ("Role", "RoleBinding")
    if kind in ROLE_KINDS:
        return [c for i, rule in enumerate(obj.get("rules") or [])
                for c in _rule_errors(rule, namespaced, f"rules[{i}]")]
    ref = _role_ref(obj)
    errors = []
    if ref["apiGroup"] != GROUP:
        errors.append(unsupported("roleRef.apiGroup", ref["apiGroup"], [GROUP]))
    if ref.get("kind") not in ROLE_KINDS:
        errors.append(unsupported("roleRef.kind", ref.get("kind", ""), list(ROLE_KINDS)))
    if not ref.get("name"):
        errors.append(required("roleRef.name"))
    for i, subject in enumerate(obj.get("subjects") or []):
        errors.extend(_subject_errors(subject, namespaced, f"subjects[{i}]"))
    if old is not None:
        before = _role_ref(old)
        if (before.get("apiGroup"), before.get("kind"), before.get("name")) != (
                ref["apiGroup"], ref.get("kind"), ref.get("name")):
            shown = (f'rbac.RoleRef{{APIGroup:"{ref["apiGroup"]}", Kind:"{ref.get("kind", "")}",'
                     f' Name:"{ref.get("name", "")}"}}')
            errors.append(Cause("FieldValueInvalid", f"Invalid value: {shown}: cannot change"
                                " roleRef", "roleRef"))
    return errors
