"""Helpers of the simulation tests: polling, manifests, CRD installation."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from kubernetes_asyncio import client

from hack.localcluster.testing import eventually as shared_eventually

Json = dict[str, Any]
T = TypeVar("T")

CRDS = Path(__file__).resolve().parents[3] / "hack" / "crds"


eventually = shared_eventually

def pod_template(labels: dict[str, str], *, image: str = "nginx:1.27", gpus: int = 0,
                 annotations: dict[str, str] | None = None, restart: str | None = None,
                 probe: bool = False, ports: list[Json] | None = None) -> Json:
    container: Json = {"name": "app", "image": image}
    if gpus:
        container["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    if probe:
        container["readinessProbe"] = {"httpGet": {"path": "/", "port": 80}}
    if ports:
        container["ports"] = ports
    spec: Json = {"containers": [container]}
    if restart:
        spec["restartPolicy"] = restart
    meta: Json = {"labels": labels}
    if annotations:
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": spec}


def deployment(name: str, replicas: int = 2, **template: Any) -> Json:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": pod_template(labels, **template)}}


def job(name: str, *, annotations: dict[str, str] | None = None, **spec: Any) -> Json:
    meta: Json = {"name": name}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
            "spec": {"template": pod_template({"job": name}, restart="Never"), **spec}}


def pod(name: str, **template: Any) -> Json:
    t = pod_template({"app": name}, **template)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, **t["metadata"]},
            "spec": t["spec"]}


def condition(obj: Any, ctype: str) -> Any:
    for c in (obj.status.conditions or []) if obj.status else []:
        if c.type == ctype:
            return c
    return None


def status_condition(obj: Json, ctype: str) -> Json | None:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return dict(c)
    return None


async def install_crds(api: client.ApiClient, manifest: str) -> list[str]:
    """Create the CRDs of `hack/crds/<manifest>` and wait until they are established."""
    ext = client.ApiextensionsV1Api(api)
    names = []
    for doc in yaml.safe_load_all((CRDS / manifest).read_text()):
        await ext.create_custom_resource_definition(doc)
        names.append(doc["metadata"]["name"])

    async def established() -> bool:
        for name in names:
            crd = await ext.read_custom_resource_definition(name)
            if not any(c.type == "Established" and c.status == "True"
                       for c in (crd.status.conditions or [])):
                return False
        return True

    await eventually(established)
    return names
