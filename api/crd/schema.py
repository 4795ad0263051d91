"""OpenAPI v3 schemas derived from the model classes.

Walks the attrs fields of a class: Python types give `type`, nested classes become objects,
`dict[str, X]` a map, `list[X]` an array, the `api.kube` aliases their Kubernetes schema; the
`doc(...)` metadata adds descriptions and validation markers, and a class's `cel_rules` become
`x-kubernetes-validations`.
"""

from __future__ import annotations

import inspect
import types
import typing
from typing import Any, Union, get_args, get_origin

import attrs

from api.crd.kube_schemas import embedded_schema
from api.kube import Json, embedded_tag
from api.markers import UNSET, FieldInfo, field_info, is_required, json_name

__all__ = ["class_description", "object_schema"]


def object_schema(cls: type) -> Json:
    """The schema of a model class, with its docstring as description."""
    schema = _class_schema(cls)
    return {"description": class_description(cls), **schema}


def class_description(cls: type) -> str:
    """The class docstring as one paragraph of text."""
    return " ".join((inspect.getdoc(cls) or "").split())


def _class_schema(cls: type) -> Json:
    hints = typing.get_type_hints(cls, include_extras=True)
    properties: Json = {}
    required: list[str] = []
    preserve_unknown = False
    for attribute in attrs.fields(cls):
        info = field_info(attribute)
        if info.inline:
            # The class gathers unknown keys itself, so the schema must keep them too.
            preserve_unknown = True
            continue
        name = json_name(attribute)
        properties[name] = _field_schema(hints[attribute.name], info)
        if is_required(attribute):
            required.append(name)
    schema: Json = {"type": "object", "properties": dict(sorted(properties.items()))}
    if required:
        schema["required"] = sorted(required)
    if preserve_unknown:
        schema["x-kubernetes-preserve-unknown-fields"] = True
    rules = getattr(cls, "cel_rules", ())
    if rules:
        schema["x-kubernetes-validations"] = [{"rule": r.rule, "message": r.message} for r in rules]
    return schema


def _field_schema(tp: Any, info: FieldInfo) -> Json:
    schema = _type_schema(_strip_optional(tp))
    if info.description:
        schema["description"] = " ".join(info.description.split())
    if info.enum:
        schema["enum"] = list(info.enum)
    if info.minimum is not None:
        schema["minimum"] = info.minimum
    if info.maximum is not None:
        schema["maximum"] = info.maximum
    if info.min_length is not None:
        schema["minLength"] = info.min_length
    if info.max_length is not None:
        schema["maxLength"] = info.max_length
    if info.pattern is not None:
        schema["pattern"] = info.pattern
    if info.max_items is not None:
        schema["maxItems"] = info.max_items
    if info.max_properties is not None:
        schema["maxProperties"] = info.max_properties
    if info.default is not UNSET:
        schema["default"] = info.default
    if info.format is not None:
        schema["format"] = info.format
    if info.list_map_keys:
        schema["x-kubernetes-list-type"] = "map"
        schema["x-kubernetes-list-map-keys"] = list(info.list_map_keys)
    return schema


def _strip_optional(tp: Any) -> Any:
    if get_origin(tp) in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return tp


def _type_schema(tp: Any) -> Json:
    tag = embedded_tag(tp)
    if tag is not None:
        return embedded_schema(tag.name)
    if attrs.has(tp):
        return object_schema(tp)
    origin = get_origin(tp)
    if origin is list:
        return {"type": "array", "items": _type_schema(get_args(tp)[0])}
    if origin is dict:
        return {"type": "object", "additionalProperties": _type_schema(get_args(tp)[1])}
    if tp is str:
        return {"type": "string"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer", "format": "int32"}
    raise TypeError(f"no schema for type {tp!r}")
