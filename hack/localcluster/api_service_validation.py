"""Validation of APIServices (apiregistration.k8s.io/v1), as kube-aggregator's
`ValidateAPIService`: the name is `<version>.<group>` (a path segment, so `v1.` for the core
group), a version, only `v1` with the empty group, and priorities in range."""

from __future__ import annotations

from typing import Any

from .errors import Cause, invalid, required

Json = dict[str, Any]
KIND = "APIService"


def validation_errors(obj: Json) -> list[Cause]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return [required("spec")]
    group, version = str(spec.get("group") or ""), str(spec.get("version") or "")
    name = str((obj.get("metadata") or {}).get("name") or "")
    errors: list[Cause] = []
    wanted = f"{version}.{group}"
    if name != wanted:
        errors.append(invalid("metadata.name", name,
                              f'must be `spec.version+"."+spec.group`: "{wanted}"'))
    if not version:
        errors.append(required("spec.version"))
    if not group and version != "v1":
        errors.append(invalid("spec.group", group,
                              "only v1 may have an empty group and it better be legacy kube"))
    minimum = spec.get("groupPriorityMinimum")
    if not isinstance(minimum, int) or not 0 < minimum <= 20000:
        errors.append(invalid("spec.groupPriorityMinimum", minimum,
                              "must be positive and less than 20000"))
    priority = spec.get("versionPriority")
    if not isinstance(priority, int) or not 0 < priority <= 1000:
        errors.append(invalid("spec.versionPriority", priority,
                              "must be positive and less than 1000"))
    service = spec.get("service")
    if isinstance(service, dict):
        for key in ("namespace", "name"):
            if not service.get(key):
                errors.append(required(f"spec.service.{key}"))
    return errors


__all__ = ["KIND", "validation_errors"]
