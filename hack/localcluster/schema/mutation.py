"""Pruning and defaulting of custom objects (the mutating half of the CRD schema machinery).

Pruning follows apiextensions' pruning.Prune with isResourceRoot, plus the ObjectMeta coercion
of embedded resources; defaulting follows PruneNonNullableNullsWithoutDefaults and Default.
Both work on the structural part of a schema only: properties, additionalProperties, items.
"""

from __future__ import annotations

import copy
from typing import Any

from . import fielderr as fe
from .meta import coerce_embedded

Schema = dict[str, Any]

_META_FIELDS = frozenset({"apiVersion", "kind", "metadata"})


# --- pruning ---------------------------------------------------------------------------------


def _additional_schema(schema: Schema) -> Schema | None:
    additional = schema.get("additionalProperties")
    return additional if isinstance(additional, dict) else None


class _Pruner:
    def __init__(self) -> None:
        self.pruned: list[str] = []

    def prune(self, x: Any, s: Schema | None, path: str | None, root: bool = False) -> None:
        if s is not None and s.get("x-kubernetes-preserve-unknown-fields"):
            self._skip(x, s, path, root)
            return
        if isinstance(x, dict):
            if s is None:
                for k in list(x):
                    self.pruned.append(fe.child(path, k))
                    del x[k]
                return
            embedded = root or bool(s.get("x-kubernetes-embedded-resource"))
            props: dict[str, Schema] = s.get("properties") or {}
            # Even `additionalProperties: false` keeps the key (and prunes below it).
            has_additional = s.get("additionalProperties") is not None
            for k in list(x):
                if embedded and k in _META_FIELDS:
                    continue
                if k in props:
                    self.prune(x[k], props[k], fe.child(path, k))
                elif has_additional:
                    self.prune(x[k], _additional_schema(s), fe.key(path, k))
                else:
                    self.pruned.append(fe.child(path, k))
                    del x[k]
            if embedded and not root:
                coerce_embedded(x)
        elif isinstance(x, list):
            items = s.get("items") if s is not None else None
            for i, v in enumerate(x):
                self.prune(v, items if isinstance(items, dict) else None, fe.index(path, i))

    def _skip(self, x: Any, s: Schema, path: str | None, root: bool) -> None:
        """Below x-kubernetes-preserve-unknown-fields: keep unknown fields, prune known ones."""
        if isinstance(x, dict):
            embedded = root or bool(s.get("x-kubernetes-embedded-resource"))
            props: dict[str, Schema] = s.get("properties") or {}
            has_additional = s.get("additionalProperties") is not None
            for k in list(x):
                if embedded and k in _META_FIELDS:
                    continue
                if k in props:
                    self.prune(x[k], props[k], fe.child(path, k))
                elif has_additional:
                    self.prune(x[k], _additional_schema(s), fe.key(path, k))
            if embedded and not root:
                coerce_embedded(x)
        elif isinstance(x, list):
            items = s.get("items")
            if isinstance(items, dict):
                for i, v in enumerate(x):
                    self._skip(v, items, fe.index(path, i), False)


def prune(obj: dict[str, Any], schema: Schema) -> list[str]:
    """Drop, in place, the fields the schema does not specify (pruning.Prune, isResourceRoot).

    The root `apiVersion`, `kind` and `metadata` are never pruned; embedded resources keep
    theirs and get their `metadata` coerced to ObjectMeta fields. Returns the dropped fields'
    paths, sorted (`spec.foo`, `spec.map[key].bar`, `spec.list[0].baz`): what strict field
    validation reports as unknown fields.
    """
    pruner = _Pruner()
    pruner.prune(obj, schema, None, root=True)
    return sorted(pruner.pruned)


# --- defaulting ------------------------------------------------------------------------------


def _nullable(s: Schema | None) -> bool:
    return s is not None and bool(s.get("nullable", False))


def _has_default(s: Schema | None) -> bool:
    return s is not None and s.get("default") is not None


def _field_schema(k: str, s: Schema | None) -> Schema | None:
    if s is None:
        return None
    props: dict[str, Schema] = s.get("properties") or {}
    if k in props:
        return props[k]
    return _additional_schema(s)


def _prune_non_nullable_nulls(x: Any, s: Schema | None) -> None:
    """Drop null fields neither nullable nor defaulted (PruneNonNullableNullsWithoutDefaults)."""
    if isinstance(x, dict):
        for k in list(x):
            sub = _field_schema(k, s)
            if x[k] is None and sub is not None and not _nullable(sub) and not _has_default(sub):
                del x[k]
            else:
                _prune_non_nullable_nulls(x[k], sub)
    elif isinstance(x, list):
        items = s.get("items") if s is not None else None
        for v in x:
            _prune_non_nullable_nulls(v, items if isinstance(items, dict) else None)


def _is_non_nullable_null(x: Any, s: Schema | None) -> bool:
    return x is None and s is not None and not _nullable(s)


def _default(x: Any, s: Schema | None) -> None:
    if s is None:
        return
    if isinstance(x, dict):
        props: dict[str, Schema] = s.get("properties") or {}
        for k, prop in props.items():
            if not _has_default(prop):
                continue
            if k not in x or _is_non_nullable_null(x[k], prop):
                x[k] = copy.deepcopy(prop["default"])
        additional = _additional_schema(s)
        for k in list(x):
            if k in props:
                _default(x[k], props[k])
            elif "additionalProperties" in s:
                if _is_non_nullable_null(x[k], additional):
                    assert additional is not None
                    x[k] = copy.deepcopy(additional.get("default"))
                _default(x[k], additional)
    elif isinstance(x, list):
        items = s.get("items")
        item_schema = items if isinstance(items, dict) else None
        for i in range(len(x)):
            if _is_non_nullable_null(x[i], item_schema):
                assert item_schema is not None
                x[i] = copy.deepcopy(item_schema.get("default"))
            _default(x[i], item_schema)


def apply_defaults(obj: dict[str, Any], schema: Schema) -> None:
    """Apply schema defaults in place, as the custom resource defaulter does.

    First nulls of non-nullable fields without a default are dropped, then every missing field
    with a `default` (and every non-nullable null that has one) gets a deep copy of it, top-down,
    through properties, additionalProperties and array items.
    """
    _prune_non_nullable_nulls(obj, schema)
    _default(obj, schema)
