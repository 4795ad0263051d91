"""TokenReview (authentication.k8s.io/v1): who does a bearer token authenticate as?

Webhook servers and proxies (kube-rbac-proxy, the metrics filter of controller-runtime) create
one per request to check the caller's token. The answer uses the server's own token
authentication (the static tokens of `LocalCluster.users` and ServiceAccount tokens), as
kube-apiserver's TokenReview REST does: an empty token is 400 BadRequest, an unknown one
answers `authenticated` unset and an empty user; audiences default to the API audience.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .errors import bad_request
from .rbac.tokens import ISSUER
from .users import UserInfo

Json = dict[str, Any]
TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
API_VERSION = "authentication.k8s.io/v1"


def token_review(authenticate: Callable[[str], UserInfo | None], body: Any) -> Json:
    """The answered TokenReview `body` (the reviewed token stays in the spec, as upstream's)."""
    if not isinstance(body, dict):
        raise bad_request(f"not a TokenReview: {body!r}")
    spec = body.get("spec") if isinstance(body.get("spec"), dict) else {}
    assert isinstance(spec, dict)
    token = spec.get("token")
    if not isinstance(token, str) or not token:
        raise bad_request("token is required for TokenReview in authentication")
    requested = [str(a) for a in spec.get("audiences") or ()]
    audiences = requested or [ISSUER]
    user = authenticate(token)
    status: Json
    if user is None:
        status = {"user": {}}
    elif ISSUER not in audiences:
        # Tokens of this server are for the API audience only.
        status = {"user": {}, "error": "token audiences " + str([ISSUER]) + " is invalid for"
                  " the target audiences " + str(audiences)}
    else:
        status = {"authenticated": True, "user": user.to_json(), "audiences": [ISSUER]}
    meta = dict(body.get("metadata") or {})
    meta.setdefault("creationTimestamp", None)
    return {"kind": "TokenReview", "apiVersion": API_VERSION, "metadata": meta, "spec": spec,
            "status": status}


__all__ = ["TOKEN_REVIEWS", "token_review"]
