"""A container's resource requests against its limits, as kube-apiserver's pod validation
compares them: a request above its limit is refused, and a resource that cannot be
overcommitted (an extended resource such as `nvidia.com/gpu`, or hugepages) needs a limit, and
a request equal to it."""

from __future__ import annotations

from typing import Any

from .errors import Cause, invalid
from .quantity_values import canonical, parse


def _overcommit_allowed(name: str) -> bool:
    """Native resources (no domain, or kubernetes.io's) other than hugepages."""
    native = "/" not in name or name.split("/", 1)[0].endswith("kubernetes.io")
    return native and not name.startswith("hugepages-")


def resource_errors(resources: Any, path: str) -> list[Cause]:
    """The errors of a container's `resources` at `path`."""
    if not isinstance(resources, dict):
        return []
    limits = resources.get("limits")
    if not isinstance(limits, dict):
        limits = {}
    requests = resources.get("requests")
    if not isinstance(requests, dict):
        return []
    errors: list[Cause] = []
    for name, quantity in requests.items():
        request = parse(str(quantity))
        if request is None:
            continue
        limit = parse(str(limits[name])) if name in limits else None
        if name not in limits:
            if not _overcommit_allowed(name):
                errors.append(Cause("FieldValueRequired", "Required value: Limit must be set"
                                    " for non overcommitable resources", f"{path}.limits"))
            continue
        if limit is None:
            continue
        shown, limit_shown = canonical(*request), canonical(*limit)
        if request[0] != limit[0] and not _overcommit_allowed(name):
            errors.append(invalid(f"{path}.requests", shown,
                                  f"must be equal to {name} limit of {limit_shown}"))
        elif request[0] > limit[0]:
            errors.append(invalid(f"{path}.requests", shown,
                                  f"must be less than or equal to {name} limit of {limit_shown}"))
    return errors
