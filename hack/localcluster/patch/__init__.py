"""PATCH bodies applied the way kube-apiserver applies them.

Three patch formats, each matching the library the real server uses:

* JSON patch (RFC 6902, `json_patch`) and JSON merge patch (RFC 7386, `merge_patch`) follow
  `gopkg.in/evanphx/json-patch.v4`, including its departures from the RFCs (a `replace` of a
  missing object key adds it, a `copy` from a missing key copies null, negative array indices
  count from the end, nulls are pruned from newly merged values).
* Strategic merge patch (`strategic_merge`, with `strategic_directives` and `strategic_lists`)
  follows the apply half of `k8s.io/apimachinery/pkg/util/strategicpatch`: list merge keys come
  from `list_semantics`, directives (`$patch`, `$retainKeys`, `$setElementOrder/…`,
  `$deleteFromPrimitiveList/…`) are honoured, and list elements end up in the order the real
  merge produces (new elements go before the live ones they are not ordered against, so an
  added container comes first).

Errors are the `Status` objects the apiserver's patch handler
(`staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go`) returns (`patch_errors`): an
undecodable patch is 400 BadRequest, a JSON patch that cannot be applied is 422 Invalid with the
generic message (the handler drops the library's text), and strategic-merge errors the handler
does not classify reach the client as 500 with an empty reason and the library's message.
"""

from __future__ import annotations

from typing import Final

from .json_patch import MAX_JSON_PATCH_OPERATIONS, json_patch
from .merge_patch import json_merge_patch
from .merge_patch_text import merge_patch_text
from .strategic_merge import strategic_merge_patch

__all__ = [
    "MAX_JSON_PATCH_OPERATIONS",
    "PATCH_CONTENT_TYPES",
    "json_merge_patch",
    "json_patch",
    "merge_patch_text",
    "strategic_merge_patch",
]

#: The PATCH content types kube-apiserver accepts, by the short name the HTTP layer dispatches on.
PATCH_CONTENT_TYPES: Final[dict[str, str]] = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
}
