"""The legacy `DYN_DEPLOYMENT_CONFIG` environment variable: a JSON document of per-service
settings that older SDK-built graphs carry. Replicas and resources given there still apply to
the component, and a frontend's port in it is forced to the one the operator exposes."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, replace
from typing import Any

from api.v1alpha1 import ResourceItem, Resources
from backends import constants
from backends.errors import GenerationError

__all__ = ["ENV_NAME", "Configured", "apply_deployment_config"]

ENV_NAME = "DYN_DEPLOYMENT_CONFIG"


@dataclass(frozen=True)
class Configured:
    """What DYN_DEPLOYMENT_CONFIG decides of a component: its `v1alpha1` envs and resources
    (`ComponentInputs.pod`) and its replicas."""

    envs: list[dict[str, Any]] | None
    replicas: int | None
    resources: Resources | None


def apply_deployment_config(given: Configured, service: str,
                            component_type: str | None) -> Configured:
    """`given` with the `service` entry of its DYN_DEPLOYMENT_CONFIG env applied. The env
    entry is changed in place (the caller's own copy); the resources are copied first."""
    spec = given
    env = next((e for e in spec.envs or [] if e.get("name") == ENV_NAME), None)
    if env is None or "value" not in env:
        return spec
    try:
        config = json.loads(env["value"])
    except (TypeError, json.JSONDecodeError) as exc:
        raise GenerationError(f"invalid {ENV_NAME} JSON: {exc}") from None
    if not isinstance(config, dict) or not isinstance(config.get(service), dict):
        return spec
    entry: dict[str, Any] = config[service]
    if component_type == constants.FRONTEND:
        entry["port"] = constants.FRONTEND_PORT
        env["value"] = json.dumps(config, sort_keys=True, separators=(",", ":"))
    service_args = _get(entry, "ServiceArgs")
    if not isinstance(service_args, dict):
        return spec
    workers = _get(service_args, "workers")
    if spec.replicas is None and isinstance(workers, int) and not isinstance(workers, bool):
        spec = replace(spec, replicas=workers)
    resources = _get(service_args, "resources")
    if isinstance(resources, dict):
        spec = replace(spec, resources=_apply_resources(spec.resources, resources))
    return spec


def _apply_resources(current: Resources | None, given: dict[str, Any]) -> Resources | None:
    values = {
        name: _get(given, name)
        for name in ("cpu", "memory", "gpu")
        if isinstance(_get(given, name), str)
    }
    custom = _get(given, "custom")
    if not values and not isinstance(custom, dict):
        return current
    resources = copy.deepcopy(current) if current is not None else Resources()
    for part in ("requests", "limits"):
        item: ResourceItem = getattr(resources, part) or ResourceItem()
        for name, value in values.items():
            setattr(item, name, value)
        if isinstance(custom, dict):
            item.custom = {**(item.custom or {}), **{k: str(v) for k, v in custom.items()}}
        setattr(resources, part, item)
    return resources


def _get(obj: dict[str, Any], name: str) -> Any:
    """A field matched case-insensitively, as Go's JSON decoding does."""
    if name in obj:
        return obj[name]
    return next((v for k, v in obj.items() if k.lower() == name.lower()), None)
