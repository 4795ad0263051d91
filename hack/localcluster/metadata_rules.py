"""Validation of ObjectMeta shared by every kind: names, labels, annotations, owner references."""

from __future__ import annotations

import re
from typing import Any

from .errors import Cause, forbidden, invalid

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
    if key.count("/") > 1:  # IsQualifiedName refuses the whole key
        return [invalid(path, key, (
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and"
            " must start and end with an alphanumeric character (e.g. 'MyName',  or"
            " 'my.name',  or '123-abc', regex used for validation is '" + _QUALIFIED_NAME
            + "') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"))]
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
    generate = meta.get("generateName")
    if generate and isinstance(generate, str):
        errors.extend(_generate_name_errors(kind, generate))
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
    errors.extend(_owner_reference_errors(meta.get("ownerReferences") or []))
    for i, fin in enumerate(meta.get("finalizers") or []):
        if not isinstance(fin, str) or not fin:
            errors.append(invalid(f"metadata.finalizers[{i}]", fin, "must be a non-empty string"))
            continue
        # apimachinery's check names the list, the core one the entry.
        errors.extend(qualified_name_errors("metadata.finalizers", fin))
        if "/" not in fin and fin not in _STANDARD_FINALIZERS:
            errors.append(invalid(
                f"metadata.finalizers[{i}]", fin,
                "name is neither a standard finalizer name nor is it fully qualified"))
    return errors


def _generate_name_errors(kind: str, generate: str) -> list[Cause]:
    """ValidateObjectMeta checks generateName as a name prefix: one trailing dash is allowed
    (maskTrailingDash), and the causes show the prefix as given."""
    masked = generate[:-1] + "a" if len(generate) > 1 and generate.endswith("-") else generate
    return [Cause(c.reason, c.message.replace(f'"{masked}"', f'"{generate}"', 1),
                  "metadata.generateName")
            for c in name_errors(kind, masked, "metadata.generateName")]


def _go_owner_references(refs: list[Any]) -> str:
    """Go's %#v of []metav1.OwnerReference (pointer addresses are made up, as they vary)."""
    def pointer(value: Any) -> str:
        return "(*bool)(nil)" if value is None else "(*bool)(0xc000010000)"
    items = [
        f'v1.OwnerReference{{APIVersion:"{r.get("apiVersion", "")}", Kind:"{r.get("kind", "")}",'
        f' Name:"{r.get("name", "")}", UID:"{r.get("uid", "")}",'
        f" Controller:{pointer(r.get('controller'))},"
        f" BlockOwnerDeletion:{pointer(r.get('blockOwnerDeletion'))}}}"
        for r in refs if isinstance(r, dict)]
    return "[]v1.OwnerReference{" + ", ".join(items) + "}"


def _owner_reference_errors(refs: Any) -> list[Cause]:
    """ValidateOwnerReferences: the fields' paths carry no index."""
    if not isinstance(refs, list):
        return [invalid("metadata.ownerReferences", refs, "must be a list")]
    path = "metadata.ownerReferences"
    errors: list[Cause] = []
    first_controller = ""
    for ref in refs:
        if not isinstance(ref, dict):
            errors.append(invalid(path, ref, "must be an object"))
            continue
        api_version = str(ref.get("apiVersion") or "")
        if not api_version.rpartition("/")[2]:
            errors.append(invalid(f"{path}.apiVersion", api_version, "version must not be empty"))
        for fld, what in (("kind", "kind"), ("name", "name"), ("uid", "uid")):
            if not ref.get(fld):
                errors.append(invalid(f"{path}.{fld}", str(ref.get(fld) or ""),
                                      f"{what} must not be empty"))
        if ref.get("controller") is True:
            if not first_controller:
                first_controller = str(ref.get("name", ""))
            else:
                errors.append(Cause(
                    "FieldValueInvalid", f"Invalid value: {_go_owner_references(refs)}: Only one"
                    " reference can have Controller set to true. Found \"true\" in references"
                    f" for {first_controller} and {ref.get('name', '')}", path))
    return errors


_STANDARD_FINALIZERS = {"kubernetes", "orphan", "foregroundDeletion"}
