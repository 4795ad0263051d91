"""Checks of a write request's field manager and of the object's name against the URL."""

from __future__ import annotations

from typing import Any

from ..errors import Cause, bad_request, invalid, invalid_object, too_long
from .applied_config import metadata_of

Json = dict[str, Any]

__all__ = ["FIELD_MANAGER_MAX_LENGTH", "check_name", "default_manager", "validate_field_manager"]

#: FieldManagerMaxLength of the apiserver's option validation.
FIELD_MANAGER_MAX_LENGTH = 128


def default_manager(user_agent: str) -> str:
    """The manager of a write without fieldManager: the User-Agent up to its first "/".

    Non-printable characters are dropped and the result stops before exceeding 128 bytes.
    """
    out: list[str] = []
    size = 0
    for ch in user_agent.split("/", 1)[0]:
        if not ch.isprintable():
            continue
        width = len(ch.encode("utf-8"))
        if size + width > FIELD_MANAGER_MAX_LENGTH:
            break
        out.append(ch)
        size += width
    return "".join(out)


def validate_field_manager(
    manager: str, *, options_kind: str = "PatchOptions", apply: bool = False
) -> None:
    """Reject a fieldManager the apiserver rejects (422 on the request's options object).

    options_kind is CreateOptions, UpdateOptions or PatchOptions; apply requires a manager.
    """
    causes: list[Cause] = []
    if apply and not manager:
        required = "Required value: is required for apply patch"
        causes.append(Cause("FieldValueRequired", required, "fieldManager"))
    if len(manager.encode("utf-8")) > FIELD_MANAGER_MAX_LENGTH:
        causes.append(too_long("fieldManager", FIELD_MANAGER_MAX_LENGTH))
    offset = 0
    for ch in manager:
        if not ch.isprintable():
            causes.append(
                invalid(f"fieldManager[{offset}]", manager, "all characters must be printable")
            )
        offset += len(ch.encode("utf-8"))
    if causes:
        raise invalid_object("meta.k8s.io", options_kind, "", causes)


def check_name(obj: Json, name: str, namespace: str = "") -> None:
    """The apiserver's check of a patched or applied object against the URL (400 on mismatch)."""
    meta = metadata_of(obj)
    obj_name = meta.get("name") or ""
    if not obj_name:
        raise bad_request(
            f"the name of the object ({name} based on URL) was undeterminable: "
            "name must be provided"
        )
    if obj_name != name:
        raise bad_request(
            f"the name of the object ({obj_name}) does not match the name on the URL ({name})"
        )
    obj_namespace = meta.get("namespace") or ""
    if namespace and obj_namespace and obj_namespace != namespace:
        raise bad_request(
            f"the namespace of the object ({obj_namespace}) does not match the namespace on "
            f"the request ({namespace})"
        )
