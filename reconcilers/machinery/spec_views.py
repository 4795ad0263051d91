"""What the reconcilers derive from a graph's or DCD's spec, made once per change of it.

Graphs and DCDs are cached as the hub (`v1beta1`). Most reconciles of a graph follow a change
of one of its children, not of the graph, and its own status writes move nothing derived from
its spec: so each value (the `v1alpha1` view the builders not yet on `v1beta1` take, the
`v1beta1` model and inputs the others take, the `v1alpha1`-only inputs read beside them) is
kept per object while its `metadata.generation` (which the API server moves on every change of
the spec) and its metadata, resourceVersion and managedFields aside, are unchanged. The values
are shared by every reconcile until then: never change them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from api.conversion import HUB, SPOKE, convert
from api.conversion.render_inputs import RenderInputs, render_inputs
from backends.hub_component import HubComponent, hub_component
from backends.hub_graph import HubGraph, hub_graph

Json = dict[str, Any]
T = TypeVar("T")

__all__ = ["component_of", "graph_of", "inputs_of", "spec_view"]

_UNREAD_META = frozenset({"resourceVersion", "managedFields"})
#: (what, uid) -> (generation, metadata compared, value); the oldest dropped past the bound.
_MEMO: dict[tuple[str, str], tuple[int, Json, Any]] = {}
_MEMO_MAX = 16384 * 4


def spec_view(obj: Json) -> Json:
    """The `v1alpha1` view of `obj` (one of our kinds, as the hub) without its status, made
    by `api.conversion.convert` with the payload annotations kept; an object not in the hub's
    version is returned as it is."""
    if obj.get("apiVersion") != HUB:
        return obj
    return _per_generation("view", obj, _convert)


def graph_of(obj: Json) -> HubGraph:
    """A graph's `v1beta1` model and `v1alpha1`-only inputs (`backends.hub_graph`), from the
    graph as stored (or a test bed's `v1alpha1` graph, taken to the hub)."""
    return _per_generation("graph", obj, hub_graph)


def component_of(obj: Json) -> HubComponent:
    """A DCD's `v1beta1` model and its component's `v1alpha1`-only inputs
    (`backends.hub_component`), from the DCD as stored (or a test bed's `v1alpha1` DCD)."""
    return _per_generation("component", obj, hub_component)


def inputs_of(obj: Json) -> RenderInputs:
    """The `v1alpha1`-only inputs of a graph or DCD (`api.conversion.render_inputs`), stored
    as the hub or (a test bed's) as `v1alpha1`."""
    return _per_generation("inputs", obj, _inputs)


def _inputs(obj: Json) -> RenderInputs:
    return render_inputs(obj if obj.get("apiVersion") == HUB else convert(obj, HUB))


def _per_generation(what: str, obj: Json, make: Callable[[Json], T]) -> T:
    meta = obj.get("metadata") or {}
    uid, generation = meta.get("uid"), meta.get("generation")
    if not isinstance(uid, str) or not uid or type(generation) is not int:
        return make(obj)
    read = {k: v for k, v in meta.items() if k not in _UNREAD_META}
    key = (what, uid)
    seen = _MEMO.get(key)
    if seen is not None and seen[0] == generation and seen[1] == read:
        value: T = seen[2]
        return value
    value = make(obj)
    _MEMO.pop(key, None)
    if len(_MEMO) >= _MEMO_MAX:
        del _MEMO[next(iter(_MEMO))]
    _MEMO[key] = (generation, read, value)
    return value


def _convert(obj: Json) -> Json:
    return convert({k: v for k, v in obj.items() if k != "status"}, SPOKE)
