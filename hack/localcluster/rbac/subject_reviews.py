"""SubjectAccessReview and LocalSubjectAccessReview (authorization.k8s.io/v1): may another
user do something? The user comes from the spec (user, groups, uid, extra), not the request.

A LocalSubjectAccessReview is namespaced: its resourceAttributes must name the namespace of
its URL, and it has no nonResourceAttributes.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import Cause, bad_request, invalid, invalid_object
from ..users import UserInfo
from .authorizer import Authorizer
from .reviews import access_review

Json = dict[str, Any]
SUBJECT_ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
LOCAL_SUBJECT_ACCESS_REVIEWS = re.compile(
    r"/apis/authorization\.k8s\.io/v1/namespaces/([^/]+)/localsubjectaccessreviews")


def subject_access_review(authorizer: Authorizer | None, body: Any,
                          namespace: str | None = None) -> Json:
    """The answered SubjectAccessReview (`namespace` None) or LocalSubjectAccessReview."""
    kind = "SubjectAccessReview" if namespace is None else "LocalSubjectAccessReview"
    if not isinstance(body, dict):
        raise bad_request(f"not a {kind}")
    spec = body.get("spec") if isinstance(body.get("spec"), dict) else {}
    assert isinstance(spec, dict)
    meta = dict(body.get("metadata") or {})
    causes: list[Cause] = []
    resource_attrs, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if resource_attrs is not None and non_resource is not None:
        causes.append(invalid("spec.nonResourceAttributes", non_resource,
                              "cannot be specified in combination with resourceAttributes"))
    if resource_attrs is None and non_resource is None:
        causes.append(invalid("spec.resourceAttributes", "null",
                              "exactly one of nonResourceAttributes or resourceAttributes must be"
                              " specified"))
    if not spec.get("user") and not spec.get("groups"):
        causes.append(invalid("spec.user", spec.get("user", ""),
                              "at least one of user or group must be specified"))
    if namespace is not None:
        if meta.get("namespace", namespace) != namespace:
            raise bad_request("spec.resourceAttributes.namespace must match namespace:"
                              f" {namespace}")
        meta["namespace"] = namespace
        if spec.get("nonResourceAttributes"):
            causes.append(invalid("spec.nonResourceAttributes", spec["nonResourceAttributes"],
                                  "disallowed on this kind of request"))
        resource = spec.get("resourceAttributes") or {}
        if isinstance(resource, dict) and resource.get("namespace", "") != namespace:
            causes.append(invalid("spec.resourceAttributes.namespace",
                                  resource.get("namespace", ""),
                                  "must match metadata.namespace"))
    if causes:
        # NewInvalid(Kind(review.Kind), "", ...): the decoded review's Kind is empty there.
        raise invalid_object("authorization.k8s.io", "", "", causes)
    extra = spec.get("extra") if isinstance(spec.get("extra"), dict) else {}
    assert isinstance(extra, dict)
    user = UserInfo(str(spec.get("user", "")), tuple(str(g) for g in spec.get("groups") or ()),
                    uid=str(spec.get("uid", "")),
                    extra={str(k): tuple(str(v) for v in values or ())
                           for k, values in extra.items()})
    answer = access_review(authorizer, user, body)
    meta.setdefault("creationTimestamp", None)
    return {**answer, "kind": kind, "metadata": meta}


__all__ = ["LOCAL_SUBJECT_ACCESS_REVIEWS", "SUBJECT_ACCESS_REVIEWS", "subject_access_review"]
