"""Validation of ConfigMaps and Secrets as k8s.io/kubernetes' core validation does it: data
keys (IsConfigMapKey), a ConfigMap key in both data and binaryData, the keys each Secret type
requires, and what `immutable: true` (and a Secret's type) freezes on update."""

from __future__ import annotations

import re
from typing import Any

from .errors import Cause, forbidden, invalid, required
from .name_validation import regex_error

Json = dict[str, Any]

_KEY = r"[-._a-zA-Z0-9]+"
_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
_FROZEN = "field is immutable when `immutable` is set"


_KEY_MATCH = re.compile(_KEY, re.ASCII).fullmatch


def key_errors(key: str) -> list[str]:
    """IsConfigMapKey."""
    if len(key) <= 253 and _KEY_MATCH(key) and key != "." and not key.startswith(".."):
        return []  # the common case, without building messages
    errs = []
    if len(key) > 253:
        errs.append("must be no more than 253 characters")
    if _KEY_MATCH(key) is None:
        errs.append(regex_error(_KEY_MSG, _KEY, "key.name", "KEY_NAME", "key-name"))
    if key == ".":
        errs.append("must not be '.'")
    elif key == "..":
        errs.append("must not be '..'")
    elif key.startswith(".."):
        errs.append("must not start with '..'")
    return errs


def _map(obj: Json, field: str) -> Json:
    value = obj.get(field)
    return value if isinstance(value, dict) else {}


def _keys(data: Json, path: str) -> list[Cause]:
    return [invalid(f"{path}[{key}]", key, msg) for key in data
            if isinstance(key, str) for msg in key_errors(key)]


def _secret_data(obj: Json) -> Json:
    """data as the strategy leaves it before validation: stringData merged in."""
    return {**_map(obj, "data"), **_map(obj, "stringData")}


def _secret_type_errors(obj: Json) -> list[Cause]:
    data = _secret_data(obj)
    kind = obj.get("type") or "Opaque"
    if kind == "kubernetes.io/service-account-token":
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        if not annotations.get("kubernetes.io/service-account.name"):
            return [required("metadata.annotations[kubernetes.io/service-account.name]")]
    elif kind == "kubernetes.io/dockercfg" and ".dockercfg" not in data:
        return [required("data[.dockercfg]")]
    elif kind == "kubernetes.io/dockerconfigjson" and ".dockerconfigjson" not in data:
        return [required("data[.dockerconfigjson]")]
    elif kind == "kubernetes.io/basic-auth" and not ({"username", "password"} & set(data)):
        # The Go source builds these paths from the literal "data[%s]".
        return [required("data[%s][username]"), required("data[%s][password]")]
    elif kind == "kubernetes.io/ssh-auth" and not data.get("ssh-privatekey"):
        return [required("data[%s][ssh-privatekey]")]
    elif kind == "kubernetes.io/tls":
        return [required(f"data[{k}]") for k in ("tls.crt", "tls.key") if k not in data]
    return []


def _frozen(obj: Json, old: Json, fields: tuple[str, ...]) -> list[Cause]:
    if old.get("immutable") is not True:
        return []
    errors = [] if obj.get("immutable") is True else [forbidden("immutable", _FROZEN)]
    return errors + [forbidden(f, _FROZEN) for f in fields if obj.get(f) != old.get(f)]


def validation_errors(kind: str, obj: Json, old: Json | None) -> list[Cause]:
    """ValidateConfigMap(Update) or ValidateSecret(Update) for `obj` (`old` on updates)."""
    if kind == "ConfigMap":
        data, binary = _map(obj, "data"), _map(obj, "binaryData")
        errors = _keys(data, "data")
        errors += [invalid(f"data[{k}]", k, "duplicate of key present in binaryData")
                   for k in data if k in binary]
        errors += _keys(binary, "binaryData")
        return errors + ([] if old is None else _frozen(obj, old, ("data", "binaryData")))
    errors = _keys(_secret_data(obj), "data") + _secret_type_errors(obj)
    if old is not None:
        if (obj.get("type") or "Opaque") != (old.get("type") or "Opaque"):
            errors.append(invalid("type", obj.get("type"), "field is immutable"))
        errors += _frozen(obj, old, ("data",))
    return errors


def drop_empty(obj: Json) -> None:
    """data and binaryData are `omitempty` maps: Go's encoder leaves an empty one out."""
    for field in ("data", "binaryData"):
        if obj.get(field) == {}:
            del obj[field]
