"""A toy two-version kind for conversion tests: `widgets.example.com`, v1 and v2 (stored), where
v2 renames v1's `spec.size` to `spec.dimension`, converted by the runtime's own conversion
webhook (`controller.conversion_webhook` on `controller.webhook.WebhookServer`).

Test helpers, shared by the local cluster's tests and the real control plane's (which check
that both servers answer alike); the server itself never imports this module.
"""

from __future__ import annotations

import base64
import datetime
from typing import Any

from prometheus_client import CollectorRegistry

from controller.certificates import new_authority, serving_certificate
from controller.conversion_webhook import ConversionMetrics, ConversionWebhook
from controller.resource import Resource
from controller.webhook import TLSConfig, WebhookMetrics, WebhookServer

Json = dict[str, Any]

GROUP = "example.com"
V1, V2 = f"{GROUP}/v1", f"{GROUP}/v2"
WIDGETS_V1 = Resource(GROUP, "v1", "widgets", "Widget")
WIDGETS_V2 = Resource(GROUP, "v2", "widgets", "Widget")
CRD_NAME = f"widgets.{GROUP}"
#: The Service a test may publish the toy webhook as.
SERVICE_HOST = "widget-conversion.default.svc"


def rename_size(obj: Json, desired: str) -> Json:
    """v1 `spec.size` is v2 `spec.dimension`; a spec with `broken` cannot be converted."""
    spec = dict(obj.get("spec") or {})
    if "broken" in spec:
        raise ValueError("spec.broken: cannot be converted")
    if desired == V2 and "size" in spec:
        spec["dimension"] = spec.pop("size")
    elif desired == V1 and "dimension" in spec:
        spec["size"] = spec.pop("dimension")
    return {**obj, "apiVersion": desired, "spec": spec}


class ToyConversionWebhook:
    """The webhook server with `rename_size` at /convert, on 127.0.0.1 with its own CA; it
    records (desiredAPIVersion, name) of each object it converts."""

    def __init__(self) -> None:
        ca = new_authority("toy-conversion-ca", datetime.timedelta(days=1))
        cert = serving_certificate(ca, ["localhost", SERVICE_HOST], ["127.0.0.1"])
        self.ca_pem = ca.cert_pem
        self.tls = TLSConfig()
        self.tls.load(cert.cert_pem, cert.key_pem)
        registry = CollectorRegistry()
        self.webhook = ConversionWebhook(ConversionMetrics(registry))
        self.webhook.register(GROUP, self._convert)
        self.server = WebhookServer(self.tls, WebhookMetrics(registry), host="127.0.0.1",
                                    port=0)
        self.server.route("/convert", self.webhook.handle)
        self.converted: list[tuple[str, str]] = []

    def _convert(self, obj: Json, desired: str) -> Json:
        self.converted.append((desired, obj["metadata"]["name"]))
        return rename_size(obj, desired)

    async def start(self) -> ToyConversionWebhook:
        await self.server.start()
        return self

    async def stop(self) -> None:
        await self.server.stop()

    def client_config(self) -> Json:
        return {"url": f"https://127.0.0.1:{self.server.port}/convert",
                "caBundle": base64.b64encode(self.ca_pem).decode()}

    def service_objects(self) -> list[Json]:
        """A Service without a selector and the EndpointSlice that points it at this server
        (how a webhook outside the cluster is published)."""
        name = SERVICE_HOST.split(".")[0]
        return [{"apiVersion": "v1", "kind": "Service",
                 "metadata": {"name": name, "namespace": "default"},
                 "spec": {"ports": [{"name": "https", "port": 443}]}},
                {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                 "metadata": {"name": f"{name}-1", "namespace": "default",
                              "labels": {"kubernetes.io/service-name": name}},
                 "addressType": "IPv4",
                 "ports": [{"name": "https", "port": self.server.port, "protocol": "TCP"}],
                 "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": True}}]}]

    def service_client_config(self) -> Json:
        return {"service": {"namespace": "default", "name": SERVICE_HOST.split(".")[0],
                            "path": "/convert"},
                "caBundle": base64.b64encode(self.ca_pem).decode()}


def widget_crd(client_config: Json | None, storage: str = "v2") -> Json:
    """widgets.example.com serving v1 and v2 (schemaless, status and scale subresources),
    converted by the webhook at `client_config` (None: strategy None)."""
    schema = {"openAPIV3Schema": {"type": "object",
                                  "x-kubernetes-preserve-unknown-fields": True}}
    subresources = {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                            "statusReplicasPath": ".status.replicas"}}
    conversion: Json = {"strategy": "None"}
    if client_config is not None:
        conversion = {"strategy": "Webhook", "webhook": {
            "clientConfig": client_config, "conversionReviewVersions": ["v1"]}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME},
        "spec": {"group": GROUP, "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                           "listKind": "WidgetList"},
                 "versions": [{"name": v, "served": True, "storage": v == storage,
                               "schema": schema, "subresources": subresources}
                              for v in ("v1", "v2")],
                 "conversion": conversion}}


def widget(name: str, api_version: str = V1, **spec: Any) -> Json:
    return {"apiVersion": api_version, "kind": "Widget",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}
