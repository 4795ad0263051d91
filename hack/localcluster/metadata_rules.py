"""Validation of ObjectMeta shared by every kind: names, labels, annotations, owner references."""

from __future__ import annotations

import re
from typing import Any

from .errors import Cause, forbidden, invalid, required

_DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = _DNS1123_LABEL + r"(\." + _DNS1123_LABEL + ")*"
_DNS1035_LABEL = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED_NAME = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"

_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or"
    " '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex"
    " used for validation is '" + _DNS1123_SUBDOMAIN.replace(r"\.", "\\.") + "')"
)
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and"
    " must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex"
    " used for validation is '" + _DNS1123_LABEL + "')"
)
_DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an"
    " alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or"
    " 'abc-123', regex used for validation is '" + _DNS1035_LABEL + "')"
)

_FULL = {pattern: re.compile(pattern).fullmatch for pattern in (
    _DNS1123_LABEL, _DNS1123_SUBDOMAIN, _DNS1035_LABEL, _QUALIFIED_NAME, _LABEL_VALUE)}

#: Kinds whose names are DNS-1123 labels or DNS-1035 labels rather than subdomains.
_LABEL_NAMED = {"Namespace"}
_DNS1035_NAMED = {"Service"}
#: Kinds whose names are only checked to be valid path segments.
_PATH_SEGMENT_NAMED = {"APIService", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}


def name_errors(kind: str, name: str, path: str = "metadata.name") -> list[Cause]:
    """Name rules per kind, with the messages of apimachinery's validators."""
    if kind in _PATH_SEGMENT_NAMED:
        for bad in (".", ".."):
            if name == bad:
                return [invalid(path, name, f"may not be '{bad}'")]
        for bad in ("/", "%"):
            if bad in name:
                return [invalid(path, name, f"may not contain '{bad}'")]
        return []
    if kind in _DNS1035_NAMED:
        pattern, msg, limit = _DNS1035_LABEL, _DNS1035_MSG, 63
    elif kind in _LABEL_NAMED:
        pattern, msg, limit = _DNS1123_LABEL, _LABEL_MSG, 63
    else:
        pattern, msg, limit = _DNS1123_SUBDOMAIN, _SUBDOMAIN_MSG, 253
    errors = []
    if len(name) > limit:
        errors.append(invalid(path, name, f"must be no more than {limit} characters"))
    if not _FULL[pattern](name):
        errors.append(invalid(path, name, msg))
    return errors


def qualified_name_errors(path: str, key: str) -> list[Cause]:
    """Label and annotation keys: an optional DNS subdomain prefix and a name part."""
    prefix, _, name = key.rpartition("/")
    errors: list[Cause] = []
    if "/" in key and not prefix:
        errors.append(invalid(path, key, "prefix part must be non-empty"))
    elif prefix and (len(prefix) > 253 or not _FULL[_DNS1123_SUBDOMAIN](prefix)):
        errors.append(invalid(path, key, "prefix part " + _SUBDOMAIN_MSG))
    if not name:
        errors.append(invalid(path, key, "name part must be non-empty"))
    elif len(name) > 63:
        errors.append(invalid(path, key, "name part must be no more than 63 characters"))
    elif not _FULL[_QUALIFIED_NAME](name):
        errors.append(invalid(
            path, key,
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must"
            " start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or"
            " '123-abc', regex used for validation is '" + _QUALIFIED_NAME + "')",
        ))
    return errors


def metadata_errors(kind: str, meta: Any, namespaced: bool) -> list[Cause]:
    """Everything ObjectMeta validation checks on create and update."""
    if not isinstance(meta, dict):
        return [invalid("metadata", meta, "must be an object")]
    errors: list[Cause] = []
    name = meta.get("name")
    if not name:
        errors.append(Cause("FieldValueRequired",
                            "Required value: name or generateName is required", "metadata.name"))
    elif not isinstance(name, str):
        errors.append(invalid("metadata.name", name, "must be a string"))
    else:
        errors.extend(name_errors(kind, name))
    if not namespaced and meta.get("namespace"):
        errors.append(forbidden("metadata.namespace", "not allowed on this type"))
    labels = meta.get("labels") or {}
    if not isinstance(labels, dict):
        errors.append(invalid("metadata.labels", labels, "must be an object"))
        labels = {}
    for key, value in labels.items():
        errors.extend(qualified_name_errors("metadata.labels", key))
        if not isinstance(value, str):
            errors.append(invalid("metadata.labels", value, "must be a string"))
        elif len(value) > 63:
            errors.append(invalid("metadata.labels", value,
                                  "must be no more than 63 characters"))
        elif not _FULL[_LABEL_VALUE](value):
            errors.append(invalid(
                "metadata.labels", value,
                "a valid label must be an empty string or consist of alphanumeric characters,"
                " '-', '_' or '.', and must start and end with an alphanumeric character (e.g."
                " 'MyValue',  or 'my_value',  or '12345', regex used for validation is '"
                + "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            ))
    annotations = meta.get("annotations") or {}
    if not isinstance(annotations, dict):
        errors.append(invalid("metadata.annotations", annotations, "must be an object"))
        annotations = {}
    total = 0
    for key, value in annotations.items():
        errors.extend(qualified_name_errors("metadata.annotations", key.lower()))
        total += len(key) + len(value if isinstance(value, str) else "")
    if total > 256 * 1024:
        errors.append(Cause("FieldValueTooLong",
                            "Too long: must have at most 262144 bytes", "metadata.annotations"))
    for i, ref in enumerate(meta.get("ownerReferences") or []):
        path = f"metadata.ownerReferences[{i}]"
        if not isinstance(ref, dict):
            errors.append(invalid(path, ref, "must be an object"))
            continue
        for fld in ("apiVersion", "kind", "name", "uid"):
            if not ref.get(fld):
                errors.append(required(f"{path}.{fld}") if fld != "uid" else
                              invalid(f"{path}.uid", "", "uid must not be empty"))
    controllers = [r for r in meta.get("ownerReferences") or [] if isinstance(r, dict)
                   and r.get("controller")]
    if len(controllers) > 1:
        errors.append(invalid("metadata.ownerReferences", meta["ownerReferences"],
                              "Only one reference can have Controller set to true"))
    for i, fin in enumerate(meta.get("finalizers") or []):
        if not isinstance(fin, str) or not fin:
            errors.append(invalid(f"metadata.finalizers[{i}]", fin, "must be a non-empty string"))
        elif "/" not in fin and fin not in _STANDARD_FINALIZERS:
            errors.append(invalid(
                f"metadata.finalizers[{i}]", fin,
                "name is neither a standard finalizer name nor is it fully qualified"))
        else:
            errors.extend(qualified_name_errors(f"metadata.finalizers[{i}]", fin))
    return errors


_STANDARD_FINALIZERS = {"kubernetes", "orphan", "foregroundDeletion"}
