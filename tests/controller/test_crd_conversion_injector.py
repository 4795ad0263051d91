"""`ConversionKeeper.injector_annotation`: a CRD whose caBundle a CA injector fills (cert-manager's
`cert-manager.io/inject-ca-from`) keeps the injector's bundle; the keeper still writes the
clientConfig, and a bundle only while there is none."""

from __future__ import annotations

import base64
from typing import Any

from harness import CRDS, schemaless_crd

from controller.client import KubeClient
from controller.crd_conversion import ConversionKeeper, service_client_config

Json = dict[str, Any]
ANNOTATION = "cert-manager.io/inject-ca-from"
NAME = "widgets.test.example.com"


def _crd(annotated: bool) -> Json:
    crd = schemaless_crd("widget", "Widget")
    v1 = crd["spec"]["versions"][0]
    crd["spec"]["versions"] = [v1, {**v1, "name": "v2", "storage": False}]
    if annotated:
        crd["metadata"]["annotations"] = {ANNOTATION: "ops/webhook"}
    return crd


def _bundle(crd: Json) -> str:
    return str(crd["spec"]["conversion"]["webhook"]["clientConfig"].get("caBundle", ""))


async def _injector_writes(client: KubeClient, pem: bytes) -> None:
    await client.patch(CRDS, None, NAME, {"spec": {"conversion": {"webhook": {
        "clientConfig": {"caBundle": base64.b64encode(pem).decode()}}}}})


async def test_an_injected_bundle_is_left_to_the_injector(client: KubeClient) -> None:
    await client.create(CRDS, _crd(annotated=True))
    config = service_client_config("ops", "hook")
    keeper = ConversionKeeper(client, [NAME], config, lambda: b"mounted",
                              injector_annotation=ANNOTATION)
    assert await keeper.ensure()  # no bundle yet: the keeper's own, with the clientConfig
    crd = await client.get(CRDS, None, NAME)
    assert _bundle(crd) == base64.b64encode(b"mounted").decode()
    assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["name"] == "hook"
    await _injector_writes(client, b"injected")
    rv = (await client.get(CRDS, None, NAME))["metadata"]["resourceVersion"]
    assert await keeper.ensure()
    crd = await client.get(CRDS, None, NAME)
    assert crd["metadata"]["resourceVersion"] == rv  # no write: the injector's bundle stays
    assert _bundle(crd) == base64.b64encode(b"injected").decode()


async def test_without_the_annotation_the_keeper_puts_its_bundle_back(
        client: KubeClient) -> None:
    await client.create(CRDS, _crd(annotated=False))
    keeper = ConversionKeeper(client, [NAME], service_client_config("ops", "hook"),
                              lambda: b"mounted", injector_annotation=ANNOTATION)
    assert await keeper.ensure()
    await _injector_writes(client, b"someone else's")
    assert await keeper.ensure()
    assert _bundle(await client.get(CRDS, None, NAME)) == base64.b64encode(b"mounted").decode()
