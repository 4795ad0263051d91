"""The `v1alpha1` view of a graph's spec, made once per change of the graph.

Graphs are cached as the hub (`v1beta1`), but the builders still take the `v1alpha1` models.
Most reconciles of a graph follow a change of one of its children, not of the graph, and its
own status writes move nothing the builders read: so the view (metadata and spec, no status)
is kept per graph while its `metadata.generation` (which the API server moves on every change
of the spec) and its metadata, resourceVersion and managedFields aside, are unchanged. The
view is made by `api.conversion.convert` with the payload annotations kept, exactly what the
cache held as the view of the graph before graphs were cached as the hub.
"""

from __future__ import annotations

from typing import Any

from api.conversion import HUB, SPOKE, convert

Json = dict[str, Any]

__all__ = ["spec_view"]

_UNREAD_META = frozenset({"resourceVersion", "managedFields"})
#: uid -> (generation, metadata compared, view); the oldest dropped past the bound.
_VIEWS: dict[str, tuple[int, Json, Json]] = {}
_VIEWS_MAX = 16384


def spec_view(obj: Json) -> Json:
    """The `v1alpha1` view of `obj` (one of our kinds, as the hub) without its status; an
    object not in the hub's version is returned as it is. Never change the result: it is
    shared by every reconcile until the object changes."""
    if obj.get("apiVersion") != HUB:
        return obj
    meta = obj.get("metadata") or {}
    uid, generation = meta.get("uid"), meta.get("generation")
    if not isinstance(uid, str) or not uid or type(generation) is not int:
        return _convert(obj)
    read = {k: v for k, v in meta.items() if k not in _UNREAD_META}
    seen = _VIEWS.get(uid)
    if seen is not None and seen[0] == generation and seen[1] == read:
        return seen[2]
    view = _convert(obj)
    _VIEWS.pop(uid, None)
    if len(_VIEWS) >= _VIEWS_MAX:
        del _VIEWS[next(iter(_VIEWS))]
    _VIEWS[uid] = (generation, read, view)
    return view


def _convert(obj: Json) -> Json:
    return convert({k: v for k, v in obj.items() if k != "status"}, SPOKE)
