"""A small HTTPS admission webhook for tests: an aiohttp server whose answers a test decides."""

from __future__ import annotations

import asyncio
import base64
import datetime
import json
import ssl
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from controller.certificates import new_authority, serving_certificate

Json = dict[str, Any]
#: Given the AdmissionReview's request, the response's fields (uid is added).
Answer = Callable[[Json], Json]


def allow(_: Json) -> Json:
    return {"allowed": True}


class TestWebhook:
    """Serves AdmissionReviews on 127.0.0.1 with its own CA; records every request."""

    __test__ = False

    def __init__(self, tmp: Path, answer: Answer = allow, delay: float = 0.0,
                 dns_names: tuple[str, ...] = ("localhost",)) -> None:
        self.answer = answer
        self.delay = delay
        self.requests: list[Json] = []
        ca = new_authority("test-webhook-ca", datetime.timedelta(days=1))
        cert = serving_certificate(ca, dns_names, ["127.0.0.1"])
        self.ca_pem = ca.cert_pem
        (tmp / "wh.crt").write_bytes(cert.cert_pem)
        (tmp / "wh.key").write_bytes(cert.key_pem)
        self._ssl = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self._ssl.load_cert_chain(tmp / "wh.crt", tmp / "wh.key")
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def ca_bundle(self) -> str:
        return base64.b64encode(self.ca_pem).decode()

    def url(self, path: str = "/admit") -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    async def start(self) -> TestWebhook:
        app = web.Application()
        app.router.add_post("/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=self._ssl)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _handle(self, request: web.Request) -> web.Response:
        review = await request.json()
        self.requests.append({**review["request"], "path": request.path,
                              "query": dict(request.query)})
        if self.delay:
            await asyncio.sleep(self.delay)
        response = {"uid": review["request"]["uid"], **self.answer(review["request"])}
        return web.json_response({"apiVersion": "admission.k8s.io/v1",
                                  "kind": "AdmissionReview", "response": response})


def patch_of(operations: list[Json]) -> Json:
    """The fields of a mutating answer applying a JSONPatch."""
    return {"allowed": True, "patchType": "JSONPatch",
            "patch": base64.b64encode(json.dumps(operations).encode()).decode()}


def configuration(kind: str, name: str, webhooks: list[Json]) -> str:
    """A Validating- or MutatingWebhookConfiguration as JSON for `kubectl apply -f -`."""
    return json.dumps({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
                       "metadata": {"name": name}, "webhooks": webhooks})


def webhook(name: str, client_config: Json, *, resources: list[str],
            operations: list[str] | None = None, groups: list[str] | None = None,
            **fields: Any) -> Json:
    """One webhook entry with a single rule; `fields` adds or overrides the rest."""
    return {"name": name, "clientConfig": client_config,
            "rules": [{"apiGroups": groups if groups is not None else [""],
                       "apiVersions": ["*"], "operations": operations or ["CREATE", "UPDATE"],
                       "resources": resources}],
            "admissionReviewVersions": ["v1"], "sideEffects": "None",
            "timeoutSeconds": 2, **fields}
