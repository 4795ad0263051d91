"""EndpointSlices and Endpoints of Services with selectors, following pod readiness."""

from __future__ import annotations

from kubernetes_asyncio import client
from simulation_support import deployment, eventually

from hack.localcluster.server import LocalCluster

NS = "default"


def service(name: str, selector: dict[str, str], **spec: object) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name,
                                                                 "labels": {"team": "x"}},
            "spec": {"selector": selector, "ports": [
                {"name": "http", "port": 80, "targetPort": "web"},
                {"name": "metrics", "port": 9090, "targetPort": 9091}], **spec}}


async def slices_of(discovery_api: client.DiscoveryV1Api, name: str
                    ) -> list[client.V1EndpointSlice]:
    return list((await discovery_api.list_namespaced_endpoint_slice(
        NS, label_selector=f"kubernetes.io/service-name={name}")).items)


async def test_slices_follow_pods_and_readiness(
        apps: client.AppsV1Api, core: client.CoreV1Api, discovery_api: client.DiscoveryV1Api,
        sim_cluster: LocalCluster) -> None:
    await core.create_namespaced_service(NS, service("web", {"app": "web"}))
    await apps.create_namespaced_deployment(NS, deployment(
        "web", replicas=2, ports=[{"name": "web", "containerPort": 8080}]))

    async def two_ready() -> client.V1EndpointSlice | None:
        slices = await slices_of(discovery_api, "web")
        if len(slices) == 1 and len(slices[0].endpoints or []) == 2 and all(
                e.conditions.ready for e in slices[0].endpoints):
            return slices[0]
        return None

    s = await eventually(two_ready)
    assert s.address_type == "IPv4"
    assert s.metadata.labels["endpointslice.kubernetes.io/managed-by"] == \
        "endpointslice-controller.k8s.io"
    assert s.metadata.labels["team"] == "x"
    assert s.metadata.generate_name == "web-"
    ref = s.metadata.owner_references[0]
    assert (ref.kind, ref.name, ref.controller) == ("Service", "web", True)
    assert sorted((p.name, p.port, p.protocol) for p in s.ports) == [
        ("http", 8080, "TCP"), ("metrics", 9091, "TCP")]
    pods = {p.metadata.name: p for p in (await core.list_namespaced_pod(
        NS, label_selector="app=web")).items}
    for ep in s.endpoints:
        pod = pods[ep.target_ref.name]
        assert ep.addresses == [pod.status.pod_ip]
        assert ep.node_name == pod.spec.node_name
        assert ep.zone in ("zone-a", "zone-b")
        assert (ep.conditions.serving, ep.conditions.terminating) == (True, False)

    endpoints = await core.read_namespaced_endpoints("web", NS)
    assert len(endpoints.subsets) == 1
    assert sorted(a.ip for a in endpoints.subsets[0].addresses) == sorted(
        p.status.pod_ip for p in pods.values())
    assert sorted(p.port for p in endpoints.subsets[0].ports) == [8080, 9091]

    # One pod goes unready: its endpoint says so; legacy Endpoints move it to notReady.
    first = sorted(pods)[0]
    assert sim_cluster.simulation is not None
    sim_cluster.simulation.behaviors.set_ready(NS, False, name=first)

    async def one_unready() -> bool:
        eps = (await slices_of(discovery_api, "web"))[0].endpoints
        return sorted(e.conditions.ready for e in eps) == [False, True]

    await eventually(one_unready)
    endpoints = await core.read_namespaced_endpoints("web", NS)
    assert [a.target_ref.name for a in endpoints.subsets[0].not_ready_addresses] == [first]

    # A terminating pod is kept in the slice, marked terminating, and leaves legacy Endpoints
    # (it drains until its grace period ends, so the test need not catch a short window).
    sim_cluster.simulation.behaviors.set_stop(NS, "ignore-sigterm", name=sorted(pods)[1])
    await core.delete_namespaced_pod(sorted(pods)[1], NS)

    async def terminating() -> bool:
        eps = (await slices_of(discovery_api, "web"))[0].endpoints or []
        return any(e.conditions.terminating for e in eps)

    await eventually(terminating)


async def test_service_without_pods_keeps_an_empty_slice(
        core: client.CoreV1Api, discovery_api: client.DiscoveryV1Api) -> None:
    await core.create_namespaced_service(NS, service("lonely", {"app": "nobody"}))
    slices = await eventually(lambda: slices_of(discovery_api, "lonely"))
    assert slices[0].endpoints is None and slices[0].ports is None
    endpoints = await core.read_namespaced_endpoints("lonely", NS)
    assert endpoints.subsets is None


async def test_service_without_selector_is_left_alone(
        core: client.CoreV1Api, discovery_api: client.DiscoveryV1Api,
        sim_cluster: LocalCluster) -> None:
    await core.create_namespaced_service(NS, {"metadata": {"name": "manual"}, "spec": {
        "ports": [{"port": 80}]}})
    assert sim_cluster.simulation is not None
    await sim_cluster.simulation.settle()
    assert await slices_of(discovery_api, "manual") == []


async def test_deleting_the_service_removes_endpoints(
        core: client.CoreV1Api, discovery_api: client.DiscoveryV1Api) -> None:
    await core.create_namespaced_service(NS, service("brief", {"app": "x"}))
    await eventually(lambda: slices_of(discovery_api, "brief"))
    await core.delete_namespaced_service("brief", NS)

    async def gone() -> bool:
        if await slices_of(discovery_api, "brief"):
            return False
        try:
            await core.read_namespaced_endpoints("brief", NS)
        except client.ApiException as err:
            return err.status == 404
        return False

    await eventually(gone)
