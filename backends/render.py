"""Everything the operator would create for a manifest, computed without a cluster.

`render` takes one object as JSON (a DynamoGraphDeployment or a DynamoComponentDeployment) and
returns the objects the controllers would write for it, parents before children, without
owner references (those need the stored parents' UIDs).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from api.convert import ConversionError, dump, load
from api.v1alpha1 import DynamoComponentDeployment, DynamoGraphDeployment
from api.validation import validate
from backends import constants
from backends.component_deployment import component_deployments
from backends.component_workload import component_objects
from backends.errors import GenerationError
from backends.graph_objects import (
    discovery_rbac,
    persistent_volume_claims,
    scaling_adapters,
    uses_discovery,
)
from backends.grove import grove_objects
from backends.multinode import node_count
from backends.settings import OperatorSettings

Json = dict[str, Any]

__all__ = ["render", "render_all", "uses_grove"]

# Kinds whose controllers create nothing that can be shown.
_NO_CHILDREN = ("DynamoGraphDeploymentScalingAdapter", "DynamoModel")
T = TypeVar("T")


def render_all(
    manifests: Iterable[Mapping[str, Any]],
    settings: OperatorSettings | None = None,
    *,
    pull_secrets: Mapping[str, Sequence[str]] | None = None,
) -> list[Json]:
    """The objects of several manifests, in order, each object once."""
    return _unique(
        obj
        for manifest in manifests
        for obj in render(manifest, settings, pull_secrets=pull_secrets)
    )


def render(
    manifest: Mapping[str, Any],
    settings: OperatorSettings | None = None,
    *,
    pull_secrets: Mapping[str, Sequence[str]] | None = None,
) -> list[Json]:
    """The objects the operator creates for one manifest. Raises GenerationError for a
    manifest it would reject."""
    settings = settings or OperatorSettings()
    kind = manifest.get("kind")
    data = copy.deepcopy(dict(manifest))
    data.setdefault("metadata", {}).setdefault("namespace", "default")
    if kind == "DynamoGraphDeployment":
        return _graph(_load(DynamoGraphDeployment, data), settings, pull_secrets)
    if kind == "DynamoComponentDeployment":
        dcd = _load(DynamoComponentDeployment, data)
        return component_objects(dcd, settings, pull_secrets=pull_secrets)
    if kind in _NO_CHILDREN:
        return []
    raise GenerationError(f"cannot render kind {kind!r}")


def uses_grove(dgd: DynamoGraphDeployment, settings: OperatorSettings) -> bool:
    """Grove runs the graph when installed, unless the graph opts out by annotation."""
    annotations = dgd.metadata.get("annotations") or {}
    opted_out = annotations.get(constants.ANNOTATION_ENABLE_GROVE, "").lower() == "false"
    return settings.grove_enabled and not opted_out


def _graph(
    dgd: DynamoGraphDeployment,
    settings: OperatorSettings,
    pull_secrets: Mapping[str, Sequence[str]] | None,
) -> list[Json]:
    objects = [*persistent_volume_claims(dgd), *scaling_adapters(dgd)]
    if uses_discovery(dgd, settings.discovery_backend):
        objects += discovery_rbac(dgd)
    if uses_grove(dgd, settings):
        return objects + grove_objects(dgd, settings, pull_secrets=pull_secrets)
    services = (dgd.spec.services or {}).values()
    if not settings.lws_enabled and any(node_count(s) > 1 for s in services):
        raise GenerationError("no multinode orchestrator available")
    for dcd in component_deployments(dgd, settings):
        objects.append(dump(dcd))
        objects += component_objects(dcd, settings, pull_secrets=pull_secrets)
    # Services sharing a base model share its headless Service.
    return _unique(objects)


def _unique(objects: Iterable[Json]) -> list[Json]:
    seen: set[tuple[str, str, str, str]] = set()
    unique = []
    for obj in objects:
        meta = obj["metadata"]
        key = (obj["apiVersion"], obj["kind"], meta.get("namespace", ""), meta["name"])
        if key not in seen:
            seen.add(key)
            unique.append(obj)
    return unique


def _load(cls: type[T], data: Json) -> T:
    try:
        obj = load(cls, data)
    except ConversionError as exc:
        raise GenerationError(str(exc)) from None
    errors = validate(obj)
    if errors:
        name = data["metadata"].get("name", "")
        raise GenerationError(
            f"invalid {data.get('kind')} {name}: " + "; ".join(str(e) for e in errors)
        )
    return obj
