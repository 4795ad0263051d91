"""Errors of the runtime: API answers as exceptions, with the classes callers branch on, and
`TerminalError`, the one a reconciler raises when retrying cannot help."""

from __future__ import annotations

from typing import Any

import aiohttp


class ApiError(Exception):
    """A non-2xx answer of the API server, carrying its Status object when there was one."""

    def __init__(self, code: int, reason: str = "", message: str = "",
                 retry_after: float | None = None, status: dict[str, Any] | None = None) -> None:
        super().__init__(f"{code} {reason}: {message}".strip())
        self.code = code
        self.reason = reason
        self.message = message
        self.retry_after = retry_after
        self.status = status or {}

    @classmethod
    def from_status(cls, code: int, status: dict[str, Any] | None,
                    retry_after: float | None = None) -> ApiError:
        """The most specific error class for an HTTP code and its Status body."""
        body = status or {}
        reason = str(body.get("reason", "")) or _DEFAULT_REASONS.get(code, "")
        message = str(body.get("message", ""))
        kind = _BY_CODE.get(code, ApiError)
        if kind is Conflict and reason == "AlreadyExists":
            kind = AlreadyExists
        return kind(code, reason, message, retry_after, body)


class NotFound(ApiError):
    """404: the object (or the resource) does not exist."""

    def __init__(self, code: int = 404, reason: str = "NotFound", message: str = "",
                 retry_after: float | None = None, status: dict[str, Any] | None = None) -> None:
        super().__init__(code, reason, message, retry_after, status)


class Conflict(ApiError):
    """409: a stale resourceVersion on update, or an object that already exists on create."""


#: The whole message kube-apiserver sends when a patch cannot be applied (its patch handler
#: keeps no more: a failed JSON-patch `test` reads the same as any other such failure).
UNAPPLICABLE_PATCH = "the server rejected our request due to an error in our request"


def lost_race(err: ApiError) -> Conflict | None:
    """The Conflict that a failed write guarded by a JSON-patch `test` (or a precondition) means:
    another writer got there first, or the object went away meanwhile. The caller raises it,
    so the controller retries on fresh data without counting an error. None for anything
    else. Only for patches whose operations are well-formed but for their `test`s."""
    if isinstance(err, Conflict):
        return err
    if isinstance(err, NotFound) or (err.code == 422 and err.message == UNAPPLICABLE_PATCH
                                     and not (err.status.get("details") or {}).get("causes")):
        conflict = Conflict(409, "Conflict", err.message or err.reason, status=err.status)
        conflict.__cause__ = err
        return conflict
    return None


class AlreadyExists(Conflict):
    """409 with reason AlreadyExists: a create of a name that is taken."""


class Gone(ApiError):
    """410: the resourceVersion asked for is older than the server keeps."""


class TerminalError(Exception):
    """A reconcile failure that retrying cannot fix: do not retry until the object changes.

    The controller logs it once (no traceback), counts it and forgets the key's backoff, like
    controller-runtime's `reconcile.TerminalError` and kopf's `PermanentError`. `reason` is a
    short CamelCase word for logs and conditions; `retry_after` asks for one more look after
    that many seconds even if nothing changes (e.g. waiting on something that is not watched).
    """

    def __init__(self, message: str, *, reason: str = "",
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason
        self.retry_after = retry_after


_BY_CODE: dict[int, type[ApiError]] = {404: NotFound, 409: Conflict, 410: Gone}
_DEFAULT_REASONS = {404: "NotFound", 409: "Conflict", 410: "Gone", 429: "TooManyRequests",
                    500: "InternalError", 503: "ServiceUnavailable"}


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (the API server only sends delta-seconds)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


#: Exceptions that may be a passing state of the network.
_NETWORK_ERRORS = (aiohttp.ClientError, TimeoutError, OSError)


def is_transient(err: BaseException) -> bool:
    """Throttling (429), a server error (5xx), a timeout or a refused or broken connection:
    retrying later can succeed, and nothing about the object is wrong. A create refused
    because the namespace is being deleted counts too: nothing is wrong with the object,
    which goes with its namespace, and the retry finds it gone."""
    if isinstance(err, ApiError):
        return err.code == 429 or err.code >= 500 or is_namespace_terminating(err)
    return isinstance(err, _NETWORK_ERRORS)


def is_namespace_terminating(err: ApiError) -> bool:
    """A create refused because its namespace is being deleted (403 with the cause
    NamespaceTerminating) or is gone already (404 naming the namespace)."""
    details = err.status.get("details") or {}
    if err.code == 404:
        return details.get("kind") == "namespaces"
    if err.code != 403:
        return False
    return any(isinstance(c, dict) and c.get("reason") == "NamespaceTerminating"
               for c in details.get("causes") or [])
