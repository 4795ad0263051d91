"""OpenAPI v3 value validation of custom objects, as kube-openapi's SchemaValidator does it.

This is the validator apiextensions-apiserver builds from a CRD version's openAPIV3Schema, with
its results converted to field errors the way `kubeOpenAPIResultToFieldErrors` converts them:

* error names are kube-openapi paths: properties and map keys (additionalProperties) joined with
  dots, list items as `[i]`; the message repeats the name ("spec.replicas in body should ...");
* `required` -> Required value, `enum` -> Unsupported value, `maxLength` -> Too long,
  `maxItems`/`maxProperties` -> Too many, type and format mismatches -> Invalid value
  (FieldValueTypeInvalid), everything else -> Invalid value;
* allOf/anyOf/oneOf/not summaries are plain errors and land on the `<nil>` field.

Validators run in kube-openapi's order (type, allOf/anyOf/oneOf/not, string, format, number,
array, enum, object), and like kube-openapi several can report on the same value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..errors import Cause, json_type
from . import fielderr as fe
from .formats import (
    GoRegexError,
    check_string_format,
    compile_go_regex,
    effective_format,
    is_known_string_format,
)

Schema = dict[str, Any]


@dataclass
class _Err:
    """One kube-openapi result error before it becomes a field error."""

    code: str
    name: str
    message: str = ""
    value: Any = None
    limit: int = -1
    actual: int = -1
    values: list[Any] = field(default_factory=list)


def _go_format_of(v: Any) -> str:
    """The Go format kube-openapi infers for decoded data (int64 for ints, float64 for floats)."""
    if isinstance(v, bool):
        return ""
    if isinstance(v, int):
        return "int64"
    if isinstance(v, float):
        return "float64"
    return ""


def strict_equal(a: Any, b: Any) -> bool:
    """Go's reflect.DeepEqual on decoded JSON: int64 and float64 never compare equal."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _enum_matches(data: Any, allowed: Any) -> bool:
    """kube-openapi's enum match: DeepEqual after a Go type conversion of data, if one exists."""
    if data is None or allowed is None:
        return False
    if strict_equal(data, allowed):
        return True
    if isinstance(data, bool) or isinstance(allowed, bool):
        return False
    if isinstance(allowed, float) and isinstance(data, int):
        return float(data) == allowed
    if isinstance(allowed, int) and isinstance(data, float):
        return math.isfinite(data) and int(data) == allowed
    if isinstance(allowed, str) and isinstance(data, int):
        # Go converts an integer to the string of that rune.
        return 0 <= data <= 0x10FFFF and chr(data) == allowed
    return False


def _is_json_integer(f: float) -> bool:
    """swag.IsFloat64AJSONInteger: integral, or within a relative 1e-9 of an integer."""
    if not math.isfinite(f) or abs(f) > 2**53:
        return False
    if f == int(f):
        return True
    g = float(round(f))
    if f == 0 or g == 0:
        return False
    return abs(f - g) / (abs(f) + abs(g)) < 1e-9


def schema_types(schema: Schema) -> list[str]:
    """The schema's type list as kube-openapi sees it (int-or-string is integer,string)."""
    if schema.get("x-kubernetes-int-or-string"):
        return ["integer", "string"]
    t = schema.get("type")
    return [t] if isinstance(t, str) and t else []


def _format(schema: Schema) -> str:
    types = schema_types(schema)
    fmt = schema.get("format")
    if not isinstance(fmt, str):
        return ""
    return effective_format(types[0] if len(types) == 1 else "", fmt)


def _fewest(results: list[list[_Err]]) -> list[_Err]:
    """The failing branch kube-openapi reports: the one that got furthest (fewest errors)."""
    return min(results, key=lambda r: len(r))


def _sub(name: str, prop: str) -> str:
    return prop if name == "" else f"{name}.{prop}"


class _Validator:
    """One pass of kube-openapi's SchemaValidator over a value."""

    def validate(self, schema: Schema, data: Any, name: str) -> list[_Err]:
        errs: list[_Err] = []
        if data is None:
            errs += self._type(schema, data, name)
            errs += self._enum(schema, data, name)
            return errs
        errs += self._type(schema, data, name)
        errs += self._combinators(schema, data, name)
        if isinstance(data, str):
            errs += self._string(schema, data, name)
            errs += self._string_format(schema, data, name)
        if isinstance(data, (int, float)) and not isinstance(data, bool):
            errs += self._number(schema, data, name)
        if isinstance(data, list):
            errs += self._array(schema, data, name)
        errs += self._enum(schema, data, name)
        if isinstance(data, dict):
            errs += self._object(schema, data, name)
        return errs

    def _type(self, schema: Schema, data: Any, name: str) -> list[_Err]:
        types = schema_types(schema)
        fmt = _format(schema)
        if not types and not fmt:
            return []
        if data is None:
            if types and "null" not in types and not schema.get("nullable", False):
                return [self._type_err(name, ",".join(types), "null")]
            return []
        sch_type = json_type(data)
        go_fmt = _go_format_of(data)
        float_int = sch_type == "number" and "integer" in types and _is_json_integer(float(data))
        int_float = sch_type == "integer" and "number" in types
        scalar = not isinstance(data, (str, list))
        if scalar and fmt and not (sch_type in types or go_fmt == fmt or float_int or int_float):
            return [self._type_err(name, fmt, go_fmt)]
        if not ("number" in types or "integer" in types) and fmt and not scalar:
            return []
        if not (sch_type in types or float_int or int_float):
            return [self._type_err(name, ",".join(types), sch_type)]
        return []

    @staticmethod
    def _type_err(name: str, expected: str, got: str) -> _Err:
        msg = f"{name} in body must be of type {expected}: {fe.go_quote(got)}"
        return _Err("type", name, msg, value=got)

    def _combinators(self, schema: Schema, data: Any, name: str) -> list[_Err]:
        errs: list[_Err] = []
        quoted = fe.go_quote(name)
        any_of = schema.get("anyOf") or []
        if any_of:
            results: list[list[_Err]] = []
            for sub in any_of:
                r = self.validate(sub, data, name)
                if not r:
                    break
                results.append(r)
            else:
                errs.append(
                    _Err("composite", name, f"{quoted} must validate at least one schema (anyOf)")
                )
                errs += _fewest(results)
        one_of = schema.get("oneOf") or []
        if one_of:
            results = [self.validate(sub, data, name) for sub in one_of]
            valid = sum(1 for r in results if not r)
            if valid != 1:
                extra = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
                msg = f"{quoted} must validate one and only one schema (oneOf). {extra}"
                errs.append(_Err("composite", name, msg))
                if valid == 0:
                    errs += _fewest(results)
        all_of = schema.get("allOf") or []
        if all_of:
            valid = 0
            for sub in all_of:
                r = self.validate(sub, data, name)
                valid += not r
                errs += r
            if valid != len(all_of):
                extra = ". None validated" if valid == 0 else ""
                errs.append(
                    _Err(
                        "composite", name, f"{quoted} must validate all the schemas (allOf){extra}"
                    )
                )
        not_schema = schema.get("not")
        if isinstance(not_schema, dict) and not self.validate(not_schema, data, name):
            errs.append(_Err("composite", name, f"{quoted} must not validate the schema (not)"))
        return errs

    def _string(self, schema: Schema, data: str, name: str) -> list[_Err]:
        # kube-openapi stops at the first failing string check.
        max_len = schema.get("maxLength")
        if isinstance(max_len, int) and len(data) > max_len:
            return [_Err("too_long", name, value=data, limit=max_len)]
        min_len = schema.get("minLength")
        if isinstance(min_len, int) and len(data) < min_len:
            msg = f"{name} in body should be at least {min_len} chars long"
            return [_Err("invalid", name, msg, value=data)]
        pattern = schema.get("pattern")
        if isinstance(pattern, str) and pattern:
            try:
                compiled = compile_go_regex(pattern)
            except GoRegexError as e:
                msg = f"{name} in body should match '{pattern}, but pattern is invalid: {e}'"
                return [_Err("invalid", name, msg, value=data)]
            if compiled is not None and not compiled.search(data):
                msg = f"{name} in body should match '{pattern}'"
                return [_Err("invalid", name, msg, value=data)]
        return []

    def _string_format(self, schema: Schema, data: str, name: str) -> list[_Err]:
        fmt = _format(schema)
        if not fmt or not is_known_string_format(fmt) or check_string_format(fmt, data):
            return []
        msg = f"{name} in body must be of type {fmt}: {fe.go_quote(data)}"
        return [_Err("type", name, msg, value=data)]

    def _number(self, schema: Schema, data: int | float, name: str) -> list[_Err]:
        errs: list[_Err] = []
        is_int = isinstance(data, int)
        factor = schema.get("multipleOf")
        if isinstance(factor, (int, float)) and not isinstance(factor, bool):
            errs += self._multiple_of(name, data, factor, is_int)
        for key, excl_key, op in (
            ("minimum", "exclusiveMinimum", "greater"),
            ("maximum", "exclusiveMaximum", "less"),
        ):
            bound = schema.get(key)
            if not isinstance(bound, (int, float)) or isinstance(bound, bool):
                continue
            exclusive = bool(schema.get(excl_key, False))
            # Integer data is compared with the bound truncated to int64, as kube-openapi does.
            limit: int | float = int(bound) if is_int else float(bound)
            if op == "greater":
                bad = data <= limit if exclusive else data < limit
            else:
                bad = data >= limit if exclusive else data > limit
            if bad:
                rel = f"{op} than" if exclusive else f"{op} than or equal to"
                msg = f"{name} in body should be {rel} {fe.go_v(limit)}"
                errs.append(_Err("invalid", name, msg, value=data))
        return errs

    @staticmethod
    def _multiple_of(name: str, data: int | float, factor: int | float, is_int: bool) -> list[_Err]:
        if is_int and int(factor) != 0:
            f_int = int(factor)
            if f_int < 0:
                msg = f"factor MultipleOf declared for {name} must be positive: {f_int}"
                return [_Err("invalid", name, msg, value=f_int)]
            if int(data) % f_int == 0:
                return []
            return [
                _Err("invalid", name, f"{name} in body should be a multiple of {f_int}", value=data)
            ]
        f = float(factor)
        if f < 0:
            msg = f"factor MultipleOf declared for {name} must be positive: {fe.go_float(f)}"
            return [_Err("invalid", name, msg, value=f)]
        if f == 0:
            return []
        mult = (1 / f) * data if f < 1 else data / f
        if _is_json_integer(mult):
            return []
        msg = f"{name} in body should be a multiple of {fe.go_float(f)}"
        return [_Err("invalid", name, msg, value=data)]

    def _array(self, schema: Schema, data: list[Any], name: str) -> list[_Err]:
        errs: list[_Err] = []
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(data):
                errs += self.validate(items, item, f"{name}[{i}]")
        elif isinstance(items, list):
            for i, (sub, item) in enumerate(zip(items, data, strict=False)):
                errs += self.validate(sub, item, f"{name}[{i}]")
        size = len(data)
        min_items = schema.get("minItems")
        if isinstance(min_items, int) and size < min_items:
            msg = f"{name} in body should have at least {min_items} items"
            errs.append(_Err("invalid", name, msg, value=size))
        max_items = schema.get("maxItems")
        if isinstance(max_items, int) and size > max_items:
            errs.append(_Err("too_many", name, actual=size, limit=max_items))
        if schema.get("uniqueItems"):
            seen: list[Any] = []
            for item in data:
                if any(strict_equal(item, s) for s in seen):
                    errs.append(
                        _Err("invalid", name, f"{name} in body shouldn't contain duplicates")
                    )
                    break
                seen.append(item)
        return errs

    def _enum(self, schema: Schema, data: Any, name: str) -> list[_Err]:
        allowed = schema.get("enum")
        if not isinstance(allowed, list) or not allowed:
            return []
        if any(_enum_matches(data, a) for a in allowed):
            return []
        return [_Err("enum", name, value=data, values=list(allowed))]

    def _object(self, schema: Schema, data: dict[str, Any], name: str) -> list[_Err]:
        n = len(data)
        min_props = schema.get("minProperties")
        if isinstance(min_props, int) and n < min_props:
            msg = f"{name} in body should have at least {min_props} properties"
            return [_Err("invalid", name, msg, value=n)]
        max_props = schema.get("maxProperties")
        if isinstance(max_props, int) and n > max_props:
            return [_Err("too_many", name, actual=n, limit=max_props)]
        errs: list[_Err] = []
        props: dict[str, Schema] = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        if additional is False:
            for k in data:
                if k not in props:
                    msg = f"{name}.{k} in body is a forbidden property"
                    errs.append(_Err("invalid", name, msg, value=k))
        elif isinstance(additional, dict):
            for k, v in data.items():
                if k not in props:
                    errs += self.validate(additional, v, f"{name}.{k}")
        for p, sub in props.items():
            if p in data:
                errs += self.validate(sub, data[p], _sub(name, p))
        for r in schema.get("required") or []:
            if r not in data:
                errs.append(_Err("required", f"{name}.{r}"))
        return errs


def _err_path(base: str | None, name: str) -> str:
    if name and name != ".":
        return fe.child(base, name[1:] if name.startswith(".") else name)
    return base or fe.NIL_PATH


def _enum_value_string(v: Any) -> str:
    return v if isinstance(v, str) else fe.go_json(v)


def _to_cause(e: _Err, base: str | None) -> Cause:
    if e.code == "composite":
        return fe.invalid(base or fe.NIL_PATH, "", e.message)
    path = _err_path(base, e.name)
    if e.code == "required":
        return fe.required(path)
    if e.code == "enum":
        return fe.not_supported(path, e.value, [_enum_value_string(v) for v in e.values])
    if e.code == "too_long":
        return fe.too_long(path, e.limit)
    if e.code == "too_many":
        return fe.too_many(path, e.actual, e.limit)
    value = "" if e.value is None else e.value
    if e.code == "type":
        return fe.type_invalid(path, value, e.message)
    return fe.invalid(path, value, e.message)


def openapi_errors(data: Any, schema: Schema, base: str | None = None) -> list[Cause]:
    """Validate `data` against `schema` like `ValidateCustomResource(base, data, validator)`.

    `base` is the field path the errors hang off (None for a custom object, which kube-apiserver
    reports from the root; error paths then start at the object's top-level fields).
    """
    return [_to_cause(e, base) for e in _Validator().validate(schema, data, "")]


# --- x-kubernetes-list-type ------------------------------------------------------------------


class _Unspecified:
    """A list-map item without its key field (distinct from a null key)."""


_UNSPECIFIED = _Unspecified()


def _non_unique(items: list[Any]) -> list[int]:
    """Index of the second appearance of every value that appears more than once.

    Scalars compare as Go map keys do (1 and 1.0 differ); objects and lists compare by their
    JSON encoding (where 1 and 1.0 are the same).
    """
    seen: dict[Any, int] = {}
    out: list[int] = []
    for i, x in enumerate(items):
        if isinstance(x, (dict, list)):
            k: Any = ("compound", fe.go_json(x))
        elif isinstance(x, _Unspecified):
            k = ("unspecified",)
        else:
            k = ("scalar", type(x).__name__, x)
        times = seen.get(k, 0)
        seen[k] = times + 1
        if times == 1:
            out.append(i)
    return out


def _list_map(path: str, schema: Schema, items: list[Any]) -> list[Cause]:
    for i, x in enumerate(items):
        if x is not None and not isinstance(x, dict):
            return [
                fe.invalid(fe.index(path, i), x, "must be an object for an array of list-type map")
            ]
    if len(items) <= 1:
        return []
    key_fields: list[str] = schema.get("x-kubernetes-list-map-keys") or []
    if len(key_fields) == 1:
        kf = key_fields[0]
        keys: list[Any] = [_UNSPECIFIED if x is None or kf not in x else x[kf] for x in items]
        return [
            fe.duplicate(fe.index(path, i), {} if keys[i] is _UNSPECIFIED else {kf: keys[i]})
            for i in _non_unique(keys)
        ]
    compound = [{} if x is None else {k: x[k] for k in key_fields if k in x} for x in items]
    return [fe.duplicate(fe.index(path, i), compound[i]) for i in _non_unique(compound)]


def _list_types_value(path: str, schema: Schema | None, value: Any) -> list[Cause]:
    if schema is None:
        return []
    if isinstance(value, dict):
        return list_type_errors(value, schema, path)
    if not isinstance(value, list):
        return []
    errs: list[Cause] = []
    list_type = schema.get("x-kubernetes-list-type")
    if list_type == "set":
        errs += [fe.duplicate(fe.index(path, i), value[i]) for i in _non_unique(value)]
    elif list_type == "map":
        errs += _list_map(path, schema, value)
    items = schema.get("items")
    if isinstance(items, dict):
        for i, item in enumerate(value):
            errs += _list_types_value(fe.index(path, i), items, item)
    return errs


def list_type_errors(obj: dict[str, Any], schema: Schema, path: str | None = None) -> list[Cause]:
    """Uniqueness of `x-kubernetes-list-type` set and map lists (listtype.ValidateListSetsAndMaps).

    These paths are `field.Path`s: map keys appear as `[key]`, unlike kube-openapi's.
    """
    errs: list[Cause] = []
    additional = schema.get("additionalProperties")
    if isinstance(additional, dict):
        for k, v in obj.items():
            errs += _list_types_value(fe.key(path, k), additional, v)
    props: dict[str, Schema] = schema.get("properties") or {}
    for k, v in obj.items():
        if k in props:
            errs += _list_types_value(fe.child(path, k), props[k], v)
    return errs
