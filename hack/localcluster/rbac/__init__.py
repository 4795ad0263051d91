"""RBAC for the local API server, as kube-apiserver's `--authorization-mode=RBAC` does it.

In the RBAC mode (`ClusterConfig(authorization_mode="RBAC")`, or
`python -m hack.localcluster --authorization-mode RBAC`) the server:

* authorizes every authenticated request (`Authorizer.check_request`) from the attributes its
  URL carries (`request_attributes`: verb, API group, namespace, resource, subresource, name;
  or a non-resource path), against the Roles, ClusterRoles and bindings in its storage; members
  of `system:masters` are always allowed; a denial is the 403 Forbidden Status with
  kube-apiserver's message;
* refuses writes of Roles and ClusterRoles that grant, and bindings that bind, permissions the
  writer does not hold, unless the writer may `escalate` roles or `bind` the role
  (`Authorizer.check_write`, called at the validating-admission point of the write);
* creates the default policy (`bootstrap`: cluster-admin, system:discovery, system:basic-user,
  system:public-info-viewer) and keeps aggregated ClusterRoles filled (`Aggregation`);
* with the OwnerReferencesPermissionEnforcement admission plugin enabled, refuses
  ownerReferences the writer may not set (`check_owner_references`).

In every mode, `impersonated` applies `Impersonate-*` headers (`kubectl --as`),
`ServiceAccountTokens` serves the TokenRequest API (`kubectl create token`) and
authenticates the tokens it issued, and `access_review` / `rules_review` answer
SelfSubjectAccessReview and SelfSubjectRulesReview (`kubectl auth can-i [--list]`), and
`subject_access_review` SubjectAccessReview and LocalSubjectAccessReview.
"""

from __future__ import annotations

from .attributes import RequestAttributes, request_attributes
from .authorizer import Authorizer, Decision
from .bootstrap import Aggregation, bootstrap
from .impersonation import impersonated
from .owner_references import NAME as OWNER_REFERENCES_PLUGIN
from .owner_references import check_owner_references
from .reviews import ACCESS_REVIEWS, RULES_REVIEWS, access_review, rules_review
from .subject_reviews import (
    LOCAL_SUBJECT_ACCESS_REVIEWS,
    SUBJECT_ACCESS_REVIEWS,
    subject_access_review,
)
from .tokens import ServiceAccountTokens

#: The values of `--authorization-mode` the local server knows.
AUTHORIZATION_MODES = ("AlwaysAllow", "RBAC")

__all__ = ["ACCESS_REVIEWS", "AUTHORIZATION_MODES", "LOCAL_SUBJECT_ACCESS_REVIEWS",
           "OWNER_REFERENCES_PLUGIN", "RULES_REVIEWS", "SUBJECT_ACCESS_REVIEWS", "Aggregation",
           "Authorizer", "Decision", "RequestAttributes",
           "ServiceAccountTokens", "access_review", "bootstrap", "check_owner_references",
           "impersonated", "request_attributes", "rules_review", "subject_access_review"]
