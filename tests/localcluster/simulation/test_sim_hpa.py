"""The simulated HorizontalPodAutoscaler against Deployments: CPU utilization, External
metrics, bounds, tolerance, status and conditions, the metrics control endpoint."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from simulation_support import deployment, eventually

from controller.client import ClientConfig, KubeClient
from controller.resource import Resource
from hack.localcluster.server import LocalCluster
from hack.localcluster.simulation import HpaSettings, Metrics, SimulationConfig
from hack.localcluster.testing import Kubectl

NS = "default"
Json = dict[str, Any]
HPAS = Resource("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler")
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment")
#: Scale down at once: these tests are about the arithmetic, not the windows.
NO_WINDOWS: Json = {"scaleDown": {"stabilizationWindowSeconds": 0}}


@pytest.fixture
def sim_config() -> SimulationConfig:
    return SimulationConfig(hpa=HpaSettings(sync_period=0.05, time_scale=0.01))


@pytest.fixture
async def kube(sim_cluster: LocalCluster, tmp_path: Path) -> AsyncIterator[KubeClient]:
    c = await KubeClient.connect(tmp_path / "sim" / "kubeconfig", ClientConfig(qps=None))
    try:
        yield c
    finally:
        await c.close()


@pytest.fixture
def metrics(sim_cluster: LocalCluster) -> Metrics:
    assert sim_cluster.simulation is not None
    return sim_cluster.simulation.metrics


def web(replicas: int, cpu_request: str = "100m") -> Json:
    d = deployment("web", replicas=replicas)
    d["spec"]["template"]["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": cpu_request}}
    return d


def hpa(metrics: list[Json], *, minimum: int = 1, maximum: int = 5,
        behavior: Json | None = None, kind: str = "Deployment", api_version: str = "apps/v1",
        target: str = "web") -> Json:
    spec: Json = {"scaleTargetRef": {"apiVersion": api_version, "kind": kind, "name": target},
                  "minReplicas": minimum, "maxReplicas": maximum, "metrics": metrics}
    if behavior is not None:
        spec["behavior"] = behavior
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": NS}, "spec": spec}


CPU_50: Json = {"type": "Resource", "resource": {
    "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}


def external(target: Json) -> Json:
    return {"type": "External", "external": {
        "metric": {"name": "queue", "selector": {"matchLabels": {"app": "web"}}},
        "target": target}}


async def replicas_become(kube: KubeClient, n: int, within: float = 5.0) -> Json:
    async def check() -> Json | None:
        d = await kube.get(DEPLOYMENTS, NS, "web")
        return d if d["spec"]["replicas"] == n else None
    return await eventually(check, within)


async def hpa_status(kube: KubeClient, check: Any, within: float = 5.0) -> Json:
    async def poll() -> Json | None:
        status = (await kube.get(HPAS, NS, "web")).get("status") or {}
        return status if check(status) else None
    return await eventually(poll, within)


def condition(status: Json, ctype: str) -> Json:
    return next(c for c in status.get("conditions", []) if c["type"] == ctype)


async def test_cpu_utilization_scales_up_to_max_and_back_down(kube: KubeClient,
                                                              metrics: Metrics) -> None:
    await kube.create(DEPLOYMENTS, {**web(1), "metadata": {"name": "web", "namespace": NS}})
    metrics.set_pod_usage(NS, "100m", selector="app=web")  # 100 % of the request
    await kube.create(HPAS, hpa([CPU_50], behavior=NO_WINDOWS))
    # Every new pod runs at 100 % too, so the HPA keeps doubling until maxReplicas.
    await replicas_become(kube, 5)
    status = await hpa_status(kube, lambda s: condition(s, "ScalingLimited")["status"] == "True")
    assert condition(status, "ScalingLimited")["reason"] == "TooManyReplicas"
    assert condition(status, "ScalingActive")["reason"] == "ValidMetricFound"
    assert status["lastScaleTime"]
    assert status["currentMetrics"][0]["resource"]["current"] == {
        "averageUtilization": 100, "averageValue": "100m"}

    metrics.set_pod_usage(NS, "10m", selector="app=web")  # 10 %: one pod is plenty
    await replicas_become(kube, 1)
    status = await hpa_status(kube, lambda s: s.get("currentReplicas") == 1)
    assert condition(status, "AbleToScale")["status"] == "True"


async def test_cpu_pods_without_metrics_do_not_count(kube: KubeClient, metrics: Metrics) -> None:
    await kube.create(DEPLOYMENTS, {**web(2), "metadata": {"name": "web", "namespace": NS}})
    await kube.create(HPAS, hpa([CPU_50], behavior=NO_WINDOWS))
    status = await hpa_status(kube, lambda s: condition(s, "ScalingActive")["status"] == "False"
                              if s.get("conditions") else False)
    assert condition(status, "ScalingActive")["reason"] == "FailedGetResourceMetric"
    assert (await kube.get(DEPLOYMENTS, NS, "web"))["spec"]["replicas"] == 2


async def test_external_value_within_tolerance_then_above_and_below(kube: KubeClient,
                                                                    metrics: Metrics) -> None:
    await kube.create(DEPLOYMENTS, {**web(2), "metadata": {"name": "web", "namespace": NS}})
    metrics.set_external("queue", "1050m", labels={"app": "web"})  # ratio 1.05: tolerated
    await kube.create(HPAS, hpa([external({"type": "Value", "value": "1"})],
                                behavior=NO_WINDOWS, minimum=2, maximum=4))
    status = await hpa_status(kube, lambda s: bool(s.get("currentMetrics")))
    assert status["desiredReplicas"] == 2
    assert status["currentMetrics"] == [{"type": "External", "external": {
        "metric": {"name": "queue", "selector": {"matchLabels": {"app": "web"}}},
        "current": {"value": "1050m"}}}]

    # A Value metric is for the whole target: ratio x ready pods, every sync, within bounds.
    await eventually(lambda: _ready_pods(kube, 2))
    metrics.set_external("queue", "2", labels={"app": "web"})
    await replicas_become(kube, 4)
    # Once the new pods are ready the ratio asks for 8: maxReplicas holds it at 4.
    await hpa_status(kube, lambda s: s.get("currentReplicas") == 4 and condition(
        s, "ScalingLimited")["reason"] == "TooManyReplicas")
    await eventually(lambda: _ready_pods(kube, 4))
    metrics.set_external("queue", "500m", labels={"app": "web"})
    await replicas_become(kube, 2)
    await hpa_status(kube, lambda s: s.get("currentReplicas") == 2 and condition(
        s, "ScalingLimited")["reason"] == "TooFewReplicas")


async def test_external_average_value_and_rate_policy(kube: KubeClient,
                                                      metrics: Metrics) -> None:
    await kube.create(DEPLOYMENTS, {**web(1), "metadata": {"name": "web", "namespace": NS}})
    metrics.set_external("queue", "40", labels={"app": "web"})
    # 40 queued at 5 per replica wants 8; one pod per (scaled) 20 s period allows 2 at first.
    behavior = {"scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 20}]},
                "scaleDown": {"stabilizationWindowSeconds": 0}}
    await kube.create(HPAS, hpa([external({"type": "AverageValue", "averageValue": "5"})],
                                behavior=behavior, maximum=10))
    status = await hpa_status(kube, lambda s: s.get("desiredReplicas") == 2)
    limited = condition(status, "ScalingLimited")
    assert (limited["status"], limited["reason"]) == ("True", "ScaleUpLimit")
    await replicas_become(kube, 8, within=10.0)


async def test_target_without_scale_subresource_is_reported(kube: KubeClient) -> None:
    await kube.create(HPAS, hpa([CPU_50], kind="ConfigMap", api_version="v1"))
    status = await hpa_status(kube, lambda s: bool(s.get("conditions")))
    able = condition(status, "AbleToScale")
    assert (able["status"], able["reason"]) == ("False", "FailedGetScale")


async def test_bounds_apply_before_metrics(kube: KubeClient) -> None:
    await kube.create(DEPLOYMENTS, {**web(7), "metadata": {"name": "web", "namespace": NS}})
    await kube.create(HPAS, hpa([CPU_50], maximum=3))
    await replicas_become(kube, 3)


async def test_scaling_disabled_at_zero(kube: KubeClient, metrics: Metrics) -> None:
    await kube.create(DEPLOYMENTS, {**web(0), "metadata": {"name": "web", "namespace": NS}})
    metrics.set_pod_usage(NS, "100m", selector="app=web")
    await kube.create(HPAS, hpa([CPU_50]))
    status = await hpa_status(kube, lambda s: bool(s.get("conditions")))
    active = condition(status, "ScalingActive")
    assert (active["status"], active["reason"]) == ("False", "ScalingDisabled")


async def test_metrics_control_endpoint(sim_kubectl: Kubectl, metrics: Metrics,
                                        tmp_path: Path) -> None:
    body = tmp_path / "metric.json"
    body.write_text(json.dumps({"type": "external", "name": "ttft", "namespace": NS,
                                "labels": {"dynamo_namespace": "default-g"}, "value": "0.75"}))
    out = json.loads(await sim_kubectl("create", "--raw", "/localcluster/metrics", "-f",
                                       str(body)))
    assert out["external"] == [{"namespace": NS, "name": "ttft",
                                "labels": {"dynamo_namespace": "default-g"}, "value": "750m"}]
    listed = json.loads(await sim_kubectl("get", "--raw", "/localcluster/metrics"))
    assert listed == out
    body.write_text(json.dumps({"type": "pod", "namespace": NS, "selector": "app=web",
                                "usage": "250m"}))
    await sim_kubectl("create", "--raw", "/localcluster/metrics", "-f", str(body))
    pod = {"metadata": {"name": "p", "namespace": NS, "labels": {"app": "web"}}}
    assert metrics.pod_usage(pod) == 250
    body.write_text(json.dumps({"type": "nope"}))
    bad = await sim_kubectl.run("create", "--raw", "/localcluster/metrics", "-f", str(body))
    assert bad.code != 0 and "unknown metric type" in bad.stderr


async def _ready_pods(kube: KubeClient, n: int) -> bool:
    pods = await kube.list(Resource("", "v1", "pods", "Pod"), NS, label_selector="app=web")
    ready = [p for p in pods["items"] if not p["metadata"].get("deletionTimestamp") and any(
        c["type"] == "Ready" and c["status"] == "True"
        for c in (p.get("status") or {}).get("conditions") or ())]
    return len(ready) == n
