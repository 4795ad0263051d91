"""The typed decoding of built-in kinds: what kube-apiserver's JSON decoder refuses.

kube-apiserver decodes a built-in object into its Go struct before anything else looks at it.
A value the struct cannot hold is refused: a number outside an int32 or int64 field, a
fraction in an integer field, or a value of the wrong JSON type (a string where a number
goes, an object where a list goes). Go's decoder reports the first such value in document
order, as `json: cannot unmarshal <what> into Go struct field <Struct>.<json path> of type
<Go type>`: <what> is `number <literal>` for a number an integer field cannot hold, else the
JSON type (`number`, `string`, `bool`, `array`, `object`); <Struct> is the struct holding the
field and the path runs from the object's root through field names only (list indexes and map
keys are not part of it). A []byte field's string that is not base64 is reported as base64's
own `illegal base64 data at input byte N`.

Create and update wrap it as 400 BadRequest `<Kind> in version "<version>" cannot be handled
as a <Kind>: <error>`; a JSON or merge patch whose result does not decode is 422 Invalid on
the field `patch`, whose value is the patched object (here in this server's JSON encoding,
not Go's field order). Strategic-merge patches are not checked, nor is server-side apply
except when it creates, which is checked (and worded) as a create.

The types come from the built-in OpenAPI (`openapi_builtin`, with `integer_formats`). A
Quantity's own decoder is imitated (`quantity_format`: its error alone, with no field named);
other values with a decoder of their own (Time, IntOrString, raw JSON) are not checked, and Go's
named string types (`v1.PullPolicy` and the like) are reported as `string`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from .errors import ApiError, Cause, bad_request
from .go_base64 import corrupt_offset
from .openapi_builtin import QUANTITY, REF_PREFIX, builtin_catalog
from .quantity_format import quantity_error
from .registry import BUILTIN_TYPES, ResourceType

__all__ = ["SCALE", "check_decodable", "check_patched", "decode_error", "foreign_body_error"]

Json = dict[str, Any]

#: Fields whose Go type is []byte, though the models call them strings.
_BYTES = {("io.k8s.api.core.v1.Secret", "data"), ("io.k8s.api.core.v1.ConfigMap", "binaryData")}
_INT_RANGE = {"int32": 2 ** 31, "int64": 2 ** 63}
#: The kind a scale subresource reads and writes.
SCALE = ("autoscaling", "v1", "Scale")


@dataclass
class _Type:
    """A Go type as the decoder sees it: its kind, its name, and what it holds."""

    kind: str  # struct, int32, ..., bytes, quantity, slice, map, opaque
    name: str = ""
    elem: _Type | None = None
    fields: dict[str, _Type] = field(default_factory=dict)
    struct: str = ""  # the struct's own name (Struct.Name() in Go)


def decode_error(gvk: ResourceType | tuple[str, str, str], obj: Json) -> str | None:
    """The decoder's error for `obj` as a built-in kind (a resource type, or the group,
    version and kind), or None when it decodes (custom resources always do here)."""
    if isinstance(gvk, ResourceType):
        if gvk.custom:
            return None
        gvk = (gvk.group, gvk.version, gvk.kind)
    root = _kind_type(*gvk)
    if root is None or _decodes(obj, root):
        return None
    return _walk(obj, root, "", [])


#: Groups that kube-apiserver's legacy scheme does not hold (their servers have schemes of
#: their own, which this server does not imitate).
_OTHER_SCHEMES = ("apiextensions.k8s.io", "apiregistration.k8s.io")
_LEGACY_SCHEME = "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"


def foreign_body_error(rt: ResourceType, kind: str, api_version: str, obj: Json) -> str | None:
    """The decoder's refusal of a built-in body that names another kind or version than
    `rt`'s: it decodes into the type the body names, so a kind the scheme does not know, or a
    body that does not decode as the kind it names, is refused (the error without the
    handler's `cannot be handled as` words); None when neither happens."""
    if rt.custom or rt.group in _OTHER_SCHEMES:
        return None
    group, _, version = api_version.rpartition("/")
    # The catalog finds a model by version and kind alone (the client's model names rarely
    # carry the group) and stamps what it finds with the group asked for, so a kind the
    # scheme does not register in this group must never reach it.
    if (group, version, kind) not in _registered_kinds() or \
            builtin_catalog().kind(group, version, kind) is None:
        return (f'no kind "{kind}" is registered for version "{api_version}" in'
                f' scheme "{_LEGACY_SCHEME}"')
    return decode_error((group, version, kind), obj)


@cache
def _registered_kinds() -> frozenset[tuple[str, str, str]]:
    """(group, version, kind) of every built-in kind served here, its List, and Scale."""
    kinds = {SCALE}
    for rt in BUILTIN_TYPES:
        kinds.add((rt.group, rt.version, rt.kind))
        kinds.add((rt.group, rt.version, rt.kind + "List"))
    return frozenset(kinds)


def check_decodable(gvk: ResourceType | tuple[str, str, str], obj: Json) -> None:
    """Refuse a created or replaced object that does not decode (400 BadRequest)."""
    error = decode_error(gvk, obj)
    if error is not None:
        _, version, kind = gvk if isinstance(gvk, tuple) else (gvk.group, gvk.version,
                                                                  gvk.kind)
        raise bad_request(f'{kind} in version "{version}" cannot be handled as a {kind}:'
                          f" {error}")


def check_patched(gvk: ResourceType | tuple[str, str, str], patched: Json,
                  text: str | None = None) -> None:
    """Refuse a patch whose result does not decode (422 Invalid on `patch`, whose value is
    `text`, the patched object as the patch library wrote it, when given)."""
    error = None
    if isinstance(gvk, ResourceType):
        kind, api_version = patched.get("kind"), patched.get("apiVersion")
        if kind != gvk.kind or api_version != gvk.api_version:
            error = foreign_body_error(gvk, str(kind or gvk.kind),
                                       str(api_version or gvk.api_version), patched)
    if error is None:
        error = decode_error(gvk, patched)
    if error is None:
        return
    if text is None:
        text = json.dumps(patched, separators=(",", ":"))
    value = json.dumps(text, ensure_ascii=False)
    detail = f"Invalid value: {value}: {error}"
    cause = Cause("FieldValueInvalid", detail, "patch")
    raise ApiError(422, "Invalid", f' "" is invalid: patch: {detail}',
                   {"causes": [cause.to_json()]})


#: The exact Python types of a JSON value each scalar Go kind holds (bool is not an int here).
_SCALAR_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "bool": (bool,), "float64": (int, float)}


def _decodes(value: Any, typ: _Type) -> bool:
    """Whether `_walk` finds nothing to refuse in `value`: the same checks without the
    error's path and wording, which only a refusal needs (`_walk` then runs to word it).
    Every write of a built-in kind is checked whole, so this is on the server's hot path.
    False is always safe: it only means `_walk` decides."""
    if value is None:
        return True
    kind = typ.kind
    if kind == "struct":
        if type(value) is not dict:
            return False
        fields = typ.fields
        for key, item in value.items():
            sub = fields.get(key)
            if sub is not None and item is not None and not _decodes(item, sub):
                return False
        return True
    if kind == "opaque":
        return True
    if kind in _INT_RANGE:
        limit = _INT_RANGE[kind]
        return type(value) is int and -limit <= value < limit
    scalar = _SCALAR_TYPES.get(kind)
    if scalar is not None:
        return type(value) in scalar
    if kind == "bytes":
        return type(value) is str and corrupt_offset(value) is None
    if kind == "quantity":
        return quantity_error(value) is None
    if kind == "slice":
        if type(value) is not list:
            return False
        elem = typ.elem
        return elem is None or all(item is None or _decodes(item, elem) for item in value)
    if kind == "map":
        if type(value) is not dict:
            return False
        elem = typ.elem
        return elem is None or all(item is None or _decodes(item, elem)
                                   for item in value.values())
    return False


def _walk(value: Any, typ: _Type, struct: str, path: list[str]) -> str | None:
    if value is None or typ.kind == "opaque":
        return None
    if typ.kind == "quantity":
        return quantity_error(value)
    what = _mismatch(value, typ)
    if what is None and typ.kind == "bytes":
        offset = corrupt_offset(value)
        if offset is not None:
            return f"illegal base64 data at input byte {offset}"
    if what is not None:
        where = f"Go struct field {struct}.{'.'.join(path)}" if path else "Go value"
        return f"json: cannot unmarshal {what} into {where} of type {typ.name}"
    if typ.kind == "struct":
        assert isinstance(value, dict)
        for key, item in value.items():
            sub = typ.fields.get(key)
            if sub is not None:
                error = _walk(item, sub, typ.struct, [*path, key])
                if error is not None:
                    return error
    elif typ.kind in ("slice", "map") and typ.elem is not None:
        items = value if isinstance(value, list) else list(value.values())
        for item in items:
            error = _walk(item, typ.elem, struct, path)
            if error is not None:
                return error
    return None


def _mismatch(value: Any, typ: _Type) -> str | None:
    """What the decoder calls `value` when `typ` cannot hold it, else None."""
    json_kind = _json_kind(value)
    kind = typ.kind
    if kind in _INT_RANGE:
        if json_kind != "number":
            return json_kind
        limit = _INT_RANGE[kind]
        if isinstance(value, float) or not -limit <= value < limit:
            return f"number {_literal(value)}"
        return None
    expected = {"struct": "object", "map": "object", "slice": "array", "string": "string",
                "bytes": "string", "bool": "bool", "float64": "number"}[kind]
    return None if json_kind == expected else json_kind


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _literal(value: int | float) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return repr(value)
    return str(value)


# --- types from the OpenAPI -----------------------------------------------------------------

@cache
def _kind_type(group: str, version: str, kind: str) -> _Type | None:
    catalog = builtin_catalog()
    names = catalog.kind(group, version, kind)
    if names is None:
        return None
    schemas = catalog.closure([names[0]])
    built: dict[str, _Type] = {}
    return _named(names[0], schemas, built)


def _named(name: str, schemas: dict[str, Json], built: dict[str, _Type]) -> _Type:
    if name in built:
        return built[name]
    schema = schemas.get(name) or {}
    if name == QUANTITY:
        typ = built[name] = _Type("quantity", "resource.Quantity")
        return typ
    if "properties" not in schema:
        typ = _Type("opaque")
        built[name] = typ
        return typ
    package, short = name.rsplit(".", 2)[-2:]
    typ = _Type("struct", f"{package}.{short}", struct=short)
    built[name] = typ  # before the fields: types may hold themselves
    for key, prop in schema["properties"].items():
        typ.fields[key] = _field(name, key, prop, schemas, built)
    return typ


def _field(owner: str, key: str, prop: Json, schemas: dict[str, Json],
           built: dict[str, _Type]) -> _Type:
    if (owner, key) in _BYTES:
        return _Type("map", "map[string][]uint8", elem=_Type("bytes", "[]uint8"))
    return _schema_type(prop, schemas, built)


def _schema_type(prop: Json, schemas: dict[str, Json], built: dict[str, _Type]) -> _Type:
    if "allOf" in prop:
        prop = prop["allOf"][0]
    ref = prop.get("$ref")
    if isinstance(ref, str):
        return _named(ref.removeprefix(REF_PREFIX), schemas, built)
    kind = prop.get("type")
    if kind == "integer":
        bits = str(prop.get("format") or "int64")
        return _Type(bits, bits)
    if kind == "string":
        return _Type("string", "string")
    if kind == "boolean":
        return _Type("bool", "bool")
    if kind == "number":
        return _Type("float64", "float64")
    if kind == "array":
        elem = _schema_type(prop.get("items") or {}, schemas, built)
        return _collection("slice", "[]", elem)
    if kind == "object" and isinstance(prop.get("additionalProperties"), dict):
        elem = _schema_type(prop["additionalProperties"], schemas, built)
        return _collection("map", "map[string]", elem)
    return _Type("opaque")


def _collection(kind: str, prefix: str, elem: _Type) -> _Type:
    """A slice or map; opaque when its element's Go name is not known (a map of Quantity is
    the named type v1.ResourceList)."""
    if elem.kind == "opaque":
        return _Type("opaque")
    if elem.kind == "quantity" and kind == "map":
        return _Type("map", "v1.ResourceList", elem=elem)
    return _Type(kind, prefix + elem.name, elem=elem)
