"""What the conversion benchmark's runs share, on the local API server or on a real one: the
stored graphs and their CRD, the timed lists, the webhook pointed at, the checks of a list."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import yaml

from api.conversion import convert
from controller.client import KubeClient
from controller.resource import Resource
from hack.bench.checks import check
from hack.bench.conversion.webhook_operator import NAMESPACE as OPERATOR_NAMESPACE
from hack.bench.conversion.webhook_operator import WebhookOperator
from hack.our_crds import CRD_DIR, with_conversion

Json = dict[str, Any]
ROOT = Path(__file__).resolve().parents[3]
CRD_NAME = "dynamographdeployments.nvidia.com"
EXAMPLE = ROOT / "deploy" / "examples" / "v1beta1" / "vllm-agg.yaml"
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                "CustomResourceDefinition", namespaced=False)
NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False)
ALPHA = Resource("nvidia.com", "v1alpha1", "dynamographdeployments", "DynamoGraphDeployment")
BETA = Resource("nvidia.com", "v1beta1", "dynamographdeployments", "DynamoGraphDeployment")
NAMESPACE = "default"
GOAL_SECONDS, GOAL_GRAPHS = 1.0, 1000


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


async def served(kube: KubeClient, resource: Resource) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            await kube.list(resource, NAMESPACE, limit=1)
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


async def timed_list(kube: KubeClient, resource: Resource) -> tuple[float, list[Json]]:
    started = time.perf_counter()
    listing = await kube.list(resource, NAMESPACE)
    return time.perf_counter() - started, listing["items"]


async def seed(kube: KubeClient, operator: WebhookOperator, graphs: int) -> None:
    """The DGD CRD stored as v1beta1 and converted by the operator, and `graphs` graphs."""
    for path in sorted(CRD_DIR.glob("*.yaml")):  # the operator starts once all are served
        crd = with_conversion(yaml.safe_load(path.read_text()), operator.client_config())
        if crd["metadata"]["name"] == CRD_NAME:
            stored = [v["name"] for v in crd["spec"]["versions"] if v["storage"]]
            check([None if stored == ["v1beta1"] else f"{CRD_NAME} stores {stored}"])
        await kube.create(CRDS, crd)
    await kube.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                   "metadata": {"name": OPERATOR_NAMESPACE}})
    await served(kube, BETA)
    [template] = [d for d in yaml.safe_load_all(EXAMPLE.read_text()) if d]
    for i in range(graphs):
        obj = {**template, "metadata": {"name": f"g-{i:05d}", "namespace": NAMESPACE}}
        await kube.create(BETA, obj, decode=False)


async def point_at(kube: KubeClient, port: int) -> None:
    """The DGD CRD's conversion webhook at 127.0.0.1:`port` (the CA is the same)."""
    url = f"https://127.0.0.1:{port}/convert"
    await kube.patch(CRDS, None, CRD_NAME, {"spec": {"conversion": {"webhook": {
        "clientConfig": {"url": url}}}}})


async def pure_conversions(kube: KubeClient) -> list[float]:
    """Seconds `api.conversion.convert` takes for each stored graph to v1alpha1, in this
    process (no HTTP, no JSON)."""
    items = (await kube.list(BETA, NAMESPACE))["items"]
    out = []
    for item in items:
        started = time.perf_counter()
        convert(item, ALPHA.api_version)
        out.append(time.perf_counter() - started)
    return out


def wrong(items: list[Json], graphs: int, version: str) -> str | None:
    """What is wrong with a list of `graphs` graphs asked for in `version`, if anything."""
    if len(items) != graphs:
        return f"a {version} list returned {len(items)} of {graphs} graphs"
    others = {i.get("apiVersion") for i in items} - {version}
    return f"a {version} list answered {sorted(map(str, others))}" if others else None
