"""CRD conversion by webhook: the local API server answers as a real Kubernetes 1.20 one does.

The same scenario (the toy Widget of `hack.localcluster.conversion.toy_webhook`: a write in v1
stored as v2, reads in both versions, a conversion the webhook refuses, a webhook that is down,
and conversion stanzas the CRD API refuses) runs against both servers, and what each answers
is compared, ports aside.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from controller.client import ClientConfig, KubeClient
from controller.errors import ApiError
from controller.metrics import Metrics
from controller.resource import Resource
from hack.localcluster.conversion.toy_webhook import (
    CRD_NAME,
    V2,
    WIDGETS_V1,
    WIDGETS_V2,
    ToyConversionWebhook,
    widget,
    widget_crd,
)
from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import eventually

pytestmark = pytest.mark.timeout(120, func_only=True)

Json = dict[str, Any]
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                "CustomResourceDefinition", namespaced=False)


async def _error(call: Any) -> str:
    try:
        await call
    except ApiError as err:
        return f"{err.code} {err.status.get('reason', '')}: {err.message}"
    return "no error"


async def _causes(client: KubeClient, conversion: Json) -> list[tuple[str, str]] | str:
    crd = widget_crd(None)
    crd["metadata"]["name"] = "gadgets.example.com"
    crd["spec"]["names"] = {"plural": "gadgets", "singular": "gadget", "kind": "Gadget",
                            "listKind": "GadgetList"}
    crd["spec"]["conversion"] = conversion
    try:
        await client.create(CRDS, crd)
    except ApiError as err:
        return sorted((c.get("field", ""), c.get("message", ""))
                      for c in err.status["details"]["causes"])
    await client.delete(CRDS, None, "gadgets.example.com")
    return "accepted"


async def _scenario(kubeconfig: Path) -> dict[str, Any]:
    client = await KubeClient.connect(kubeconfig, ClientConfig(qps=None), Metrics())
    toy = await ToyConversionWebhook().start()
    seen: dict[str, Any] = {}
    try:
        await client.create(CRDS, widget_crd(toy.client_config()))

        async def served() -> bool:
            try:
                await client.list(WIDGETS_V1, "default")
                await client.list(WIDGETS_V2, "default")
            except ApiError:
                return False
            return True

        await eventually(served, within=30, interval=0.2, what="widgets served")
        created = await client.create(WIDGETS_V1, widget("a", size=3))
        seen["created"] = (created["apiVersion"], created["spec"])
        seen["v2"] = (await client.get(WIDGETS_V2, "default", "a"))["spec"]
        seen["v1"] = (await client.get(WIDGETS_V1, "default", "a"))["spec"]
        await client.create(WIDGETS_V2, widget("b", V2, dimension=4))
        seen["list v1"] = [o["spec"] for o in (await client.list(WIDGETS_V1, "default"))[
            "items"]]
        seen["stored versions"] = (await client.get(CRDS, None, CRD_NAME))["status"][
            "storedVersions"]
        patched = await client.patch(WIDGETS_V1, "default", "a", {"spec": {"replicas": 1}})
        patched["status"] = {"replicas": 1}
        status = await client.update(WIDGETS_V1, patched, subresource="status")
        seen["status"] = (status["apiVersion"], status["spec"], status["status"])
        scale = await client.patch(WIDGETS_V1, "default", "a", {"spec": {"replicas": 2}},
                                   subresource="scale")
        seen["scale"] = (scale["spec"], scale["status"])
        seen["scaled v2"] = (await client.get(WIDGETS_V2, "default", "a"))["spec"]
        await client.create(WIDGETS_V2, widget("w", V2, broken=True))
        seen["refused get"] = await _error(client.get(WIDGETS_V1, "default", "w"))
        seen["refused list"] = await _error(client.list(WIDGETS_V1, "default"))
        seen["refused create"] = await _error(client.create(WIDGETS_V1, widget("x",
                                                                               broken=True)))
        await client.delete(WIDGETS_V2, "default", "w")
        crd = await client.get(CRDS, None, CRD_NAME)
        url = crd["spec"]["conversion"]["webhook"]["clientConfig"]["url"]
        await client.patch(CRDS, None, CRD_NAME, {"spec": {"conversion": {"webhook": {
            "clientConfig": {"url": url.replace("/convert", "/nothing")}}}}})

        async def not_found() -> str:
            text = await _error(client.get(WIDGETS_V1, "default", "a"))
            return text if "could not find" in text else ""

        seen["wrong path"] = await eventually(not_found, within=20, interval=0.2,
                                              what="the new path called")
        await toy.stop()
        # kube-apiserver keeps connections to webhooks alive: a call in the instant the server
        # goes away may still take a pooled connection and read `EOF` instead of the dial's
        # `connection refused` (the local server does not keep them).
        await asyncio.sleep(0.5)
        seen["down get"] = await _error(client.get(WIDGETS_V1, "default", "a"))
        seen["down create"] = await _error(client.create(WIDGETS_V1, widget("y", size=1)))
        seen["down get v2"] = (await client.get(WIDGETS_V2, "default", "a"))["spec"]
        seen["no client config"] = await _causes(client, {"strategy": "Webhook"})
        seen["http and v2 reviews"] = await _causes(client, {"strategy": "Webhook", "webhook": {
            "clientConfig": {"url": "http://127.0.0.1/convert"},
            "conversionReviewVersions": ["v2"]}})
        seen["webhook under None"] = await _causes(client, {"strategy": "None", "webhook": {
            "clientConfig": {"url": "https://127.0.0.1/convert"},
            "conversionReviewVersions": ["v1"]}})
        await client.delete(CRDS, None, CRD_NAME)
    finally:
        await toy.stop()
        toy.tls.close()
        await client.close()
    return {k: re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", str(v)) if isinstance(v, str)
            else v for k, v in seen.items()}


async def test_conversion_answers_as_kubernetes_1_20(real_kubeconfig: Path, cluster: LocalCluster,
                                                     kubeconfig: Path) -> None:
    real = await _scenario(real_kubeconfig)
    local = await _scenario(kubeconfig)
    assert local == real
