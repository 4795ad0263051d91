"""JSON merge patch (RFC 7386) as gopkg.in/evanphx/json-patch.v4 applies it.

Departing from the RFC like the library does: nulls are pruned from newly merged values, but a
non-object patch value replacing an object keeps its nulls.
"""

from __future__ import annotations

from typing import Any

from ..errors import bad_request
from ..json_copy import copy_json
from .patch_errors import decode_error

Json = dict[str, Any]

__all__ = ["json_merge_patch"]


def json_merge_patch(target: Json, patch: Any) -> Json:
    """Apply an RFC 7386 merge patch to `target` and return the result as a new object.

    A null value deletes a key; an object merges into an object; anything else replaces. The
    patch document itself must be an object, as kube-apiserver requires.
    """
    if patch is None:
        raise bad_request("Invalid JSON Patch")
    if not isinstance(patch, dict):
        raise decode_error(patch, "Go value of type map[string]interface {}")
    doc = copy_json(target)
    _merge_docs(doc, copy_json(patch))
    return doc


def _merge_docs(doc: Json, patch: Json) -> None:
    for key, value in patch.items():
        if value is None:
            doc.pop(key, None)
        elif doc.get(key) is None:
            doc[key] = _prune_nulls(value)
        else:
            doc[key] = _merge_value(doc[key], value)


def _merge_value(current: Any, patch: Any) -> Any:
    if not isinstance(current, dict):
        return _prune_nulls(patch)
    if not isinstance(patch, dict):
        # evanphx returns the patch value untouched here: its nulls survive.
        return patch
    _merge_docs(current, patch)
    return current


def _prune_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _prune_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_prune_nulls(v) for v in value if v is not None]
    return value
