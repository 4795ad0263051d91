"""The one boundary between the API hub (`nvidia.com/v1beta1`) and the `v1alpha1` view.

The DGD, DCD and DGDR are stored, watched and written as `v1beta1`, the hub: the operator never
needs its own conversion webhook to read or write its objects (a single replica restarting
would otherwise wait on itself). The informers of graphs and DCDs hold them as they are (the
hub); their reconcilers and the scaling adapter's read them so and write their statuses and
patches in the hub's terms. What still reads `v1alpha1` is converted here, the only place that
converts:

- the builders, which take the `v1alpha1` models, get a graph's or a DCD's view from
  `spec_view` (`reconcilers.machinery.spec_views`: one conversion per change of its spec or
  metadata);
- what the informer of DGDRs receives is stored in the cache as its `v1alpha1` view
  (`CACHE_TRANSFORMS`: once per watch event), made by `api.conversion` with its payload
  annotations kept, so that converting the view back gives the live object field for field
  (nothing the view cannot show is lost by a write-back), and the view is exactly what a
  `v1alpha1` read of the object answers;
- what is written of our kinds is converted to `v1beta1` here (`to_wire`: a child DCD, a
  generated graph), after it was compared with the live object (by the version-independent
  spec hash and the metadata);
- a status of a view is written as the `v1beta1` diff of the object converted with its old and
  its new status (`hub_status`): what either version cannot show cancels out; what the hub
  cannot show of a v1alpha1 status (a DGDR's deployment and backend) is its status payload
  annotation, which the status subresource cannot write, so `write_status` writes it next;
- what the API server answers a write of a viewed kind (a DGDR) is turned into the view again
  (`from_wire`); a graph's or a DCD's answer stays the hub.

Objects of the other kinds, and objects already in the wanted version, pass unchanged.
"""

from __future__ import annotations

from typing import Any

from api.conversion import HUB, SPOKE, convert
from api.conversion.status_writes import HubStatusWrite, hub_status_write
from controller.cache import Cache
from controller.informer import Transform, compact, strip_managed_fields
from controller.resource import Resource
from reconcilers.machinery import spec_views
from reconcilers.machinery.resources import (
    COMPONENT_DEPLOYMENTS,
    DEPLOYMENT_REQUESTS,
    GRAPH_DEPLOYMENTS,
)

Json = dict[str, Any]

__all__ = ["CACHE_TRANSFORMS", "HUB_KINDS", "VIEWED_KINDS", "VIEW_VERSION", "HubStatusWrite",
           "cache_view", "from_wire", "hub_status", "is_hub", "require_views", "spec_view",
           "to_wire", "view"]

#: The version the reconcilers and backends read and build: the spoke.
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


def cache_view(obj: Json) -> Json:
    """The cache's transform of the hub kinds: managedFields dropped, the view, compacted."""
    return compact(view(strip_managed_fields(obj)))


#: The informer of DGDRs holds views (`reconcilers.operator.registry` merges these); those
#: of graphs and DCDs hold the hub as it is.
CACHE_TRANSFORMS: dict[Resource, Transform] = {
    DEPLOYMENT_REQUESTS: cache_view,
}
#: The kinds whose cache holds views (and whose write answers become views).
VIEWED_KINDS = frozenset(r.kind for r in CACHE_TRANSFORMS)


def to_wire(resource: Resource, obj: Json) -> Json:
    """The body to send for `obj` to `resource`: a view converted to the hub for the hub
    kinds, anything else unchanged."""
    if not is_hub(resource) or obj.get("apiVersion") == HUB:
        return obj
    return convert(obj, HUB)


def from_wire(resource: Resource, obj: Json) -> Json:
    """What the server answered for `resource`, as the reconcilers read it: the view of
    the viewed kinds (an empty answer, `decode=False`, stays empty), the hub of the others."""
    if not obj or not is_hub(resource) or resource.kind not in VIEWED_KINDS:
        return obj
    return view(obj)


def hub_status(obj: Json, status: Json) -> HubStatusWrite:
    """A status write of `obj`, a view, on the hub (`api.conversion.status_writes`)."""
    return hub_status_write(obj, status)


def spec_view(graph: Json) -> Json:
    """The `v1alpha1` view of a graph or DCD held as the hub, without its status, for the
    builders (`reconcilers.machinery.spec_views`); a view passes as it is."""
    return spec_views.spec_view(graph)


def require_views(cache: Cache, *resources: Resource) -> None:
    """ValueError unless `cache` holds `resources` as the operator reads them: the viewed
    kinds as views (`CACHE_TRANSFORMS`, merged into the manager's `by_object` by
    `reconcilers.operator.registry.cache_transforms`), graphs and DCDs as the hub,
    untransformed (what the DGDR reconciler reads of a graph, its state and labels, is the
    same in both)."""
    for resource in resources:
        transform = cache.transform_for(resource)
        if resource in CACHE_TRANSFORMS:
            wrong = transform is not CACHE_TRANSFORMS[resource]
        else:
            wrong = transform is cache_view
        if wrong:
            raise ValueError(f"the cache must hold {resource.plural} as the operator reads "
                             "them: build the manager with registry.cache_transforms() in its "
                             "by_object")
