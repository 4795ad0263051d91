"""How a model field describes itself to the converter and to the CRD schema generator.

A field's JSON name, description and validation markers live in its attrs metadata, written
with `doc(...)`; the class docstring describes the type. This mirrors the kubebuilder markers
of a Go API, so one declaration gives the Python type, the wire name and the OpenAPI schema:

    replicas: int | None = field(default=None, metadata=doc("Desired pods.", minimum=0))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import attrs

__all__ = ["KEY", "UNSET", "CelRule", "FieldInfo", "doc", "field_info", "is_required", "json_name"]

KEY: Final = "api"


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = _Unset()


@attrs.frozen
class CelRule:
    """An `x-kubernetes-validations` entry: a CEL expression and the message shown on failure."""

    rule: str
    message: str


@attrs.frozen(kw_only=True)
class FieldInfo:
    """Everything about a field beyond its Python type."""

    description: str
    json: str | None = None
    required: bool | None = None
    enum: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    min_length: int | None = None
    max_length: int | None = None
    #: A regular expression the string matches (`+kubebuilder:validation:Pattern`).
    pattern: str | None = None
    max_items: int | None = None
    max_properties: int | None = None
    default: Any = UNSET
    format: str | None = None
    inline: bool = False
    deprecated: bool = False
    #: A list of objects keyed by these fields (`+listType=map`, `+listMapKey=...`).
    list_map_keys: tuple[str, ...] = ()


def doc(
    description: str,
    *,
    json: str | None = None,
    required: bool | None = None,
    enum: Sequence[str] = (),
    minimum: int | None = None,
    maximum: int | None = None,
    min_length: int | None = None,
    max_length: int | None = None,
    pattern: str | None = None,
    max_items: int | None = None,
    max_properties: int | None = None,
    default: Any = UNSET,
    format: str | None = None,
    inline: bool = False,
    deprecated: bool = False,
    list_map_keys: Sequence[str] = (),
) -> dict[str, FieldInfo]:
    """Build the attrs metadata of a field.

    `json` overrides the camelCase name derived from the attribute name. `required` defaults
    to "the attribute has no default". `default` is the value the API server fills in (the
    model itself never invents values, so a round trip stays exact). `inline` marks the one
    dict field of a class that gathers every JSON key the class does not name.
    """
    return {
        KEY: FieldInfo(
            description=description,
            json=json,
            required=required,
            enum=tuple(enum),
            minimum=minimum,
            maximum=maximum,
            min_length=min_length,
            max_length=max_length,
            pattern=pattern,
            max_items=max_items,
            max_properties=max_properties,
            default=default,
            format=format,
            inline=inline,
            deprecated=deprecated,
            list_map_keys=tuple(list_map_keys),
        )
    }


def field_info(attribute: attrs.Attribute[Any]) -> FieldInfo:
    """The FieldInfo of an attribute; every model field must have one."""
    info = attribute.metadata.get(KEY)
    if not isinstance(info, FieldInfo):
        raise TypeError(f"field {attribute.name!r} has no doc(...) metadata")
    return info


def json_name(attribute: attrs.Attribute[Any]) -> str:
    """The JSON key of an attribute: explicit, or the attribute name in camelCase."""
    info = field_info(attribute)
    if info.json is not None:
        return info.json
    head, *rest = attribute.name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def is_required(attribute: attrs.Attribute[Any]) -> bool:
    """Whether the schema lists the field as required."""
    info = field_info(attribute)
    if info.required is not None:
        return info.required
    return attribute.default is attrs.NOTHING
