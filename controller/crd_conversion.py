"""Keeping CustomResourceDefinitions pointed at a conversion webhook.

A CRD serving several versions through a webhook says so in `spec.conversion`: strategy
`Webhook`, where the webhook listens (`clientConfig.url`, or `clientConfig.service` in the
cluster), the CA that signed its certificate (`caBundle`) and the ConversionReview versions
it speaks (`["v1"]`). `ConversionKeeper` is a manager runnable that writes that stanza into
each named CRD when it differs, and only then: an idle process writes nothing. A CRD that is
not installed is left for later (CRDs are installed by someone else).

The caBundle follows the certificate source, as for the admission configurations: when
`ManagedCertificates` keeps it (`keeps_ca_bundle=False`, `ManagedCertificates.conversion_crds`
naming the same CRDs), a live caBundle is left as it is, so the keeper never puts an older CA
back over a renewed one; otherwise the keeper writes the bundle it is given. A CRD carrying
the annotation `injector_annotation` names (cert-manager's `cert-manager.io/inject-ca-from`)
gets its caBundle from that injector, and the keeper leaves a live one alone there too.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from .client import KubeClient
from .errors import ApiError, NotFound
from .keeper import keep
from .webhook_certs import CUSTOM_RESOURCE_DEFINITIONS

log = structlog.get_logger("controller.crd_conversion")

Json = dict[str, Any]

__all__ = ["ConversionKeeper", "desired_conversion", "service_client_config",
           "url_client_config"]

#: The ConversionReview versions our webhook speaks.
REVIEW_VERSIONS = ["v1"]


def url_client_config(url: str) -> Json:
    """A clientConfig calling `url` (the full URL of the conversion path)."""
    return {"url": url}


def service_client_config(namespace: str, name: str, path: str = "/convert",
                          port: int = 443) -> Json:
    """A clientConfig calling a Service (the port written out, as the API server defaults it)."""
    return {"service": {"namespace": namespace, "name": name, "path": path, "port": port}}


def desired_conversion(client_config: Json, ca_pem: bytes | None) -> Json:
    """The `spec.conversion` of a CRD converted by the webhook at `client_config`."""
    config = dict(client_config)
    if ca_pem:
        config["caBundle"] = base64.b64encode(ca_pem).decode()
    return {"strategy": "Webhook",
            "webhook": {"clientConfig": config, "conversionReviewVersions": REVIEW_VERSIONS}}


@dataclass
class ConversionKeeper:
    """Writes `desired_conversion` into each of `crds` when it differs (see the module doc)."""

    client: KubeClient
    crds: Sequence[str]
    client_config: Json
    ca_bundle: Callable[[], bytes | None]
    interval: float = 10.0
    #: False when `ManagedCertificates` keeps the caBundle: then a live one is left alone.
    keeps_ca_bundle: bool = True
    #: An annotation saying a CA injector fills this CRD's caBundle (then left alone).
    injector_annotation: str | None = None

    async def run(self) -> None:
        await keep(self.ensure, interval=self.interval, what="the CRD conversion webhook")

    async def ensure(self) -> bool:
        """One round over the CRDs; False when it should look again soon (no CA yet, or a
        CRD changed under a write)."""
        ca_pem = self.ca_bundle()
        if ca_pem is None:
            return False
        done = True
        for name in self.crds:
            done = await self._ensure_one(name, ca_pem) and done
        return done

    async def _ensure_one(self, name: str, ca_pem: bytes) -> bool:
        try:
            crd = await self.client.get(CUSTOM_RESOURCE_DEFINITIONS, None, name)
        except NotFound:
            return True
        live = (crd.get("spec") or {}).get("conversion") or {}
        desired = desired_conversion(self.client_config, ca_pem)
        live_bundle = ((live.get("webhook") or {}).get("clientConfig") or {}).get("caBundle")
        annotations = (crd.get("metadata") or {}).get("annotations") or {}
        injected = self.injector_annotation is not None and \
            bool(annotations.get(self.injector_annotation))
        if (not self.keeps_ca_bundle or injected) and live_bundle:
            desired["webhook"]["clientConfig"]["caBundle"] = live_bundle
        if live == desired:
            return True
        try:
            await self.client.patch(CUSTOM_RESOURCE_DEFINITIONS, None, name, [
                {"op": "test", "path": "/metadata/resourceVersion",
                 "value": crd["metadata"]["resourceVersion"]},
                {"op": "add", "path": "/spec/conversion", "value": desired}],
                patch_type="json")
        except ApiError as err:
            if err.code in (409, 422):  # changed since read: look again
                return False
            raise
        log.info("CRD conversion webhook set", crd=name)
        return True
