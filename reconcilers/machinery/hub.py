"""The one boundary between the API hub (`nvidia.com/v1beta1`) and the `v1alpha1` view.

The DGD, DCD and DGDR are stored, watched and written as `v1beta1`, the hub: the operator never
needs its own conversion webhook to read or write its objects (a single replica restarting
would otherwise wait on itself). The informers hold them as stored, and the reconcilers read
them, and write their statuses, finalizers and patches, in the hub's terms; the builders of
graphs and DCDs take them as the hub too (`backends.hub_graph`, `backends.hub_component`,
made once per change by `reconcilers.machinery.spec_views`), and build child DCDs as the hub.
What remains here is the DGDR reconciler's: `view` gives the `v1alpha1` view of an object of
ours (a request written as `v1alpha1` is profiled through it), and `to_wire` the body to send
for an object to a resource of ours. Objects of the other kinds, and objects already in the
wanted version, pass unchanged.
"""

from __future__ import annotations

from typing import Any

from api.conversion import HUB, SPOKE, convert
from controller.cache import Cache
from controller.resource import Resource
from reconcilers.machinery.resources import (
    COMPONENT_DEPLOYMENTS,
    DEPLOYMENT_REQUESTS,
    GRAPH_DEPLOYMENTS,
)

Json = dict[str, Any]

__all__ = ["HUB_KINDS", "VIEW_VERSION", "is_hub", "require_views", "to_wire", "view"]

#: The version of a view: the spoke.
VIEW_VERSION = SPOKE
#: The kinds stored, watched and written as the hub.
HUB_KINDS = frozenset(r.kind for r in (GRAPH_DEPLOYMENTS, COMPONENT_DEPLOYMENTS,
                                       DEPLOYMENT_REQUESTS))


def is_hub(resource: Resource) -> bool:
    """`resource` is one of ours stored as the hub, at the hub's version (a v1alpha1 resource
    of them, a test bed's, is read and written as it is)."""
    return resource.api_version == HUB and resource.kind in HUB_KINDS


def view(obj: Json) -> Json:
    """The `v1alpha1` view of an object of ours (a copy); other objects as they are."""
    if obj.get("kind") not in HUB_KINDS or obj.get("apiVersion") != HUB:
        return obj
    return convert(obj, VIEW_VERSION)


def to_wire(resource: Resource, obj: Json) -> Json:
    """The body to send for `obj` to `resource`: a view converted to the hub for the hub
    kinds, anything else unchanged."""
    if not is_hub(resource) or obj.get("apiVersion") == HUB:
        return obj
    return convert(obj, HUB)


def require_views(cache: Cache, *resources: Resource) -> None:
    """ValueError unless `cache` holds `resources` as the operator reads them: as stored,
    through the cache's default transform only (no view, no trimming of their fields)."""
    for resource in resources:
        if cache.transform_for(resource) is not cache.transform:
            raise ValueError(f"the cache must hold {resource.plural} as stored: build the "
                             "manager with registry.cache_transforms() in its by_object")
