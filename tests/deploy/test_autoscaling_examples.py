"""The autoscaling examples in deploy/examples: accepted by the API server (KEDA's CRDs from
hack/crds installed), valid graphs, and every scaleTargetRef a scale subresource discovery
lists, answering with the adapter's replicas and pod selector."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from api.convert import load_resource
from api.validation import validate
from backends.naming import component_name
from hack.localcluster.server import LocalCluster
from hack.localcluster.simulation.hpa import scale_target
from hack.localcluster.testing import Kubectl
from hack.our_crds import write_our_crds

pytestmark = pytest.mark.kubectl

Json = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "deploy" / "examples"
#: kubectl's name of the adapters in v1alpha1 (a short name reads v1beta1, through a
#: conversion webhook not running here).
ADAPTERS = "dynamographdeploymentscalingadapters.v1alpha1.nvidia.com"
FILES = ["dgd-autoscaled.yaml", "autoscaling-rbac.yaml", "hpa-frontend-cpu.yaml",
         "hpa-decode-ttft.yaml", "keda-prefill-scaledobject.yaml"]


def documents(name: str) -> list[Json]:
    return [d for d in yaml.safe_load_all((EXAMPLES / name).read_text()) if d]


def scalers() -> list[Json]:
    return [d for name in FILES for d in documents(name)
            if d["kind"] in ("HorizontalPodAutoscaler", "ScaledObject")]


def test_the_graph_is_valid_and_every_service_has_an_autoscaler() -> None:
    [graph] = [d for d in documents("dgd-autoscaled.yaml")
               if d["kind"] == "DynamoGraphDeployment"]
    assert validate(load_resource(graph)) == []
    adapters = {component_name(graph["metadata"]["name"], svc)
                for svc, spec in graph["spec"]["services"].items()
                if spec["scalingAdapter"]["enabled"]}
    targets = [s["spec"]["scaleTargetRef"]["name"] for s in scalers()]
    assert sorted(targets) == sorted(adapters)  # one autoscaler per service, no two


async def test_examples_are_accepted_and_targets_scale(cluster: LocalCluster,
                                                       kubectl: Kubectl,
                                                       tmp_path: Path) -> None:
    await kubectl("apply", "-f", str(write_our_crds(tmp_path / "our-crds")),
                  "-f", str(ROOT / "hack" / "crds" / "keda.yaml"))
    await kubectl("wait", "--for=condition=Established", "crd", "--all", "--timeout=30s")
    for name in FILES:
        await kubectl("apply", "-f", str(EXAMPLES / name))
    so = json.loads(await kubectl("get", "scaledobject", "-n", "dynamo",
                                  "llm-vllmprefillworker", "-o", "json"))
    assert so["spec"]["triggers"][0]["metadata"]["threshold"] == "0.5"

    # Discovery lists the adapters' scale subresource as autoscaling/v1 Scale.
    listing = json.loads(await kubectl("get", "--raw", "/apis/nvidia.com/v1alpha1"))
    [scale] = [r for r in listing["resources"]
               if r["name"] == "dynamographdeploymentscalingadapters/scale"]
    assert (scale["group"], scale["version"], scale["kind"]) == ("autoscaling", "v1", "Scale")
    assert {"get", "update", "patch"} <= set(scale["verbs"])

    # Every scaleTargetRef maps to a resource with /scale, and the Scale of an adapter (as
    # the graph controller creates it) carries its replicas and its pods' selector.
    for scaler in scalers():
        ref = scaler["spec"]["scaleTargetRef"]
        rt = scale_target(cluster.registry, ref["apiVersion"], ref["kind"])
        assert rt is not None and rt.plural == "dynamographdeploymentscalingadapters", ref
    adapter = {"apiVersion": "nvidia.com/v1alpha1",
               "kind": "DynamoGraphDeploymentScalingAdapter",
               "metadata": {"name": "llm-vllmprefillworker", "namespace": "dynamo"},
               "spec": {"replicas": 1, "dgdRef": {"name": "llm",
                                                  "serviceName": "VllmPrefillWorker"}}}
    await kubectl("apply", "-f", "-", stdin=json.dumps(adapter))
    selector = ("nvidia.com/dynamo-graph-deployment-name=llm,"
                "nvidia.com/dynamo-component=VllmPrefillWorker")
    await kubectl("patch", ADAPTERS, "llm-vllmprefillworker", "-n", "dynamo",
                  "--subresource=status", "--type=merge", "-p",
                  json.dumps({"status": {"replicas": 1, "selector": selector}}))
    path = ("/apis/nvidia.com/v1alpha1/namespaces/dynamo/dynamographdeploymentscalingadapters"
            "/llm-vllmprefillworker/scale")
    got = json.loads(await kubectl("get", "--raw", path))
    assert (got["kind"], got["spec"], got["status"]) == (
        "Scale", {"replicas": 1}, {"replicas": 1, "selector": selector})
    await kubectl("scale", f"{ADAPTERS}/llm-vllmprefillworker", "-n", "dynamo", "--replicas=3")
    got = json.loads(await kubectl("get", "--raw", path))
    assert got["spec"] == {"replicas": 3}

    rules = json.loads(await kubectl("get", "clusterrole", "dynamo-scaling-adapter-scaler",
                                     "-o", "json"))["rules"]
    assert {"apiGroups": ["nvidia.com"],
            "resources": ["dynamographdeploymentscalingadapters/scale"],
            "verbs": ["get", "update", "patch"]} in rules
