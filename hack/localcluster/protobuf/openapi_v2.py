"""The Swagger 2.0 document as gnostic's `openapi.v2.Document` protobuf (GET /openapi/v2 with
`Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`).

kube-openapi's handler answers that Accept with `ToProtoBinary(json)`: gnostic's
`openapi_v2.ParseDocument` of the JSON document, then `proto.Marshal`. client-go's
`OpenAPISchema()` (kubectl's client-side validation, `kubectl explain`'s v2 fallback) reads
nothing else. Field numbers are those of gnostic-models' `openapiv2/OpenAPIv2.proto`; what
`ParseDocument` accepts is what its generated `New<Message>` functions accept:

* a key a message does not know is an error there (`has invalid property`), and gnostic fails
  the whole document, so the handler would answer 503; here it raises `OpenAPIv2Error`, so a
  document the JSON path publishes but gnostic would refuse shows up in the tests;
* keys starting with `x-` become `vendor_extension` `NamedAny`s, in document order, whose
  `Any.yaml` is the value written as YAML (`compiler.Marshal`);
* `default`, `example` and each `enum` value are `Any`s the same way;
* proto3: empty strings, false and zero numbers are left out, a set message is written even
  when empty (an empty `properties` still tells kubectl the schema is a kind), and a oneof is
  written even when false (`additionalProperties: false`).

Fields come out in field-number order, as Go's `proto.Marshal` writes them.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable
from typing import Any

import yaml

from .wire import FIXED64, bytes_field, key, varint_field

Json = dict[str, Any]

#: Encodes the value of a JSON key as protobuf field `number` (possibly repeated).
_Field = Callable[[int, Any, str], bytes]


class OpenAPIv2Error(ValueError):
    """The document has something gnostic's `ParseDocument` would refuse."""


# --- scalars ------------------------------------------------------------------------------------


def _string(number: int, value: Any, where: str) -> bytes:
    # compiler.StringForScalarNode takes strings, integers (as written) and null ("").
    if value is None:
        return b""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise OpenAPIv2Error(f"{where}: has unexpected value {value!r}")
    text = str(value)
    return bytes_field(number, text) if text else b""


def _strings(number: int, value: Any, where: str) -> bytes:
    if not isinstance(value, list):
        raise OpenAPIv2Error(f"{where}: has unexpected value for string array: {value!r}")
    out = bytearray()
    for item in value:
        if not isinstance(item, str):
            raise OpenAPIv2Error(f"{where}: has unexpected value for string array: {value!r}")
        out += bytes_field(number, item)
    return bytes(out)


def _bool(number: int, value: Any, where: str) -> bytes:
    if not isinstance(value, bool):
        raise OpenAPIv2Error(f"{where}: has unexpected value {value!r}")
    return varint_field(number, 1) if value else b""


def _int64(number: int, value: Any, where: str) -> bytes:
    # compiler.IntForScalarNode: only a YAML !!int, never 1.0.
    if isinstance(value, bool) or not isinstance(value, int):
        raise OpenAPIv2Error(f"{where}: has unexpected value {value!r}")
    return varint_field(number, value) if value else b""


def _double(number: int, value: Any, where: str) -> bytes:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise OpenAPIv2Error(f"{where}: has unexpected value {value!r}")
    number_value = float(value)
    if number_value == 0 and not math.copysign(1.0, number_value) < 0:
        return b""
    return key(number, FIXED64) + struct.pack("<d", number_value)


class _YamlDumper(yaml.SafeDumper):
    """Quotes what go-yaml v2 (kubectl's reader of these values) would read as a boolean."""


_YamlDumper.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:y|Y|n|N)$"), list("yYnN"))


def to_yaml(value: Any) -> str:
    """A JSON value as block YAML, as gnostic's `compiler.Marshal` writes an `Any`."""
    text: str = yaml.dump(value, Dumper=_YamlDumper, default_flow_style=False,
                          sort_keys=False, allow_unicode=True, width=1 << 30)
    return text.removesuffix("...\n")


def _any_message(value: Any) -> bytes:
    return bytes_field(2, to_yaml(value))


def _any(number: int, value: Any, where: str) -> bytes:
    return bytes_field(number, _any_message(value))


def _anys(number: int, value: Any, where: str) -> bytes:
    if not isinstance(value, list):
        raise OpenAPIv2Error(f"{where}: has unexpected value for enum: {value!r}")
    return b"".join(_any(number, item, where) for item in value)


# --- messages -----------------------------------------------------------------------------------


def _object(value: Any, where: str) -> Json:
    if not isinstance(value, dict):
        raise OpenAPIv2Error(f"{where}: has unexpected value: {value!r}")
    return value


def _named_any(name: str, value: Any) -> bytes:
    return bytes_field(1, name) + bytes_field(2, _any_message(value))


def _message(value: Any, where: str, fields: dict[str, tuple[int, _Field]],
             extensions: int | None, required: tuple[str, ...] = ()) -> bytes:
    """One message from a JSON object: known keys by the table, `x-` keys as extensions."""
    obj = _object(value, where)
    missing = [k for k in required if k not in obj]
    if missing:
        raise OpenAPIv2Error(f"{where}: is missing required properties: {', '.join(missing)}")
    parts: list[tuple[int, bytes]] = []
    extension = bytearray()
    for name, item in obj.items():
        spec = fields.get(name)
        if spec is not None:
            number, encode = spec
            parts.append((number, encode(number, item, f"{where}.{name}")))
        elif extensions is not None and name.startswith("x-"):
            extension += bytes_field(extensions, _named_any(name, item))
        else:
            raise OpenAPIv2Error(f"{where}: has invalid property: {name}")
    if extension:
        assert extensions is not None
        parts.append((extensions, bytes(extension)))
    parts.sort(key=lambda part: part[0])  # stable: a repeated field keeps its order
    return b"".join(data for _, data in parts)


def _sub(encode: Callable[[Any, str], bytes]) -> _Field:
    """A singular message field."""
    return lambda number, value, where: bytes_field(number, encode(value, where))


def _repeated(encode: Callable[[Any, str], bytes]) -> _Field:
    """A repeated message field from a JSON array."""
    def field(number: int, value: Any, where: str) -> bytes:
        if not isinstance(value, list):
            raise OpenAPIv2Error(f"{where}: has unexpected value: {value!r}")
        return b"".join(bytes_field(number, encode(item, f"{where}[{i}]"))
                        for i, item in enumerate(value))
    return field


def _named(encode: Callable[[Any, str], bytes]) -> Callable[[Any, str], bytes]:
    """A gnostic map (`Properties`, `Definitions`, ...): `repeated Named<X> = 1` in key order."""
    def message(value: Any, where: str) -> bytes:
        obj = _object(value, where)
        return b"".join(
            bytes_field(1, bytes_field(1, name) + bytes_field(2, encode(item, f"{where}.{name}")))
            for name, item in obj.items())
    return message


def _external_docs(value: Any, where: str) -> bytes:
    return _message(value, where, {"description": (1, _string), "url": (2, _string)}, 3,
                    required=("url",))


def _type_item(value: Any, where: str) -> bytes:
    return _strings(1, [value] if isinstance(value, str) else value, where)


def _items_item(value: Any, where: str) -> bytes:
    # gnostic's NewItemsItem only takes one schema (a map), never an array of them.
    return bytes_field(1, schema(_object(value, where), where))


def _additional_properties(value: Any, where: str) -> bytes:
    if isinstance(value, bool):
        return varint_field(2, int(value))  # a oneof member is written even when false
    return bytes_field(1, schema(value, where))


_SCHEMA: dict[str, tuple[int, _Field]] = {}


def schema(value: Any, where: str = "schema") -> bytes:
    """An `openapi.v2.Schema` message."""
    return _message(value, where, _SCHEMA, 31)


_SCHEMA.update({
    "$ref": (1, _string), "format": (2, _string), "title": (3, _string),
    "description": (4, _string), "default": (5, _any), "multipleOf": (6, _double),
    "maximum": (7, _double), "exclusiveMaximum": (8, _bool), "minimum": (9, _double),
    "exclusiveMinimum": (10, _bool), "maxLength": (11, _int64), "minLength": (12, _int64),
    "pattern": (13, _string), "maxItems": (14, _int64), "minItems": (15, _int64),
    "uniqueItems": (16, _bool), "maxProperties": (17, _int64), "minProperties": (18, _int64),
    "required": (19, _strings), "enum": (20, _anys),
    "additionalProperties": (21, _sub(_additional_properties)), "type": (22, _sub(_type_item)),
    "items": (23, _sub(_items_item)), "allOf": (24, _repeated(schema)),
    "properties": (25, _sub(_named(schema))), "discriminator": (26, _string),
    "readOnly": (27, _bool), "externalDocs": (29, _sub(_external_docs)), "example": (30, _any),
})


def _primitives_items(value: Any, where: str) -> bytes:
    return _message(value, where, _PRIMITIVES_ITEMS, 18)


_PRIMITIVES_ITEMS: dict[str, tuple[int, _Field]] = {
    "type": (1, _string), "format": (2, _string), "items": (3, _sub(_primitives_items)),
    "collectionFormat": (4, _string), "default": (5, _any), "maximum": (6, _double),
    "exclusiveMaximum": (7, _bool), "minimum": (8, _double), "exclusiveMinimum": (9, _bool),
    "maxLength": (10, _int64), "minLength": (11, _int64), "pattern": (12, _string),
    "maxItems": (13, _int64), "minItems": (14, _int64), "uniqueItems": (15, _bool),
    "enum": (16, _anys), "multipleOf": (17, _double),
}


def _sub_schema_fields(first: int, with_allow_empty: bool) -> dict[str, tuple[int, _Field]]:
    """The shared layout of the four non-body parameter sub-schemas: required, in,
    description, name, [allowEmptyValue,] then the primitive keywords from `type` on."""
    fields: dict[str, tuple[int, _Field]] = {
        "required": (1, _bool), "in": (2, _string), "description": (3, _string),
        "name": (4, _string)}
    if with_allow_empty:
        fields["allowEmptyValue"] = (5, _bool)
    for offset, (name, (_, encode)) in enumerate(_PRIMITIVES_ITEMS.items()):
        fields[name] = (first + offset, encode)
    return fields


# `in` -> (NonBodyParameter oneof number, sub-schema fields, vendor_extension number)
_NON_BODY: dict[str, tuple[int, dict[str, tuple[int, _Field]], int]] = {
    "header": (1, _sub_schema_fields(5, False), 22),
    "formData": (2, _sub_schema_fields(6, True), 23),
    "query": (3, _sub_schema_fields(6, True), 23),
    "path": (4, _sub_schema_fields(5, False), 22),
}


def parameters_item(value: Any, where: str) -> bytes:
    """A `ParametersItem`: a `Parameter` (body or non-body), or a `JsonReference`."""
    obj = _object(value, where)
    if obj.get("in") == "body":
        body = _message(obj, where, {
            "description": (1, _string), "name": (2, _string), "in": (3, _string),
            "required": (4, _bool), "schema": (5, _sub(schema))}, 6,
            required=("in", "name", "schema"))
        return bytes_field(1, bytes_field(1, body))
    where_in = obj.get("in")
    if isinstance(where_in, str) and where_in in _NON_BODY:
        oneof, fields, extensions = _NON_BODY[where_in]
        required = ("in", "name", "type") + (("required",) if where_in == "path" else ())
        sub = _message(obj, where, fields, extensions, required=required)
        return bytes_field(1, bytes_field(2, bytes_field(oneof, sub)))
    if "$ref" in obj:
        ref = _message(obj, where, {"$ref": (1, _string), "description": (2, _string)}, None)
        return bytes_field(2, ref)
    raise OpenAPIv2Error(f"{where}: contains an invalid ParametersItem")


_STATUS_CODE = re.compile(r"^([0-9]{3})$|^(default)$")


def _response(value: Any, where: str) -> bytes:
    obj = _object(value, where)
    if "$ref" in obj:  # ResponseValue.json_reference
        return bytes_field(2, _message(obj, where, {"$ref": (1, _string),
                                                    "description": (2, _string)}, None))
    response = _message(obj, where, {
        "description": (1, _string),
        "schema": (2, _sub(lambda v, w: bytes_field(1, schema(v, w))))},  # SchemaItem.schema
        5, required=("description",))
    return bytes_field(1, response)


def _responses(value: Any, where: str) -> bytes:
    obj = _object(value, where)
    codes = bytearray()
    extension = bytearray()
    for name, item in obj.items():
        if _STATUS_CODE.match(name):
            codes += bytes_field(1, bytes_field(1, name)
                                 + bytes_field(2, _response(item, f"{where}.{name}")))
        elif name.startswith("x-"):
            extension += bytes_field(2, _named_any(name, item))
        else:
            raise OpenAPIv2Error(f"{where}: has invalid property: {name}")
    return bytes(codes + extension)


def _security_requirement(value: Any, where: str) -> bytes:
    return _named(lambda v, w: _strings(1, v, w))(value, where)


def _operation(value: Any, where: str) -> bytes:
    return _message(value, where, {
        "tags": (1, _strings), "summary": (2, _string), "description": (3, _string),
        "externalDocs": (4, _sub(_external_docs)), "operationId": (5, _string),
        "produces": (6, _strings), "consumes": (7, _strings),
        "parameters": (8, _repeated(parameters_item)), "responses": (9, _sub(_responses)),
        "schemes": (10, _strings), "deprecated": (11, _bool),
        "security": (12, _repeated(_security_requirement))}, 13, required=("responses",))


def _path_item(value: Any, where: str) -> bytes:
    return _message(value, where, {
        "$ref": (1, _string), "get": (2, _sub(_operation)), "put": (3, _sub(_operation)),
        "post": (4, _sub(_operation)), "delete": (5, _sub(_operation)),
        "options": (6, _sub(_operation)), "head": (7, _sub(_operation)),
        "patch": (8, _sub(_operation)), "parameters": (9, _repeated(parameters_item))}, 10)


def _paths(value: Any, where: str) -> bytes:
    obj = _object(value, where)
    paths = bytearray()
    extension = bytearray()
    for name, item in obj.items():
        if name.startswith("/"):
            paths += bytes_field(2, bytes_field(1, name) + bytes_field(
                2, _path_item(item, f"{where}.{name}")))
        elif name.startswith("x-"):
            extension += bytes_field(1, _named_any(name, item))
        else:
            raise OpenAPIv2Error(f"{where}: has invalid property: {name}")
    return bytes(extension + paths)


def _info(value: Any, where: str) -> bytes:
    return _message(value, where, {
        "title": (1, _string), "version": (2, _string), "description": (3, _string),
        "termsOfService": (4, _string)}, 7, required=("title", "version"))


def _security_definition(value: Any, where: str) -> bytes:
    obj = _object(value, where)
    if obj.get("type") != "apiKey":  # the only kind kube-apiserver publishes (BearerToken)
        raise OpenAPIv2Error(f"{where}: only apiKey security definitions are encoded here")
    return bytes_field(2, _message(obj, where, {
        "type": (1, _string), "name": (2, _string), "in": (3, _string),
        "description": (4, _string)}, 5, required=("in", "name", "type")))


def _tag(value: Any, where: str) -> bytes:
    return _message(value, where, {"name": (1, _string), "description": (2, _string),
                                   "externalDocs": (3, _sub(_external_docs))}, 4,
                    required=("name",))


def encode_document(doc: Json) -> bytes:
    """`proto.Marshal(openapi_v2.ParseDocument(json))` of a Swagger 2.0 document."""
    return _message(doc, "$root", {
        "swagger": (1, _string), "info": (2, _sub(_info)), "host": (3, _string),
        "basePath": (4, _string), "schemes": (5, _strings), "consumes": (6, _strings),
        "produces": (7, _strings), "paths": (8, _sub(_paths)),
        "definitions": (9, _sub(_named(schema))),
        "security": (12, _repeated(_security_requirement)),
        "securityDefinitions": (13, _sub(_named(_security_definition))),
        "tags": (14, _repeated(_tag)), "externalDocs": (15, _sub(_external_docs))}, 16,
        required=("info", "paths", "swagger"))
