"""Server-side apply and managedFields tracking, as kube-apiserver's field manager does them.

Two entry points, both pure functions over JSON objects:

- `server_side_apply` merges an applied configuration into the live object the way
  structured-merge-diff does (associative lists by key, sets by value, atomic lists and maps
  whole, structs and granular maps field by field), makes the configuration's field set exactly
  what the applier owns, removes what it stopped applying when nobody else owns it, and raises the
  apiserver's 409 when it would change a field another manager owns (unless forced).
- `track_update` records, for a create/update/non-apply patch, which fields the writer changed.

How lists and maps merge comes from `list_semantics` for built-in kinds (plus the few built-in
structs marked ``+structType=atomic`` / ``+mapType=atomic`` that this server serves) and from the
CRD schema's ``x-kubernetes-*`` extensions for custom kinds. Fields under
``x-kubernetes-preserve-unknown-fields`` merge like structured-merge-diff's deduced type: maps
granular, lists atomic.

Simplified against the real field manager (documented, not hidden):

- one API version per object: entries recorded at another version are compared as if written
  at the current one (no conversion);
- the kubectl last-applied-configuration upgrade path (``kubectl-client-side-apply`` fields
  handed over to a later ``kubectl`` apply) is not implemented;
- the status subresource keeps only status ownership (the apiserver resets only ``spec``, and
  per kind ``metadata.labels``); the scale subresource tracks only the replicas field;
- duplicate keys in a stored list keep their first element;
- type errors in an applied configuration other than list keys and undeclared CRD fields are left
  to validation (the apiserver fails typed conversion first).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from hack.localcluster.errors import ApiError, Cause, bad_request, invalid, invalid_object, too_long
from hack.localcluster.errors import not_found as _not_found
from hack.localcluster.list_semantics import list_semantics
from hack.localcluster.managed_fields import (
    APPLY,
    UPDATE,
    Entry,
    Managed,
    ManagerId,
    Path,
    decode_managed_fields,
    encode_managed_fields,
    iteration_order,
    path_string,
    pe_field,
    pe_index,
    pe_key,
    pe_string,
    pe_value,
    union,
    unix_seconds,
)
from hack.localcluster.registry import ResourceType

Json = dict[str, Any]

#: FieldManagerMaxLength of the apiserver's option validation.
FIELD_MANAGER_MAX_LENGTH = 128
#: Beyond this many Update entries, the oldest are merged into "ancient-changes" buckets.
MAX_UPDATE_MANAGERS = 10
ANCIENT_CHANGES = "ancient-changes"


class _Missing:
    """An absent value, as opposed to an explicit null."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()

# Paths never recorded as owned (the apiserver's stripMeta set); exact paths, not subtrees.
_STRIPPED: frozenset[Path] = frozenset(
    {
        ("f:apiVersion",),
        ("f:kind",),
        ("f:metadata",),
        *(
            ("f:metadata", pe_field(name))
            for name in (
                "name",
                "namespace",
                "creationTimestamp",
                "selfLink",
                "uid",
                "clusterName",
                "generation",
                "managedFields",
                "resourceVersion",
            )
        ),
    }
)


# ---------------------------------------------------------------------------------------------
# Types: how each position of an object merges.


class _Type:
    """How the value at one position merges; the base class is structured-merge-diff's deduced
    type (maps granular, lists atomic)."""

    def child(self, name: str) -> _Type:
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

    def item(self) -> _Type:
        return _DEDUCED

    def nullable(self) -> bool:
        return True

    def expects(self) -> str | None:
        """The JSON type the schema declares here ("object", "array", "scalar"), if known."""
        return None


_DEDUCED = _Type()


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


class _Builtin(_Type):
    """A position in a built-in kind, by dotted path ("[]" per list traversed)."""

    def __init__(self, kind: str, path: str) -> None:
        self.kind = kind
        self.path = path

    def child(self, name: str) -> _Type:
        return _Builtin(self.kind, _join(self.path, name))

    def named(self, name: str) -> bool:
        # Without the Go structs every field counts as a struct field; this only differs for
        # maps of objects, which the served built-in kinds do not have.
        return True

    def atomic_map(self) -> bool:
        if self.path == "spec.selector" and self.kind in _ATOMIC_SPEC_SELECTOR:
            return True
        return any(_ends(self.path, s) for s in _ATOMIC_SUFFIXES)

    def list_type(self) -> str:
        sem = list_semantics(self.kind, self.path)
        if sem is None:
            return "atomic"
        if sem.ssa_map_keys:
            return "map"
        return "set" if sem.ssa_set else "atomic"

    def list_keys(self) -> tuple[str, ...]:
        sem = list_semantics(self.kind, self.path)
        return sem.ssa_map_keys if sem is not None else ()

    def key_default(self, key: str) -> Any:
        # Port lists key on (port, protocol); protocol defaults to TCP in the OpenAPI schema.
        if key == "protocol" and _ends(self.path, "ports"):
            return "TCP"
        return MISSING

    def item(self) -> _Type:
        return _Builtin(self.kind, self.path + "[]")

    def nullable(self) -> bool:
        return False

    def expects(self) -> str | None:
        if list_semantics(self.kind, self.path) is not None:
            return "array"
        return "object" if self.atomic_map() else None


_TYPE_META = ("apiVersion", "kind", "metadata")
_SCALAR_TYPES = frozenset({"string", "integer", "number", "boolean"})


class _Schema(_Type):
    """A position in a custom resource, described by its (structural) openAPIV3Schema node."""

    def __init__(self, node: Json, kind: str, root: bool = False) -> None:
        self.node = node
        self.kind = kind
        self.resource = root or bool(node.get("x-kubernetes-embedded-resource"))

    def _properties(self) -> Json:
        props = self.node.get("properties")
        return props if isinstance(props, dict) else {}

    def child(self, name: str) -> _Type:
        if self.resource and name == "metadata":
            return _Builtin(self.kind, "metadata")
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

    def item(self) -> _Type:
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


def _root_type(rt: ResourceType) -> _Type:
    if rt.custom:
        schema = rt.schema or {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        return _Schema(schema, rt.kind, root=True)
    return _Builtin(rt.kind, "")


# ---------------------------------------------------------------------------------------------
# List elements.


class _ElementError(Exception):
    """A list element that cannot be identified (missing key, wrong kind of element)."""


def _item_pe(item: Any, t: _Type, index: int) -> str:
    kind = t.list_type()
    if kind == "map":
        if item is None:
            raise _ElementError("associative list with keys may not have a null element")
        if not isinstance(item, dict):
            raise _ElementError("associative list with keys may not have non-map elements")
        fields: list[tuple[str, Any]] = []
        for key in t.list_keys():
            if key in item:
                fields.append((key, item[key]))
                continue
            default = t.key_default(key)
            if default is MISSING:
                raise _ElementError(
                    f'associative list with keys has an element that omits key field "{key}"'
                    " (and doesn't have default value)"
                )
            fields.append((key, default))
        return pe_key(fields)
    if kind == "set":
        if isinstance(item, dict):
            raise _ElementError("associative list without keys has an element that's a map type")
        if isinstance(item, list):
            raise _ElementError("not supported: associative list with lists as elements")
        if item is None:
            raise _ElementError(
                "associative list without keys has an element that's an explicit null"
            )
        return pe_value(item)
    return pe_index(index)


def _elements(items: list[Any], t: _Type) -> list[tuple[str, Any]]:
    """The identifiable elements of a stored list, first occurrence of each key only."""
    out: list[tuple[str, Any]] = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        try:
            pe = _item_pe(item, t, i)
        except _ElementError:
            continue
        if pe not in seen:
            seen.add(pe)
            out.append((pe, item))
    return out


# ---------------------------------------------------------------------------------------------
# Values: equality, field sets, comparison, merge, removal.


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and a.keys() == b.keys()
            and all(_equal(v, b[k]) for k, v in a.items())
        )
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_equal, a, b))
    if isinstance(b, (dict, list)):
        return False
    return bool(a == b)


def _field_set(value: Any, t: _Type, path: Path, out: set[Path]) -> None:
    """The fields a value sets (structured-merge-diff's ToFieldSet)."""
    if isinstance(value, dict):
        if t.atomic_map():
            out.add(path)
            return
        for name, child in value.items():
            child_path = (*path, pe_field(name))
            _field_set(child, t.child(name), child_path, out)
            if not t.named(name):
                out.add(child_path)
    elif isinstance(value, list):
        if t.list_type() == "atomic":
            out.add(path)
            return
        for pe, item in _elements(value, t):
            item_path = (*path, pe)
            _field_set(item, t.item(), item_path, out)
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
    _field_set(value, _root_type(rt), (), out)
    return out


@dataclass
class _Diff:
    added: set[Path] = field(default_factory=set)
    modified: set[Path] = field(default_factory=set)
    removed: set[Path] = field(default_factory=set)

    def only(self, keep: Callable[[Path], bool]) -> _Diff:
        return _Diff(
            {p for p in self.added if keep(p)},
            {p for p in self.modified if keep(p)},
            {p for p in self.removed if keep(p)},
        )

    def changed(self) -> set[Path]:
        return self.added | self.modified


def _is_map_side(v: Any) -> bool:
    return v is MISSING or v is None or isinstance(v, dict)


def _is_list_side(v: Any) -> bool:
    return v is MISSING or v is None or isinstance(v, list)


def _compare(lhs: Any, rhs: Any, t: _Type, path: Path, diff: _Diff) -> None:
    if lhs is MISSING and rhs is MISSING:
        return
    # Go objects make no difference between an absent field and a null one; neither do we.
    if (lhs is MISSING and rhs is None) or (lhs is None and rhs is MISSING):
        return
    granular = False
    if (isinstance(lhs, dict) or isinstance(rhs, dict)) and _is_map_side(lhs) and _is_map_side(rhs):
        left = lhs if isinstance(lhs, dict) else {}
        right = rhs if isinstance(rhs, dict) else {}
        if not t.atomic_map() and (left or right):
            granular = True
            for name in {**left, **right}:
                _compare(
                    left.get(name, MISSING),
                    right.get(name, MISSING),
                    t.child(name),
                    (*path, pe_field(name)),
                    diff,
                )
    elif (
        (isinstance(lhs, list) or isinstance(rhs, list))
        and _is_list_side(lhs)
        and _is_list_side(rhs)
    ):
        left_items = _elements(lhs, t) if isinstance(lhs, list) else []
        right_items = _elements(rhs, t) if isinstance(rhs, list) else []
        if t.list_type() != "atomic" and (left_items or right_items):
            granular = True
            left_map = dict(left_items)
            right_map = dict(right_items)
            for pe in {**right_map, **left_map}:
                _compare(
                    left_map.get(pe, MISSING),
                    right_map.get(pe, MISSING),
                    t.item(),
                    (*path, pe),
                    diff,
                )
    if granular:
        if lhs is MISSING:
            diff.added.add(path)
        elif rhs is MISSING:
            diff.removed.add(path)
        return
    if lhs is MISSING:
        diff.added.add(path)
    elif rhs is MISSING:
        diff.removed.add(path)
    elif not _equal(lhs, rhs):
        diff.modified.add(path)


def _merge(lhs: Any, rhs: Any, t: _Type) -> Any:
    """Merge an applied value (rhs) into a live one (lhs), as structured-merge-diff does."""
    if rhs is MISSING:
        return lhs
    if lhs is MISSING:
        return rhs
    if (isinstance(lhs, dict) or isinstance(rhs, dict)) and _is_map_side(lhs) and _is_map_side(rhs):
        if t.atomic_map():
            return rhs
        left = lhs if isinstance(lhs, dict) else {}
        right = rhs if isinstance(rhs, dict) else {}
        if not left and not right:
            return rhs
        out: Json = {}
        for name, value in left.items():
            out[name] = _merge(value, right.get(name, MISSING), t.child(name))
        for name, value in right.items():
            if name not in out:
                out[name] = value
        return out
    if (
        (isinstance(lhs, list) or isinstance(rhs, list))
        and _is_list_side(lhs)
        and _is_list_side(rhs)
    ):
        if t.list_type() == "atomic":
            return rhs
        left_list = lhs if isinstance(lhs, list) else []
        right_list = rhs if isinstance(rhs, list) else []
        if not left_list and not right_list:
            return rhs
        return _merge_list(left_list, right_list, t)
    return rhs


def _merge_list(lhs: list[Any], rhs: list[Any], t: _Type) -> list[Any]:
    """Merge associative lists keeping structured-merge-diff's element order.

    Live-only elements keep their place; elements in both follow the applied order; applied-only
    elements go right before the next element the two lists share.
    """
    left = _elements(lhs, t)
    right = _elements(rhs, t)
    left_map = dict(left)
    right_map = dict(right)
    shared = [pe for pe, _ in right if pe in left_map]
    out: list[Any] = []
    li = ri = si = 0
    while li < len(left) or ri < len(right):
        expected = shared[si] if si < len(shared) else None
        if li < len(left) and ri < len(right):
            lpe = left[li][0]
            if lpe == right[ri][0]:
                out.append(_merge(left_map[lpe], right_map[lpe], t.item()))
                li, ri, si = li + 1, ri + 1, si + 1
                continue
            if lpe in right_map and expected is not None and expected != lpe:
                # Shared, but its turn comes later in the applied order.
                li += 1
                continue
        if li < len(left) and left[li][0] not in right_map:
            out.append(left[li][1])
            li += 1
            continue
        if ri < len(right):
            rpe = right[ri][0]
            out.append(_merge(left_map.get(rpe, MISSING), right_map[rpe], t.item()))
            ri += 1
            if rpe == expected:
                si += 1
            continue
        # Only shared live elements are left, and all were merged already.
        li += 1
    return out


class _Trie:
    __slots__ = ("children", "member")

    def __init__(self) -> None:
        self.member = False
        self.children: dict[str, _Trie] = {}

    @classmethod
    def of(cls, paths: Iterable[Path]) -> _Trie:
        root = cls()
        for path in paths:
            node = root
            for pe in path:
                node = node.children.setdefault(pe, cls())
            node.member = True
        return root


def _remove(value: Any, node: _Trie, t: _Type) -> Any:
    """Remove the members of node (whole subtrees) from value; emptied containers stay."""
    if not node.children:
        return value
    if isinstance(value, dict) and not t.atomic_map():
        out: Json = {}
        for name, child in value.items():
            sub = node.children.get(pe_field(name))
            if sub is None:
                out[name] = child
            elif not sub.member:
                out[name] = _remove(child, sub, t.child(name))
        return out
    if isinstance(value, list) and t.list_type() != "atomic":
        items: list[Any] = []
        for i, item in enumerate(value):
            try:
                pe = _item_pe(item, t, i)
            except _ElementError:
                items.append(item)
                continue
            sub = node.children.get(pe)
            if sub is None:
                items.append(item)
            elif not sub.member:
                items.append(_remove(item, sub, t.item()))
        return items
    return value


def _with_named_fields(paths: set[Path], root: _Type) -> set[Path]:
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


def _prune(merged: Any, owned: set[Path], last: set[Path], root: _Type) -> Any:
    """Remove what the applier applied last time, no longer applies, and nobody else owns."""
    if not last:
        return merged

    def fields_of(value: Any) -> set[Path]:
        out: set[Path] = set()
        _field_set(value, root, (), out)
        return _with_named_fields(out, root)

    merged_fields = fields_of(merged)
    last_fields = _with_named_fields(last, root)
    owned_fields = _with_named_fields(owned, root)
    without_last = _remove(merged, _Trie.of(last_fields), root)
    added_back = _remove(
        merged, _Trie.of(merged_fields - (fields_of(without_last) | owned_fields)), root
    )
    dangling = (merged_fields - fields_of(added_back)) & last_fields
    return _remove(merged, _Trie.of(dangling), root)


def _drop_applied_nulls(value: Any, live: Any, t: _Type) -> Any:
    """Drop nulls the configuration introduced, as the apiserver's decoding and pruning do."""
    if isinstance(value, dict):
        live_map = live if isinstance(live, dict) else {}
        out: Json = {}
        for name, child in value.items():
            before = live_map.get(name, MISSING)
            child_type = t.child(name)
            if child is None and before is not None and not child_type.nullable():
                continue
            out[name] = _drop_applied_nulls(child, before, child_type)
        return out
    if isinstance(value, list) and t.list_type() != "atomic":
        return [_drop_applied_nulls(item, MISSING, t.item()) for item in value]
    return value


# ---------------------------------------------------------------------------------------------
# Errors.


def _gvk_string(group: str, version: str, kind: str) -> str:
    return f"{group}/{version}, Kind={kind}"


def _parse_group_version(api_version: Any) -> tuple[str, str] | None:
    text = api_version if isinstance(api_version, str) else ""
    if text in ("", "/"):
        return ("", "")
    if text.count("/") == 0:
        return ("", text)
    if text.count("/") == 1:
        group, version = text.split("/")
        return (group, version)
    return None


def _applied_gvk(applied: Json) -> tuple[str, str, str]:
    gv = _parse_group_version(applied.get("apiVersion"))
    if gv is None:
        return ("", "", "")
    kind = applied.get("kind")
    return (gv[0], gv[1], kind if isinstance(kind, str) else "")


def _metadata(obj: Any) -> Json:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    return meta if isinstance(meta, dict) else {}


def _check_applied(applied: Any, rt: ResourceType) -> Json:
    if applied is None:
        applied = {}
    if not isinstance(applied, dict):
        kind = "array" if isinstance(applied, list) else type(applied).__name__
        raise bad_request(
            "error decoding patch: json: cannot unmarshal "
            f"{kind} into Go value of type map[string]interface {{}}"
        )
    gvk = _applied_gvk(applied)
    if gvk != (rt.group, rt.version, rt.kind):
        raise bad_request(f"invalid object type: {_gvk_string(*gvk)}")
    if _metadata(applied).get("managedFields") is not None:
        raise bad_request("metadata.managedFields must be nil")
    return applied


def _typed_errors(value: Any, t: _Type, path: Path, errs: list[str]) -> None:
    """What structured-merge-diff rejects when converting an applied configuration."""
    if isinstance(value, dict):
        for name in sorted(value):
            child_path = (*path, pe_field(name))
            if not t.declared(name):
                errs.append(f"{path_string(child_path)}: field not declared in schema")
                continue
            _typed_errors(value[name], t.child(name), child_path, errs)
    elif isinstance(value, list):
        seen: set[str] = set()
        for i, item in enumerate(value):
            try:
                pe = _item_pe(item, t, i)
            except _ElementError as e:
                errs.append(f"{path_string(path)}: element {i}: {e}")
                continue
            if pe in seen:
                errs.append(f"{path_string(path)}: duplicate entries for key {pe_string(pe)}")
                continue
            seen.add(pe)
            _typed_errors(item, t.item(), (*path, pe), errs)


def _check_typed(applied: Json, rt: ResourceType, root: _Type) -> None:
    errs: list[str] = []
    _typed_errors(applied, root, (), errs)
    if not errs:
        return
    meta = _metadata(applied)
    detail = errs[0] if len(errs) == 1 else "\n".join(["errors:", *("  " + e for e in errs)])
    where = f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"
    # The apiserver returns this as a plain error: code 500 and no reason.
    raise ApiError(
        500,
        "",
        f"failed to create typed patch object ({where}; "
        f"{_gvk_string(rt.group, rt.version, rt.kind)}): {detail}",
    )


def _conflict_error(conflicts: dict[ManagerId, set[Path]]) -> ApiError:
    listed: list[tuple[ManagerId, Path]] = []
    for mid in sorted(conflicts, key=ManagerId.identifier):
        listed.extend((mid, p) for p in sorted(conflicts[mid], key=iteration_order))
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {mid.describe()}",
            "field": path_string(p),
        }
        for mid, p in listed
    ]
    if len(listed) == 1:
        mid, p = listed[0]
        message = f"Apply failed with 1 conflict: conflict with {mid.describe()}: {path_string(p)}"
    else:
        lines: list[str] = []
        for mid in sorted(conflicts, key=ManagerId.identifier):
            lines.append(f"conflicts with {mid.describe()}:")
            lines.extend(f"- {path_string(p)}" for p in sorted(conflicts[mid], key=iteration_order))
        message = f"Apply failed with {len(listed)} conflicts: " + "\n".join(lines)
    return ApiError(409, "Conflict", message, {"causes": causes})


# ---------------------------------------------------------------------------------------------
# Subresources and the objects the apiserver starts from.


def _keep_fn(rt: ResourceType, subresource: str) -> Callable[[Path], bool]:
    """Which paths a write through this endpoint may own (the strategy's reset fields)."""
    if subresource == "status":
        return lambda p: bool(p) and p[0] == "f:status"
    if subresource == "scale":
        dotted = rt.scale.spec_replicas_path if rt.scale else ".spec.replicas"
        replicas = tuple(pe_field(part) for part in dotted.strip(".").split("."))
        return lambda p: p == replicas
    if rt.has_status:
        return lambda p: not (p and p[0] == "f:status")
    return lambda p: True


def _reset(live: Json, merged: Json, rt: ResourceType, subresource: str) -> Json:
    """Keep out what this endpoint may not change: status on the main resource, the rest on
    the status subresource."""
    if subresource == "status":
        out = dict(live)
        source = merged
    elif rt.has_status:
        out = dict(merged)
        source = live
    else:
        return merged
    if "status" in source:
        out["status"] = source["status"]
    else:
        out.pop("status", None)
    return out


def _empty_template() -> Json:
    return {"metadata": {"creationTimestamp": None}, "spec": {"containers": None}}


_SPEC_KINDS = frozenset(
    {
        "Pod",
        "Service",
        "Namespace",
        "PersistentVolumeClaim",
        "PersistentVolume",
        "Node",
        "Deployment",
        "ReplicaSet",
        "StatefulSet",
        "DaemonSet",
        "Job",
        "CronJob",
        "Lease",
        "Ingress",
        "IngressClass",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
        "CustomResourceDefinition",
    }
)


def _empty_object(rt: ResourceType) -> Json:
    """The object a create is compared against: a zero-valued Go object for built-in kinds.

    Its non-omitempty structs and lists decide which created fields carry a "." of their own.
    """
    if rt.custom:
        return {}
    obj: Json = {"metadata": {"creationTimestamp": None}}
    if rt.has_status:
        obj["status"] = {}
    if rt.kind not in _SPEC_KINDS:
        return obj
    spec: Json = {}
    obj["spec"] = spec
    if rt.kind == "Pod":
        spec["containers"] = None
    elif rt.kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"):
        spec["selector"] = None
        spec["template"] = _empty_template()
        if rt.kind == "Deployment":
            spec["strategy"] = {}
        elif rt.kind != "ReplicaSet":
            spec["updateStrategy"] = {}
    elif rt.kind == "Job":
        spec["template"] = _empty_template()
    elif rt.kind == "CronJob":
        spec["jobTemplate"] = {
            "metadata": {"creationTimestamp": None},
            "spec": {"template": _empty_template()},
        }
    return obj


def _without_managed_fields(obj: Json) -> Json:
    out = copy.deepcopy(obj)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    return out


def _store_managed_fields(obj: Json, managed: Managed) -> Json:
    encoded = encode_managed_fields(managed)
    meta = obj.get("metadata")
    if encoded is None:
        if isinstance(meta, dict):
            meta.pop("managedFields", None)
        return obj
    if not isinstance(meta, dict):
        meta = {}
        obj["metadata"] = meta
    meta["managedFields"] = encoded
    return obj


def _drop_empty(managed: Managed) -> None:
    for mid in [m for m, e in managed.items() if not e.fields]:
        del managed[mid]


def _cap_update_managers(managed: Managed) -> None:
    """Merge the oldest Update entries into per-version "ancient-changes" entries."""
    updaters = [mid for mid in managed if mid.operation != APPLY]
    if len(updaters) <= MAX_UPDATE_MANAGERS:
        return
    updaters.sort(key=lambda m: (unix_seconds(managed[m].time), m.identifier()))
    first_of_version: dict[str, ManagerId] = {}
    remaining = len(updaters)
    for mid in updaters:
        if remaining <= MAX_UPDATE_MANAGERS:
            break
        entry = managed[mid]
        version = entry.api_version
        if version not in first_of_version:
            first_of_version[version] = mid
            continue
        bucket = ManagerId(ANCIENT_CHANGES, UPDATE, version)
        if bucket not in managed:
            managed[bucket] = managed.pop(first_of_version[version])
        target = managed[bucket]
        managed[bucket] = Entry(target.fields | entry.fields, version, entry.time)
        del managed[mid]
        remaining -= 1


# ---------------------------------------------------------------------------------------------
# Public API.


def default_manager(user_agent: str) -> str:
    """The manager of a write without fieldManager: the User-Agent up to its first "/".

    Non-printable characters are dropped and the result stops before exceeding 128 bytes.
    """
    out: list[str] = []
    size = 0
    for ch in user_agent.split("/", 1)[0]:
        if not ch.isprintable():
            continue
        width = len(ch.encode("utf-8"))
        if size + width > FIELD_MANAGER_MAX_LENGTH:
            break
        out.append(ch)
        size += width
    return "".join(out)


def validate_field_manager(
    manager: str, *, options_kind: str = "PatchOptions", apply: bool = False
) -> None:
    """Reject a fieldManager the apiserver rejects (422 on the request's options object).

    options_kind is CreateOptions, UpdateOptions or PatchOptions; apply requires a manager.
    """
    causes: list[Cause] = []
    if apply and not manager:
        required = "Required value: is required for apply patch"
        causes.append(Cause("FieldValueRequired", required, "fieldManager"))
    if len(manager.encode("utf-8")) > FIELD_MANAGER_MAX_LENGTH:
        causes.append(too_long("fieldManager", FIELD_MANAGER_MAX_LENGTH))
    offset = 0
    for ch in manager:
        if not ch.isprintable():
            causes.append(
                invalid(f"fieldManager[{offset}]", manager, "all characters must be printable")
            )
        offset += len(ch.encode("utf-8"))
    if causes:
        raise invalid_object("meta.k8s.io", options_kind, "", causes)


def check_name(obj: Json, name: str, namespace: str = "") -> None:
    """The apiserver's check of a patched or applied object against the URL (400 on mismatch)."""
    meta = _metadata(obj)
    obj_name = meta.get("name") or ""
    if not obj_name:
        raise bad_request(
            f"the name of the object ({name} based on URL) was undeterminable: "
            "name must be provided"
        )
    if obj_name != name:
        raise bad_request(
            f"the name of the object ({obj_name}) does not match the name on the URL ({name})"
        )
    obj_namespace = meta.get("namespace") or ""
    if namespace and obj_namespace and obj_namespace != namespace:
        raise bad_request(
            f"the namespace of the object ({obj_namespace}) does not match the namespace on "
            f"the request ({namespace})"
        )


def server_side_apply(
    live: Json | None,
    applied: Json,
    *,
    manager: str,
    force: bool,
    rt: ResourceType,
    subresource: str = "",
    now: str,
) -> Json:
    """Apply a configuration to the live object (None: create) and return the new object.

    The applied configuration's fields become exactly what `manager` owns with operation
    Apply; fields it owned before and no longer applies are removed unless another manager owns
    them. Changing a field another manager owns raises the apiserver's 409 Conflict, unless
    `force` moves the field to the applier. Setting a field to the value it already has shares
    its ownership. On the main resource of a kind with a status subresource, status is left as
    it was; on the status subresource only status changes.

    Metadata the configuration carries but does not own (name, namespace, uid,
    resourceVersion, ...) is merged into the result as given: the caller checks it against the
    URL (`check_name`) and the stored object (preconditions), and sets system fields.

    Raises ApiError: 400 for a configuration of another kind or version or with managedFields,
    500 (as the apiserver) for list elements it cannot key or duplicates and fields a CRD schema
    does not declare, 409 for conflicts, 404 for the status of an object that does not exist.
    """
    applied = _check_applied(applied, rt)
    root = _root_type(rt)
    _check_typed(applied, rt, root)
    if live is None and subresource:
        raise _not_found(rt.group, rt.plural, str(_metadata(applied).get("name") or ""))
    try:
        managed = decode_managed_fields(_metadata(live).get("managedFields") if live else None)
    except ValueError as e:
        raise ApiError(500, "", f"failed to decode managed fields: {e}") from e
    live_obj = _without_managed_fields(live) if live is not None else {}
    config = copy.deepcopy(applied)
    keep = _keep_fn(rt, subresource)
    me = ManagerId(manager or "unknown", APPLY, "", subresource)

    merged = _merge(live_obj, config, root)
    previous = managed.get(me)
    applied_fields = {p for p in field_set(config, rt) if keep(p)}
    managed[me] = Entry(applied_fields, rt.api_version, previous.time if previous else None)
    merged = _prune(
        merged,
        union(e.fields for e in managed.values()),
        previous.fields if previous else set(),
        root,
    )
    merged = _reset(live_obj, merged, rt, subresource)

    diff = _Diff()
    _compare(live_obj, merged, root, (), diff)
    diff = diff.only(keep)
    conflicts = {
        mid: entry.fields & diff.changed()
        for mid, entry in managed.items()
        if mid != me and entry.fields & diff.changed()
    }
    if conflicts and not force:
        raise _conflict_error(conflicts)
    for mid, entry in managed.items():
        if mid != me:
            entry.fields = entry.fields - conflicts.get(mid, set()) - diff.removed
    managed[me].fields -= _STRIPPED
    _drop_empty(managed)

    result = _drop_applied_nulls(merged, live_obj, root)
    if (live is None or not _equal(result, live_obj)) and me in managed:
        managed[me].time = now
    return _store_managed_fields(copy.deepcopy(result), managed)


def _is_reset(raw: Any) -> bool:
    if not isinstance(raw, list):
        return False
    if not raw:
        return True
    keys = ("manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource")
    return (
        len(raw) == 1
        and isinstance(raw[0], dict)
        and all(raw[0].get(k) in (None, "") for k in keys)
    )


def _decode_or_empty(raw: Any) -> Managed:
    try:
        return decode_managed_fields(raw)
    except ValueError:
        return {}


def _managed_for_update(old: Json | None, new: Json, subresource: str) -> Managed:
    """Which managedFields an update starts from: the request's, when it sets valid ones."""
    live_raw = _metadata(old).get("managedFields") if old is not None else None
    if subresource:
        return _decode_or_empty(live_raw)
    meta = _metadata(new)
    new_raw = meta.get("managedFields")
    if "managedFields" in meta and _is_reset(new_raw):
        return {}
    managed = _decode_or_empty(new_raw)
    return managed if managed else _decode_or_empty(live_raw)


def track_update(
    old: Json | None,
    new: Json,
    *,
    manager: str,
    rt: ResourceType,
    operation: str = UPDATE,
    subresource: str = "",
    now: str,
) -> Json:
    """Return `new` with managedFields updated for a create (old None), update or patch.

    The fields that differ between old and new (every set field on create) become owned by
    `manager` with the given operation, in one entry per (manager, operation, apiVersion,
    subresource) whose time is `now`; other managers lose them, and entries left empty are
    dropped. An entry's time only changes when the write changed something it now owns.

    managedFields set in `new` replace the stored ones when they are valid and not empty;
    ``[]`` or ``[{}]`` clears them first; invalid or absent ones keep the stored ones. On a
    subresource the request's managedFields are ignored. More than ten Update entries are
    merged oldest first into "ancient-changes".
    """
    root = _root_type(rt)
    managed = _managed_for_update(old, new, subresource)
    new_obj = _without_managed_fields(new)
    old_obj = _without_managed_fields(old) if old is not None else _empty_object(rt)
    keep = _keep_fn(rt, subresource)
    me = ManagerId(
        manager or "unknown",
        operation,
        rt.api_version if operation != APPLY else "",
        subresource,
    )

    diff = _Diff()
    _compare(old_obj, new_obj, root, (), diff)
    kept = diff.only(keep)
    for entry in managed.values():
        entry.fields = entry.fields - kept.changed() - kept.removed
    _drop_empty(managed)
    current = {p for p in diff.changed() if keep(p)} - _STRIPPED
    if current:
        previous = managed.get(me)
        fields = current | (previous.fields if previous else set())
        managed[me] = Entry(fields, rt.api_version, now)
    _cap_update_managers(managed)
    return _store_managed_fields(new_obj, managed)
