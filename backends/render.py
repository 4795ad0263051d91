"""Everything the operator would create for a manifest, computed without a cluster.

`render` takes one object as JSON (a DynamoGraphDeployment or a DynamoComponentDeployment, in
`nvidia.com/v1alpha1` or `v1beta1`: both versions of one deployment render the same objects)
and returns the objects the controllers would write for it, parents before children. Like every
builder's output they carry no owner references: the operator's child writer adds those when it
creates a child, from the stored parent's UID. Graphs are rendered as on a cluster serving every
optional API they use (an EPP service's InferencePool included).

`render_documents` takes a whole manifest file, as users keep them: the Dynamo kinds are
rendered, our kinds that make nothing visible without a cluster are skipped with a note, and
every other document (a Namespace, an HPA, a KEDA ScaledObject...) passes through unchanged.

A manifest is validated as the operator validates it (the rules of `api/validation/`, on its
`v1alpha1` form) and rendered from its hub form (`HubGraph`, `HubComponent`), as the operator
renders what it stores. A graph's DCDs are shown in `v1alpha1`, the form users read them in.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from api.conversion import HUB, SPOKE, ConversionFailure, convert
from api.conversion.views import read_as
from api.errors import InvalidObject
from api.load import load_valid
from api.v1alpha1 import DynamoComponentDeployment, DynamoGraphDeployment
from backends.component_deployment import component_deployments
from backends.component_workload import component_objects
from backends.constants import DYNAMO_API_VERSION
from backends.errors import GenerationError
from backends.gpu_memory_service import standalone_claim_templates
from backends.graph_children import graph_children, uses_grove
from backends.hub_component import hub_component
from backends.hub_graph import HubGraph, hub_graph
from backends.settings import OperatorSettings

Json = dict[str, Any]

__all__ = ["render", "render_all", "render_documents"]

# Kinds whose controllers create nothing that can be shown.
_NO_CHILDREN = ("DynamoGraphDeploymentScalingAdapter", "DynamoModel")
_RENDERED = ("DynamoGraphDeployment", "DynamoComponentDeployment")
_DYNAMO_GROUP = DYNAMO_API_VERSION.split("/")[0]
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


def render_documents(
    documents: Iterable[Mapping[str, Any]],
    settings: OperatorSettings | None = None,
) -> tuple[list[Json], list[str]]:
    """The objects of a manifest file, in order (each once), and a note per skipped document.
    Raises GenerationError for a Dynamo manifest the operator would reject."""
    objects: list[Json] = []
    notes = []
    for doc in documents:
        kind = doc.get("kind")
        group = str(doc.get("apiVersion") or "").split("/")[0]
        name = (doc.get("metadata") or {}).get("name", "")
        if kind in _RENDERED:
            objects += render(doc, settings)
        elif group == _DYNAMO_GROUP:
            notes.append(f"skipped {kind} {name}: nothing to render without a cluster")
        elif kind and name:
            objects.append(copy.deepcopy(dict(doc)))
        else:
            raise GenerationError("every YAML document must be a Kubernetes object with a "
                                  "kind and a metadata.name")
    return _unique(objects), notes


def render(
    manifest: Mapping[str, Any],
    settings: OperatorSettings | None = None,
    *,
    pull_secrets: Mapping[str, Sequence[str]] | None = None,
) -> list[Json]:
    """The objects the operator creates for one manifest. Raises GenerationError for a
    manifest it would reject."""
    settings = dataclasses.replace(settings or OperatorSettings(), inference_pool_enabled=True)
    kind = manifest.get("kind")
    data = copy.deepcopy(dict(manifest))
    data.setdefault("metadata", {}).setdefault("namespace", "default")
    written = copy.deepcopy(data)
    written.setdefault("apiVersion", DYNAMO_API_VERSION)  # as the models default it
    if kind in _RENDERED and data.get("apiVersion") == HUB:
        try:  # the rules are written against the v1alpha1 form
            data = read_as(data, DYNAMO_API_VERSION)
        except ConversionFailure as err:
            raise GenerationError(str(err)) from None
    if kind == "DynamoGraphDeployment":
        _load(DynamoGraphDeployment, data)  # validated as the operator validates it
        return _graph(_hub(hub_graph, written), settings, pull_secrets)
    if kind == "DynamoComponentDeployment":
        _load(DynamoComponentDeployment, data)
        dcd = _hub(hub_component, written)
        return [*standalone_claim_templates(dcd, settings),
                *component_objects(dcd, settings, pull_secrets=pull_secrets)]
    if kind in _NO_CHILDREN:
        return []
    raise GenerationError(f"cannot render kind {kind!r}")


def _graph(
    hub: HubGraph,
    settings: OperatorSettings,
    pull_secrets: Mapping[str, Sequence[str]] | None,
) -> list[Json]:
    desired = graph_children(hub, settings, pull_secrets=pull_secrets)
    # The worker revision history is the controller's bookkeeping, not something to apply.
    objects = [o for o in desired.objects()
               if o["kind"] not in ("DynamoComponentDeployment", "ControllerRevision")]
    if uses_grove(hub, settings):
        return objects
    for dcd in component_deployments(hub, settings):
        objects.append(convert(dcd, SPOKE))
        objects += component_objects(hub_component(dcd), settings, pull_secrets=pull_secrets)
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


def _hub(make: Callable[[Json], T], written: Json) -> T:
    """The hub form of a manifest (`hub_graph`, `hub_component`); GenerationError for one that
    does not convert, or whose saved fields do not read."""
    try:
        return make(written)
    except ValueError as err:  # ConversionFailure, api.errors.ConversionError
        raise GenerationError(str(err)) from None


def _load(cls: type[T], data: Json) -> T:
    try:
        return load_valid(cls, data)
    except InvalidObject as err:
        name = f" {data['metadata'].get('name', '')}" if err.converted else ""
        raise GenerationError(f"invalid {data.get('kind')}{name}: {err}") from None
