"""The text gopkg.in/evanphx/json-patch.v4's MergePatch writes for a patched object, which
kube-apiserver quotes when the result does not decode: members of every object the patch
reached are in sorted key order (the library re-marshals them from Go maps), while members it
did not reach keep the text they had in the encoded original (for metadata, ObjectMeta's field
order)."""

from __future__ import annotations

import json
from typing import Any

from ..go_format import go_json, go_json_html_escape

#: k8s.io/apimachinery's ObjectMeta fields in struct order (its JSON encoding's order).
_OBJECT_META = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion",
                "generation", "creationTimestamp", "deletionTimestamp",
                "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences",
                "finalizers", "managedFields")


def merge_patch_text(patched: dict[str, Any], patch: Any) -> str:
    """The library's output for `patched`, the result of merging the object patch `patch`."""
    return _reached(patched, patch, top=True)


def _reached(value: Any, patch: Any, top: bool = False) -> str:
    if not (isinstance(value, dict) and isinstance(patch, dict)):
        return go_json(value)
    members = []
    for key in sorted(value):
        if key in patch:
            text = _reached(value[key], patch[key])
        elif top and key == "metadata" and isinstance(value[key], dict):
            text = _untouched(_in_meta_order(value[key]))
        else:
            text = _untouched(value[key])
        members.append(go_json(key) + ":" + text)
    return "{" + ",".join(members) + "}"


def _in_meta_order(meta: dict[str, Any]) -> dict[str, Any]:
    ordered = {k: meta[k] for k in _OBJECT_META if k in meta}
    ordered.update((k, v) for k, v in meta.items() if k not in ordered)
    return ordered


def _untouched(value: Any) -> str:
    return go_json_html_escape(json.dumps(value, separators=(",", ":"), ensure_ascii=False))
