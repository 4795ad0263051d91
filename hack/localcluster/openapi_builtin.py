"""OpenAPI schemas of the built-in kinds, derived from the kubernetes_asyncio models.

Each generated model class knows its fields (`openapi_types`, `attribute_map`), which of them
are required (the setter refuses None) and their descriptions (the property docstrings). What
the generator dropped is restored here: the Go package of each type (the definition name
`io.k8s.api.apps.v1.Deployment`), the int-or-string and quantity types it flattened into
`object` and `str`, the int32 / int64 formats of integers (`integer_formats`), and the list
merge extensions from `list_semantics`.

Schemas use OpenAPI v3 references (`#/components/schemas/<name>`); `openapi.py` rewrites them
for Swagger 2.0. Building is lazy and the result is cached for the process: the models module
is large to import and the schemas never change while it runs.
"""

from __future__ import annotations

import re
import threading
from collections import deque
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from hack.localcluster.integer_formats import INT64_FIELDS
from hack.localcluster.list_semantics import ListSemantics, list_semantics

Json = dict[str, Any]

REF_PREFIX = "#/components/schemas/"
META = "io.k8s.apimachinery.pkg.apis.meta.v1"
OBJECT_META = f"{META}.ObjectMeta"
LIST_META = f"{META}.ListMeta"
STATUS = f"{META}.Status"
DELETE_OPTIONS = f"{META}.DeleteOptions"
PATCH = f"{META}.Patch"
TIME = f"{META}.Time"
FIELDS_V1 = f"{META}.FieldsV1"
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
ANY_JSON = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON"
SCALE_GVK = ("autoscaling", "v1", "Scale")

#: Types of k8s.io/apimachinery/pkg/apis/meta/v1 (the models name them `V1<Type>`).
_META_TYPES = frozenset({
    "APIGroup", "APIGroupList", "APIResource", "APIResourceList", "APIVersions", "Condition",
    "DeleteOptions", "FieldSelectorRequirement", "GroupVersionForDiscovery", "LabelSelector",
    "LabelSelectorRequirement", "ListMeta", "ManagedFieldsEntry", "ObjectMeta", "OwnerReference",
    "Preconditions", "ServerAddressByClientCIDR", "ShardInfo", "Status", "StatusCause",
    "StatusDetails", "WatchEvent",
})

#: Kinds of the core group; every type they reach (meta aside) lives in k8s.io/api/core/v1.
_CORE_ROOTS = (
    "V1Pod", "V1PodTemplate", "V1ReplicationController", "V1Service", "V1Endpoints", "V1Node",
    "V1Namespace", "V1PersistentVolume", "V1PersistentVolumeClaim", "V1ConfigMap", "V1Secret",
    "V1ServiceAccount", "CoreV1Event", "V1LimitRange", "V1ResourceQuota", "V1Binding",
)

#: Fields the models type as `object` that are intstr.IntOrString in Go.
_INT_OR_STRING_FIELDS = frozenset({
    ("V1HTTPGetAction", "port"),
    ("V1TCPSocketAction", "port"),
    ("V1ServicePort", "target_port"),
    ("V1NetworkPolicyPort", "port"),
    ("V1PodDisruptionBudgetSpec", "min_available"),
    ("V1PodDisruptionBudgetSpec", "max_unavailable"),
    ("V1RollingUpdateDeployment", "max_surge"),
    ("V1RollingUpdateDeployment", "max_unavailable"),
    ("V1RollingUpdateDaemonSet", "max_surge"),
    ("V1RollingUpdateDaemonSet", "max_unavailable"),
    ("V1RollingUpdateStatefulSetStrategy", "max_unavailable"),
})

#: Fields the models type as `str` (or maps of `str`) that are resource.Quantity in Go.
_QUANTITY_FIELDS = frozenset({
    ("V1ResourceRequirements", "limits"),
    ("V1ResourceRequirements", "requests"),
    ("V1VolumeResourceRequirements", "limits"),
    ("V1VolumeResourceRequirements", "requests"),
    ("V1EmptyDirVolumeSource", "size_limit"),
    ("V1ResourceFieldSelector", "divisor"),
    ("V1PodSpec", "overhead"),
    ("V1PodStatus", "allocated_resources"),
    ("V1ContainerStatus", "allocated_resources"),
    ("V1NodeStatus", "capacity"),
    ("V1NodeStatus", "allocatable"),
    ("V1PersistentVolumeSpec", "capacity"),
    ("V1PersistentVolumeClaimStatus", "capacity"),
    ("V1PersistentVolumeClaimStatus", "allocated_resources"),
    ("V2MetricTarget", "value"),
    ("V2MetricTarget", "average_value"),
    ("V2MetricValueStatus", "value"),
    ("V2MetricValueStatus", "average_value"),
    ("V1DeviceCapacity", "value"),
    ("V1Counter", "value"),
    ("V1CapacityRequirements", "requests"),
    ("V1CapacityRequestPolicy", "default"),
    ("V1CapacityRequestPolicy", "valid_values"),
    ("V1CapacityRequestPolicyRange", "max"),
    ("V1CapacityRequestPolicyRange", "min"),
    ("V1CapacityRequestPolicyRange", "step"),
    ("V1DeviceRequestAllocationResult", "consumed_capacity"),
    ("V1NodeAllocatableResourceMapping", "allocation_multiplier"),
})

#: Named schemas that have no model class.
_SCALARS: dict[str, Json] = {
    TIME: {
        "type": "string",
        "format": "date-time",
        "description": "A point in time, serialized as an RFC 3339 date and time in UTC.",
    },
    INT_OR_STRING: {
        "format": "int-or-string",
        "oneOf": [{"type": "integer"}, {"type": "string"}],
        "description": "Either a 32-bit integer or a string (such as a port name or a percentage).",
    },
    QUANTITY: {
        "oneOf": [{"type": "string"}, {"type": "number"}],
        "description": "A fixed-point amount with an optional SI or binary suffix, e.g. 500m, 2Gi.",
    },
    FIELDS_V1: {
        "type": "object",
        "description": "The set of fields a manager owns, in the FieldsV1 trie format.",
    },
    PATCH: {
        "type": "object",
        "description": "The body of a PATCH request; its format is given by the Content-Type.",
    },
    ANY_JSON: {"description": "Any JSON value."},
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresourceStatus": {
        "type": "object",
        "description": "Enables the /status subresource; it has no settings.",
    },
}
_SPECIAL_OBJECT_FIELDS: dict[tuple[str, str], str] = {
    ("V1ManagedFieldsEntry", "fields_v1"): FIELDS_V1,
    ("V1CustomResourceSubresources", "status"):
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresourceStatus",
}

#: Descriptions of the fields of kinds and lists that hold a type (the models have none).
_KIND_FIELDS = {
    "metadata": "Standard object metadata.",
    "spec": "The desired state of the {kind}.",
    "status": "The most recently observed state of the {kind}, written by the system.",
}
_LIST_FIELDS = {"metadata": "Standard list metadata."}

_PRIMITIVES: dict[str, Json] = {
    "str": {"type": "string"},
    "int": {"type": "integer"},
    "bool": {"type": "boolean"},
    "float": {"type": "number", "format": "double"},
    "date": {"type": "string", "format": "date"},
}

_CLASS_RE = re.compile(
    r"(?P<prefix>[A-Z][a-z]+)?(?P<version>V\d+(?:(?:alpha|beta)\d+)?)(?P<name>[A-Z]\w*)"
)
_LIST_RE = re.compile(r"list\[(.+)\]")
_DICT_RE = re.compile(r"dict\(str, (.+)\)")
_NAME_RE = re.compile(r"[A-Z]\w*")
#: Deeper than any path `list_semantics` knows (a CronJob's container ports are at depth 9).
_MAX_LIST_DEPTH = 12


def ref(name: str) -> Json:
    """A reference to the named component schema."""
    return {"$ref": REF_PREFIX + name}


def package_of(group: str, version: str) -> str:
    """The definition-name prefix of the Go package holding a group-version's types."""
    segment = group.split(".")[0] if group else "core"
    return _package(segment, version)


def _package(segment: str, version: str) -> str:
    if segment == "meta":
        return META
    if segment == "apiextensions":
        return f"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.{version}"
    if segment == "apiregistration":
        return f"io.k8s.kube-aggregator.pkg.apis.apiregistration.{version}"
    return f"io.k8s.api.{segment}.{version}"


def _description(doc: str | None) -> str:
    """The field description in a generated property docstring (after the summary line)."""
    if not doc:
        return ""
    lines = []
    for line in doc.splitlines()[1:]:
        text = line.strip()
        if text.startswith(":return:"):
            break
        lines.append(text.removesuffix("# noqa: E501").rstrip())
    return "\n".join(lines).strip()


class BuiltinCatalog:
    """Named schemas of the built-in types, built on first use of each kind."""

    def __init__(self) -> None:
        # The models package imports every API class too: only pay for it when asked.
        from kubernetes_asyncio.client import models

        self._models = models
        self._lock = threading.RLock()
        self._package: dict[str, str] = {}
        self._schemas: dict[str, Json] = {name: dict(s) for name, s in _SCALARS.items()}
        self._refs: dict[str, set[str]] = {name: set() for name in _SCALARS}
        self._class_of: dict[str, str] = {}
        self._kinds: dict[tuple[str, str, str], tuple[str, str | None]] = {}
        for root in _CORE_ROOTS:
            for cls in self._reachable(root):
                self._package.setdefault(cls, _package("core", self._parts(cls)[1]))

    def kind(self, group: str, version: str, kind: str) -> tuple[str, str | None] | None:
        """Definition names of a kind and of its List, or None when no model describes it.

        The kind's schemas get their `x-kubernetes-group-version-kind` and the list extensions
        `list_semantics` gives for this kind.
        """
        key = (group, version, kind)
        with self._lock:
            if key in self._kinds:
                return self._kinds[key]
            cls = self._model_class(group, version, kind)
            if cls is None:
                return None
            # A kind whose name another group shares has a prefixed model class, while its
            # List has none (ResourceV1ResourceClaim, V1ResourceClaimList).
            list_cls = next((c for c in (cls + "List", f"{version.capitalize()}{kind}List")
                             if hasattr(self._models, c)), None)
            for root in (cls, list_cls):
                if root is not None:
                    for reached in self._reachable(root):
                        if self._parts(reached)[0] is None:
                            self._package.setdefault(
                                reached, package_of(group, self._parts(reached)[1])
                            )
            names = (self.definition(cls), self.definition(list_cls) if list_cls else None)
            for name, k in zip(names, (kind, kind + "List"), strict=True):
                if name is not None:
                    gvk = {"group": group, "kind": k, "version": version}
                    self._schemas[name]["x-kubernetes-group-version-kind"] = [gvk]
            self._describe(names[0], _KIND_FIELDS, kind)
            if names[1] is not None:
                self._describe(names[1], _LIST_FIELDS, kind)
            self._annotate_lists(cls, kind)
            self._kinds[key] = names
            return names

    def definition(self, cls: str) -> str:
        """The definition name of a model class, building its schema (and its fields') once."""
        with self._lock:
            name = self._name(cls)
            if name in self._schemas:
                return name
            owner = self._class_of.setdefault(name, cls)
            if owner != cls:
                raise ValueError(f"{cls} and {owner} both map to {name}")
            self._schemas[name] = {}  # placeholder: types may refer to themselves
            schema, refs = self._build(cls)
            self._schemas[name] = schema
            self._refs[name] = refs
            return name

    def meta_definitions(self) -> list[str]:
        """The meta/v1 schemas every group-version document refers to."""
        with self._lock:
            for cls in ("V1ObjectMeta", "V1ListMeta", "V1Status", "V1DeleteOptions"):
                self.definition(cls)
            return [OBJECT_META, LIST_META, STATUS, DELETE_OPTIONS, PATCH]

    def closure(self, names: Iterable[str]) -> dict[str, Json]:
        """The named schemas plus every schema they refer to, transitively, sorted by name."""
        with self._lock:
            seen: set[str] = set()
            todo = deque(names)
            while todo:
                name = todo.popleft()
                if name in seen or name not in self._schemas:
                    continue
                seen.add(name)
                todo.extend(self._refs.get(name, ()))
            return {name: self._schemas[name] for name in sorted(seen)}

    def field_description(self, cls: str, attr: str) -> str:
        """The description of one field of a model class."""
        return _description(getattr(getattr(self._models, cls), attr).__doc__)

    def _model_class(self, group: str, version: str, kind: str) -> str | None:
        segment = group.split(".")[0] if group else "core"
        ver = version.capitalize()
        for candidate in (f"{segment.capitalize()}{ver}{kind}", f"{ver}{kind}"):
            if hasattr(self._models, candidate):
                return candidate
        return None

    @staticmethod
    def _parts(cls: str) -> tuple[str | None, str, str]:
        """(group prefix or None, lower-case version, type name) of a model class name."""
        m = _CLASS_RE.fullmatch(cls)
        if m is None:
            return None, "v1", cls
        return m["prefix"], m["version"].lower(), m["name"]

    def _name(self, cls: str) -> str:
        prefix, version, name = self._parts(cls)
        if prefix is not None:
            return f"{_package(prefix.lower(), version)}.{name}"
        if name in _META_TYPES and version == "v1":
            return f"{META}.{name}"
        return f"{self._package.get(cls, _package('core', version))}.{name}"

    def _is_model(self, name: str) -> bool:
        return hasattr(getattr(self._models, name, None), "openapi_types")

    def _field_classes(self, cls: str) -> list[str]:
        out: list[str] = []
        for typ in getattr(self._models, cls).openapi_types.values():
            out.extend(n for n in _NAME_RE.findall(typ) if self._is_model(n))
        return out

    def _reachable(self, root: str) -> list[str]:
        seen = {root}
        todo = [root]
        while todo:
            for nxt in self._field_classes(todo.pop()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return sorted(seen)

    def _build(self, cls: str) -> tuple[Json, set[str]]:
        model = getattr(self._models, cls)
        props: Json = {}
        required: list[str] = []
        refs: set[str] = set()
        for attr, typ in model.openapi_types.items():
            json_name = model.attribute_map[attr]
            prop = getattr(model, attr)
            schema = self._type_schema(cls, attr, typ, refs)
            description = _description(prop.__doc__)
            if description:
                if "$ref" in schema:
                    schema = {"allOf": [schema]}
                schema["description"] = description
            props[json_name] = schema
            if _refuses_none(prop, attr):
                required.append(json_name)
        out: Json = {"type": "object", "properties": props}
        if required:
            out["required"] = required
        return out, refs

    def _type_schema(self, cls: str, attr: str, typ: str, refs: set[str]) -> Json:
        m = _LIST_RE.fullmatch(typ)
        if m:
            return {"type": "array", "items": self._type_schema(cls, attr, m[1], refs)}
        m = _DICT_RE.fullmatch(typ)
        if m:
            value = self._type_schema(cls, attr, m[1], refs)
            return {"type": "object", "additionalProperties": value}
        named: str | None = None
        if (cls, attr) in _QUANTITY_FIELDS and typ == "str":
            named = QUANTITY
        elif typ == "datetime":
            named = TIME
        elif typ == "object":
            if (cls, attr) in _INT_OR_STRING_FIELDS:
                named = INT_OR_STRING
            else:
                named = _SPECIAL_OBJECT_FIELDS.get((cls, attr), ANY_JSON)
        elif typ == "int":
            field = (self._name(cls), getattr(self._models, cls).attribute_map[attr])
            return {"type": "integer", "format": "int64" if field in INT64_FIELDS else "int32"}
        elif typ in _PRIMITIVES:
            return dict(_PRIMITIVES[typ])
        elif self._is_model(typ):
            named = self.definition(typ)
        if named is None:
            return {}
        refs.add(named)
        return ref(named)

    def _describe(self, name: str, texts: dict[str, str], kind: str) -> None:
        """Describe a kind's top-level fields the models leave blank (those holding a type)."""
        props = self._schemas[name]["properties"]
        for field, text in texts.items():
            prop = props.get(field)
            if prop is not None and "$ref" in prop:
                props[field] = {"allOf": [prop], "description": text.format(kind=kind)}

    def _annotate_lists(self, root: str, kind: str) -> None:
        """Put the merge extensions of `kind`'s lists on the fields of the types holding them."""
        todo: list[tuple[str, str, frozenset[str]]] = [(root, "", frozenset({root}))]
        while todo:
            cls, prefix, stack = todo.pop()
            model = getattr(self._models, cls)
            for attr, typ in model.openapi_types.items():
                json_name = model.attribute_map[attr]
                path = f"{prefix}.{json_name}" if prefix else json_name
                m = _LIST_RE.fullmatch(typ)
                if m:
                    sem = list_semantics(kind, path)
                    if sem is not None:
                        self._set_list_extensions(cls, json_name, sem)
                    typ, path = m[1], path + "[]"
                if (
                    self._is_model(typ)
                    and typ not in stack
                    and path.count(".") < _MAX_LIST_DEPTH
                ):
                    todo.append((typ, path, stack | {typ}))

    def _set_list_extensions(self, cls: str, json_name: str, sem: ListSemantics) -> None:
        prop = self._schemas[self.definition(cls)]["properties"][json_name]
        if sem.smp_merge_key:
            prop["x-kubernetes-patch-merge-key"] = sem.smp_merge_key
            prop["x-kubernetes-patch-strategy"] = "merge"
        elif sem.smp_scalar_set:
            prop["x-kubernetes-patch-strategy"] = "merge"
        if sem.ssa_map_keys:
            prop["x-kubernetes-list-type"] = "map"
            prop["x-kubernetes-list-map-keys"] = list(sem.ssa_map_keys)
        elif sem.ssa_set:
            prop["x-kubernetes-list-type"] = "set"
        else:
            prop["x-kubernetes-list-type"] = "atomic"


def _refuses_none(prop: Any, attr: str) -> bool:
    """Whether the generated setter rejects None, i.e. the field is required."""
    fset = getattr(prop, "fset", None)
    if fset is None:
        return False
    return f"Invalid value for `{attr}`, must not be `None`" in fset.__code__.co_consts


@lru_cache(maxsize=1)
def builtin_catalog() -> BuiltinCatalog:
    """The process-wide catalog (schemas are immutable once built; callers must not mutate)."""
    return BuiltinCatalog()
