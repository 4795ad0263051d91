"""Which API errors count as transient: those where nothing about the object is wrong."""

from __future__ import annotations

from controller.errors import ApiError, is_namespace_terminating, is_transient


def terminating() -> ApiError:
    return ApiError.from_status(403, {
        "reason": "Forbidden",
        "message": 'pods "p" is forbidden: unable to create new content in namespace x',
        "details": {"name": "p", "kind": "pods", "causes": [
            {"reason": "NamespaceTerminating", "message": "namespace x is being terminated",
             "field": "metadata.namespace"}]}})


def test_a_terminating_or_vanished_namespace_is_transient() -> None:
    assert is_namespace_terminating(terminating()) and is_transient(terminating())
    gone = ApiError.from_status(404, {"reason": "NotFound", "message": 'namespaces "x" not found',
                                      "details": {"name": "x", "kind": "namespaces"}})
    assert is_transient(gone)


def test_other_refusals_are_not() -> None:
    forbidden = ApiError.from_status(403, {"reason": "Forbidden", "message": "no RBAC"})
    missing = ApiError.from_status(404, {"reason": "NotFound",
                                         "details": {"name": "g", "kind": "deployments"}})
    invalid = ApiError.from_status(422, {"reason": "Invalid"})
    assert not any(is_transient(e) for e in (forbidden, missing, invalid))
    assert is_transient(ApiError.from_status(429, None))
