"""The field set a value sets (structured-merge-diff's ToFieldSet), as FieldsV1 paths."""

from __future__ import annotations

from collections.abc import Set
from typing import Any

from ..fields_v1 import Path, pe_field
from ..registry import ResourceType
from .field_types import FieldType, root_type
from .list_elements import elements

__all__ = ["collect_fields", "field_set", "with_named_fields"]


def collect_fields(value: Any, t: FieldType, path: Path, out: set[Path]) -> None:
    """The fields a value sets (structured-merge-diff's ToFieldSet)."""
    if isinstance(value, dict):
        if t.atomic_map():
            out.add(path)
            return
        for name, child in value.items():
            child_path = (*path, pe_field(name))
            collect_fields(child, t.child(name), child_path, out)
            if not t.named(name):
                out.add(child_path)
    elif isinstance(value, list):
        if t.list_type() == "atomic":
            out.add(path)
            return
        for pe, item in elements(value, t):
            item_path = (*path, pe)
            collect_fields(item, t.item(), item_path, out)
            out.add(item_path)
    elif value is None:
        expected = t.expects()
        if expected == "object" and not t.atomic_map():
            return
        if expected == "array" and t.list_type() != "atomic":
            return
        out.add(path)
    else:
        out.add(path)


def field_set(value: Any, rt: ResourceType) -> set[Path]:
    """The field set of an object or applied configuration of the given resource type."""
    out: set[Path] = set()
    collect_fields(value, root_type(rt), (), out)
    return out


def with_named_fields(paths: Set[Path], root: FieldType) -> set[Path]:
    """paths plus every struct field that has a member below it (EnsureNamedFieldsAreMembers)."""
    out = set(paths)
    for path in paths:
        t = root
        for depth, pe in enumerate(path[:-1]):
            if pe.startswith("f:"):
                name = pe[2:]
                if t.named(name):
                    out.add(path[: depth + 1])
                t = t.child(name)
            else:
                t = t.item()
    return out
