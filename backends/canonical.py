"""Canonical ordering of the lists in a generated pod spec.

Lists whose order carries no meaning are sorted, so one spec always gives byte-identical
objects whatever order its maps and merges produced. Lists whose order does matter are left
as the user wrote them: init containers run in order, and a later envFrom source wins over an
earlier one.
"""

from __future__ import annotations

from typing import Any

Json = dict[str, Any]

__all__ = ["canonical_container", "canonical_pod_spec"]


def canonical_container(container: Json) -> None:
    """Sort a container's env (by name), ports and volume mounts, in place."""
    if container.get("env"):
        container["env"] = sorted(container["env"], key=lambda e: str(e.get("name", "")))
    if container.get("ports"):
        container["ports"] = sorted(
            container["ports"],
            key=lambda p: (str(p.get("name", "")), _int(p.get("containerPort"))),
        )
    if container.get("volumeMounts"):
        container["volumeMounts"] = sorted(
            container["volumeMounts"],
            key=lambda m: (str(m.get("name", "")), str(m.get("mountPath", ""))),
        )
    capabilities = (container.get("securityContext") or {}).get("capabilities")
    if isinstance(capabilities, dict):
        for key in ("add", "drop"):
            if capabilities.get(key):
                capabilities[key] = sorted(capabilities[key])


def canonical_pod_spec(spec: Json) -> None:
    """Sort the order-free lists of a pod spec and of each of its containers, in place."""
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for container in spec.get(key) or []:
            canonical_container(container)
    if spec.get("containers"):
        spec["containers"] = sorted(spec["containers"], key=lambda c: str(c.get("name", "")))
    for key in ("imagePullSecrets", "volumes"):
        if spec.get(key):
            spec[key] = sorted(spec[key], key=lambda v: str(v.get("name", "")))
    if spec.get("tolerations"):
        spec["tolerations"] = sorted(
            spec["tolerations"],
            key=lambda t: (
                str(t.get("key", "")),
                str(t.get("operator", "")),
                str(t.get("value", "")),
                str(t.get("effect", "")),
                _int(t.get("tolerationSeconds")),
            ),
        )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else -1
