"""The cache holds our kinds as the API hub (`nvidia.com/v1beta1`) stores them.

The DGD, DCD and DGDR are stored, watched and written as `v1beta1`, the hub: the operator never
needs its own conversion webhook to read or write its objects (a single replica restarting
would otherwise wait on itself). The informers hold them as stored, and every reconciler reads
them, and writes their statuses, finalizers and patches, in the hub's terms; the builders take
them as the hub too, with what only `v1alpha1` says read from the spec payload by
`api.conversion` (`render_inputs` for graphs and DCDs, made once per change by
`reconcilers.machinery.spec_views`; `request_inputs` for requests). No reconciler makes a
`v1alpha1` view: only validation does, inside `api`. What remains here is the registrations'
check that the cache was built so (`require_views`).
"""

from __future__ import annotations

from controller.cache import Cache
from controller.resource import Resource

__all__ = ["require_views"]


def require_views(cache: Cache, *resources: Resource) -> None:
    """ValueError unless `cache` holds `resources` as the operator reads them: as stored,
    through the cache's default transform only (no view, no trimming of their fields)."""
    for resource in resources:
        if cache.transform_for(resource) is not cache.transform:
            raise ValueError(f"the cache must hold {resource.plural} as stored: build the "
                             "manager with registry.cache_transforms() in its by_object")
