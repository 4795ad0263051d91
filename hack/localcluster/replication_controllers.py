"""ReplicationControllers (core/v1): defaulting and validation of the API type.

The controller that runs them lives in the simulation; this is what the API server itself
does with the object (`SetDefaults_ReplicationController` and
`ValidateReplicationController{,Update}`): the selector and labels default to the template's
labels, replicas to 1; the selector (a plain label map) must be non-empty and match the
template's labels, replicas may not be negative, and the template's pods restart Always.
"""

from __future__ import annotations

from typing import Any

from .errors import Cause, invalid, required, unsupported

Json = dict[str, Any]
KIND = "ReplicationController"


def apply_defaults(obj: Json) -> None:
    """Selector and labels from the template's labels; one replica."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    template = spec.get("template")
    labels = ((template.get("metadata") or {}).get("labels") or {}
              if isinstance(template, dict) else {})
    if labels:
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        meta = obj.setdefault("metadata", {})
        if not meta.get("labels"):
            meta["labels"] = dict(labels)
    spec.setdefault("replicas", 1)


def validation_errors(obj: Json, pod_spec_errors: Any) -> list[Cause]:
    """The spec's errors; `pod_spec_errors(spec, path)` checks the template's pod spec."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return [required("spec")]
    errors: list[Cause] = []
    selector = spec.get("selector")
    if not selector:
        errors.append(required("spec.selector"))
    replicas = spec.get("replicas")
    if isinstance(replicas, int) and replicas < 0:
        errors.append(invalid("spec.replicas", replicas, "must be greater than or equal to 0"))
    template = spec.get("template")
    if not isinstance(template, dict):
        errors.append(required("spec.template"))
        return errors
    labels = (template.get("metadata") or {}).get("labels") or {}
    if isinstance(selector, dict) and selector and any(
            labels.get(k) != v for k, v in selector.items()):
        errors.append(invalid("spec.template.metadata.labels", labels,
                              "`selector` does not match template `labels`"))
    pod_spec = template.get("spec")
    errors.extend(pod_spec_errors(pod_spec, "spec.template.spec"))
    policy = (pod_spec or {}).get("restartPolicy", "Always") if isinstance(
        pod_spec, dict) else "Always"
    if policy != "Always":
        errors.append(unsupported("spec.template.spec.restartPolicy", policy, ["Always"]))
    return errors


__all__ = ["KIND", "apply_defaults", "validation_errors"]
