"""SelfSubjectAccessReview and SelfSubjectRulesReview (authorization.k8s.io/v1), which
`kubectl auth can-i` and `kubectl auth can-i --list` create.

With no authorizer (the AlwaysAllow mode) every access is allowed and the rules are `*`.
"""

from __future__ import annotations

from typing import Any

from ..errors import bad_request
from ..users import UserInfo
from .attributes import RequestAttributes
from .authorizer import PRIVILEGED_GROUP, Authorizer, aggregate_message
from .rules import Rule

Json = dict[str, Any]
API_VERSION = "authorization.k8s.io/v1"
ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
RULES_REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"
_EVERYTHING = [Rule(("*",), ("*",), ("*",)), Rule(("*",), non_resource_urls=("*",))]


def access_review(authorizer: Authorizer | None, user: UserInfo, body: Any) -> Json:
    """The answered SelfSubjectAccessReview `body`."""
    spec = body.get("spec") if isinstance(body, dict) else None
    if not isinstance(spec, dict):
        spec = {}
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if bool(resource) == bool(non_resource) or not isinstance(resource or non_resource, dict):
        raise bad_request("exactly one of nonResourceAttributes or resourceAttributes must be"
                          " specified")
    if isinstance(resource, dict):
        attrs = RequestAttributes(
            verb=str(resource.get("verb", "")), resource_request=True,
            api_group=str(resource.get("group", "")),
            api_version=str(resource.get("version", "")),
            namespace=str(resource.get("namespace", "")),
            resource=str(resource.get("resource", "")),
            subresource=str(resource.get("subresource", "")),
            name=str(resource.get("name", "")))
    else:
        assert isinstance(non_resource, dict)
        attrs = RequestAttributes(verb=str(non_resource.get("verb", "")),
                                  resource_request=False, path=str(non_resource.get("path", "")))
    status: Json = {"allowed": True}
    if authorizer is not None:
        decision = authorizer.authorize(user, attrs)
        status = {"allowed": decision.allowed}
        if decision.reason:
            status["reason"] = decision.reason
    return {"kind": "SelfSubjectAccessReview", "apiVersion": API_VERSION,
            "metadata": {"creationTimestamp": None}, "spec": spec, "status": status}


def rules_review(authorizer: Authorizer | None, user: UserInfo, body: Any) -> Json:
    """The answered SelfSubjectRulesReview `body`: the user's rules in spec.namespace."""
    spec = body.get("spec") if isinstance(body, dict) else None
    if not isinstance(spec, dict):
        spec = {}
    namespace = str(spec.get("namespace", ""))
    rules: list[Rule] = []
    errors: list[str] = []
    if authorizer is None or PRIVILEGED_GROUP in user.groups:
        rules = list(_EVERYTHING)
    if authorizer is not None:
        held, errors = authorizer.rules_for(user, namespace)
        rules += held
    status: Json = {
        "resourceRules": [_resource_rule(r) for r in rules if r.resources],
        "nonResourceRules": [{"verbs": list(r.verbs), "nonResourceURLs": list(
            r.non_resource_urls)} for r in rules if r.non_resource_urls],
        "incomplete": False}
    if errors:
        status["evaluationError"] = aggregate_message(errors)
    return {"kind": "SelfSubjectRulesReview", "apiVersion": API_VERSION,
            "metadata": {"creationTimestamp": None}, "spec": spec, "status": status}


def _resource_rule(rule: Rule) -> Json:
    out: Json = {"verbs": list(rule.verbs), "apiGroups": list(rule.api_groups),
                 "resources": list(rule.resources)}
    if rule.resource_names:
        out["resourceNames"] = list(rule.resource_names)
    return out


__all__ = ["ACCESS_REVIEWS", "RULES_REVIEWS", "access_review", "rules_review"]
