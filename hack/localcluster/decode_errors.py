"""How kube-apiserver words a create's or update's body that is not an object of any kind:
apimachinery's transformDecodeError (`the object provided is unrecognized (must be of type
<Kind>): <error> (<summary of the body>)`) around the JSON serializer's `couldn't get
version/kind; json parse error: <encoding/json's error>`, a patch that is no JSON, and a
DELETE body naming another kind than DeleteOptions. Python's JSON errors are reworded as Go's
encoding/json words the usual ones."""

from __future__ import annotations

import json
from typing import Any

from .errors import ApiError, bad_request

_TYPE_META = ('struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string'
              ' "json:\\"kind,omitempty\\"" }')
_CONTEXT = {
    "Expecting property name enclosed in double quotes":
        "looking for beginning of object key string",
    "Expecting value": "looking for beginning of value",
    "Expecting ':' delimiter": "after object key",
    "Extra data": "after top-level value",
}


def _summary(raw: bytes) -> str:
    """summarizeData(body, 30)."""
    if not raw:
        return "<empty>"
    if raw[:1] == b"{":
        return raw[:30].decode("utf-8", "replace") + (" ..." if len(raw) > 30 else "")
    return raw[:30].hex() + (" ..." if len(raw) > 30 else "")


def _quote_char(ch: str) -> str:
    """encoding/json's quoteChar."""
    if ch == "'":
        return "'\\''"
    if ch == '"':
        return "'\"'"
    return "'" + json.dumps(ch)[1:-1] + "'"


def _innermost(text: str, pos: int) -> str:
    """The bracket that is open at `pos` ('{' or '['), strings skipped."""
    stack: list[str] = []
    in_string = escaped = False
    for ch in text[:pos]:
        if in_string:
            escaped = not escaped and ch == "\\"
            if ch == '"' and not escaped:
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append(ch)
        elif ch in "}]" and stack:
            stack.pop()
    return stack[-1] if stack else ""


def go_syntax_error(text: str, err: json.JSONDecodeError) -> str:
    """encoding/json's message for the syntax error Python found."""
    if err.pos >= len(text.rstrip()) or err.msg.startswith("Unterminated string"):
        return "unexpected end of JSON input"
    quoted = _quote_char(text[err.pos])
    if err.msg in _CONTEXT:
        return f"invalid character {quoted} {_CONTEXT[err.msg]}"
    if err.msg == "Expecting ',' delimiter":
        inside = ("after object key:value pair" if _innermost(text, err.pos) == "{"
                  else "after array element")
        return f"invalid character {quoted} {inside}"
    return err.msg


def _go_kind(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str):
        return "string"
    return "number"


def unrecognized(kind: str, raw: bytes) -> ApiError | None:
    """The error for a JSON body of a create or update that names no kind; None when the body
    is a JSON object (or null) and the usual decoding goes on."""
    text = raw.decode("utf-8", "replace")
    if not text.strip():
        reason = "unexpected end of JSON input"
    else:
        try:
            value = json.loads(text)
        except json.JSONDecodeError as err:
            reason = go_syntax_error(text, err)
        else:
            if value is None or isinstance(value, dict):
                return None
            reason = f"json: cannot unmarshal {_go_kind(value)} into Go value of type {_TYPE_META}"
    return bad_request(f"the object provided is unrecognized (must be of type {kind}):"
                       f" couldn't get version/kind; json parse error: {reason}"
                       f" ({_summary(raw)})")


_STRICT_PATCHES = ("application/json-patch+json", "application/merge-patch+json")


def patch_syntax_error(content_type: str, raw: bytes,
                       err: json.JSONDecodeError) -> ApiError | None:
    """A patch that is no JSON, as the patch handler refuses it: JSON and merge patches are
    first decoded strictly (`error decoding patch: <error>`, fieldValidation's default Warn),
    a strategic-merge patch is refused with the decoder's bare error. None for other bodies."""
    if content_type == "application/strategic-merge-patch+json":
        prefix = ""
    elif content_type in _STRICT_PATCHES:
        prefix = "error decoding patch: "
    else:
        return None
    text = raw.decode("utf-8", "replace")
    return bad_request(prefix + go_syntax_error(text, err))


_META_SCHEME = "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme/register.go:27"
#: Kinds other than DeleteOptions that the meta scheme decodes (they then fail as no
#: DeleteOptions); any other kind is not registered there.
_META_KINDS = frozenset(("Status", "APIVersions", "APIGroupList", "APIGroup", "APIResourceList",
                         "ListOptions", "GetOptions", "CreateOptions", "UpdateOptions",
                         "PatchOptions", "WatchEvent", "Table", "TableOptions",
                         "PartialObjectMetadata", "PartialObjectMetadataList", "List"))


def foreign_delete_options(body: dict[str, Any]) -> ApiError | None:
    """The delete handler's refusal of a body that names another kind than DeleteOptions: it
    decodes the body with the meta scheme, and the error is no API status, so it is a bare
    500. None for a DeleteOptions body (or one naming no kind)."""
    kind = body.get("kind")
    if not isinstance(kind, str) or kind in ("", "DeleteOptions"):
        return None
    if kind in _META_KINDS:
        return ApiError(500, "", "decoded object cannot be converted to DeleteOptions")
    version = body.get("apiVersion") or "meta.k8s.io/v1"
    return ApiError(500, "", f'no kind "{kind}" is registered for version "{version}" in scheme'
                             f' "{_META_SCHEME}"')
