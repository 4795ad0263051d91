"""The checks kube-apiserver adds to a custom resource whose CRD has a scale subresource: the
replica counts at the scale paths must be non-negative integers and the selector a string
(apiextensions' ValidateScaleSpec and ValidateScaleStatus). They run after the schema, on
creates and updates (spec and status) and on status updates (status only), and name the field
by the CRD's own path, leading dot included."""

from __future__ import annotations

from typing import Any

from .errors import Cause
from .registry import ResourceType

_MISSING = object()


class _NotAMap(Exception):
    """A value on the way to the path is not an object (unstructured's accessor error)."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


def _at(obj: Any, path: str) -> Any:
    parts = path.strip(".").split(".")
    for i, part in enumerate(parts):
        if not isinstance(obj, dict) or part not in obj:
            return _MISSING
        obj = obj[part]
        if i < len(parts) - 1 and obj is not None and not isinstance(obj, dict):
            raise _NotAMap(obj)
    return obj


def _go_type(value: Any) -> str:
    """Go's %T of a decoded JSON value."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str):
        return "string"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    return "int64"


def _go_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _replicas(obj: Any, path: str) -> list[Cause]:
    try:
        value = _at(obj, path)
    except _NotAMap as err:
        return [Cause("FieldValueInvalid", f"Invalid value: 0: {path} accessor error:"
                      f" {_go_value(err.value)} is of the type {_go_type(err.value)}, expected"
                      " map[string]interface{}", path)]
    if value is _MISSING or value is None:
        return []
    if isinstance(value, bool) or not isinstance(value, int):
        return [Cause("FieldValueInvalid", f"Invalid value: 0: {path} accessor error:"
                      f" {_go_value(value)} is of the type {_go_type(value)}, expected int64",
                      path)]
    if value < 0:
        return [Cause("FieldValueInvalid", f"Invalid value: {value}: should be a non-negative"
                      " integer", path)]
    return []


def causes(rt: ResourceType, obj: Any, *, status_only: bool = False) -> list[Cause]:
    """The scale paths' errors of `obj` ([] unless a custom kind with a scale subresource)."""
    scale = rt.scale
    if not rt.custom or scale is None:
        return []
    found = [] if status_only else _replicas(obj, scale.spec_replicas_path)
    found += _replicas(obj, scale.status_replicas_path)
    if scale.label_selector_path:
        try:
            selector = _at(obj, scale.label_selector_path)
        except _NotAMap:
            return found
        if selector is not _MISSING and selector is not None and not isinstance(selector, str):
            path = scale.label_selector_path
            found.append(Cause("FieldValueInvalid", f'Invalid value: "": {path} accessor error:'
                               f" {_go_value(selector)} is of the type {_go_type(selector)},"
                               " expected string", path))
    return found
