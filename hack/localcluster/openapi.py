"""The OpenAPI documents of the local API server: /openapi/v2 and /openapi/v3.

kubectl reads the v3 documents (one per group-version) for three things, and each shapes
what is published here:

* `kubectl explain` finds the kind on the operations of the resource's paths
  (`x-kubernetes-group-version-kind`), then the component schema carrying the same GVK.
* Server-side field validation: kubectl sends `fieldValidation` only when the PATCH operation
  of the kind lists it among its own parameters; otherwise it validates on the client.
* Client-side `kubectl apply` computes a strategic merge patch from the v3 schema when the
  kind's PATCH operation accepts `application/strategic-merge-patch+json`, following the
  `x-kubernetes-patch-merge-key`/`-strategy` extensions. Custom resources do not accept it,
  so kubectl sends them a JSON merge patch, as with a real cluster.

Documents are cached; a group-version's document is rebuilt only when its resource types
change (a CRD added, changed or removed), so its hash stays the same for the same content.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .discovery import SERVER_VERSION
from .openapi_builtin import (
    DELETE_OPTIONS,
    INT_OR_STRING,
    LIST_META,
    OBJECT_META,
    PATCH,
    QUANTITY,
    REF_PREFIX,
    SCALE_GVK,
    STATUS,
    builtin_catalog,
    package_of,
    ref,
)
from .openapi_crd_v2 import custom_kind_v2
from .registry import Registry, ResourceType

Json = dict[str, Any]

INFO = {"title": "Kubernetes", "version": SERVER_VERSION["gitVersion"]}

_JSON = "application/json"
_YAML = "application/yaml"
_PROTOBUF = "application/vnd.kubernetes.protobuf"
_SMP = "application/strategic-merge-patch+json"
_PATCH_TYPES = (
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
)
_WATCH_TYPES = ("application/json;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch")
_STATUS_CODES = {"200": "OK", "201": "Created", "202": "Accepted"}


def _param(name: str, description: str, typ: str = "string", where: str = "query") -> Json:
    schema: Json = {"type": typ, "uniqueItems": True}
    out: Json = {"name": name, "in": where, "description": description, "schema": schema}
    if where == "path":
        out["required"] = True
    return out


_P_NAME = _param("name", "The name of the object.", where="path")
_P_NAMESPACE = _param("namespace", "The namespace of the objects.", where="path")
_P_PRETTY = _param("pretty", "If 'true', indent the output.")
_P_DRY_RUN = _param(
    "dryRun", "If 'All', run every stage of the request but do not persist the result."
)
_P_FIELD_MANAGER = _param(
    "fieldManager", "The name of the actor making the change, recorded in managedFields."
)
_P_FIELD_VALIDATION = _param(
    "fieldValidation",
    "What to do with unknown or duplicate fields in the request body: Ignore, Warn (the"
    " default) or Strict.",
)
_P_FORCE = _param(
    "force", "For apply patches only: take ownership of fields other managers own.", "boolean"
)
_LIST_PARAMS = [
    _param("allowWatchBookmarks", "Ask a watch for BOOKMARK events.", "boolean"),
    _param("continue", "The continue token of the previous page of a paged list."),
    _param("fieldSelector", "Only return objects whose fields match this selector."),
    _param("labelSelector", "Only return objects whose labels match this selector."),
    _param("limit", "The largest number of objects to return in one page.", "integer"),
    _param("resourceVersion", "The resource version the list or watch starts from."),
    _param("resourceVersionMatch", "How resourceVersion is matched: Exact or NotOlderThan."),
    _param("sendInitialEvents", "Start a watch with the current objects.", "boolean"),
    _param("timeoutSeconds", "How long a list or watch may run.", "integer"),
    _param("watch", "Stream changes instead of returning a list.", "boolean"),
]
_DELETE_PARAMS = [
    _P_DRY_RUN,
    _param("gracePeriodSeconds", "Seconds before the object is deleted.", "integer"),
    _param(
        "ignoreStoreReadErrorWithClusterBreakingPotential",
        "Delete an object that can no longer be read from storage.",
        "boolean",
    ),
    _param("orphanDependents", "Deprecated: use propagationPolicy.", "boolean"),
    _param("propagationPolicy", "How dependents are collected: Orphan, Background or Foreground."),
]
_WRITE_PARAMS = [_P_DRY_RUN, _P_FIELD_MANAGER, _P_FIELD_VALIDATION]


@dataclass(frozen=True)
class _Entry:
    """One built group-version document, with the resource types it was built from."""

    types: tuple[ResourceType, ...]
    doc: Json
    body: bytes
    hash: str
    custom_kinds: frozenset[str]  # the definitions of custom resource kinds (CRDs)


class OpenAPI:
    """The OpenAPI documents of a registry's resource types, built lazily and cached.

    Returned documents are shared with the cache: callers must not mutate them.
    """

    def __init__(self, registry: Registry) -> None:
        self._registry = registry
        self._lock = threading.Lock()
        self._generation: int | None = None
        self._entries: dict[str, _Entry] = {}
        self._current: set[str] = set()
        self._v2: Json | None = None

    def v2(self) -> Json:
        """The Swagger 2.0 document (GET /openapi/v2) of every served group-version."""
        with self._lock:
            self._sync()
            if self._v2 is None:
                entries = [self._entry(p) for p in sorted(self._current)]
                self._v2 = _swagger2([e.doc for e in entries],
                                     frozenset().union(*(e.custom_kinds for e in entries)))
            return self._v2

    def v3_root(self) -> Json:
        """The OpenAPI v3 discovery document (GET /openapi/v3): one URL per group-version."""
        with self._lock:
            self._sync()
            return {
                "paths": {
                    path: {"serverRelativeURL": f"/openapi/v3/{path}?hash={self._entry(path).hash}"}
                    for path in sorted(self._current)
                }
            }

    def v3_group_version(self, path: str) -> Json | None:
        """The OpenAPI v3 document of `api/v1` or `apis/<group>/<version>`, or None.

        `path` may carry the `/openapi/v3/` prefix and a `?hash=` query.
        """
        entry = self._lookup(path)
        return None if entry is None else entry.doc

    def v3_group_version_json(self, path: str) -> tuple[bytes, str] | None:
        """The serialized v3 document of a group-version and its hash (for ETag), or None."""
        entry = self._lookup(path)
        return None if entry is None else (entry.body, entry.hash)

    def _lookup(self, path: str) -> _Entry | None:
        key = _normalize(path)
        with self._lock:
            self._sync()
            return self._entry(key) if key in self._current else None

    def _sync(self) -> None:
        generation = self._registry.generation
        if generation == self._generation:
            return
        self._generation = generation
        self._v2 = None
        self._current = {_gv_path(rt.group, rt.version) for rt in self._registry}
        for stale in set(self._entries) - self._current:
            del self._entries[stale]

    def _entry(self, path: str) -> _Entry:
        group, version = _parse_gv_path(path)
        types = tuple(
            sorted(self._registry.in_group_version(group, version), key=lambda rt: rt.plural)
        )
        cached = self._entries.get(path)
        if (
            cached is not None
            and len(cached.types) == len(types)
            and all(a is b for a, b in zip(cached.types, types, strict=True))
        ):
            return cached
        doc, custom_kinds = _group_version_document(group, version, types)
        body = json.dumps(doc, separators=(",", ":")).encode()
        entry = _Entry(types, doc, body, hashlib.sha512(body).hexdigest().upper(), custom_kinds)
        self._entries[path] = entry
        return entry


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _parse_gv_path(path: str) -> tuple[str, str]:
    parts = path.split("/")
    if parts[0] == "api":
        return "", parts[1]
    return parts[1], parts[2]


def _normalize(path: str) -> str:
    path = path.split("?", 1)[0].strip("/")
    path = path.removeprefix("openapi/v3/")
    parts = path.split("/")
    if (parts[0] == "api" and len(parts) == 2) or (parts[0] == "apis" and len(parts) == 3):
        return path
    return ""


def _group_version_document(group: str, version: str, types: Iterable[ResourceType]
                            ) -> tuple[Json, frozenset[str]]:
    """The v3 document of a group-version, and which of its definitions are custom kinds."""
    catalog = builtin_catalog()
    roots = set(catalog.meta_definitions())
    own: dict[str, Json] = {}
    custom_kinds: set[str] = set()
    paths: Json = {}
    for rt in types:
        if rt.custom:
            kind_name, list_name = _custom_schemas(rt, own)
            custom_kinds.add(kind_name)
        else:
            names = catalog.kind(rt.group, rt.version, rt.kind)
            if names is None:
                kind_name, list_name = _custom_schemas(rt, own, package_of(group, version))
            else:
                kind_name, list_name = names[0], names[1] or ""
                roots.update(n for n in names if n)
        scale_name = None
        if rt.scale is not None:
            scale = catalog.kind(*SCALE_GVK)
            if scale is not None:
                scale_name = scale[0]
                roots.add(scale_name)
        paths.update(_resource_paths(rt, kind_name, list_name, scale_name))
    schemas = catalog.closure(roots)
    schemas.update(own)
    return {
        "openapi": "3.0.0",
        "info": dict(INFO),
        "paths": dict(sorted(paths.items())),
        "components": {"schemas": dict(sorted(schemas.items()))},
    }, frozenset(custom_kinds)


def _custom_schemas(rt: ResourceType, out: dict[str, Json], package: str = "") -> tuple[str, str]:
    """Add a custom resource's kind and list schemas to `out`, as the apiserver publishes them.

    The CRD's openAPIV3Schema keeps its descriptions and extensions; apiVersion, kind and
    metadata are replaced by the standard fields every object has.
    """
    prefix = package or f"{'.'.join(reversed(rt.group.split('.')))}.{rt.version}"
    kind_name, list_name = f"{prefix}.{rt.kind}", f"{prefix}.{rt.list_kind}"
    catalog = builtin_catalog()
    api_version = {
        "type": "string", "description": catalog.field_description("V1Pod", "api_version")
    }
    kind = {"type": "string", "description": catalog.field_description("V1Pod", "kind")}

    schema: Json = copy.deepcopy(rt.schema) if rt.schema else {}
    if not schema.get("properties"):
        schema.setdefault("x-kubernetes-preserve-unknown-fields", True)
    schema["type"] = "object"
    schema["properties"] = {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"allOf": [ref(OBJECT_META)], "description": "Standard object metadata."},
        **{k: v for k, v in (schema.get("properties") or {}).items()
           if k not in ("apiVersion", "kind", "metadata")},
    }
    schema["x-kubernetes-group-version-kind"] = [
        {"group": rt.group, "kind": rt.kind, "version": rt.version}
    ]
    out[kind_name] = schema
    out[list_name] = {
        "description": f"{rt.list_kind} is a list of {rt.kind} objects.",
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": api_version,
            "items": {
                "description": f"The {rt.plural}.",
                "type": "array",
                "items": ref(kind_name),
            },
            "kind": kind,
            "metadata": {"allOf": [ref(LIST_META)], "description": "Standard list metadata."},
        },
        "x-kubernetes-group-version-kind": [
            {"group": rt.group, "kind": rt.list_kind, "version": rt.version}
        ],
    }
    return kind_name, list_name


def _camel(group: str, version: str) -> str:
    if not group:
        return "Core" + version.capitalize()
    words = re.split(r"[.-]", group.removesuffix(".k8s.io"))
    return "".join(w.capitalize() for w in words) + version.capitalize()


def _content(name: str, types: Iterable[str]) -> Json:
    return {t: {"schema": ref(name)} for t in types}


def _responses(name: str, codes: Iterable[str], types: tuple[str, ...]) -> Json:
    out: Json = {
        code: {"description": _STATUS_CODES[code], "content": _content(name, types)}
        for code in codes
    }
    out["401"] = {"description": "Unauthorized"}
    return out


def _resource_paths(
    rt: ResourceType, kind_name: str, list_name: str, scale_name: str | None
) -> Json:
    """The collection, item and subresource paths of one resource, with their operations."""
    prefix = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
    gvk = {"group": rt.group, "kind": rt.kind, "version": rt.version}
    camel = _camel(rt.group, rt.version)
    tag = camel[0].lower() + camel[1:]
    scope = "Namespaced" if rt.namespaced else ""
    types = (_JSON, _YAML) if rt.custom else (_JSON, _YAML, _PROTOBUF)
    patch_types = _PATCH_TYPES if rt.custom else (*_PATCH_TYPES, _SMP)
    verbs = set(rt.verbs)

    def op(action: str, op_id: str, description: str, gvk_of: Json | None = None,
           **extra: Any) -> Json:
        return {
            "tags": [tag],
            "description": description,
            "operationId": op_id,
            **extra,
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": dict(gvk_of or gvk),
        }

    def item_ops(name: str, suffix: str, what: str, target_gvk: Json | None) -> Json:
        ops: Json = {}
        body = {"content": {"*/*": {"schema": ref(name)}}, "required": True}
        if "get" in verbs:
            ops["get"] = op(
                "get", f"read{camel}{scope}{rt.kind}{suffix}", f"read {what} of the {rt.kind}",
                responses=_responses(name, ["200"], types), gvk_of=target_gvk,
            )
        if "update" in verbs:
            ops["put"] = op(
                "put", f"replace{camel}{scope}{rt.kind}{suffix}",
                f"replace {what} of the {rt.kind}",
                parameters=list(_WRITE_PARAMS), requestBody=body,
                responses=_responses(name, ["200", "201"], types), gvk_of=target_gvk,
            )
        if "patch" in verbs:
            ops["patch"] = op(
                "patch", f"patch{camel}{scope}{rt.kind}{suffix}",
                f"partially update {what} of the {rt.kind}",
                parameters=[*_WRITE_PARAMS, _P_FORCE],
                requestBody={"content": _content(PATCH, patch_types), "required": True},
                responses=_responses(name, ["200", "201"], types), gvk_of=target_gvk,
            )
        return ops

    path_params = [_P_NAMESPACE] if rt.namespaced else []
    collection = (
        f"{prefix}/namespaces/{{namespace}}/{rt.plural}" if rt.namespaced
        else f"{prefix}/{rt.plural}"
    )
    paths: Json = {}

    ops: Json = {}
    if "list" in verbs:
        ops["get"] = op(
            "list", f"list{camel}{scope}{rt.kind}", f"list or watch objects of kind {rt.kind}",
            parameters=list(_LIST_PARAMS),
            responses=_responses(list_name, ["200"], types + _WATCH_TYPES),
        )
    if "create" in verbs:
        ops["post"] = op(
            "post", f"create{camel}{scope}{rt.kind}", f"create a {rt.kind}",
            parameters=list(_WRITE_PARAMS),
            requestBody={"content": {"*/*": {"schema": ref(kind_name)}}, "required": True},
            responses=_responses(kind_name, ["200", "201", "202"], types),
        )
    if "deletecollection" in verbs:
        ops["delete"] = op(
            "deletecollection", f"delete{camel}Collection{scope}{rt.kind}",
            f"delete a collection of {rt.kind}",
            parameters=[*_DELETE_PARAMS, *_LIST_PARAMS],
            requestBody={"content": {"*/*": {"schema": ref(DELETE_OPTIONS)}}},
            responses=_responses(STATUS, ["200"], types),
        )
    if ops:
        paths[collection] = {**ops, "parameters": [*path_params, _P_PRETTY]}

    item_params = [_P_NAME, *path_params, _P_PRETTY]
    ops = item_ops(kind_name, "", "the specified", None)
    if "delete" in verbs:
        ops["delete"] = op(
            "delete", f"delete{camel}{scope}{rt.kind}", f"delete a {rt.kind}",
            parameters=list(_DELETE_PARAMS),
            requestBody={"content": {"*/*": {"schema": ref(DELETE_OPTIONS)}}},
            responses=_responses(STATUS, ["200", "202"], types),
        )
    if ops:
        paths[f"{collection}/{{name}}"] = {**ops, "parameters": item_params}

    if rt.namespaced and "list" in verbs:
        paths[f"{prefix}/{rt.plural}"] = {
            "get": op(
                "list", f"list{camel}{rt.kind}ForAllNamespaces",
                f"list or watch objects of kind {rt.kind} in all namespaces",
                parameters=list(_LIST_PARAMS),
                responses=_responses(list_name, ["200"], types + _WATCH_TYPES),
            ),
            "parameters": [_P_PRETTY],
        }
    if rt.has_status:
        ops = item_ops(kind_name, "Status", "status", None)
        if ops:
            paths[f"{collection}/{{name}}/status"] = {**ops, "parameters": item_params}
    if scale_name is not None:
        scale_gvk = dict(zip(("group", "version", "kind"), SCALE_GVK, strict=True))
        ops = item_ops(scale_name, "Scale", "scale", scale_gvk)
        if ops:
            paths[f"{collection}/{{name}}/scale"] = {**ops, "parameters": item_params}
    return paths


def _swagger2(docs: list[Json], custom_kinds: frozenset[str] = frozenset()) -> Json:
    """Merge v3 group-version documents into one Swagger 2.0 document; custom resource
    kinds as apiextensions publishes them in v2 (`openapi_crd_v2`)."""
    paths: Json = {}
    definitions: Json = {}
    for doc in docs:
        for path, item in doc["paths"].items():
            paths[path] = {
                key: ([_v2_param(p) for p in value] if key == "parameters" else _v2_op(value))
                for key, value in item.items()
            }
        for name, schema in doc["components"]["schemas"].items():
            definitions[name] = _v2_schema(schema)
            if name in custom_kinds:
                definitions[name] = custom_kind_v2(definitions[name])
    # Swagger 2.0 has no oneOf: these are plain strings there, as the apiserver publishes them.
    definitions[INT_OR_STRING] = {
        "type": "string", "format": "int-or-string",
        "description": definitions.get(INT_OR_STRING, {}).get("description", ""),
    }
    definitions[QUANTITY] = {
        "type": "string", "description": definitions.get(QUANTITY, {}).get("description", ""),
    }
    return {
        "swagger": "2.0",
        "info": dict(INFO),
        "paths": dict(sorted(paths.items())),
        "definitions": dict(sorted(definitions.items())),
    }


def _v2_param(param: Json) -> Json:
    out = {k: v for k, v in param.items() if k != "schema"}
    out.update(param.get("schema", {}))
    return out


def _v2_op(op: Json) -> Json:
    out: Json = {}
    params = [_v2_param(p) for p in op.get("parameters", [])]
    body = op.get("requestBody")
    if body is not None:
        content = body["content"]
        schema = next(iter(content.values()))["schema"]
        params.insert(0, {"name": "body", "in": "body", "required": True,
                          "schema": _v2_schema(schema)})
        out["consumes"] = list(content)
    produces: list[str] = []
    responses: Json = {}
    for code, response in op.get("responses", {}).items():
        converted = {"description": response["description"]}
        content = response.get("content")
        if content:
            converted["schema"] = _v2_schema(next(iter(content.values()))["schema"])
            produces.extend(t for t in content if t not in produces)
        responses[code] = converted
    for key, value in op.items():
        if key in ("parameters", "requestBody", "responses"):
            continue
        out[key] = value
    if params:
        out["parameters"] = params
    out["produces"] = produces
    out["schemes"] = ["https"]
    out["responses"] = responses
    return out


def _v2_schema(schema: Any) -> Any:
    """A v3 schema in Swagger 2.0 form: `#/definitions/` refs, siblings beside `$ref`."""
    if isinstance(schema, list):
        return [_v2_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and "$ref" in all_of[0]:
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        merged["$ref"] = all_of[0]["$ref"]
        schema = merged
    out: Json = {}
    for key, value in schema.items():
        if key == "$ref" and isinstance(value, str):
            out[key] = "#/definitions/" + value.removeprefix(REF_PREFIX)
        elif key in ("properties", "patternProperties", "definitions") and isinstance(value, dict):
            out[key] = {k: _v2_schema(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "allOf", "anyOf", "oneOf", "not"):
            out[key] = _v2_schema(value)
        else:
            out[key] = value
    return out
