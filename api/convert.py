"""JSON <-> model conversion for the API types (a cattrs converter).

`load(cls, data)` builds a model from JSON as the API server sends it; `dump(obj)` gives the
JSON back. The pair is lossless: absent fields stay absent (None is never written), explicit
empty maps, lists, `false` and `0` are kept, and embedded Kubernetes JSON is copied verbatim,
unknown keys included. Both directions deep-copy, so models never share state with their input
or output. Types are checked strictly ("3" is not an int); problems raise `ConversionError`
with JSON field paths.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast, get_args, get_origin

import attrs
import cattrs
from cattrs.cols import is_mapping, is_sequence, list_structure_factory, mapping_structure_factory
from cattrs.errors import ClassValidationError, IterableValidationError
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from api.errors import ConversionError, FieldError
from api.kube import Json, copy_json, embedded_tag
from api.markers import field_info, json_name

__all__ = ["ConversionError", "dump", "load", "load_resource"]

T = TypeVar("T")
_Hook = Callable[[Any, Any], Any]


def load(cls: type[T], data: Mapping[str, Any]) -> T:
    """Build a `cls` from its JSON form; raises ConversionError naming every bad field."""
    try:
        return _converter.structure(data, cls)
    except (ClassValidationError, IterableValidationError, TypeError, ValueError) as exc:
        raise ConversionError(cls.__name__, _field_errors(exc, "")) from exc


def dump(obj: Any) -> Json:
    """The JSON form of a model object: camelCase keys, absent fields left out."""
    if not attrs.has(type(obj)):
        raise TypeError(f"dump() takes a model object, not {type(obj).__name__}")
    return cast(Json, _converter.unstructure(obj))


def load_resource(data: Mapping[str, Any]) -> Any:
    """Load any of the five kinds, chosen by the `kind` field."""
    from api.v1alpha1 import KINDS  # local: api.v1alpha1 does not depend on this module

    kind = data.get("kind")
    if kind not in KINDS:
        raise ConversionError("object", [FieldError("kind", f"unsupported kind {kind!r}")])
    return load(KINDS[kind], data)


def _strict(*kinds: type) -> _Hook:
    names = " or ".join(k.__name__ for k in kinds)

    def hook(value: Any, _: Any) -> Any:
        if isinstance(value, bool) and bool not in kinds:
            raise TypeError(f"expected {names}, got bool")
        if not isinstance(value, kinds):
            raise TypeError(f"expected {names}, got {type(value).__name__}")
        return value

    return hook


def _embedded_structure(tp: Any) -> _Hook:
    check = _strict(*cast(Any, embedded_tag(tp)).kinds)
    return lambda value, _: copy_json(check(value, None))


def _list_structure(tp: Any, converter: cattrs.Converter) -> _Hook:
    inner = list_structure_factory(tp, converter)

    def hook(value: Any, type_: Any) -> Any:
        if not isinstance(value, list):
            raise TypeError(f"expected list, got {type(value).__name__}")
        return inner(value, type_)

    return hook


def _dict_structure(tp: Any, converter: cattrs.Converter) -> _Hook:
    inner = mapping_structure_factory(tp, converter)

    def hook(value: Any, type_: Any) -> Any:
        if not isinstance(value, dict):
            raise TypeError(f"expected object, got {type(value).__name__}")
        return inner(value, type_)

    return hook


def _inline_field(cls: type) -> attrs.Attribute[Any] | None:
    return next((a for a in attrs.fields(cls) if field_info(a).inline), None)


def _class_structure(cls: type, converter: cattrs.Converter) -> _Hook:
    inline = _inline_field(cls)
    overrides = {
        a.name: override(omit=True) if a is inline else override(rename=json_name(a))
        for a in attrs.fields(cls)
    }
    inner: _Hook = make_dict_structure_fn(cls, converter, **overrides)  # type: ignore[arg-type]
    known = {json_name(a) for a in attrs.fields(cls) if a is not inline}

    def hook(value: Any, _: Any) -> Any:
        if not isinstance(value, dict):
            raise TypeError(f"expected object, got {type(value).__name__}")
        obj = inner(value, cls)
        if inline is not None:
            rest = {k: copy_json(v) for k, v in value.items() if k not in known}
            setattr(obj, inline.name, rest)
        return obj

    return hook


def _class_unstructure(cls: type, converter: cattrs.Converter) -> Callable[[Any], Any]:
    inline = _inline_field(cls)
    overrides = {
        a.name: (
            override(omit=True)
            if a is inline
            # Only None means "absent"; a default like apiVersion is always written.
            else override(rename=json_name(a), omit_if_default=a.default is None)
        )
        for a in attrs.fields(cls)
    }
    inner: Callable[[Any], Any] = make_dict_unstructure_fn(
        cls,
        converter,
        **overrides,  # type: ignore[arg-type]
    )
    if inline is None:
        return inner

    def hook(obj: Any) -> Any:
        return {**copy_json(getattr(obj, inline.name)), **inner(obj)}

    return hook


def _origin(tp: Any) -> Any:
    return get_origin(tp)


def _make_converter() -> cattrs.Converter:
    converter = cattrs.Converter()
    for kind in (str, int, bool):
        converter.register_structure_hook(kind, _strict(kind))
    converter.register_structure_hook_factory(
        lambda t: embedded_tag(t) is not None, _embedded_structure
    )
    converter.register_unstructure_hook_func(lambda t: embedded_tag(t) is not None, copy_json)
    converter.register_structure_hook_factory(
        lambda t: is_sequence(t) and _origin(t) is list,
        lambda t: _list_structure(t, converter),
    )
    converter.register_structure_hook_factory(
        lambda t: is_mapping(t) and _origin(t) is dict and get_args(t)[1] is not Any,
        lambda t: _dict_structure(t, converter),
    )
    converter.register_structure_hook_factory(attrs.has, lambda t: _class_structure(t, converter))
    converter.register_unstructure_hook_factory(
        attrs.has, lambda t: _class_unstructure(t, converter)
    )
    return converter


_converter = _make_converter()


def _field_errors(exc: BaseException, path: str) -> list[FieldError]:
    """Flatten cattrs' nested exception groups into errors with JSON paths."""
    if isinstance(exc, ClassValidationError):
        names = {a.name: json_name(a) for a in attrs.fields(exc.cl)}
        errors: list[FieldError] = []
        with_notes, without = exc.group_exceptions()
        for inner, note in with_notes:
            key = names.get(note.name, note.name)
            errors += _field_errors(inner, f"{path}.{key}" if path else key)
        for inner in without:
            errors += _field_errors(inner, path)
        return errors
    if isinstance(exc, IterableValidationError):
        errors = []
        items, rest = exc.group_exceptions()
        for inner, item in items:
            index: Any = item.index  # a list index or a map key
            if isinstance(index, int):
                errors += _field_errors(inner, f"{path}[{index}]")
            else:
                errors += _field_errors(inner, f"{path}.{index}" if path else str(index))
        for inner in rest:
            errors += _field_errors(inner, path)
        return errors
    if isinstance(exc, KeyError):
        return [FieldError(path, "required value")]
    return [FieldError(path, str(exc))]
