"""Posting an AdmissionReview to a webhook: where it listens, TLS, timeout, the answer's checks.

`clientConfig.url` is dialled as written. `clientConfig.service` is resolved as kube-apiserver
resolves it when routing to endpoints: the Service's port (`port`, default 443) is looked up,
and one ready endpoint of its EndpointSlices is picked, on the slice port of the same name. In
the local cluster nothing listens on pod IPs, so a webhook server (a test's, or the operator
run as a process) is reached through a Service without a selector whose EndpointSlice lists
127.0.0.1 and the port it listens on, which is how a webhook outside a cluster is published in
a real one. Either way the server's certificate is verified against `caBundle` (the system's
roots when empty) for the URL's host, or `<service>.<namespace>.svc` for a Service.

Failures read as client-go's (`Post "<url>?timeout=10s": context deadline exceeded`, `dial tcp
127.0.0.1:9443: connect: connection refused`, `x509: certificate signed by unknown authority`),
with the `failed to call webhook: ` prefix kube-apiserver adds (`received invalid webhook
response: ` for an answer that is not an AdmissionReview v1 of the request's uid).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import random
import ssl
from typing import Any

from ..storage import Storage
from .webhook_connections import Dialing, WebhookConnections
from .webhook_rules import Hook

Json = dict[str, Any]

__all__ = ["CallError", "WebhookClient"]

SERVICE_NAME_LABEL = "kubernetes.io/service-name"
#: Reviews as client-go writes them: compact, ASCII-escaped.
_encoder = json.JSONEncoder(separators=(",", ":"))


class CallError(Exception):
    """The webhook could not be called or gave no usable answer (failurePolicy decides)."""


class WebhookClient:
    """One HTTP session for every webhook call of a server, and its TLS contexts."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        # Connections are kept and reused, as kube-apiserver's transport keeps them: a LIST
        # converted by webhook makes one call per object.
        self._connections = WebhookConnections()
        self._contexts: dict[str, ssl.SSLContext] = {}

    async def close(self) -> None:
        self._connections.close()

    async def post(self, hook: Hook, review: Json, uid: str) -> Json:
        """The `response` of the AdmissionReview the webhook answers; CallError otherwise."""
        try:
            status, body = await self.exchange(hook.spec.get("clientConfig") or {}, review,
                                               hook.timeout)
        except CallError as err:
            raise _failed(str(err)) from None
        return _verified(body, status, uid)

    async def exchange(self, config: Json, payload: Json, seconds: int) -> tuple[int, bytes]:
        """POST `payload` to the webhook of `config` (a clientConfig) with `?timeout=`; the
        answer's status and body, or CallError with client-go's text (`Post "<url>": ...`,
        without the caller's prefix). The conversion webhooks call this too."""
        target, shown, server_name = self._target(config, seconds)
        display = f"{shown}?timeout={seconds}s"
        context = self._context(config.get("caBundle") or "")
        url = f"{target}?timeout={seconds}s"
        try:
            async with asyncio.timeout(seconds):
                return await self._connections.post(url, _encoder.encode(payload).encode(),
                                                    context, server_name)
        except TimeoutError:
            raise CallError(f'Post "{display}": context deadline exceeded') from None
        except ssl.SSLCertVerificationError as err:
            raise CallError(f'Post "{display}": tls: failed to verify certificate: '
                            f"{_x509(err)}") from None
        except Dialing as err:
            raise CallError(f'Post "{display}": dial tcp {err.host}:{err.port}: connect: '
                            f"{_dial_reason(err.error)}") from None
        except (OSError, ValueError) as err:
            raise CallError(f'Post "{display}": {err}') from None

    # --- where and how to connect ------------------------------------------------------------

    def _target(self, config: Json, seconds: int) -> tuple[str, str, str | None]:
        """(URL to dial, URL to show in errors, TLS server name when they differ)."""
        url = config.get("url")
        if isinstance(url, str) and url:
            return url, url, None
        service = config.get("service") or {}
        namespace, name = str(service.get("namespace", "")), str(service.get("name", ""))
        port = service.get("port") or 443
        path = str(service.get("path") or "")
        host = f"{name}.{namespace}.svc"
        shown = f"https://{host}:{port}{path}"
        address = self._endpoint(namespace, name, int(port))
        if address is None:
            raise CallError(f'Post "{shown}?timeout={seconds}s": no endpoints available for '
                            f'service "{name}"')
        ip, target_port = address
        dial_host = f"[{ip}]" if ":" in ip else ip
        return f"https://{dial_host}:{target_port}{path}", shown, host

    def _endpoint(self, namespace: str, name: str, port: int) -> tuple[str, int] | None:
        service = self.storage.get(("", "services"), namespace, name)
        if service is None:
            return None
        port_name = next((str(p.get("name") or "") for p in (service.get("spec") or {}).get(
            "ports") or [] if p.get("port") == port), None)
        if port_name is None:
            return None
        ready = []
        for slice_ in self.storage.list_objects(("discovery.k8s.io", "endpointslices"),
                                                namespace):
            labels = slice_["metadata"].get("labels") or {}
            if labels.get(SERVICE_NAME_LABEL) != name:
                continue
            slice_port = next((p.get("port") for p in slice_.get("ports") or []
                               if str(p.get("name") or "") == port_name), None)
            if not isinstance(slice_port, int):
                continue
            for endpoint in slice_.get("endpoints") or []:
                if (endpoint.get("conditions") or {}).get("ready") is False:
                    continue
                ready += [(str(a), slice_port) for a in endpoint.get("addresses") or []]
        return random.choice(ready) if ready else None

    def _context(self, ca_bundle: str) -> ssl.SSLContext:
        context = self._contexts.get(ca_bundle)
        if context is None:
            if ca_bundle:
                try:
                    pem = base64.b64decode(ca_bundle, validate=True).decode()
                    context = ssl.create_default_context(cadata=pem)
                except (binascii.Error, UnicodeDecodeError, ssl.SSLError, ValueError):
                    raise CallError("could not get REST client: unable to load root "
                                    "certificates: unable to parse bytes as PEM block") from None
            else:
                context = ssl.create_default_context()
            self._contexts[ca_bundle] = context
        return context


def _verified(body: bytes, status: int, uid: str) -> Json:
    """VerifyAdmissionResponse: an AdmissionReview v1 answering this request's uid."""
    try:
        review = json.loads(body)
    except ValueError:
        review = None
    if status >= 300 or not isinstance(review, dict):
        detail = body.decode(errors="replace").strip()
        if status >= 300:
            raise _failed(f"an error on the server ({detail or 'unknown'}) has prevented the "
                          f"request from succeeding")
        raise _failed(f"the server returned a body that is not JSON: {detail[:200]!r}")
    if review.get("apiVersion") != "admission.k8s.io/v1" or review.get("kind") != \
            "AdmissionReview":
        raise _invalid("expected webhook response of admission.k8s.io/v1, "
                        f"Kind=AdmissionReview, got {review.get('apiVersion', '')}, "
                        f"Kind={review.get('kind', '')}")
    response = review.get("response")
    if not isinstance(response, dict):
        raise _invalid("webhook response was absent")
    if response.get("uid") != uid:
        raise _invalid(f'expected response.uid="{uid}", got "{response.get("uid", "")}"')
    return response


def _failed(reason: str) -> CallError:
    return CallError(f"failed to call webhook: {reason}")


def _invalid(reason: str) -> CallError:
    return CallError(f"received invalid webhook response: {reason}")


def _x509(error: Exception) -> str:
    text = str(error)
    if any(why in text for why in ("self-signed", "unable to get local issuer", "unknown ca",
                                   "signature failure")):
        return "x509: certificate signed by unknown authority"
    if "Hostname mismatch" in text or "IP address mismatch" in text:
        return f"x509: certificate is not valid for the requested host ({text})"
    if "expired" in text:
        return "x509: certificate has expired or is not yet valid"
    return f"x509: {text}"


def _dial_reason(os_error: OSError) -> str:
    if isinstance(os_error, ConnectionRefusedError):
        return "connection refused"
    return str(os_error.strerror or os_error)
