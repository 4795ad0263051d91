"""TypeMeta and ObjectMeta of embedded resources (`x-kubernetes-embedded-resource: true`).

apiextensions treats an embedded resource like a nested object: `apiVersion` and `kind` are
required strings and `metadata` is an ObjectMeta. Two steps of the real server live here:

* coercion (objectmeta.Coerce, run on every write): `metadata` is round-tripped through the
  ObjectMeta Go type, which drops unknown and wrongly typed fields and empty values;
* validation (objectmeta.Validate, run by the custom resource strategy): TypeMeta presence and
  syntax, and the ObjectMeta rules (name, namespace, labels, annotations, generation).

The root object is not handled here: its metadata is ordinary object metadata.
"""

from __future__ import annotations

import datetime
from typing import Any

from ..errors import Cause
from ..go_format import go_json_kind
from ..name_validation import (
    dns1035_label_errors,
    dns1123_label_errors,
    label_value_errors,
    qualified_name_errors,
)
from . import fielderr as fe

Schema = dict[str, Any]

_STRING_FIELDS = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion")
_OWNER_REF_STRINGS = ("apiVersion", "kind", "name", "uid")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _string_map(v: Any) -> bool:
    return v is None or (isinstance(v, dict) and all(isinstance(x, str) for x in v.values()))


def _timestamp(v: Any) -> tuple[bool, str | None]:
    """(parses, normalized RFC 3339 in UTC) for a metav1.Time JSON value."""
    if v is None:
        return True, None
    if not isinstance(v, str):
        return False, None
    try:
        t = datetime.datetime.fromisoformat(v.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return False, None
    if t.tzinfo is None:
        return False, None
    return True, t.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _owner_ref(v: Any) -> dict[str, Any] | None:
    if not isinstance(v, dict):
        return None
    out: dict[str, Any] = {}
    for k in _OWNER_REF_STRINGS:
        x = v.get(k)
        if x is not None and not isinstance(x, str):
            return None
        out[k] = x or ""
    for k in ("controller", "blockOwnerDeletion"):
        if k in v and v[k] is not None:
            if not isinstance(v[k], bool):
                return None
            out[k] = v[k]
    return out


def coerce_object_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """ObjectMeta after a JSON round trip through the Go type, dropping malformed fields."""
    out: dict[str, Any] = {}
    for k in _STRING_FIELDS:
        v = meta.get(k)
        if isinstance(v, str) and v:
            out[k] = v
    gen = meta.get("generation")
    if _is_int(gen) and gen:
        out["generation"] = gen
    for k in ("creationTimestamp", "deletionTimestamp"):
        ok, ts = _timestamp(meta.get(k))
        if ok and ts is not None:
            out[k] = ts
    grace = meta.get("deletionGracePeriodSeconds")
    if _is_int(grace):
        out["deletionGracePeriodSeconds"] = grace
    for k in ("labels", "annotations"):
        v = meta.get(k)
        if _string_map(v) and v:
            out[k] = dict(v)
    refs = meta.get("ownerReferences")
    if isinstance(refs, list):
        coerced = [_owner_ref(r) for r in refs]
        if coerced and all(r is not None for r in coerced):
            out["ownerReferences"] = coerced
    fin = meta.get("finalizers")
    if isinstance(fin, list) and fin and all(isinstance(x, str) for x in fin):
        out["finalizers"] = list(fin)
    managed = meta.get("managedFields")
    if isinstance(managed, list) and managed and all(isinstance(x, dict) for x in managed):
        out["managedFields"] = [dict(x) for x in managed]
    return out


def coerce_embedded(obj: dict[str, Any]) -> None:
    """Coerce one embedded resource in place (objectmeta.Coerce with dropInvalidFields)."""
    for k in ("apiVersion", "kind"):
        if k in obj and not isinstance(obj[k], str):
            del obj[k]
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        obj["metadata"] = coerce_object_meta(meta)


# --- validation ------------------------------------------------------------------------------


def _path_segment(name: str, prefix: bool) -> list[str]:
    if not prefix and name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


def validate_object_meta(meta: dict[str, Any], path: str) -> list[Cause]:
    """ValidateObjectMeta with path-segment names, as apiextensions applies it to embedded meta."""
    errs: list[Cause] = []
    gen_name = meta.get("generateName") or ""
    if gen_name:
        errs += [
            fe.invalid(fe.child(path, "generateName"), gen_name, m)
            for m in _path_segment(gen_name, True)
        ]
    name = meta.get("name") or "fakename"
    errs += [fe.invalid(fe.child(path, "name"), name, m) for m in _path_segment(name, False)]
    ns = meta.get("namespace") or ""
    if ns:
        ns_path = fe.child(path, "namespace")
        errs += [fe.invalid(ns_path, ns, m) for m in dns1123_label_errors(ns)]
    gen = meta.get("generation", 0)
    if _is_int(gen) and gen < 0:
        errs.append(
            fe.invalid(fe.child(path, "generation"), gen, "must be greater than or equal to 0")
        )
    labels = meta.get("labels") or {}
    lpath = fe.child(path, "labels")
    for k, v in labels.items():
        errs += [fe.invalid(lpath, k, m) for m in qualified_name_errors(k)]
        errs += [fe.invalid(lpath, v, m) for m in label_value_errors(v)]
    apath = fe.child(path, "annotations")
    for k in meta.get("annotations") or {}:
        errs += [fe.invalid(apath, k, m) for m in qualified_name_errors(k.lower())]
    return errs


def _meta_type_error(meta: Any) -> str | None:
    """Why `metadata` cannot be decoded as ObjectMeta, or None if it can.

    The wording approximates Go's JSON decoder; the real text comes from json-iterator.
    """
    if not isinstance(meta, dict):
        return f"json: cannot unmarshal {go_json_kind(meta)} into Go value of type v1.ObjectMeta"
    for k, v in meta.items():
        if not _field_ok(k, v):
            return f"json: cannot unmarshal {go_json_kind(v)} into Go struct field ObjectMeta.{k}"
    return None


_KNOWN_META = frozenset(
    (
        *_STRING_FIELDS,
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    )
)


def _field_ok(k: str, v: Any) -> bool:
    if k not in _KNOWN_META or v is None:
        return True
    if k in _STRING_FIELDS:
        return isinstance(v, str)
    if k in ("generation", "deletionGracePeriodSeconds"):
        return _is_int(v)
    if k in ("creationTimestamp", "deletionTimestamp"):
        return _timestamp(v)[0]
    if k in ("labels", "annotations"):
        return _string_map(v)
    if k == "ownerReferences":
        return isinstance(v, list) and all(_owner_ref(r) is not None for r in v)
    if k == "finalizers":
        return isinstance(v, list) and all(isinstance(x, str) for x in v)
    return isinstance(v, list)


def _type_meta_errors(name: str, v: Any, p: str) -> list[Cause]:
    """apiVersion or kind: a non-empty string, a group/version or a (mixed-case) DNS-1035 label."""
    if not isinstance(v, str):
        return [fe.invalid(p, v, "must be a string")]
    if not v:
        return [fe.required(p)]
    if name == "apiVersion":
        if v.count("/") > 1:
            return [fe.invalid(p, v, f"unexpected GroupVersion string: {v}")]
    elif msgs := dns1035_label_errors(v.lower()):
        detail = "may have mixed case, but should otherwise match: " + ",".join(msgs)
        return [fe.invalid(p, v, detail)]
    return []


def validate_embedded(obj: dict[str, Any], path: str) -> list[Cause]:
    """TypeMeta and ObjectMeta of one embedded resource (validateEmbeddedResource)."""
    errs: list[Cause] = []
    if "apiVersion" not in obj:
        errs.append(fe.required(fe.child(path, "apiVersion")))
    if "kind" not in obj:
        errs.append(fe.required(fe.child(path, "kind")))
    for k, v in obj.items():
        if k in ("apiVersion", "kind"):
            errs += _type_meta_errors(k, v, fe.child(path, k))
        elif k == "metadata":
            p = fe.child(path, k)
            problem = _meta_type_error(v)
            if problem is not None:
                errs.append(fe.invalid(p, v, problem))
            else:
                errs += validate_object_meta(v, p)
    return errs


def embedded_errors_at(value: Any, schema: Schema | None, path: str) -> list[Cause]:
    """Validate the embedded resources in `value` (itself included) found at `path`."""
    if schema is None:
        return []
    errs: list[Cause] = []
    if isinstance(value, dict):
        if schema.get("x-kubernetes-embedded-resource"):
            errs += validate_embedded(value, path)
        props: dict[str, Schema] = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        for k, v in value.items():
            if k in props:
                errs += embedded_errors_at(v, props[k], fe.child(path, k))
            elif isinstance(additional, dict):
                errs += embedded_errors_at(v, additional, fe.key(path, k))
    elif isinstance(value, list):
        items = schema.get("items")
        for i, v in enumerate(value):
            errs += embedded_errors_at(
                v, items if isinstance(items, dict) else None, fe.index(path, i)
            )
    return errs


def embedded_resource_errors(obj: dict[str, Any], schema: Schema) -> list[Cause]:
    """Validate every embedded resource below the root (objectmeta.Validate, not the root)."""
    errs: list[Cause] = []
    props: dict[str, Schema] = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    for k, v in obj.items():
        if k in props:
            errs += embedded_errors_at(v, props[k], k)
        elif isinstance(additional, dict):
            errs += embedded_errors_at(v, additional, fe.key(None, k))
    return errs
