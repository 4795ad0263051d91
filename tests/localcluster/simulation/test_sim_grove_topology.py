"""Grove's ClusterTopology in the local cluster (hack/crds/grove.yaml): served cluster-scoped
with its schema, a default `grove-topology` of the simulated nodes' levels, and the
PodCliqueSet's TopologyLevelsUnavailable condition following the topologies."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes_asyncio import client
from simulation_support import eventually, install_crds, pod_template, status_condition

NS = "default"
GROUP, VERSION = "grove.io", "v1alpha1"
Json = dict[str, Any]
LEVELS = [{"domain": "region", "key": "topology.kubernetes.io/region"},
          {"domain": "zone", "key": "topology.kubernetes.io/zone"},
          {"domain": "block", "key": "topology.kubernetes.io/block"},
          {"domain": "rack", "key": "topology.kubernetes.io/rack"},
          {"domain": "host", "key": "kubernetes.io/hostname"}]


def pcs(name: str, constraint: Json | None) -> Json:
    clique: Json = {"name": "worker", "spec": {"roleName": "worker", "replicas": 1,
                                               "podSpec": pod_template({})["spec"]}}
    if constraint is not None:
        clique["topologyConstraint"] = constraint
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "PodCliqueSet",
            "metadata": {"name": name}, "spec": {"replicas": 1, "template": {
                "cliques": [clique]}}}


async def levels_condition(custom: client.CustomObjectsApi, name: str,
                           status: str, reason: str) -> Json | None:
    obj = await custom.get_namespaced_custom_object(GROUP, VERSION, NS, "podcliquesets", name)
    found = status_condition(obj, "TopologyLevelsUnavailable")
    if found is None or (found["status"], found["reason"]) != (status, reason):
        return None
    return found


async def test_cluster_topologies_are_served_with_a_default_of_the_nodes_levels(
        sim_api: client.ApiClient, custom: client.CustomObjectsApi) -> None:
    await install_crds(sim_api, "grove.yaml")

    async def default() -> Json | None:
        try:
            obj: Json = await custom.get_cluster_custom_object(
                GROUP, VERSION, "clustertopologies", "grove-topology")
        except client.ApiException:
            return None
        return obj
    topology = await eventually(default)
    assert topology["spec"]["levels"] == LEVELS
    # The schema is Grove's: a domain is a lowercase name, and there is at least one level.
    for levels in ([{"domain": "Rack", "key": "rack"}], []):
        with pytest.raises(client.ApiException) as refused:
            await custom.create_cluster_custom_object(GROUP, VERSION, "clustertopologies", {
                "apiVersion": f"{GROUP}/{VERSION}", "kind": "ClusterTopology",
                "metadata": {"name": "bad"}, "spec": {"levels": levels}})
        assert refused.value.status == 422


async def test_podcliqueset_reports_whether_its_pack_domains_are_levels(
        sim_api: client.ApiClient, custom: client.CustomObjectsApi) -> None:
    await install_crds(sim_api, "grove.yaml")
    await custom.create_cluster_custom_object(GROUP, VERSION, "clustertopologies", {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "ClusterTopology",
        "metadata": {"name": "fabric"}, "spec": {"levels": LEVELS[1:]}})
    create = custom.create_namespaced_custom_object
    await create(GROUP, VERSION, NS, "podcliquesets",
                 pcs("racked", {"topologyName": "fabric", "packDomain": "rack"}))
    await create(GROUP, VERSION, NS, "podcliquesets",
                 pcs("regional", {"topologyName": "fabric", "packDomain": "region"}))
    await create(GROUP, VERSION, NS, "podcliquesets",
                 pcs("elsewhere", {"topologyName": "nowhere", "packDomain": "rack"}))
    await create(GROUP, VERSION, NS, "podcliquesets", pcs("free", None))
    ok = await eventually(lambda: levels_condition(
        custom, "racked", "False", "AllClusterTopologyLevelsAvailable"))
    assert ok["message"] == "All topology levels are available"
    missing = await eventually(lambda: levels_condition(
        custom, "regional", "True", "ClusterTopologyLevelsUnavailable"))
    assert missing["message"] == "Unavailable topology domains: [region]"
    await eventually(lambda: levels_condition(
        custom, "elsewhere", "Unknown", "ClusterTopologyNotFound"))
    free = await eventually(lambda: levels_condition(
        custom, "free", "False", "AllClusterTopologyLevelsAvailable"))
    assert free["message"] == "No topology constraints defined"

    # An administrator drops the rack level: Grove says so on the PodCliqueSet.
    await custom.patch_cluster_custom_object(
        GROUP, VERSION, "clustertopologies", "fabric",
        [{"op": "replace", "path": "/spec/levels", "value": LEVELS[1:3]}])
    gone = await eventually(lambda: levels_condition(
        custom, "racked", "True", "ClusterTopologyLevelsUnavailable"))
    assert gone["message"] == "Unavailable topology domains: [rack]"
