"""CRD openAPIV3Schema handling: validation, pruning, defaulting, structural checks.

Expected messages are kube-apiserver's (kube-openapi validators converted to field errors,
apimachinery `field.Error` formatting of 1.33+).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from hack.localcluster import schema as S
from hack.localcluster.errors import Cause
from hack.localcluster.schema import fielderr as fe

Json = dict[str, Any]


def lines(causes: list[Cause]) -> list[str]:
    return [f"{c.field}: {c.message}" for c in causes]


def spec_schema(**props: Json) -> Json:
    """A root schema whose `spec` has the given properties."""
    return {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": props}},
    }


def check(props: Json, spec: Any) -> list[str]:
    return lines(S.validate({"spec": spec}, spec_schema(**props)))


# --- Go formatting ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "want"),
    [
        (0.0, "0"),
        (1.0, "1"),
        (1.5, "1.5"),
        (-0.25, "-0.25"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (123456.0, "123456"),
        (1234567.0, "1.234567e+06"),
        (1e21, "1e+21"),
    ],
)
def test_go_float(value: float, want: str) -> None:
    assert fe.go_float(value) == want


def test_go_json_and_quote() -> None:
    assert fe.go_json({"b": 1, "a": [1.0, "x", None, True]}) == '{"a":[1,"x",null,true],"b":1}'
    assert fe.go_json(1e21) == "1e+21"
    assert fe.go_json(1e-7) == "1e-7"
    assert fe.go_json("<&>") == '"\\u003c\\u0026\\u003e"'
    assert fe.go_quote('a"b\n\x01é') == '"a\\"b\\n\\x01é"'


def test_bad_value_rendering() -> None:
    assert fe.invalid("f", None, "d").message == "Invalid value: null: d"
    assert fe.invalid("f", {"b": 2, "a": 1}, "d").message == 'Invalid value: {"a":1,"b":2}: d'
    assert fe.invalid("f", ["x"], "d").message == 'Invalid value: ["x"]: d'
    assert fe.too_long("f", 1).message == "Too long: may not be more than 1 byte"
    assert fe.too_many("f", 2, 1).message == "Too many: 2: must have at most 1 item"


# --- types -----------------------------------------------------------------------------------


def test_type_mismatch() -> None:
    assert check({"replicas": {"type": "integer"}}, {"replicas": "string"}) == [
        'spec.replicas: Invalid value: "string": spec.replicas in body must be of type '
        'integer: "string"'
    ]
    causes = S.validate({"spec": {"replicas": "x"}}, spec_schema(replicas={"type": "integer"}))
    assert causes[0].reason == "FieldValueTypeInvalid"


@pytest.mark.parametrize(
    ("schema_type", "value", "got"),
    [
        ("integer", 1.5, "number"),
        ("integer", True, "boolean"),
        ("string", 5, "integer"),
        ("boolean", "true", "string"),
        ("array", {}, "object"),
        ("object", [], "array"),
    ],
)
def test_type_names(schema_type: str, value: Any, got: str) -> None:
    assert check({"f": {"type": schema_type}}, {"f": value}) == [
        f'spec.f: Invalid value: "{got}": spec.f in body must be of type {schema_type}: "{got}"'
    ]


def test_integral_float_is_an_integer_and_int_is_a_number() -> None:
    assert check({"f": {"type": "integer"}}, {"f": 3.0}) == []
    assert check({"f": {"type": "number"}}, {"f": 3}) == []


def test_null_needs_nullable() -> None:
    assert check({"f": {"type": "string"}}, {"f": None}) == [
        'spec.f: Invalid value: "null": spec.f in body must be of type string: "null"'
    ]
    assert check({"f": {"type": "string", "nullable": True}}, {"f": None}) == []


def test_null_with_enum_fails_even_if_nullable() -> None:
    # kube-openapi checks enum on null values too and null never matches.
    assert check({"f": {"type": "string", "nullable": True, "enum": ["a"]}}, {"f": None}) == [
        'spec.f: Unsupported value: null: supported values: "a"'
    ]


def test_integer_format_mismatch_names_the_go_format() -> None:
    assert check({"f": {"type": "integer", "format": "int32"}}, {"f": 1.5}) == [
        'spec.f: Invalid value: "float64": spec.f in body must be of type int32: "float64"'
    ]


def test_int_or_string() -> None:
    port = {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert check({"port": port}, {"port": 80}) == []
    assert check({"port": port}, {"port": "http"}) == []
    assert check({"port": port}, {"port": True}) == [
        'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: '
        '"boolean"',
        '<nil>: Invalid value: "": "spec.port" must validate at least one schema (anyOf)',
        'spec.port: Invalid value: "boolean": spec.port in body must be of type integer: "boolean"',
    ]


# --- enum, required --------------------------------------------------------------------------


def test_enum() -> None:
    assert check({"t": {"type": "string", "enum": ["a", "b"]}}, {"t": "foo"}) == [
        'spec.t: Unsupported value: "foo": supported values: "a", "b"'
    ]
    causes = S.validate({"spec": {"t": "x"}}, spec_schema(t={"type": "string", "enum": ["a"]}))
    assert causes[0].reason == "FieldValueNotSupported"


def test_enum_of_numbers_lists_json() -> None:
    assert check({"n": {"type": "integer", "enum": [1, 2.5]}}, {"n": 3}) == [
        'spec.n: Unsupported value: 3: supported values: "1", "2.5"'
    ]
    assert check({"n": {"type": "number", "enum": [1.0]}}, {"n": 1}) == []


def test_required() -> None:
    schema = {
        "type": "object",
        "required": ["spec"],
        "properties": {"spec": {"type": "object", "required": ["a", "b"], "properties": {"a": {}}}},
    }
    assert lines(S.validate({}, schema)) == ["spec: Required value"]
    assert lines(S.validate({"spec": {"a": None}}, schema)) == ["spec.b: Required value"]
    assert S.validate({"spec": {}}, schema)[0].reason == "FieldValueRequired"


# --- numbers ---------------------------------------------------------------------------------


def test_minimum_and_maximum() -> None:
    replicas = {"type": "integer", "minimum": 0, "maximum": 10}
    assert check({"replicas": replicas}, {"replicas": -1}) == [
        "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or "
        "equal to 0"
    ]
    assert check({"replicas": replicas}, {"replicas": 11}) == [
        "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"
    ]
    assert check({"replicas": replicas}, {"replicas": 10}) == []


def test_exclusive_bounds() -> None:
    ratio = {
        "type": "number",
        "minimum": 0.5,
        "exclusiveMinimum": True,
        "maximum": 2,
        "exclusiveMaximum": True,
    }
    assert check({"r": ratio}, {"r": 0.5}) == [
        "spec.r: Invalid value: 0.5: spec.r in body should be greater than 0.5"
    ]
    assert check({"r": ratio}, {"r": 2.0}) == [
        "spec.r: Invalid value: 2: spec.r in body should be less than 2"
    ]


def test_integer_data_is_compared_with_a_truncated_bound() -> None:
    # kube-openapi converts the bound to int64 for integer data.
    assert check({"n": {"type": "integer", "minimum": 0.5}}, {"n": 0}) == []


def test_multiple_of() -> None:
    assert check({"n": {"type": "integer", "multipleOf": 5}}, {"n": 12}) == [
        "spec.n: Invalid value: 12: spec.n in body should be a multiple of 5"
    ]
    assert check({"n": {"type": "number", "multipleOf": 0.5}}, {"n": 1.25}) == [
        "spec.n: Invalid value: 1.25: spec.n in body should be a multiple of 0.5"
    ]
    assert check({"n": {"type": "number", "multipleOf": 0.1}}, {"n": 0.3}) == []


def test_number_checks_all_report() -> None:
    n = {"type": "integer", "multipleOf": 2, "maximum": 10}
    assert check({"n": n}, {"n": 11}) == [
        "spec.n: Invalid value: 11: spec.n in body should be a multiple of 2",
        "spec.n: Invalid value: 11: spec.n in body should be less than or equal to 10",
    ]


# --- strings ---------------------------------------------------------------------------------


def test_string_lengths() -> None:
    name = {"type": "string", "minLength": 2, "maxLength": 3}
    assert check({"name": name}, {"name": "abcd"}) == [
        "spec.name: Too long: may not be more than 3 bytes"
    ]
    assert check({"name": name}, {"name": "a"}) == [
        'spec.name: Invalid value: "a": spec.name in body should be at least 2 chars long'
    ]
    # lengths count characters, not bytes
    assert check({"name": name}, {"name": "ééé"}) == []
    causes = S.validate({"spec": {"name": "abcd"}}, spec_schema(name=name))
    assert causes[0].reason == "FieldValueTooLong"


def test_pattern() -> None:
    name = {"type": "string", "pattern": "^[a-z]+$"}
    assert check({"name": name}, {"name": "ABC"}) == [
        "spec.name: Invalid value: \"ABC\": spec.name in body should match '^[a-z]+$'"
    ]
    # Go's `$` does not match before a trailing newline, and \d is ASCII only.
    assert check({"name": name}, {"name": "abc\n"}) != []
    assert check({"d": {"type": "string", "pattern": "^\\d+$"}}, {"d": "١٢"}) != []
    # the pattern is searched, not anchored
    assert check({"name": {"type": "string", "pattern": "b"}}, {"name": "abc"}) == []


def test_string_checks_stop_at_the_first_failure() -> None:
    name = {"type": "string", "maxLength": 2, "pattern": "^[0-9]+$"}
    assert check({"name": name}, {"name": "abc"}) == [
        "spec.name: Too long: may not be more than 2 bytes"
    ]


@pytest.mark.parametrize(
    ("fmt", "good", "bad"),
    [
        ("date-time", "2024-01-02T03:04:05Z", "2024-01-02 03:04"),
        ("date", "2024-02-29", "2023-02-29"),
        ("uuid", "123e4567-e89b-12d3-a456-426614174000", "nope"),
        ("ipv4", "10.0.0.1", "10.0.0.256"),
        ("ipv6", "::1", "10.0.0.1"),
        ("cidr", "10.0.0.0/8", "10.0.0.0"),
        ("byte", "aGVsbG8=", "not base64!"),
        ("hostname", "example.com", "-bad-.com"),
        ("email", "a@example.com", "nope"),
        ("uri", "https://example.com/x", "example.com"),
        ("duration", "1h30m", "soon"),
        ("quantity", "100Mi", "lots"),
    ],
)
def test_formats(fmt: str, good: str, bad: str) -> None:
    props = {"f": {"type": "string", "format": fmt}}
    assert check(props, {"f": good}) == []
    assert check(props, {"f": bad}) == [
        f'spec.f: Invalid value: "{bad}": spec.f in body must be of type {fmt}: "{bad}"'
    ]


def test_unsupported_formats_are_ignored() -> None:
    assert check({"f": {"type": "string", "format": "my-format"}}, {"f": "x"}) == []
    assert check({"f": {"type": "string", "format": "int32"}}, {"f": "x"}) == []


# --- arrays ----------------------------------------------------------------------------------


def test_items_and_item_counts() -> None:
    tags = {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string"}}
    assert check({"tags": tags}, {"tags": ["a", 1]}) == [
        'spec.tags[1]: Invalid value: "integer": spec.tags[1] in body must be of type string: '
        '"integer"'
    ]
    assert check({"tags": tags}, {"tags": []}) == [
        "spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items"
    ]
    assert check({"tags": tags}, {"tags": ["a", "b", "c"]}) == [
        "spec.tags: Too many: 3: must have at most 2 items"
    ]
    one = {"type": "array", "maxItems": 1, "items": {"type": "string"}}
    assert check({"one": one}, {"one": ["a", "b"]}) == [
        "spec.one: Too many: 2: must have at most 1 item"
    ]
    causes = S.validate({"spec": {"tags": ["a", "b", "c"]}}, spec_schema(tags=tags))
    assert causes[0].reason == "FieldValueTooMany"


def test_unique_items() -> None:
    u = {"type": "array", "uniqueItems": True, "items": {"type": "integer"}}
    assert check({"u": u}, {"u": [1, 2, 1]}) == [
        'spec.u: Invalid value: "": spec.u in body shouldn\'t contain duplicates'
    ]
    assert check({"u": {"type": "array", "uniqueItems": True}}, {"u": [1, 1.0]}) == []


# --- objects ---------------------------------------------------------------------------------


def test_property_counts() -> None:
    labels = {
        "type": "object",
        "minProperties": 1,
        "maxProperties": 2,
        "additionalProperties": {"type": "string"},
    }
    assert check({"labels": labels}, {"labels": {}}) == [
        "spec.labels: Invalid value: 0: spec.labels in body should have at least 1 properties"
    ]
    assert check({"labels": labels}, {"labels": {"a": "1", "b": "2", "c": 3}}) == [
        "spec.labels: Too many: 3: must have at most 2 items"
    ]


def test_additional_properties_schema_paths_use_dots() -> None:
    services = {
        "type": "object",
        "additionalProperties": {
            "type": "object",
            "properties": {"replicas": {"type": "integer", "minimum": 0}},
        },
    }
    assert check({"services": services}, {"services": {"frontend": {"replicas": -1}}}) == [
        "spec.services.frontend.replicas: Invalid value: -1: spec.services.frontend.replicas in "
        "body should be greater than or equal to 0"
    ]


def test_additional_properties_false() -> None:
    assert check({"o": {"type": "object", "additionalProperties": False}}, {"o": {"x": 1}}) == [
        'spec.o: Invalid value: "x": spec.o.x in body is a forbidden property'
    ]


def test_preserve_unknown_fields_still_validates_known_fields() -> None:
    raw = {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "properties": {"n": {"type": "integer"}},
    }
    assert check({"raw": raw}, {"raw": {"n": 1, "anything": {"x": [1]}}}) == []
    assert check({"raw": raw}, {"raw": {"n": "x"}}) == [
        'spec.raw.n: Invalid value: "string": spec.raw.n in body must be of type integer: "string"'
    ]


def test_root_metadata_is_only_checked_by_the_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "metadata": {
                "type": "object",
                "properties": {"name": {"type": "string", "maxLength": 5}},
            }
        },
    }
    obj = {"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "toolong", "labels": {"a": "b"}}}
    assert lines(S.validate(obj, schema)) == [
        "metadata.name: Too long: may not be more than 5 bytes"
    ]


# --- combinators -----------------------------------------------------------------------------


def test_all_of() -> None:
    f = {"type": "string", "allOf": [{"minLength": 2}, {"pattern": "^a"}]}
    assert check({"f": f}, {"f": "b"}) == [
        'spec.f: Invalid value: "b": spec.f in body should be at least 2 chars long',
        "spec.f: Invalid value: \"b\": spec.f in body should match '^a'",
        '<nil>: Invalid value: "": "spec.f" must validate all the schemas (allOf). None validated',
    ]
    assert check({"f": f}, {"f": "bb"}) == [
        "spec.f: Invalid value: \"bb\": spec.f in body should match '^a'",
        '<nil>: Invalid value: "": "spec.f" must validate all the schemas (allOf)',
    ]


def test_one_of() -> None:
    f = {"type": "string", "oneOf": [{"pattern": "^a"}, {"pattern": "b$"}]}
    assert check({"f": f}, {"f": "ab"}) == [
        '<nil>: Invalid value: "": "spec.f" must validate one and only one schema (oneOf). '
        "Found 2 valid alternatives"
    ]
    assert check({"f": f}, {"f": "c"}) == [
        '<nil>: Invalid value: "": "spec.f" must validate one and only one schema (oneOf). '
        "Found none valid",
        "spec.f: Invalid value: \"c\": spec.f in body should match '^a'",
    ]
    assert check({"f": f}, {"f": "a"}) == []


def test_not() -> None:
    f = {"type": "string", "not": {"enum": ["forbidden"]}}
    assert check({"f": f}, {"f": "forbidden"}) == [
        '<nil>: Invalid value: "": "spec.f" must not validate the schema (not)'
    ]
    assert check({"f": f}, {"f": "fine"}) == []


# --- list types ------------------------------------------------------------------------------


def test_list_type_set() -> None:
    s = {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}
    assert check({"s": s}, {"s": ["a", "b", "a", "a", "b"]}) == [
        'spec.s[2]: Duplicate value: "a"',
        'spec.s[4]: Duplicate value: "b"',
    ]
    causes = S.validate({"spec": {"s": ["a", "a"]}}, spec_schema(s=s))
    assert causes[0].reason == "FieldValueDuplicate"
    n = {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "number"}}
    assert check({"n": n}, {"n": [1, 1.0]}) == []


def test_list_type_map() -> None:
    ports = {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        "items": {"type": "object", "properties": {"name": {"type": "string"}}},
    }
    assert check({"ports": ports}, {"ports": [{"name": "a"}, {"name": "b"}, {"name": "a"}]}) == [
        'spec.ports[2]: Duplicate value: {"name":"a"}'
    ]
    assert check({"ports": ports}, {"ports": [{}, {}]}) == ["spec.ports[1]: Duplicate value: {}"]
    assert check({"ports": ports}, {"ports": [{"name": "a"}, "x"]}) == [
        'spec.ports[1]: Invalid value: "string": spec.ports[1] in body must be of type object: '
        '"string"',
        'spec.ports[1]: Invalid value: "x": must be an object for an array of list-type map',
    ]


def test_list_type_map_with_two_keys() -> None:
    ports = {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["port", "protocol"],
        "items": {
            "type": "object",
            "properties": {"port": {"type": "integer"}, "protocol": {"type": "string"}},
        },
    }
    value = [
        {"port": 80, "protocol": "TCP"},
        {"port": 80, "protocol": "UDP"},
        {"port": 80, "protocol": "TCP"},
    ]
    assert check({"ports": ports}, {"ports": value}) == [
        'spec.ports[2]: Duplicate value: {"port":80,"protocol":"TCP"}'
    ]


def test_list_types_under_a_map_use_brackets() -> None:
    services = {
        "type": "object",
        "additionalProperties": {
            "type": "object",
            "properties": {
                "args": {
                    "type": "array",
                    "x-kubernetes-list-type": "set",
                    "items": {"type": "string"},
                }
            },
        },
    }
    assert check({"services": services}, {"services": {"fe": {"args": ["x", "x"]}}}) == [
        'spec.services[fe].args[1]: Duplicate value: "x"'
    ]


# --- embedded resources ----------------------------------------------------------------------

EMBEDDED = {
    "type": "object",
    "x-kubernetes-embedded-resource": True,
    "x-kubernetes-preserve-unknown-fields": True,
}


def test_embedded_resource_requires_type_meta() -> None:
    assert check({"template": EMBEDDED}, {"template": {"spec": {}}}) == [
        "spec.template.apiVersion: Required value",
        "spec.template.kind: Required value",
    ]
    assert check({"template": EMBEDDED}, {"template": {"apiVersion": "", "kind": 5}}) == [
        "spec.template.apiVersion: Required value",
        "spec.template.kind: Invalid value: 5: must be a string",
    ]


def test_embedded_resource_type_meta_syntax() -> None:
    value = {"apiVersion": "a/b/c", "kind": "Bad_Kind"}
    assert check({"template": EMBEDDED}, {"template": value}) == [
        'spec.template.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
        'spec.template.kind: Invalid value: "Bad_Kind": may have mixed case, but should otherwise '
        "match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
        "with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
        "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    ]


def test_embedded_resource_object_meta() -> None:
    value = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "a/b", "labels": {"app": "-bad-"}},
    }
    assert check({"template": EMBEDDED}, {"template": value}) == [
        "spec.template.metadata.name: Invalid value: \"a/b\": may not contain '/'",
        'spec.template.metadata.labels: Invalid value: "-bad-": a valid label must be an empty '
        "string or consist of alphanumeric characters, '-', '_' or '.', and must start and end "
        "with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
        "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ]
    good = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"labels": {"a": "b"}}}
    assert check({"template": EMBEDDED}, {"template": good}) == []


# --- pruning ---------------------------------------------------------------------------------


def test_prune_drops_unknown_fields_but_not_root_meta() -> None:
    schema = spec_schema(a={"type": "string"}, o={"type": "object", "properties": {}})
    obj = {
        "apiVersion": "x/v1",
        "kind": "X",
        "metadata": {"name": "n", "whatever": 1},
        "status": {"x": 1},
        "spec": {"a": "1", "b": 2, "o": {"c": 3}},
    }
    assert S.prune(obj, schema) == ["spec.b", "spec.o.c", "status"]
    assert obj == {
        "apiVersion": "x/v1",
        "kind": "X",
        "metadata": {"name": "n", "whatever": 1},
        "spec": {"a": "1", "o": {}},
    }


def test_prune_keeps_unknown_under_preserve_but_prunes_known_subtrees() -> None:
    schema = spec_schema(
        raw={
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
            "properties": {"known": {"type": "object", "properties": {"k": {"type": "string"}}}},
        }
    )
    obj = {"spec": {"raw": {"anything": {"deep": [1]}, "known": {"k": "v", "drop": 1}}}}
    S.prune(obj, schema)
    assert obj == {"spec": {"raw": {"anything": {"deep": [1]}, "known": {"k": "v"}}}}


def test_prune_additional_properties_and_items() -> None:
    schema = spec_schema(
        services={
            "type": "object",
            "additionalProperties": {"type": "object", "properties": {"r": {"type": "integer"}}},
        },
        items={
            "type": "array",
            "items": {"type": "object", "properties": {"name": {"type": "string"}}},
        },
    )
    obj = {
        "spec": {
            "services": {"a": {"r": 1, "x": 2}, "b": {}},
            "items": [{"name": "n", "y": 1}, {"z": 2}],
        }
    }
    assert S.prune(obj, schema) == [
        "spec.items[0].y",
        "spec.items[1].z",
        "spec.services[a].x",
    ]
    assert obj["spec"] == {"services": {"a": {"r": 1}, "b": {}}, "items": [{"name": "n"}, {}]}


def test_prune_embedded_resource_keeps_type_meta_and_coerces_metadata() -> None:
    schema = spec_schema(
        template={
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "properties": {"spec": {"type": "object", "properties": {"x": {"type": "string"}}}},
        }
    )
    obj = {
        "spec": {
            "template": {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p", "labels": {"a": "b"}, "bogus": 1, "namespace": ""},
                "spec": {"x": "1", "y": 2},
                "extra": 1,
            }
        }
    }
    S.prune(obj, schema)
    assert obj["spec"]["template"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"a": "b"}},
        "spec": {"x": "1"},
    }


# --- defaulting ------------------------------------------------------------------------------


def test_defaults_fill_missing_fields_top_down() -> None:
    schema = spec_schema(
        replicas={"type": "integer", "default": 1},
        resources={
            "type": "object",
            "default": {},
            "properties": {"cpu": {"type": "string", "default": "100m"}},
        },
        explicit={"type": "string", "default": "d"},
    )
    obj: Json = {"spec": {"explicit": "mine"}}
    S.apply_defaults(obj, schema)
    assert obj == {"spec": {"explicit": "mine", "replicas": 1, "resources": {"cpu": "100m"}}}


def test_defaults_are_deep_copies() -> None:
    default = {"a": [1]}
    schema = spec_schema(
        o={"type": "object", "default": default, "x-kubernetes-preserve-unknown-fields": True}
    )
    first: Json = {"spec": {}}
    second: Json = {"spec": {}}
    S.apply_defaults(first, schema)
    S.apply_defaults(second, schema)
    first["spec"]["o"]["a"].append(2)
    assert second["spec"]["o"] == {"a": [1]}
    assert default == {"a": [1]}


def test_defaults_in_additional_properties_and_items() -> None:
    schema = spec_schema(
        services={
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "properties": {"replicas": {"type": "integer", "default": 1}},
            },
        },
        ports={
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"protocol": {"type": "string", "default": "TCP"}},
            },
        },
    )
    obj: Json = {
        "spec": {"services": {"a": {}, "b": {"replicas": 3}}, "ports": [{}, {"protocol": "UDP"}]}
    }
    S.apply_defaults(obj, schema)
    assert obj["spec"] == {
        "services": {"a": {"replicas": 1}, "b": {"replicas": 3}},
        "ports": [{"protocol": "TCP"}, {"protocol": "UDP"}],
    }


def test_null_handling_in_defaulting() -> None:
    schema = spec_schema(
        withDefault={"type": "string", "default": "d"},
        noDefault={"type": "string"},
        nullable={"type": "string", "nullable": True, "default": "d"},
        items={"type": "array", "items": {"type": "string", "default": "x"}},
    )
    obj: Json = {
        "spec": {"withDefault": None, "noDefault": None, "nullable": None, "items": [None, "a"]}
    }
    S.apply_defaults(obj, schema)
    assert obj["spec"] == {"withDefault": "d", "nullable": None, "items": ["x", "a"]}


def test_null_without_schema_is_kept() -> None:
    schema = spec_schema(raw={"type": "object", "x-kubernetes-preserve-unknown-fields": True})
    obj: Json = {"spec": {"raw": {"x": None}}}
    S.apply_defaults(obj, schema)
    assert obj == {"spec": {"raw": {"x": None}}}


# --- structural schema checks ----------------------------------------------------------------

P = "spec.versions[0].schema.openAPIV3Schema"


def crd_errors(schema: Json) -> list[str]:
    return lines(S.structural_errors(schema))


def test_missing_types() -> None:
    schema = {
        "properties": {
            "foo": {"properties": {"a": {}}},
            "bar": {"items": {"additionalProperties": {"properties": {"a": {}}, "items": {}}}},
            "json": {"x-kubernetes-preserve-unknown-fields": True, "properties": {"a": {}}},
        }
    }
    assert crd_errors(schema) == [
        f"{P}.properties[bar].items.additionalProperties.items.type: Required value: must not be "
        "empty for specified array items",
        f"{P}.properties[bar].items.additionalProperties.properties[a].type: Required value: must "
        "not be empty for specified object fields",
        f"{P}.properties[bar].items.additionalProperties.type: Required value: must not be empty "
        "for specified object fields",
        f"{P}.properties[bar].items.type: Required value: must not be empty for specified array "
        "items",
        f"{P}.properties[bar].type: Required value: must not be empty for specified object fields",
        f"{P}.properties[foo].properties[a].type: Required value: must not be empty for specified "
        "object fields",
        f"{P}.properties[foo].type: Required value: must not be empty for specified object fields",
        f"{P}.properties[json].properties[a].type: Required value: must not be empty for "
        "specified object fields",
        f"{P}.type: Required value: must not be empty at the root",
    ]


def test_root_type_and_additional_properties() -> None:
    assert crd_errors({"type": "integer"}) == [
        f'{P}.type: Invalid value: "integer": must be object at the root'
    ]
    assert crd_errors({"type": "object", "additionalProperties": False}) == [
        f"{P}.additionalProperties: Forbidden: must not be used at the root"
    ]
    assert crd_errors({"type": "object", "nullable": True}) == [
        f"{P}.nullable: Forbidden: nullable cannot be true at the root"
    ]


def test_forbidden_in_nested_value_validation() -> None:
    bad = {"type": "string", "additionalProperties": True, "title": "t", "description": "d",
           "nullable": True}  # fmt: skip
    schema = {
        "type": "object",
        "properties": {"foo": {"type": "string"}},
        "not": bad,
        "allOf": [{"properties": {"foo": bad}}],
    }
    assert crd_errors(schema) == [
        f"{P}.allOf[0].properties[foo].additionalProperties: Forbidden: must be undefined to be "
        "structural",
        f"{P}.allOf[0].properties[foo].description: Forbidden: must be empty to be structural",
        f"{P}.allOf[0].properties[foo].nullable: Forbidden: must be false to be structural",
        f"{P}.allOf[0].properties[foo].title: Forbidden: must be empty to be structural",
        f"{P}.allOf[0].properties[foo].type: Forbidden: must be empty to be structural",
        f"{P}.not.additionalProperties: Forbidden: must be undefined to be structural",
        f"{P}.not.description: Forbidden: must be empty to be structural",
        f"{P}.not.nullable: Forbidden: must be false to be structural",
        f"{P}.not.title: Forbidden: must be empty to be structural",
        f"{P}.not.type: Forbidden: must be empty to be structural",
    ]


def test_structural_completeness() -> None:
    schema = {
        "type": "object",
        "properties": {"d": {"type": "array"}},
        "not": {"properties": {"a": {}, "d": {"items": {}}}},
        "anyOf": [{"properties": {"f": {}}}],
    }
    assert crd_errors(schema) == [
        f"{P}.properties[a]: Required value: because it is defined in {P}.not.properties[a]",
        f"{P}.properties[d].items: Required value: because it is defined in "
        f"{P}.not.properties[d].items",
        f"{P}.properties[d].items: Required value: must be specified",
        f"{P}.properties[f]: Required value: because it is defined in {P}.anyOf[0].properties[f]",
    ]


def test_int_or_string_patterns_are_structural() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"x-kubernetes-int-or-string": True},
            "b": {
                "x-kubernetes-int-or-string": True,
                "anyOf": [{"type": "integer"}, {"type": "string"}],
            },
            "c": {
                "x-kubernetes-int-or-string": True,
                "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}, {"pattern": "x"}],
            },
            "g": {
                "x-kubernetes-int-or-string": True,
                "anyOf": [{"type": "string"}, {"type": "integer"}],
            },
        },
    }
    assert crd_errors(schema) == [
        f"{P}.properties[g].anyOf[0].type: Forbidden: must be empty to be structural",
        f"{P}.properties[g].anyOf[1].type: Forbidden: must be empty to be structural",
    ]


def test_int_or_string_exclusions() -> None:
    schema = {
        "x-kubernetes-preserve-unknown-fields": True,
        "x-kubernetes-int-or-string": True,
    }
    assert crd_errors(schema) == [
        f"{P}.x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if "
        "x-kubernetes-int-or-string is true"
    ]


def test_properties_and_additional_properties_are_exclusive() -> None:
    schema = spec_schema()
    schema["properties"]["spec"] = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "additionalProperties": {"type": "string"},
    }
    assert crd_errors(schema) == [
        f"{P}.properties[spec].additionalProperties: Forbidden: additionalProperties and "
        "properties are mutual exclusive"
    ]


def test_metadata_restrictions() -> None:
    ok: Json = {
        "type": "object",
        "properties": {
            "metadata": {
                "type": "object",
                "properties": {"name": {"type": "string", "maxLength": 10}},
            }
        },
    }
    assert crd_errors(ok) == []
    labels = copy.deepcopy(ok)
    labels["properties"]["metadata"]["properties"] = {"labels": {"type": "object"}}
    assert crd_errors(labels) == [
        f"{P}.properties[metadata]: Forbidden: must not specify anything other than name and "
        "generateName, but metadata is implicitly specified"
    ]
    untyped = {"type": "object", "properties": {"metadata": {}}}
    assert crd_errors(untyped) == [
        f'{P}.properties[metadata].type: Invalid value: "": must be object',
        f"{P}.properties[metadata].type: Required value: must not be empty for specified object "
        "fields",
    ]
    defaulted = {"type": "object", "properties": {"metadata": {"type": "object", "default": {}}}}
    assert crd_errors(defaulted) == [
        f"{P}.properties[metadata].default: Forbidden: must not be set in top-level metadata"
    ]
    nested = {
        "type": "object",
        "properties": {"metadata": {"type": "object"}},
        "allOf": [{"properties": {"metadata": {}}}],
    }
    assert crd_errors(nested) == [
        f"{P}.allOf[0].properties[metadata]: Forbidden: must not be specified in a nested context"
    ]


def test_embedded_resource_schema_rules() -> None:
    assert crd_errors(
        spec_schema(e={"type": "object", "x-kubernetes-embedded-resource": True})
    ) == [
        f"{P}.properties[spec].properties[e].properties: Required value: must not be empty if "
        "x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"
    ]
    wrong = {"type": "array", "items": {"type": "string"}, "x-kubernetes-embedded-resource": True,
             "x-kubernetes-preserve-unknown-fields": True}  # fmt: skip
    assert crd_errors(spec_schema(e=wrong)) == [
        f'{P}.properties[spec].properties[e].type: Invalid value: "array": must be object if '
        "x-kubernetes-embedded-resource is true"
    ]
    kind = {"type": "object", "x-kubernetes-embedded-resource": True,
            "properties": {"kind": {"type": "integer"}}}  # fmt: skip
    assert crd_errors(spec_schema(e=kind)) == [
        f'{P}.properties[spec].properties[e].properties[kind].type: Invalid value: "integer": '
        "must be string"
    ]


def test_unsupported_keywords() -> None:
    schema = spec_schema(
        u={"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        r={"$ref": "#/definitions/x"},
        t={"type": "foo"},
        n={"type": "null"},
    )
    assert crd_errors(schema) == [
        f"{P}.properties[spec].properties[u].uniqueItems: Forbidden: uniqueItems cannot be set to "
        "true since the runtime complexity becomes quadratic",
        f"{P}.properties[spec].properties[r].$ref: Forbidden: $ref is not supported",
        f'{P}.properties[spec].properties[t].type: Unsupported value: "foo": supported values: '
        '"array", "boolean", "integer", "number", "object", "string"',
        f'{P}.properties[spec].properties[n].type: Unsupported value: "null": supported values: '
        '"array", "boolean", "integer", "number", "object", "string"',
        f"{P}.properties[spec].properties[n].type: Forbidden: type cannot be set to null, use "
        "nullable as an alternative",
    ]


def test_invalid_pattern() -> None:
    assert crd_errors(spec_schema(f={"type": "string", "pattern": "+"})) == [
        f'{P}.properties[spec].properties[f].pattern: Invalid value: "+": must be a valid regular '
        "expression, but isn't: error parsing regexp: missing argument to repetition operator: `+`"
    ]


def test_list_type_schema_rules() -> None:
    no_keys = {"type": "array", "x-kubernetes-list-type": "map",
               "items": {"type": "object", "properties": {"name": {"type": "string"}}}}  # fmt: skip
    assert crd_errors(spec_schema(l=no_keys)) == [
        f"{P}.properties[spec].properties[l].x-kubernetes-list-map-keys: Required value: must not "
        "be empty if x-kubernetes-list-type is map"
    ]
    optional_key = {**no_keys, "x-kubernetes-list-map-keys": ["name"]}
    assert crd_errors(spec_schema(l=optional_key)) == [
        f"{P}.properties[spec].properties[l].items.properties[name].default: Required value: this "
        "property is in x-kubernetes-list-map-keys, so it must have a default or be a required "
        "property"
    ]
    not_array = {"type": "object", "x-kubernetes-list-type": "set"}
    assert crd_errors(spec_schema(l=not_array)) == [
        f'{P}.properties[spec].properties[l].type: Invalid value: "object": must be array if '
        "x-kubernetes-list-type is specified"
    ]
    bad_type = {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "bag"}
    assert crd_errors(spec_schema(l=bad_type)) == [
        f'{P}.properties[spec].properties[l].x-kubernetes-list-type: Unsupported value: "bag": '
        'supported values: "atomic", "set", "map"'
    ]


def test_validation_rules_are_only_checked_for_shape() -> None:
    schema = spec_schema(
        f={
            "type": "string",
            "x-kubernetes-validations": [{"rule": " "}, {"rule": "self.size() > 1"}],
        }
    )
    assert crd_errors(schema) == [
        f"{P}.properties[spec].properties[f].x-kubernetes-validations[0].rule: Required value: "
        "rule is not specified"
    ]


def test_defaults_must_validate() -> None:
    schema = spec_schema(
        replicas={"type": "integer", "minimum": 0, "default": -1},
        mode={"type": "string", "default": True},
        kind={"type": "string", "enum": ["a"], "default": "b"},
        res={"type": "object", "properties": {"cpu": {"type": "string"}}, "default": {"cpu": 1}},
    )
    assert crd_errors(schema) == [
        f"{P}.properties[spec].properties[replicas].default: Invalid value: -1:  in body should be "
        "greater than or equal to 0",
        f'{P}.properties[spec].properties[mode].default: Invalid value: "boolean":  in body must '
        'be of type string: "boolean"',
        f'{P}.properties[spec].properties[kind].default: Unsupported value: "b": supported '
        'values: "a"',
        f'{P}.properties[spec].properties[res].default.cpu: Invalid value: "integer": cpu in body '
        'must be of type string: "integer"',
    ]


def test_defaults_must_be_pruned() -> None:
    schema = spec_schema(
        res={"type": "object", "properties": {"cpu": {"type": "string"}}, "default": {"gpu": "1"}}
    )
    assert crd_errors(schema) == [
        f'{P}.properties[spec].properties[res].default: Invalid value: {{"gpu":"1"}}: must not '
        "have unknown fields"
    ]


def test_defaults_are_not_checked_when_not_structural() -> None:
    schema = spec_schema(a={"minimum": 0, "default": -1})
    assert crd_errors(schema) == [
        f"{P}.properties[spec].properties[a].type: Required value: must not be empty for "
        "specified object fields"
    ]


def test_defaults_under_additional_properties_are_not_checked() -> None:
    schema = spec_schema(
        m={
            "type": "object",
            "additionalProperties": {"type": "integer", "minimum": 0, "default": -1},
        }
    )
    assert crd_errors(schema) == []


def test_custom_path() -> None:
    assert lines(
        S.structural_errors({"type": "integer"}, "spec.versions[2].schema.openAPIV3Schema")
    ) == [
        'spec.versions[2].schema.openAPIV3Schema.type: Invalid value: "integer": must be object '
        "at the root"
    ]


# --- a realistic CRD -------------------------------------------------------------------------

COMPONENT = {
    "type": "object",
    "required": ["componentType"],
    "properties": {
        "componentType": {"type": "string", "enum": ["frontend", "worker", "planner"]},
        "replicas": {"type": "integer", "format": "int32", "minimum": 0, "default": 1},
        "image": {"type": "string", "minLength": 1},
        "resources": {
            "type": "object",
            "default": {},
            "properties": {
                "gpu": {"x-kubernetes-int-or-string": True, "default": 0},
                "memory": {"type": "string", "default": "1Gi"},
            },
        },
        "env": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {
                "type": "object",
                "required": ["name"],
                "properties": {"name": {"type": "string"}, "value": {"type": "string"}},
            },
        },
        "extraPodSpec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    },
}

GRAPH_SCHEMA = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "required": ["services"],
            "properties": {
                "services": {
                    "type": "object",
                    "maxProperties": 8,
                    "additionalProperties": COMPONENT,
                },
                "backendFramework": {
                    "type": "string",
                    "enum": ["vllm", "sglang", "trtllm"],
                    "default": "vllm",
                },
            },
        },
        "status": {
            "type": "object",
            "properties": {"state": {"type": "string"}},
            "x-kubernetes-preserve-unknown-fields": True,
        },
    },
}


def graph(**services: Json) -> Json:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": {"services": services},
    }


def admit(obj: Json) -> list[str]:
    """What kube-apiserver does to a create: prune, default, validate."""
    S.prune(obj, GRAPH_SCHEMA)
    S.apply_defaults(obj, GRAPH_SCHEMA)
    return lines(S.validate(obj, GRAPH_SCHEMA))


def test_realistic_crd_schema_is_structural() -> None:
    assert crd_errors(GRAPH_SCHEMA) == []


def test_realistic_create_is_pruned_and_defaulted() -> None:
    obj = graph(
        frontend={"componentType": "frontend", "unknown": True, "resources": {"gpu": "1"}},
        worker={
            "componentType": "worker",
            "replicas": 2,
            "extraPodSpec": {"containers": [{"name": "main"}]},
            "env": [{"name": "A", "value": "1"}],
        },
    )
    assert admit(obj) == []
    assert obj["spec"] == {
        "backendFramework": "vllm",
        "services": {
            "frontend": {
                "componentType": "frontend",
                "replicas": 1,
                "resources": {"gpu": "1", "memory": "1Gi"},
            },
            "worker": {
                "componentType": "worker",
                "replicas": 2,
                "resources": {"gpu": 0, "memory": "1Gi"},
                "extraPodSpec": {"containers": [{"name": "main"}]},
                "env": [{"name": "A", "value": "1"}],
            },
        },
    }


def test_realistic_create_errors() -> None:
    obj = graph(
        frontend={"componentType": "router", "replicas": -1, "image": ""},
        worker={"replicas": "two", "env": [{"name": "A"}, {"name": "A"}, {"value": "x"}]},
    )
    assert admit(obj) == [
        'spec.services.frontend.componentType: Unsupported value: "router": supported values: '
        '"frontend", "worker", "planner"',
        "spec.services.frontend.replicas: Invalid value: -1: spec.services.frontend.replicas in "
        "body should be greater than or equal to 0",
        'spec.services.frontend.image: Invalid value: "": spec.services.frontend.image in body '
        "should be at least 1 chars long",
        'spec.services.worker.replicas: Invalid value: "string": spec.services.worker.replicas '
        'in body must be of type integer: "string"',
        "spec.services.worker.env[2].name: Required value",
        "spec.services.worker.componentType: Required value",
        'spec.services[worker].env[1]: Duplicate value: {"name":"A"}',
    ]


def test_realistic_missing_services_and_too_many() -> None:
    obj = graph()
    del obj["spec"]["services"]
    assert admit(obj) == ["spec.services: Required value"]
    many = graph(**{f"s{i}": {"componentType": "worker"} for i in range(9)})
    assert admit(many) == ["spec.services: Too many: 9: must have at most 8 items"]


def test_realistic_null_replicas_gets_the_default() -> None:
    obj = graph(worker={"componentType": "worker", "replicas": None, "image": None})
    assert admit(obj) == []
    assert obj["spec"]["services"]["worker"]["replicas"] == 1
    assert "image" not in obj["spec"]["services"]["worker"]


def test_realistic_status_keeps_unknown_fields() -> None:
    obj = graph(worker={"componentType": "worker"})
    obj["status"] = {"state": "ready", "conditions": [{"type": "Ready"}]}
    assert admit(obj) == []
    assert obj["status"] == {"state": "ready", "conditions": [{"type": "Ready"}]}
