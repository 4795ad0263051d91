"""Kubernetes' own rules for values the operator copies into the objects it makes.

Labels, annotations, the main container and the free-form pod spec of a component are kept as
given by the CRD schema (`x-kubernetes-preserve-unknown-fields`, string maps without syntax
rules), so the API server only checks them when the operator writes a child, and then names
the child's field, not the user's. These checks run first and name the user's field path.
The messages follow the API server's where it has one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from api import names
from api.errors import FieldError

INT32_MAX = 2**31 - 1
#: The API server's limit on all annotations of one object together (bytes).
TOTAL_ANNOTATION_SIZE = 256 * 1024
LABEL_VALUE_MAX_LENGTH = 63
QUALIFIED_NAME_MAX_LENGTH = 63
#: How deep a free-form value may nest before it is refused (the API server allows far more,
#: but nothing a pod spec needs comes close).
MAX_DEPTH = 40

_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"

#: Container fields that are strings, and those that are lists of strings.
_CONTAINER_STRINGS = ("name", "image", "imagePullPolicy", "workingDir",
                      "terminationMessagePath", "terminationMessagePolicy")
_CONTAINER_STRING_LISTS = ("command", "args")
#: Container fields that are lists of objects.
_CONTAINER_OBJECT_LISTS = ("env", "envFrom", "ports", "volumeMounts", "volumeDevices")
#: Pod-spec fields the builders read or extend, with their JSON types.
_POD_OBJECT_LISTS = ("containers", "initContainers", "volumes", "imagePullSecrets",
                     "tolerations", "hostAliases")
_POD_STRINGS = ("serviceAccountName", "schedulerName", "priorityClassName", "restartPolicy",
                "nodeName", "hostname", "subdomain")
_POD_OBJECTS = ("affinity", "securityContext", "dnsConfig")


def qualified_name(path: str, key: object) -> list[FieldError]:
    """A label or annotation key: an optional DNS subdomain prefix and '/', then a name of at
    most 63 characters of alphanumerics, '-', '_' and '.'."""
    if not isinstance(key, str):
        return [FieldError(path, f"key must be a string, got {type(key).__name__}")]
    prefix, slash, name = key.rpartition("/")
    problems = []
    if slash:
        if not prefix:
            problems.append("prefix part must be non-empty")
        else:
            problems += [f"prefix part {m}" for m in names.is_dns1123_subdomain(prefix)]
    if not name:
        problems.append("name part must be non-empty")
    else:
        if len(name) > QUALIFIED_NAME_MAX_LENGTH:
            problems.append(f"name part must be no more than {QUALIFIED_NAME_MAX_LENGTH} "
                            "characters")
        if not _QUALIFIED_NAME.fullmatch(name):
            problems.append(
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must "
                "start and end with an alphanumeric character (e.g. 'MyName', or 'my.name', "
                f"or '123-abc', regex used for validation is '{_QUALIFIED_NAME_FMT}')")
    return [FieldError(path, f"{shown(key)}: {p}") for p in problems]


def label_value(path: str, value: object) -> list[FieldError]:
    """A label value: empty, or at most 63 characters of alphanumerics, '-', '_' and '.',
    starting and ending with an alphanumeric."""
    if not isinstance(value, str):
        return [FieldError(path, f"must be a string, got {type(value).__name__}")]
    problems = []
    if len(value) > LABEL_VALUE_MAX_LENGTH:
        problems.append(f"must be no more than {LABEL_VALUE_MAX_LENGTH} characters")
    if value and not _QUALIFIED_NAME.fullmatch(value):
        problems.append(
            "a valid label must be an empty string or consist of alphanumeric characters, "
            "'-', '_' or '.', and must start and end with an alphanumeric character "
            f"(regex used for validation is '{_QUALIFIED_NAME_FMT}')")
    return [FieldError(path, f"{shown(value)}: {p}") for p in problems]


def label_map(path: str, mapping: Mapping[str, Any] | None) -> list[FieldError]:
    """Every key and value of a label map; an error on a value is at `<path>.<key>`."""
    errors: list[FieldError] = []
    for key, value in (mapping or {}).items():
        errors += qualified_name(path, key)
        errors += label_value(f"{path}.{key}", value)
    return errors


def annotation_map(path: str, mapping: Mapping[str, Any] | None) -> list[FieldError]:
    """Every key of an annotation map, string values, and their total size."""
    errors: list[FieldError] = []
    total = 0
    for key, value in (mapping or {}).items():
        errors += qualified_name(path, key)
        if not isinstance(value, str):
            errors.append(FieldError(f"{path}.{key}",
                                     f"must be a string, got {type(value).__name__}"))
            continue
        total += len(str(key).encode()) + len(value.encode())
    if total > TOTAL_ANNOTATION_SIZE:
        errors.append(FieldError(path, f"may not have more than {TOTAL_ANNOTATION_SIZE} bytes "
                                       f"in all (has {total})"))
    return errors


def int32(path: str, value: object) -> list[FieldError]:
    """A number the API server stores as int32 (replicas, counts, ports...)."""
    if value is None or isinstance(value, bool) or not isinstance(value, int):
        return []
    if not -(2**31) <= value <= INT32_MAX:
        return [FieldError(path, f"must be at most {INT32_MAX} (a 32-bit integer), got {value}")]
    return []


def container(path: str, value: object, *, main: bool = False) -> list[FieldError]:
    """The shape of a container: the fields the builders read have their JSON types, and a
    main container's image, when given, is a non-empty string."""
    if not isinstance(value, dict):
        return [FieldError(path, f"must be an object, got {_type(value)}")]
    errors: list[FieldError] = []
    for key in _CONTAINER_STRINGS:
        errors += _typed(f"{path}.{key}", value.get(key), str)
    for key in _CONTAINER_STRING_LISTS:
        errors += _string_list(f"{path}.{key}", value.get(key))
    for key in _CONTAINER_OBJECT_LISTS:
        errors += _object_list(f"{path}.{key}", value.get(key))
    if main and value.get("image") == "":
        errors.append(FieldError(f"{path}.image", "must not be empty"))
    for i, env in enumerate(_items(value.get("env"))):
        if isinstance(env, dict):
            errors += env_var(f"{path}.env[{i}]", env)
    for i, port in enumerate(_items(value.get("ports"))):
        if isinstance(port, dict):
            errors += _port(f"{path}.ports[{i}]", port)
    for key in ("resources", "securityContext", "livenessProbe", "readinessProbe",
                "startupProbe", "lifecycle"):
        errors += _typed(f"{path}.{key}", value.get(key), dict)
    return errors


def pod_spec(path: str, value: Mapping[str, Any]) -> list[FieldError]:
    """The shape of the free-form pod-spec fields the builders read or extend."""
    errors: list[FieldError] = []
    for key in _POD_OBJECT_LISTS:
        errors += _object_list(f"{path}.{key}", value.get(key))
    for key in _POD_STRINGS:
        errors += _typed(f"{path}.{key}", value.get(key), str)
    for key in _POD_OBJECTS:
        errors += _typed(f"{path}.{key}", value.get(key), dict)
    for key in ("containers", "initContainers"):
        for i, item in enumerate(_items(value.get(key))):
            if isinstance(item, dict):
                errors += container(f"{path}.{key}[{i}]", item)
    for i, volume in enumerate(_items(value.get("volumes"))):
        if isinstance(volume, dict):
            errors += _typed(f"{path}.volumes[{i}].name", volume.get("name"), str)
    node_selector = value.get("nodeSelector")
    if node_selector is not None:
        if isinstance(node_selector, dict):
            errors += label_map(f"{path}.nodeSelector", node_selector)
        else:
            errors.append(FieldError(f"{path}.nodeSelector",
                                     f"must be an object, got {_type(node_selector)}"))
    for key in ("terminationGracePeriodSeconds", "activeDeadlineSeconds", "priority"):
        errors += _typed(f"{path}.{key}", value.get(key), int)
    errors += depth(path, value)
    return errors


def depth(path: str, value: object, limit: int = MAX_DEPTH) -> list[FieldError]:
    """Refuse a value nested deeper than `limit` levels."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if level > limit:
            return [FieldError(path, f"nested more than {limit} levels deep")]
        if isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, level + 1) for v in item)
    return []


def env_var(path: str, env: Mapping[str, Any]) -> list[FieldError]:
    """An EnvVar: a string name, a string value or an object valueFrom."""
    errors = _typed(f"{path}.name", env.get("name"), str)
    errors += _typed(f"{path}.value", env.get("value"), str)
    errors += _typed(f"{path}.valueFrom", env.get("valueFrom"), dict)
    return errors


def _port(path: str, port: Mapping[str, Any]) -> list[FieldError]:
    errors = _typed(f"{path}.name", port.get("name"), str)
    number = port.get("containerPort")
    errors += _typed(f"{path}.containerPort", number, int)
    if isinstance(number, int) and not isinstance(number, bool) and not 0 < number < 65536:
        errors.append(FieldError(f"{path}.containerPort",
                                 f"must be between 1 and 65535, inclusive, got {number}"))
    return errors


def _items(value: object) -> list[Any]:
    """The entries of a list; none for anything else (its type is reported on its own)."""
    return value if isinstance(value, list) else []


def _typed(path: str, value: object, kind: type) -> list[FieldError]:
    if value is None:
        return []
    if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
        return []
    expected = {str: "a string", int: "an integer", dict: "an object"}.get(kind, kind.__name__)
    return [FieldError(path, f"must be {expected}, got {_type(value)}")]


def _string_list(path: str, value: object) -> list[FieldError]:
    if value is None:
        return []
    if not isinstance(value, list):
        return [FieldError(path, f"must be a list of strings, got {_type(value)}")]
    return [FieldError(f"{path}[{i}]", f"must be a string, got {_type(item)}")
            for i, item in enumerate(value) if not isinstance(item, str)]


def _object_list(path: str, value: object) -> list[FieldError]:
    if value is None:
        return []
    if not isinstance(value, list):
        return [FieldError(path, f"must be a list, got {_type(value)}")]
    return [FieldError(f"{path}[{i}]", f"must be an object, got {_type(item)}")
            for i, item in enumerate(value) if not isinstance(item, dict)]


def _type(value: object) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "list",
            dict: "object"}.get(type(value), type(value).__name__)


def clip(value: str | int) -> str | int:
    """A value for a message: as it is when short, its start and its length when long (a
    message carries no 300 kB string into a status, an event or a response header)."""
    if not isinstance(value, str) or len(value) <= 80:
        return value
    return f"{value[:60]}... ({len(value)} characters)"


def shown(value: str) -> str:
    """A value quoted for a message, shortened when long."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:60] + '..." (' + str(len(value)) + " characters)"
