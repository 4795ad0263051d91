"""API errors as kube-apiserver reports them: a `Status` object with code, reason and causes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .go_format import go_encode

Json = dict[str, Any]


@dataclass(frozen=True)
class Cause:
    """One StatusCause: which field is wrong and why (reason is a metav1.CauseType)."""

    reason: str
    message: str
    field: str = ""

    def to_json(self) -> Json:
        out: Json = {"reason": self.reason, "message": self.message}
        if self.field:
            out["field"] = self.field
        return out


def required(path: str) -> Cause:
    return Cause("FieldValueRequired", "Required value", path)


def invalid(path: str, value: Any, detail: str) -> Cause:
    return Cause("FieldValueInvalid", f"Invalid value: {_render(value)}: {detail}", path)


def unsupported(path: str, value: Any, allowed: list[Any]) -> Cause:
    choices = ", ".join(_render(v) for v in allowed)
    return Cause("FieldValueNotSupported",
                 f"Unsupported value: {_render(value)}: supported values: {choices}", path)


def forbidden(path: str, detail: str) -> Cause:
    return Cause("FieldValueForbidden", f"Forbidden: {detail}", path)


def too_long(path: str, limit: int) -> Cause:
    return Cause("FieldValueTooLong", f"Too long: may not be more than {limit} bytes", path)


def duplicate(path: str, value: Any) -> Cause:
    return Cause("FieldValueDuplicate", f"Duplicate value: {_render(value)}", path)


def json_type(value: Any) -> str:
    """The JSON type name kube-openapi infers for a decoded value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _render(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (dict, list)):
        return json_type(value)
    return str(value)


@dataclass
class ApiError(Exception):
    """Raised anywhere in the server; the HTTP layer turns it into a Status response."""

    code: int
    reason: str
    message: str
    details: Json = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    #: write `details: {}` even when empty (Go's Details pointer set to an empty struct).
    empty_details: bool = False

    def __str__(self) -> str:
        return self.message

    def status(self) -> Json:
        """The metav1.Status, its keys in the Go struct's field order (as the server writes
        them): kind, apiVersion, metadata, status, message, reason, details, code."""
        out: Json = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
        }
        if self.reason:
            out["reason"] = self.reason
        if self.details or self.empty_details or self.reason in _ALWAYS_DETAILED:
            out["details"] = status_details(self.details)
        out["code"] = self.code
        return out

    def body(self) -> bytes:
        """The response body: the Status as kube-apiserver's JSON encoder writes it."""
        return go_encode(self.status())


#: Reasons whose apimachinery constructors (and go-restful's 404/405) always set
#: Status.details, a pointer: with no name, group or kind it is still written, as `{}`.
_ALWAYS_DETAILED = frozenset({"NotFound", "Forbidden", "MethodNotAllowed", "Conflict",
                              "AlreadyExists", "Invalid"})

#: metav1.StatusDetails' fields in struct order.
_DETAILS_ORDER = ("name", "group", "kind", "uid", "causes", "retryAfterSeconds")


def status_details(details: Json) -> Json:
    """StatusDetails with its keys in struct order (unknown keys after them)."""
    ordered = {k: details[k] for k in _DETAILS_ORDER if k in details}
    ordered.update((k, v) for k, v in details.items() if k not in ordered)
    return ordered


def _details(group: str, kind: str, name: str) -> Json:
    out: Json = {}
    if name:
        out["name"] = name
    if group:
        out["group"] = group
    if kind:  # omitempty, as every other StatusDetails field
        out["kind"] = kind
    return out


def not_found(group: str, plural: str, name: str) -> ApiError:
    gr = f"{plural}.{group}" if group else plural
    return ApiError(404, "NotFound", f'{gr} "{name}" not found', _details(group, plural, name))


def already_exists(group: str, plural: str, name: str) -> ApiError:
    gr = f"{plural}.{group}" if group else plural
    return ApiError(
        409, "AlreadyExists", f'{gr} "{name}" already exists', _details(group, plural, name)
    )


def conflict(group: str, plural: str, name: str, detail: str) -> ApiError:
    gr = f"{plural}.{group}" if group else plural
    return ApiError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {gr} "{name}": {detail}',
        _details(group, plural, name),
    )


def invalid_object(group: str, kind: str, name: str, causes: list[Cause]) -> ApiError:
    """422 Invalid, with the message kube-apiserver composes from the causes."""
    gk = f"{kind}.{group}" if group else kind
    # Go's aggregate error: each distinct message once, bracketed only when there are several.
    parts = list(dict.fromkeys(f"{c.field}: {c.message}" if c.field else c.message
                               for c in causes))
    summary = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    details = _details(group, kind, name)
    details["causes"] = [c.to_json() for c in causes]
    return ApiError(422, "Invalid", f'{gk} "{name}" is invalid: {summary}', details)


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def method_not_allowed() -> ApiError:
    return ApiError(405, "MethodNotAllowed",
                    "the server does not allow this method on the requested resource")


def gone(message: str) -> ApiError:
    return ApiError(410, "Expired", message)


def unsupported_media(content_type: str) -> ApiError:
    return ApiError(
        415,
        "UnsupportedMediaType",
        f'the body of the request was in an unknown format - accepted media types include: '
        f'application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml'
        f' (got {content_type})',
    )


def unparsable_resource_version(value: str) -> ApiError:
    """The storage layer's InvalidError for a resourceVersion that is not a number; it is no
    API status, so kube-apiserver answers 500 with neither reason nor details."""
    return ApiError(500, "", f'resourceVersion: Invalid value: "{value}": strconv.ParseUint:'
                    f' parsing "{value}": invalid syntax')
