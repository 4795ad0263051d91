"""Cluster-wide objects the cases use, installed once per server before they run: the suite's
own Gadget CRD (status and scale subresources, printer columns, a structural schema), our
DGDSA and DynamoModel CRDs (the two Kubernetes 1.20 accepts; see test_realcluster_crds), the
toy conversion CRD, and our DGD CRD converting through the in-process webhook
(`managed_versions`)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import yaml

from ..target import Json, Target
from . import conversion, managed_versions
from .paths import CRDS, GROUP

DEPLOY_CRDS = Path(__file__).parents[4] / "deploy" / "crds"
OURS = ("nvidia.com_dynamographdeploymentscalingadapters.yaml", "nvidia.com_dynamomodels.yaml")

GADGET_SCHEMA: dict[str, Any] = {"type": "object", "properties": {
    "spec": {"type": "object", "properties": {
        "size": {"type": "integer", "minimum": 0, "maximum": 10},
        "replicas": {"type": "integer", "minimum": 0},
        "mode": {"type": "string", "enum": ["fast", "slow"]},
        "name": {"type": "string", "maxLength": 8, "pattern": "^[a-z]+$"},
        "tags": {"type": "array", "maxItems": 2, "items": {"type": "string"}},
        "selector": {"type": "string"}}},
    "status": {"type": "object", "properties": {
        "replicas": {"type": "integer"}, "selector": {"type": "string"},
        "phase": {"type": "string"}}}}}

GADGET_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": f"gadgets.{GROUP}"},
    "spec": {"group": GROUP, "scope": "Namespaced",
             "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget",
                       "listKind": "GadgetList", "shortNames": ["gd"]},
             "versions": [{
                 "name": "v1", "served": True, "storage": True,
                 "schema": {"openAPIV3Schema": GADGET_SCHEMA},
                 "subresources": {"status": {}, "scale": {
                     "specReplicasPath": ".spec.replicas",
                     "statusReplicasPath": ".status.replicas",
                     "labelSelectorPath": ".status.selector"}},
                 "additionalPrinterColumns": [
                     {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                     {"name": "Mode", "type": "string", "jsonPath": ".spec.mode",
                      "description": "how it runs"},
                     {"name": "Phase", "type": "string", "jsonPath": ".status.phase",
                      "priority": 1}]}]}}


def ours() -> list[dict[str, Any]]:
    """Our CRDs with conversion strategy None: no operator serves their conversion webhook
    here, and kube-controller-manager 1.20's garbage collector stops collecting anything once
    a served version cannot be listed (its informers never sync), which the gc-* cases saw."""
    docs = [yaml.safe_load((DEPLOY_CRDS / f).read_text()) for f in OURS]
    for doc in docs:
        doc["spec"]["conversion"] = {"strategy": "None"}
    return docs


def crds() -> list[dict[str, Any]]:
    return [GADGET_CRD, *ours()]


async def setup(target: Target, conversion_client: Json, within: float = 60.0) -> None:
    """Creates the CRDs (an existing one is kept) and waits until each is served;
    `conversion_client` is the toy conversion webhook's clientConfig."""
    for crd in [*crds(), conversion.crd(conversion_client), managed_versions.dgd_crd()]:
        answer = await target.request("POST", CRDS, body=crd)
        if answer.code not in (201, 409):
            raise RuntimeError(f"{target.name}: CRD {crd['metadata']['name']}: {answer.text}")
    deadline = time.monotonic() + within
    for crd in [*crds(), conversion.crd(conversion_client), managed_versions.dgd_crd()]:
        spec = crd["spec"]
        storage = next(v["name"] for v in spec["versions"] if v["storage"])
        path = f"/apis/{spec['group']}/{storage}/{spec['names']['plural']}"
        while (await target.request("GET", path)).code != 200:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{target.name}: {path} not served")
            await asyncio.sleep(0.2)
