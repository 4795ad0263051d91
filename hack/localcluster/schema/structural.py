"""The checks a CRD's openAPIV3Schema gets on create and update (apiextensions.k8s.io/v1).

Three layers, in the order kube-apiserver runs them:

1. the OpenAPI checks of `ValidateCustomResourceDefinitionOpenAPISchema`: unsupported keywords,
   `uniqueItems`, properties vs additionalProperties, list/map type extensions, defaults in
   top-level metadata, list-map keys;
2. the structural schema rules (`ValidateStructural`): types everywhere, nothing but value
   validations inside allOf/anyOf/oneOf/not, completeness of those, root and metadata
   restrictions, embedded resources. These errors are sorted, as the real server sorts them;
3. only if the schema is structural: defaults must validate against their schema and be pruned.

CEL rules are not compiled: only the presence and line-break checks of x-kubernetes-validations
are made.
"""

from __future__ import annotations

from typing import Any

from ..errors import Cause
from . import fielderr as fe
from .structural_rules import default_errors, structural_rule_errors

Schema = dict[str, Any]

_OPENAPI_TYPES = ["array", "boolean", "integer", "number", "object", "string"]
_META_FIELDS = ("metadata", "kind", "apiVersion")


def _props(s: Schema) -> dict[str, Schema]:
    p = s.get("properties")
    return p if isinstance(p, dict) else {}


# --- 1. OpenAPI checks -----------------------------------------------------------------------


class _Ssv:
    """specStandardValidatorV3: where defaults are allowed and whether we are inside meta."""

    def __init__(self, defaults_reason: str | None = None, inside_meta: bool = False) -> None:
        self.defaults_reason = defaults_reason
        self.inside_meta = inside_meta

    def forbid_defaults(self, reason: str) -> _Ssv:
        return _Ssv(reason, self.inside_meta)

    def in_meta(self) -> _Ssv:
        return _Ssv(self.defaults_reason, True)

    def check(self, s: Schema, path: str) -> list[Cause]:
        errs: list[Cause] = []
        t = s.get("type", "")
        if t and t not in _OPENAPI_TYPES:
            errs.append(fe.not_supported(fe.child(path, "type"), t, _OPENAPI_TYPES))
        if s.get("default") is not None and self.defaults_reason is not None:
            detail = "must not be set" + (
                f" {self.defaults_reason}" if self.defaults_reason else ""
            )
            errs.append(fe.forbidden(fe.child(path, "default"), detail))
        for k, name in (
            ("id", "id"),
            ("additionalItems", "additionalItems"),
            ("patternProperties", "patternProperties"),
            ("definitions", "definitions"),
            ("dependencies", "dependencies"),
            ("$ref", "$ref"),
        ):
            if s.get(k):
                errs.append(fe.forbidden(fe.child(path, k), f"{name} is not supported"))
        if t == "null":
            errs.append(
                fe.forbidden(
                    fe.child(path, "type"),
                    "type cannot be set to null, use nullable as an alternative",
                )
            )
        if isinstance(s.get("items"), list):
            errs.append(
                fe.forbidden(
                    fe.child(path, "items"), "items must be a schema object and not an array"
                )
            )
        if self.inside_meta and s.get("x-kubernetes-embedded-resource"):
            errs.append(
                fe.forbidden(
                    fe.child(path, "x-kubernetes-embedded-resource"),
                    "must not be used inside of resource meta",
                )
            )
        return errs


def _openapi(s: Schema, path: str, ssv: _Ssv, is_root: bool) -> list[Cause]:
    errs = ssv.check(s, path)
    if s.get("uniqueItems") is True:
        errs.append(
            fe.forbidden(
                fe.child(path, "uniqueItems"),
                "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            )
        )
    props = _props(s)
    additional = s.get("additionalProperties")
    if additional is not None:
        if props and (additional is False or isinstance(additional, dict)):
            errs.append(
                fe.forbidden(
                    fe.child(path, "additionalProperties"),
                    "additionalProperties and properties are mutual exclusive",
                )
            )
        if isinstance(additional, dict):
            sub = ssv
            if ssv.inside_meta:
                sub = ssv.forbid_defaults("inside additionalProperties applying to object metadata")
            errs += _openapi(additional, fe.child(path, "additionalProperties"), sub, False)
    for name, prop in props.items():
        sub = ssv
        if (is_root or s.get("x-kubernetes-embedded-resource")) and name in _META_FIELDS:
            sub = sub.in_meta()
            if is_root:
                sub = sub.forbid_defaults(f"in top-level {name}")
        errs += _openapi(prop, fe.key(fe.child(path, "properties"), name), sub, False)
    if isinstance(s.get("not"), dict):
        errs += _openapi(s["not"], fe.child(path, "not"), ssv, False)
    for combinator in ("allOf", "oneOf", "anyOf"):
        for i, sub_schema in enumerate(s.get(combinator) or []):
            errs += _openapi(sub_schema, fe.index(fe.child(path, combinator), i), ssv, False)
    items = s.get("items")
    if isinstance(items, dict):
        errs += _openapi(items, fe.child(path, "items"), ssv, False)
    elif isinstance(items, list):
        for i, item in enumerate(items):
            errs += _openapi(item, fe.index(fe.child(path, "items"), i), ssv, False)
    errs += _extension_checks(s, path)
    errs += _validation_rule_checks(s, path)
    errs += _map_list_keys_checks(s, path)
    return errs


def _type_must_be(s: Schema, path: str, want: str, because: str) -> list[Cause]:
    t = s.get("type", "")
    if t == want:
        return []
    detail = f"must be {want} if {because}"
    if not t:
        return [fe.required(fe.child(path, "type"), detail)]
    return [fe.invalid(fe.child(path, "type"), t, detail)]


def _extension_checks(s: Schema, path: str) -> list[Cause]:
    errs: list[Cause] = []
    if s.get("x-kubernetes-preserve-unknown-fields") is False:
        errs.append(
            fe.invalid(
                fe.child(path, "x-kubernetes-preserve-unknown-fields"),
                False,
                "must be true or undefined",
            )
        )
    map_type = s.get("x-kubernetes-map-type")
    if map_type is not None:
        errs += _type_must_be(s, path, "object", "x-kubernetes-map-type is specified")
        if map_type not in ("atomic", "granular"):
            errs.append(
                fe.not_supported(
                    fe.child(path, "x-kubernetes-map-type"), map_type, ["atomic", "granular"]
                )
            )
    list_type = s.get("x-kubernetes-list-type")
    items = s.get("items")
    if list_type is not None and s.get("type") != "array":
        errs += _type_must_be(s, path, "array", "x-kubernetes-list-type is specified")
    elif list_type == "set" and isinstance(items, dict):
        msg = "must be atomic as item of a list with x-kubernetes-list-type=set"
        item_list_type = items.get("x-kubernetes-list-type")
        if items.get("type") == "array" and item_list_type not in (None, "atomic"):
            errs.append(
                fe.invalid(
                    fe.child(fe.child(path, "items"), "x-kubernetes-list-type"), item_list_type, msg
                )
            )
        elif items.get("type") == "object" and items.get("x-kubernetes-map-type") != "atomic":
            # kube-apiserver reports the items' list type here, not their map type.
            errs.append(
                fe.invalid(
                    fe.child(fe.child(path, "items"), "x-kubernetes-map-type"), item_list_type, msg
                )
            )
    if list_type is not None and list_type not in ("atomic", "set", "map"):
        errs.append(
            fe.not_supported(
                fe.child(path, "x-kubernetes-list-type"), list_type, ["atomic", "set", "map"]
            )
        )
    keys = s.get("x-kubernetes-list-map-keys") or []
    lt_path = fe.child(path, "x-kubernetes-list-type")
    keys_path = fe.child(path, "x-kubernetes-list-map-keys")
    if keys:
        detail = "must be map if x-kubernetes-list-map-keys is non-empty"
        if list_type is None:
            errs.append(fe.required(lt_path, detail))
        elif list_type != "map":
            errs.append(fe.invalid(lt_path, list_type, detail))
    if list_type == "map":
        items_path = fe.child(path, "items")
        if not keys:
            errs.append(
                fe.required(keys_path, "must not be empty if x-kubernetes-list-type is map")
            )
        if items is None:
            errs.append(
                fe.required(items_path, "must have a schema if x-kubernetes-list-type is map")
            )
        elif isinstance(items, list):
            errs.append(
                fe.invalid(
                    items_path,
                    items,
                    "must only have a single schema if x-kubernetes-list-type is map",
                )
            )
        elif items.get("type") != "object":
            errs.append(
                fe.invalid(
                    fe.child(items_path, "type"),
                    items.get("type", ""),
                    "must be object if parent array's x-kubernetes-list-type is map",
                )
            )
        else:
            seen: set[str] = set()
            item_props = _props(items)
            for k in keys:
                if k in item_props:
                    if item_props[k].get("type") in ("array", "object"):
                        errs.append(
                            fe.invalid(
                                fe.child(fe.key(fe.child(items_path, "properties"), k), "type"),
                                items.get("type", ""),
                                "must be a scalar type if parent array's "
                                "x-kubernetes-list-type is map",
                            )
                        )
                else:
                    errs.append(
                        fe.invalid(keys_path, keys, "entries must all be names of item properties")
                    )
                if k in seen:
                    errs.append(fe.invalid(keys_path, keys, "must not contain duplicate entries"))
                seen.add(k)
    return errs


def _validation_rule_checks(s: Schema, path: str) -> list[Cause]:
    errs: list[Cause] = []
    for i, rule in enumerate(s.get("x-kubernetes-validations") or []):
        rpath = fe.index(fe.child(path, "x-kubernetes-validations"), i)
        text = str(rule.get("rule", "")) if isinstance(rule, dict) else ""
        message = str(rule.get("message", "")) if isinstance(rule, dict) else ""
        trimmed_rule, trimmed_msg = text.strip(), message.strip()
        if not trimmed_rule:
            errs.append(fe.required(fe.child(rpath, "rule"), "rule is not specified"))
        elif message and not trimmed_msg:
            errs.append(
                fe.invalid(
                    fe.child(rpath, "message"), message, "message must be non-empty if specified"
                )
            )
        elif "\n" in trimmed_msg or "\r" in trimmed_msg:
            errs.append(
                fe.invalid(
                    fe.child(rpath, "message"), message, "message must not contain line breaks"
                )
            )
        elif ("\n" in trimmed_rule or "\r" in trimmed_rule) and not trimmed_msg:
            errs.append(
                fe.required(
                    fe.child(rpath, "message"),
                    "message must be specified if rule contains line breaks",
                )
            )
    return errs


def _map_list_keys_checks(s: Schema, path: str) -> list[Cause]:
    items = s.get("items")
    list_type = s.get("x-kubernetes-list-type")
    if not isinstance(items, dict) or list_type not in ("set", "map"):
        return []
    errs: list[Cause] = []
    items_path = fe.child(path, "items")
    if items.get("nullable"):
        errs.append(
            fe.forbidden(
                fe.child(items_path, "nullable"),
                f"cannot be nullable when x-kubernetes-list-type is {list_type}",
            )
        )
    if list_type == "map":
        required = set(items.get("required") or [])
        item_props = _props(items)
        for k in s.get("x-kubernetes-list-map-keys") or []:
            prop = item_props.get(k)
            if prop is None:
                continue
            ppath = fe.key(fe.child(items_path, "properties"), k)
            if k not in required and prop.get("default") is None:
                errs.append(
                    fe.required(
                        fe.child(ppath, "default"),
                        "this property is in x-kubernetes-list-map-keys, so it must have a "
                        "default or be a required property",
                    )
                )
            if prop.get("nullable"):
                errs.append(
                    fe.forbidden(
                        fe.child(ppath, "nullable"),
                        "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                    )
                )
    return errs


# --- conversion to a structural schema ------------------------------------------------------

_UNSUPPORTED = (
    ("id", "id"),
    ("$schema", "schema"),
    ("$ref", "$ref"),
    ("patternProperties", "patternProperties"),
    ("dependencies", "dependencies"),
    ("additionalItems", "additionalItems"),
    ("definitions", "definitions"),
)


def _not_convertible(s: Schema) -> str | None:
    """Why NewStructural rejects this schema (keywords a structural schema cannot hold)."""
    for k, name in _UNSUPPORTED:
        if s.get(k):
            return f"OpenAPIV3Schema '{name}' is not supported"
    subs: list[Any] = [s.get("not"), *(s.get("allOf") or []), *(s.get("anyOf") or [])]
    subs += [*(s.get("oneOf") or []), s.get("additionalProperties")]
    for sub in subs:
        if isinstance(sub, dict) and (err := _not_convertible(sub)) is not None:
            return err
    if s.get("x-kubernetes-preserve-unknown-fields") is False:
        return "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined"
    items = s.get("items")
    if isinstance(items, list):
        return "OpenAPIV3Schema 'items' must be a schema, but is an array"
    for sub in [items, *_props(s).values()]:
        if isinstance(sub, dict) and (err := _not_convertible(sub)) is not None:
            return err
    return None


# --- entry point -----------------------------------------------------------------------------


def structural_errors(
    schema: Schema, path: str = "spec.versions[0].schema.openAPIV3Schema"
) -> list[Cause]:
    """The errors kube-apiserver gives for this openAPIV3Schema on CRD create/update (422).

    `path` is where the schema sits in the CRD; error fields hang off it, e.g.
    `spec.versions[0].schema.openAPIV3Schema.properties[spec].type`.
    """
    errs: list[Cause] = []
    if schema.get("nullable"):
        errs.append(fe.forbidden(fe.child(path, "nullable"), "nullable cannot be true at the root"))
    errs += _openapi(schema, path, _Ssv(), True)
    conversion = _not_convertible(schema)
    if conversion is not None:
        # The schema cannot even become a structural one; kube-apiserver only says so when
        # nothing else explains why.
        return errs or [fe.invalid(path, "", conversion)]
    structural = structural_rule_errors(schema, path)
    if structural:
        return errs + structural
    return errs + default_errors(schema, path)
