"""What the reconcilers derive from a graph's or DCD's spec, made once per change of it.

Graphs and DCDs are cached as the hub (`v1beta1`). Most reconciles of a graph follow a change
of one of its children, not of the graph, and its own status writes move nothing derived from
its spec: so each value (the outcome of validation, which converts to the `v1alpha1` view
inside `api`; the `v1beta1` model and render inputs the builders take; the render inputs read
beside them) is kept per object while its `metadata.generation` (which the API server moves on
every change of the spec) and its metadata, resourceVersion and managedFields aside, are
unchanged. The values are shared by every reconcile until then: never change them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from api.conversion import HUB, convert
from api.conversion.render_inputs import RenderInputs, render_inputs
from api.errors import FieldError, InvalidObject
from api.hub_errors import validate_stored
from backends.hub_component import HubComponent, hub_component
from backends.hub_graph import HubGraph, hub_graph

Json = dict[str, Any]
T = TypeVar("T")

__all__ = ["component_of", "graph_of", "inputs_of", "validated"]

_UNREAD_META = frozenset({"resourceVersion", "managedFields"})
#: (what, uid) -> (generation, metadata compared, value); the oldest dropped past the bound.
_MEMO: dict[tuple[str, str], tuple[int, Json, Any]] = {}
_MEMO_MAX = 16384 * 4


def validated(cls: type[Any], obj: Json) -> list[FieldError]:
    """The rules' warnings of a graph or DCD (`cls`: its `v1alpha1` model), as stored;
    InvalidObject naming its fields as stored (`api.hub_errors.validate_stored`)."""
    outcome = _per_generation(f"valid:{cls.__name__}", obj, lambda o: _validate(cls, o))
    if isinstance(outcome, InvalidObject):
        raise InvalidObject(outcome.kind, outcome.errors, converted=outcome.converted)
    return list(outcome)


def _validate(cls: type[Any], obj: Json) -> tuple[FieldError, ...] | InvalidObject:
    try:
        return tuple(validate_stored(cls, obj))
    except InvalidObject as invalid:
        return invalid


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
