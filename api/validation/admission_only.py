"""Rules the admission webhook applies to what is written, and that stored objects are not
checked against again: an operator before them admitted such objects, which keep reconciling
as they did (and render as they did, `backends.origin_gates`).

* A graph's `nvidia.com/dynamo-operator-origin-version` is a version (`api.origin_version`).
* A frontendSidecar written in `v1alpha1` needs its container's name, `sidecar-frontend`, free
  among extraPodSpec's containers, as the original refuses it. (In `v1beta1` the field names
  a container of the template, which the shape rules check.)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from api.errors import FieldError
from api.kube import Json
from api.origin_version import validate_origin_version

__all__ = ["FRONTEND_SIDECAR_CONTAINER", "admission_only"]

#: The container a `v1alpha1` frontendSidecar becomes (`api.conversion.pod_template`).
FRONTEND_SIDECAR_CONTAINER = "sidecar-frontend"
_SPOKE = "nvidia.com/v1alpha1"


def admission_only(obj: Json) -> list[FieldError]:
    """The admission-only errors of an object of our kinds, as written (either version)."""
    kind = obj.get("kind")
    spec = _map(obj.get("spec"))
    errors: list[FieldError] = []
    if kind == "DynamoGraphDeployment":
        errors += validate_origin_version(_map(_map(obj.get("metadata")).get("annotations")))
        if obj.get("apiVersion") == _SPOKE:
            errors += _sidecars((f"spec.services.{key}", _map(service))
                                for key, service in _map(spec.get("services")).items())
    elif kind == "DynamoComponentDeployment" and obj.get("apiVersion") == _SPOKE:
        errors += _sidecars([("spec", spec)])
    return errors


def _sidecars(components: Iterable[tuple[str, Json]]) -> list[FieldError]:
    errors = []
    for path, component in components:
        if not isinstance(component.get("frontendSidecar"), dict):
            continue
        containers = _map(component.get("extraPodSpec")).get("containers")
        names = [c.get("name") for c in containers or [] if isinstance(c, dict)] \
            if isinstance(containers, list) else []
        if FRONTEND_SIDECAR_CONTAINER in names:
            errors.append(FieldError(
                f"{path}.frontendSidecar",
                "Invalid value: cannot inject the frontend sidecar: a container named "
                f'"{FRONTEND_SIDECAR_CONTAINER}" already exists in extraPodSpec.containers'))
    return errors


def _map(value: Any) -> Json:
    return value if isinstance(value, dict) else {}
