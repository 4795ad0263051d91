"""How each position of an object merges under server-side apply: its field type.

For built-in kinds the type comes from `list_semantics` (list types and keys) plus the few
built-in structs marked ``+structType=atomic`` / ``+mapType=atomic`` that this server serves; for
custom kinds from the CRD schema's ``x-kubernetes-*`` extensions. Fields under
``x-kubernetes-preserve-unknown-fields`` merge like structured-merge-diff's deduced type: maps
granular, lists atomic.
"""

from __future__ import annotations

import functools
from typing import Any

from ..list_semantics import ListSemantics, list_semantics
from ..registry import ResourceType

Json = dict[str, Any]

__all__ = ["MISSING", "FieldType", "root_type"]


class _Missing:
    """An absent value, as opposed to an explicit null."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class FieldType:
    """How the value at one position merges; the base class is structured-merge-diff's deduced
    type (maps granular, lists atomic)."""

    def child(self, name: str) -> FieldType:
        return _DEDUCED

    def named(self, name: str) -> bool:
        """Whether name is a declared struct field (map entries and unknown fields are not)."""
        return False

    def declared(self, name: str) -> bool:
        """Whether an applied configuration may set this field here."""
        return True

    def atomic_map(self) -> bool:
        return False

    def list_type(self) -> str:
        return "atomic"

    def list_keys(self) -> tuple[str, ...]:
        return ()

    def key_default(self, key: str) -> Any:
        return MISSING

    def item(self) -> FieldType:
        return _DEDUCED

    def nullable(self) -> bool:
        return True

    def expects(self) -> str | None:
        """The JSON type the schema declares here ("object", "array", "scalar"), if known."""
        return None


_DEDUCED = FieldType()


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _ends(path: str, suffix: str) -> bool:
    return path == suffix or path.endswith("." + suffix)


#: Built-in kinds whose spec.selector is atomic: a LabelSelector (``+structType=atomic``), or a
#: Service's ``+mapType=atomic`` map.
_ATOMIC_SPEC_SELECTOR = frozenset(
    {
        "Deployment",
        "ReplicaSet",
        "StatefulSet",
        "DaemonSet",
        "Job",
        "PodDisruptionBudget",
        "PersistentVolumeClaim",
        "Service",
        "ReplicationController",
    }
)
#: Trailing path segments of built-in structs marked ``+structType=atomic``: LabelSelectors,
#: env valueFrom selectors, NodeSelector, LocalObjectReference items, OwnerReference items.
_ATOMIC_SUFFIXES = (
    "labelSelector",
    "namespaceSelector",
    "podSelector",
    "objectSelector",
    "jobTemplate.spec.selector",
    "valueFrom.configMapKeyRef",
    "valueFrom.secretKeyRef",
    "valueFrom.fieldRef",
    "valueFrom.resourceFieldRef",
    "nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
    "imagePullSecrets[]",
    "metadata.ownerReferences[]",
)


_MAX_CHILDREN = 256


class _Builtin(FieldType):
    """A position in a built-in kind, by dotted path ("[]" per list traversed).

    Get one with `_builtin`: positions are shared, and each works its answers out once.
    """

    def __init__(self, kind: str, path: str) -> None:
        self.kind = kind
        self.path = path
        self._children: dict[str, FieldType] = {}

    def child(self, name: str) -> FieldType:
        child = self._children.get(name)
        if child is None:
            child = _builtin(self.kind, _join(self.path, name))
            if len(self._children) < _MAX_CHILDREN:  # map keys are unbounded
                self._children[name] = child
        return child

    def named(self, name: str) -> bool:
        # Without the Go structs every field counts as a struct field; this only differs for
        # maps of objects, which the served built-in kinds do not have.
        return True

    @functools.cached_property
    def _atomic_map(self) -> bool:
        if self.path == "spec.selector" and self.kind in _ATOMIC_SPEC_SELECTOR:
            return True
        return any(_ends(self.path, s) for s in _ATOMIC_SUFFIXES)

    def atomic_map(self) -> bool:
        return self._atomic_map

    @functools.cached_property
    def _semantics(self) -> ListSemantics | None:
        return list_semantics(self.kind, self.path)

    @functools.cached_property
    def _list_type(self) -> str:
        sem = self._semantics
        if sem is None:
            return "atomic"
        if sem.ssa_map_keys:
            return "map"
        return "set" if sem.ssa_set else "atomic"

    def list_type(self) -> str:
        return self._list_type

    def list_keys(self) -> tuple[str, ...]:
        sem = self._semantics
        return sem.ssa_map_keys if sem is not None else ()

    def key_default(self, key: str) -> Any:
        # Port lists key on (port, protocol); protocol defaults to TCP in the OpenAPI schema.
        if key == "protocol" and _ends(self.path, "ports"):
            return "TCP"
        return MISSING

    def item(self) -> FieldType:
        return self._item

    @functools.cached_property
    def _item(self) -> FieldType:
        return _builtin(self.kind, self.path + "[]")

    def nullable(self) -> bool:
        return False

    def expects(self) -> str | None:
        if self._semantics is not None:
            return "array"
        return "object" if self.atomic_map() else None


@functools.lru_cache(maxsize=16384)
def _builtin(kind: str, path: str) -> _Builtin:
    return _Builtin(kind, path)


_TYPE_META = ("apiVersion", "kind", "metadata")
_SCALAR_TYPES = frozenset({"string", "integer", "number", "boolean"})


class _Schema(FieldType):
    """A position in a custom resource, described by its (structural) openAPIV3Schema node."""

    def __init__(self, node: Json, kind: str, root: bool = False) -> None:
        self.node = node
        self.kind = kind
        self.resource = root or bool(node.get("x-kubernetes-embedded-resource"))

    def _properties(self) -> Json:
        props = self.node.get("properties")
        return props if isinstance(props, dict) else {}

    def child(self, name: str) -> FieldType:
        if self.resource and name == "metadata":
            return _builtin(self.kind, "metadata")
        props = self._properties()
        if isinstance(props.get(name), dict):
            return _Schema(props[name], self.kind)
        if self.resource and name in _TYPE_META:
            return _Schema({"type": "string"}, self.kind)
        additional = self.node.get("additionalProperties")
        if isinstance(additional, dict):
            return _Schema(additional, self.kind)
        return _DEDUCED

    def named(self, name: str) -> bool:
        return name in self._properties() or (self.resource and name in _TYPE_META)

    def declared(self, name: str) -> bool:
        if self.named(name):
            return True
        if self.node.get("x-kubernetes-preserve-unknown-fields") is True:
            return True
        return self.node.get("additionalProperties") not in (None, False)

    def atomic_map(self) -> bool:
        return self.node.get("x-kubernetes-map-type") == "atomic"

    def list_type(self) -> str:
        kind = self.node.get("x-kubernetes-list-type")
        return kind if kind in ("set", "map") else "atomic"

    def list_keys(self) -> tuple[str, ...]:
        keys = self.node.get("x-kubernetes-list-map-keys") or ()
        return tuple(str(k) for k in keys)

    def _items(self) -> Json:
        items = self.node.get("items")
        return items if isinstance(items, dict) else {}

    def key_default(self, key: str) -> Any:
        prop = (self._items().get("properties") or {}).get(key)
        if isinstance(prop, dict) and "default" in prop:
            return prop["default"]
        return MISSING

    def item(self) -> FieldType:
        items = self._items()
        return _Schema(items, self.kind) if items else _DEDUCED

    def nullable(self) -> bool:
        return self.node.get("nullable") is True

    def expects(self) -> str | None:
        kind = self.node.get("type")
        if kind == "object":
            return "object"
        if kind == "array":
            return "array"
        if kind in _SCALAR_TYPES or self.node.get("x-kubernetes-int-or-string"):
            return "scalar"
        return None


def root_type(rt: ResourceType) -> FieldType:
    if rt.custom:
        schema = rt.schema or {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        return _Schema(schema, rt.kind, root=True)
    return _builtin(rt.kind, "")
