"""Structural schema rules (`ValidateStructural`) and default validation (`ValidateDefaults`).

A structural schema specifies a type for every node and keeps allOf/anyOf/oneOf/not for value
validations only (see "Specifying a structural schema" in the Kubernetes docs). Defaults must
validate against their node's schema and be pruned already.
"""

from __future__ import annotations

import copy
from typing import Any

from ..errors import Cause
from . import fielderr as fe
from .formats import GoRegexError, compile_go_regex
from .meta import embedded_errors_at
from .mutation import prune
from .validation import openapi_errors, strict_equal

Schema = dict[str, Any]

_ROOT, _ITEM, _FIELD = "root", "item", "field"
_META_FIELDS = ("metadata", "kind", "apiVersion")
_INT_OR_STRING_ANY_OF = [{"type": "integer"}, {"type": "string"}]

#: Keys of a schema node that are value validations (allowed inside allOf/anyOf/oneOf/not).
_VALUE_VALIDATIONS = frozenset(
    {
        "format",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "multipleOf",
        "enum",
        "maxProperties",
        "minProperties",
        "required",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
    }
)

#: Generic and extension keys forbidden in a nested (allOf/...) context, with the detail.
_NESTED_FORBIDDEN = (
    ("type", "must be empty to be structural"),
    ("additionalProperties", "must be undefined to be structural"),
    ("default", "must be undefined to be structural"),
    ("title", "must be empty to be structural"),
    ("description", "must be empty to be structural"),
    ("nullable", "must be false to be structural"),
    ("externalDocs", "must be undefined to be structural"),
    ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
    ("x-kubernetes-embedded-resource", "must be false to be structural"),
    ("x-kubernetes-int-or-string", "must be false to be structural"),
    ("x-kubernetes-list-map-keys", "must be empty to be structural"),
    ("x-kubernetes-list-type", "must be undefined to be structural"),
    ("x-kubernetes-map-type", "must be undefined to be structural"),
    ("x-kubernetes-validations", "must be empty to be structural"),
)


def _props(s: Schema) -> dict[str, Schema]:
    p = s.get("properties")
    return p if isinstance(p, dict) else {}


def _set(s: Schema, k: str) -> bool:
    """Whether a key holds a non-zero value (Go's zero values count as unset)."""
    v = s.get(k)
    return v is not None and v is not False and v != "" and v != [] and v != {}


def _is_int_or_string_any_of(s: Schema) -> bool:
    return s.get("anyOf") == _INT_OR_STRING_ANY_OF


def _is_int_or_string_all_of(s: Schema) -> bool:
    all_of = s.get("allOf") or []
    return bool(all_of) and isinstance(all_of[0], dict) and _is_int_or_string_any_of(all_of[0])


def _value_validation(
    s: Schema, skip_any_of: bool, skip_first_all_of_any_of: bool, path: str
) -> list[Cause]:
    errs: list[Cause] = []
    if not skip_any_of:
        for i, sub in enumerate(s.get("anyOf") or []):
            errs += _nested(sub, False, fe.index(fe.child(path, "anyOf"), i))
    for i, sub in enumerate(s.get("allOf") or []):
        skip = skip_first_all_of_any_of and i == 0
        errs += _nested(sub, skip, fe.index(fe.child(path, "allOf"), i))
    for i, sub in enumerate(s.get("oneOf") or []):
        errs += _nested(sub, False, fe.index(fe.child(path, "oneOf"), i))
    if isinstance(s.get("not"), dict):
        errs += _nested(s["not"], False, fe.child(path, "not"))
    pattern = s.get("pattern")
    if isinstance(pattern, str) and pattern:
        try:
            compile_go_regex(pattern)
        except GoRegexError as e:
            errs.append(
                fe.invalid(
                    fe.child(path, "pattern"),
                    pattern,
                    f"must be a valid regular expression, but isn't: {e}",
                )
            )
    return errs


def _nested(v: Schema, skip_any_of: bool, path: str) -> list[Cause]:
    """A schema inside allOf/anyOf/oneOf/not: value validations only."""
    errs = _value_validation(v, skip_any_of, False, path)
    if isinstance(v.get("items"), dict):
        errs += _nested(v["items"], False, fe.child(path, "items"))
    for k, sub in _props(v).items():
        errs += _nested(sub, False, fe.key(fe.child(path, "properties"), k))
    for k, detail in _NESTED_FORBIDDEN:
        present = v.get(k) is not None if k in ("default", "additionalProperties") else _set(v, k)
        if present:
            errs.append(fe.forbidden(fe.child(path, k), detail))
    if "metadata" in _props(v):
        errs.append(
            fe.forbidden(
                fe.key(fe.child(path, "properties"), "metadata"),
                "must not be specified in a nested context",
            )
        )
    return errs


def _metadata_invariants(m: Schema, check: bool, lvl: str, path: str) -> list[Cause]:
    errs: list[Cause] = []
    if check and m.get("type") != "object":
        errs.append(fe.invalid(fe.child(path, "type"), m.get("type", ""), "must be object"))
    if lvl == _ROOT:
        # `example` is not part of a structural schema; type and default are cleared first.
        rest = {k: v for k, v in m.items() if k not in ("type", "default", "example")}
        props = _props(m)
        if props and set(props) <= {"name", "generateName"}:
            rest.pop("properties", None)
        if any(_set(rest, k) for k in rest):
            errs.append(
                fe.forbidden(
                    path,
                    "must not specify anything other than name and generateName, but metadata "
                    "is implicitly specified",
                )
            )
    return errs


def _invariants(s: Schema, lvl: str, path: str) -> list[Cause]:
    errs: list[Cause] = []
    t = s.get("type", "") or ""
    items = s.get("items")
    embedded = bool(s.get("x-kubernetes-embedded-resource"))
    int_or_string = bool(s.get("x-kubernetes-int-or-string"))
    preserve = bool(s.get("x-kubernetes-preserve-unknown-fields"))
    if t == "array" and items is None:
        errs.append(fe.required(fe.child(path, "items"), "must be specified"))
    if isinstance(items, dict):
        errs += _invariants(items, _ITEM, fe.child(path, "items"))
    props = _props(s)
    for k, sub in props.items():
        errs += _invariants(sub, _FIELD, fe.key(fe.child(path, "properties"), k))
    additional = s.get("additionalProperties")
    if additional is not None:
        if lvl == _ROOT:
            errs.append(
                fe.forbidden(fe.child(path, "additionalProperties"), "must not be used at the root")
            )
        if isinstance(additional, dict):
            errs += _invariants(additional, _FIELD, fe.child(path, "additionalProperties"))
    if int_or_string and preserve:
        errs.append(
            fe.invalid(
                fe.child(path, "x-kubernetes-preserve-unknown-fields"),
                True,
                "must be false if x-kubernetes-int-or-string is true",
            )
        )
    if int_or_string and embedded:
        errs.append(
            fe.invalid(
                fe.child(path, "x-kubernetes-embedded-resource"),
                True,
                "must be false if x-kubernetes-int-or-string is true",
            )
        )
    errs += _value_validation(s, _is_int_or_string_any_of(s), _is_int_or_string_all_of(s), path)
    check_metadata = lvl == _ROOT or embedded
    tpath = fe.child(path, "type")
    if embedded and t != "object":
        detail = "must be object if x-kubernetes-embedded-resource is true"
        errs.append(fe.required(tpath, detail) if not t else fe.invalid(tpath, t, detail))
    elif not t and not int_or_string and not preserve:
        detail = {
            _ROOT: "must not be empty at the root",
            _ITEM: "must not be empty for specified array items",
            _FIELD: "must not be empty for specified object fields",
        }[lvl]
        errs.append(fe.required(tpath, detail))
    if embedded and additional is not None:
        errs.append(
            fe.forbidden(
                fe.child(path, "additionalProperties"),
                "must not be used if x-kubernetes-embedded-resource is set",
            )
        )
    if lvl == _ROOT and t and t != "object":
        errs.append(fe.invalid(tpath, t, "must be object at the root"))
    for k in ("kind", "apiVersion"):
        if k in props and check_metadata and props[k].get("type") != "string":
            errs.append(
                fe.invalid(
                    fe.child(fe.key(fe.child(path, "properties"), k), "type"),
                    props[k].get("type", ""),
                    "must be string",
                )
            )
    if "metadata" in props:
        errs += _metadata_invariants(
            props["metadata"], check_metadata, lvl, fe.key(fe.child(path, "properties"), "metadata")
        )
    if embedded and not preserve and not props:
        errs.append(
            fe.required(
                fe.child(path, "properties"),
                "must not be empty if x-kubernetes-embedded-resource is true without "
                "x-kubernetes-preserve-unknown-fields",
            )
        )
    return errs


def _completeness(v: Schema, s: Schema | None, s_path: str, v_path: str) -> list[Cause]:
    """Every field or array in a value validation must also be specified structurally."""
    if s is None:
        return [fe.required(s_path, f"because it is defined in {v_path}")]
    errs: list[Cause] = []
    if isinstance(v.get("not"), dict):
        errs += _nested_completeness(v["not"], s, s_path, fe.child(v_path, "not"))
    for combinator in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(v.get(combinator) or []):
            errs += _nested_completeness(sub, s, s_path, fe.index(fe.child(v_path, combinator), i))
    return errs


def _nested_completeness(v: Schema, s: Schema | None, s_path: str, v_path: str) -> list[Cause]:
    if s is None:
        return [fe.required(s_path, f"because it is defined in {v_path}")]
    errs = _completeness(v, s, s_path, v_path)
    if isinstance(v.get("items"), dict):
        s_items = s.get("items")
        errs += _nested_completeness(
            v["items"],
            s_items if isinstance(s_items, dict) else None,
            fe.child(s_path, "items"),
            fe.child(v_path, "items"),
        )
    s_props = _props(s)
    for k, sub in _props(v).items():
        sp = fe.key(fe.child(s_path, "properties"), k)
        vp = fe.key(fe.child(v_path, "properties"), k)
        if k not in s_props:
            errs.append(fe.required(sp, f"because it is defined in {vp}"))
        else:
            errs += _nested_completeness(sub, s_props[k], sp, vp)
    return errs


def structural_rule_errors(schema: Schema, path: str) -> list[Cause]:
    """ValidateStructural: invariants and completeness, sorted like kube-apiserver sorts them."""
    # Completeness is checked from the root's value validations only, as kube-apiserver does.
    errs = _invariants(schema, _ROOT, path) + _completeness(schema, schema, path, path)
    return sorted(errs, key=lambda c: f"{c.field}: {c.message}")


# --- defaults --------------------------------------------------------------------------------


def _pruned_copy(value: Any, s: Schema, embedded: bool) -> Any:
    pruned = copy.deepcopy(value)
    if isinstance(pruned, dict):
        wrapped = s if not embedded else {**s, "x-kubernetes-embedded-resource": True}
        if embedded:
            prune(pruned, wrapped)
        else:
            prune({"_": pruned}, {"properties": {"_": s}})
    elif isinstance(pruned, list):
        prune({"_": pruned}, {"properties": {"_": s}})
    return pruned


def _default_errors(s: Schema, path: str, inside_meta: bool) -> list[Cause]:
    default = s.get("default")
    dpath = fe.child(path, "default")
    embedded = bool(s.get("x-kubernetes-embedded-resource"))
    if inside_meta:
        return openapi_errors(default, s, dpath)
    if not strict_equal(_pruned_copy(default, s, embedded), default):
        return [fe.invalid(dpath, default, "must not have unknown fields")]
    if embedded and isinstance(default, dict):
        for k in ("apiVersion", "kind"):
            if k in default and not isinstance(default[k], str):
                return [fe.invalid(fe.child(dpath, k), default[k], "must be a string")]
    meta_errs = embedded_errors_at(default, s, dpath)
    if meta_errs:
        return meta_errs
    return openapi_errors(default, s, dpath)


def default_errors(
    s: Schema, path: str, inside_meta: bool = False, root: bool = True
) -> list[Cause]:
    """ValidateDefaults: every default validates and is pruned (additionalProperties skipped)."""
    embedded = root or bool(s.get("x-kubernetes-embedded-resource"))
    if embedded:
        inside_meta = False
    node = {**s, "x-kubernetes-embedded-resource": True} if root else s
    errs: list[Cause] = []
    if s.get("default") is not None:
        errs += _default_errors(node, path, inside_meta)
    if isinstance(s.get("items"), dict):
        errs += default_errors(s["items"], fe.child(path, "items"), inside_meta, False)
    for k, sub in _props(s).items():
        sub_meta = inside_meta or (embedded and k in _META_FIELDS)
        errs += default_errors(sub, fe.key(fe.child(path, "properties"), k), sub_meta, False)
    return errs
