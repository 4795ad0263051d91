"""Checks of an applied configuration before it is merged: its kind and version, no
managedFields, and what structured-merge-diff rejects when converting it to a typed value
(undeclared CRD fields, list elements it cannot key, duplicate keys)."""

from __future__ import annotations

from typing import Any

from ..errors import ApiError, bad_request
from ..fields_v1 import Path, path_string, pe_field, pe_string
from ..registry import ResourceType
from .field_types import FieldType
from .list_elements import ElementError, item_pe

Json = dict[str, Any]

__all__ = ["check_applied", "check_typed", "gvk_string", "metadata_of"]


def gvk_string(group: str, version: str, kind: str) -> str:
    return f"{group}/{version}, Kind={kind}"


def _parse_group_version(api_version: Any) -> tuple[str, str] | None:
    text = api_version if isinstance(api_version, str) else ""
    if text in ("", "/"):
        return ("", "")
    if text.count("/") == 0:
        return ("", text)
    if text.count("/") == 1:
        group, version = text.split("/")
        return (group, version)
    return None


def _applied_gvk(applied: Json) -> tuple[str, str, str]:
    gv = _parse_group_version(applied.get("apiVersion"))
    if gv is None:
        return ("", "", "")
    kind = applied.get("kind")
    return (gv[0], gv[1], kind if isinstance(kind, str) else "")


def metadata_of(obj: Any) -> Json:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    return meta if isinstance(meta, dict) else {}


def check_applied(applied: Any, rt: ResourceType) -> Json:
    if applied is None:
        applied = {}
    if not isinstance(applied, dict):
        kind = "array" if isinstance(applied, list) else type(applied).__name__
        raise bad_request(
            "error decoding patch: json: cannot unmarshal "
            f"{kind} into Go value of type map[string]interface {{}}"
        )
    gvk = _applied_gvk(applied)
    if gvk != (rt.group, rt.version, rt.kind):
        raise bad_request(f"invalid object type: {gvk_string(*gvk)}")
    if metadata_of(applied).get("managedFields") is not None:
        raise bad_request("metadata.managedFields must be nil")
    return applied


def _typed_errors(value: Any, t: FieldType, path: Path, errs: list[str]) -> None:
    """What structured-merge-diff rejects when converting an applied configuration."""
    if isinstance(value, dict):
        for name in sorted(value):
            child_path = (*path, pe_field(name))
            if not t.declared(name):
                errs.append(f"{path_string(child_path)}: field not declared in schema")
                continue
            _typed_errors(value[name], t.child(name), child_path, errs)
    elif isinstance(value, list):
        seen: set[str] = set()
        for i, item in enumerate(value):
            try:
                pe = item_pe(item, t, i)
            except ElementError as e:
                errs.append(f"{path_string(path)}: element {i}: {e}")
                continue
            if pe in seen:
                errs.append(f"{path_string(path)}: duplicate entries for key {pe_string(pe)}")
                continue
            seen.add(pe)
            _typed_errors(item, t.item(), (*path, pe), errs)


def check_typed(applied: Json, rt: ResourceType, root: FieldType) -> None:
    errs: list[str] = []
    _typed_errors(applied, root, (), errs)
    if not errs:
        return
    meta = metadata_of(applied)
    detail = errs[0] if len(errs) == 1 else "\n".join(["errors:", *("  " + e for e in errs)])
    where = f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"
    # The apiserver returns this as a plain error: code 500 and no reason.
    raise ApiError(
        500,
        "",
        f"failed to create typed patch object ({where}; "
        f"{gvk_string(rt.group, rt.version, rt.kind)}): {detail}",
    )
