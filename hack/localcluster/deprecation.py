"""Deprecated versions of custom resources: the `Warning` every request to one earns.

A CRD version marked `deprecated: true` is still served, but kube-apiserver's CRD handler
adds its `deprecationWarning` (or a default text) as a `Warning: 299 - "<text>"` header to
every request made to that version, whatever the verb or subresource and whatever the
answer, errors and watches included; kubectl prints it on stderr as `Warning: <text>`.
The HTTP layer marks a request with `mark` once it has resolved the resource, and
`add_warning` (an `on_response_prepare` hook) writes the header before anything is sent, in
front of the warnings the request earned later (admission webhooks). `warning_errors` is what
the CRD API refuses in a `deprecationWarning`.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from aiohttp import web

from .registry import ResourceType, kube_aware_key

Json = dict[str, Any]
#: The longest `deprecationWarning` the CRD API accepts (Go counts bytes).
MAX_WARNING_LENGTH = 256
#: The deprecation warning of the version a request was made to.
WARNING_KEY = web.RequestKey("deprecation_warning", str)


def warning_of(spec: Json, version: Json) -> str | None:
    """The warning requests to one version of a CRD spec earn; None when not deprecated."""
    if not version.get("deprecated"):
        return None
    text = version.get("deprecationWarning")
    if isinstance(text, str):
        return text
    return default_warning(spec, str(version["name"]))


def default_warning(spec: Json, deprecated: str) -> str:
    """kube-apiserver's text for a deprecated version without a `deprecationWarning`: it
    names the highest served, not deprecated version above it, if there is one."""
    group, kind = spec["group"], spec["names"]["kind"]
    text = f"{group}/{deprecated} {kind} is deprecated"
    newer = [v["name"] for v in spec.get("versions") or ()
             if v.get("served") and not v.get("deprecated")
             and kube_aware_key(v["name"]) < kube_aware_key(deprecated)]
    if newer:
        text += f"; use {group}/{min(newer, key=kube_aware_key)} {kind}"
    return text


def warning_errors(version: Json) -> list[str]:
    """What the CRD API says of a version's `deprecationWarning` (apiextensions-apiserver's
    validateDeprecationWarning), in its order; offsets count bytes, as Go's do."""
    text = version.get("deprecationWarning")
    if not isinstance(text, str):
        return []
    if not version.get("deprecated"):
        return ["can only be set for deprecated versions"]
    errors = []
    if len(text.encode()) > MAX_WARNING_LENGTH:
        errors.append(f"must be <= {MAX_WARNING_LENGTH} characters long")
    if not text:
        errors.append("must not be an empty string")
    for i, char in enumerate(text):
        offset = len(text[:i].encode())
        if not _printable(char):
            errors.append("must only contain printable UTF-8 characters; non-printable"
                          f" character found at index {offset}")
            break
        if unicodedata.category(char) == "Cc":
            errors.append("must only contain printable UTF-8 characters; control character"
                          f" found at index {offset}")
            break
    return errors


def _printable(char: str) -> bool:
    """Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII
    space."""
    return char == " " or unicodedata.category(char)[0] in "LMNPS"


def mark(request: web.Request, rt: ResourceType) -> None:
    """Note that the request is made to `rt`, so its answer carries its warning if any."""
    if rt.deprecation_warning is not None:
        request[WARNING_KEY] = rt.deprecation_warning


def header_value(text: str) -> str:
    """One warning as an RFC 7234 `Warning` value with code 299, as kube-apiserver writes it."""
    return '299 - "' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


async def add_warning(request: web.Request, response: web.StreamResponse) -> None:
    """The `on_response_prepare` hook: the marked request's warning goes first, once."""
    text = request.get(WARNING_KEY)
    if text is None:
        return
    value = header_value(text)
    later = [v for v in response.headers.getall("Warning", ()) if v != value]
    response.headers.popall("Warning", None)
    response.headers.add("Warning", value)
    for other in later:
        response.headers.add("Warning", other)


__all__ = ["MAX_WARNING_LENGTH", "WARNING_KEY", "add_warning", "default_warning",
           "header_value", "mark", "warning_errors", "warning_of"]
