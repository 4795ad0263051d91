"""The TokenRequest API: `POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token`.

`kubectl create token NAME` calls it. The token is a JWT signed (HS256) with a key derived from
the cluster's admin token, so tokens stay valid across restarts of a cluster kept in a data
directory. It authenticates as `system:serviceaccount:<ns>:<name>` with the groups
`system:serviceaccounts`, `system:serviceaccounts:<ns>` and `system:authenticated` until it
expires or the ServiceAccount it was issued for (same uid) is gone.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import json
import time
from typing import Any

from ..errors import bad_request, invalid, invalid_object, json_type, not_found
from ..operations import now_rfc3339
from ..storage import Storage
from ..users import UserInfo, service_account

Json = dict[str, Any]
SERVICE_ACCOUNTS = ("", "serviceaccounts")
ISSUER = "https://kubernetes.default.svc.cluster.local"
DEFAULT_SECONDS = 3600
MIN_SECONDS = 600


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class ServiceAccountTokens:
    """Issues and checks ServiceAccount tokens."""

    def __init__(self, storage: Storage, secret: str) -> None:
        self.storage = storage
        self._key = hashlib.sha256(b"service-account-token:" + secret.encode()).digest()

    def request(self, namespace: str, name: str, body: Any) -> Json:
        """The TokenRequest answer for a token of ServiceAccount `namespace/name`."""
        sa = self.storage.get(SERVICE_ACCOUNTS, namespace, name)
        if sa is None:
            raise not_found("", "serviceaccounts", name)
        spec = dict((body or {}).get("spec") or {}) if isinstance(body, dict) else {}
        seconds = spec.get("expirationSeconds") or DEFAULT_SECONDS
        if not isinstance(seconds, int) or isinstance(seconds, bool):
            # (not kube-apiserver's decoding message: an edge no client of ours reaches)
            raise bad_request(f"spec.expirationSeconds: a {json_type(seconds)} is not an int64")
        if seconds < MIN_SECONDS:
            raise invalid_object("authentication.k8s.io", "TokenRequest", name, [invalid(
                "spec.expirationSeconds", seconds,
                "may not specify a duration less than 10 minutes")])
        audiences = list(spec.get("audiences") or [ISSUER])
        now = int(time.time())
        claims = {"aud": audiences, "exp": now + seconds, "iat": now, "iss": ISSUER,
                  "nbf": now, "sub": f"system:serviceaccount:{namespace}:{name}",
                  "kubernetes.io": {"namespace": namespace, "serviceaccount": {
                      "name": name, "uid": sa["metadata"]["uid"]}}}
        header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        payload = _b64(json.dumps(claims, separators=(",", ":")).encode())
        signature = _b64(hmac.new(self._key, f"{header}.{payload}".encode(),
                                  hashlib.sha256).digest())
        expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + seconds))
        return {"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
                "metadata": {"name": name, "namespace": namespace,
                             "creationTimestamp": now_rfc3339()},
                "spec": {"audiences": audiences, "expirationSeconds": seconds,
                         "boundObjectRef": spec.get("boundObjectRef")},
                "status": {"token": f"{header}.{payload}.{signature}",
                           "expirationTimestamp": expires}}

    def authenticate(self, token: str) -> UserInfo | None:
        """The identity of a token this server issued and that is still valid."""
        parts = token.split(".")
        if len(parts) != 3:
            return None
        expected = _b64(hmac.new(self._key, f"{parts[0]}.{parts[1]}".encode(),
                                 hashlib.sha256).digest())
        if not hmac.compare_digest(expected, parts[2]):
            return None
        try:
            claims = json.loads(_unb64(parts[1]))
            info = claims["kubernetes.io"]
            namespace, name = str(info["namespace"]), str(info["serviceaccount"]["name"])
            uid = str(info["serviceaccount"]["uid"])
            expires = int(claims["exp"])
        except (ValueError, KeyError, TypeError):
            return None
        if expires < time.time():
            return None
        sa = self.storage.get(SERVICE_ACCOUNTS, namespace, name)
        if sa is None or sa["metadata"].get("uid") != uid:
            return None
        return dataclasses.replace(service_account(namespace, name), uid=uid)


__all__ = ["ServiceAccountTokens"]
