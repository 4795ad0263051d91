"""Topology-aware placement (issue 29 item 4) with the operator process and kubectl.

- A graph with `experimental.kvTransferPolicy` (labelKey zone): every worker pod carries its
  node's zone label (copied by the topology label controller once the pod is scheduled), the
  `DYN_KV_TRANSFER_*` env and the source annotation; the frontend's pods none of them.
- On the Grove path (Grove's CRDs from hack/crds/grove.yaml, the simulated Grove with its
  default ClusterTopology `grove-topology` of the nodes' levels): a graph packed in a zone
  reaches Ready with TopologyLevelsAvailable True; one packed in a level the topology lacks
  reports it False with reason TopologyLevelsUnavailable and a Warning; removing a level the
  first graph uses turns its condition False too; a policy naming `grove-topology` has every
  level of it copied onto the workers (`nvidia.com/dynamo-topology.<level>`).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Awaitable, Callable
from typing import Any

import yaml
from e2e_support import EXAMPLES, Env, OperatorProcess, eventually

from hack.localcluster.server import LocalCluster

Json = dict[str, Any]
BETA = "dynamographdeployments.v1beta1.nvidia.com"
ZONE = "topology.kubernetes.io/zone"
GRAPH_LABEL = "nvidia.com/dynamo-graph-deployment-name"
COMPONENT_LABEL = "nvidia.com/dynamo-component"
GROVE_CRDS = EXAMPLES.parents[1] / "hack" / "crds" / "grove.yaml"


def graph(name: str, workers: int = 1, **spec: Any) -> Json:
    """deploy/examples/v1beta1/vllm-agg.yaml named `name`, `workers` decode workers, plus
    `spec` fields."""
    base: Json = yaml.safe_load((EXAMPLES / "v1beta1" / "vllm-agg.yaml").read_text())
    obj = copy.deepcopy(base)
    obj["metadata"]["name"] = name
    obj["spec"]["components"][1]["replicas"] = workers
    obj["spec"].update(spec)
    return obj


async def pods(env: Env, name: str, component: str) -> list[Json]:
    found = await env.get("pods", selector=f"{GRAPH_LABEL}={name},{COMPONENT_LABEL}={component}")
    return [p for p in found["items"] if not p["metadata"].get("deletionTimestamp")]


def main_env(pod: Json) -> dict[str, str]:
    main = next(c for c in pod["spec"]["containers"] if c["name"] == "main")
    return {e["name"]: e.get("value", "") for e in main.get("env") or []}


def condition(obj: Json | None, ctype: str) -> Json:
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return dict(c)
    return {}


async def test_a_kv_transfer_policy_graphs_workers_carry_their_nodes_zone(
        env: Env, operator: OperatorProcess) -> None:
    policy = {"kvTransferPolicy": {"labelKey": ZONE, "domain": "zone"}}
    await env.k("apply", "-f", "-", stdin=json.dumps(graph("zoned", 3, experimental=policy)))
    await env.wait_ready("zoned", 120)

    async def labelled() -> list[Json] | None:
        workers = await pods(env, "zoned", "VllmDecodeWorker")
        if len(workers) != 3 or not all(ZONE in p["metadata"].get("labels", {})
                                        for p in workers):
            return None
        return workers
    workers = await eventually(labelled, within=60, what="the zone label on every worker")
    zones = set()
    for pod in workers:
        node = await env.get("node", pod["spec"]["nodeName"])
        zone = node["metadata"]["labels"][ZONE]
        assert pod["metadata"]["labels"][ZONE] == zone
        zones.add(zone)
        assert pod["metadata"]["annotations"]["nvidia.com/topology-label-key"] == ZONE
        variables = main_env(pod)
        assert variables["DYN_KV_TRANSFER_DOMAIN"] == "zone"
        assert variables["DYN_KV_TRANSFER_ENFORCEMENT"] == "required"
        assert variables["DYN_TOPOLOGY_MOUNT_PATH"] == "/etc/dynamo/topology"
        volume = next(v for v in pod["spec"]["volumes"] if v["name"] == "topology-labels")
        assert volume["downwardAPI"]["items"][0]["path"] == "zone"
    print(f"worker zones: {sorted(zones)}")
    if env.local is not None:
        # One node read and one patch per worker, and no more once they are labelled.
        stats = env.local.stats
        patches = stats.count(verb="patch", resource="pods", user_agent="dynamo-operator")
        reads = stats.count(verb="get", resource="nodes", user_agent="dynamo-operator")
        print(f"operator: {patches} pod patches, {reads} node reads")
        assert patches == 3 and reads == 3
    (frontend,) = await pods(env, "zoned", "Frontend")
    assert ZONE not in frontend["metadata"].get("labels", {})
    assert "DYN_KV_TRANSFER_DOMAIN" not in main_env(frontend)


async def test_grove_topology_packing_and_its_condition(
        env: Env, needs_local: LocalCluster,
        operators: Callable[..., Awaitable[OperatorProcess]]) -> None:
    await env.kubectl.run("apply", "-f", str(GROVE_CRDS))
    await env.kubectl.run("wait", "--for=condition=Established", "--timeout=30s",
                          "crd/podcliquesets.grove.io", "crd/clustertopologies.grove.io")

    async def default_topology() -> Json | None:
        result = await env.kubectl.run("get", "clustertopology", "grove-topology", "-o", "json")
        return json.loads(result.stdout) if result.code == 0 else None
    topology = await eventually(default_topology, within=30, what="grove-topology")
    domains = [level["domain"] for level in topology["spec"]["levels"]]
    assert domains == ["region", "zone", "block", "rack", "host"]
    await operators("op")  # after Grove's CRDs: it takes the Grove path

    packed = graph("packed", topologyConstraint={"clusterTopologyName": "grove-topology",
                                                 "packDomain": "zone"})
    await env.k("apply", "-f", "-", stdin=json.dumps(packed))
    await env.wait_ready("packed", 120)
    pcs = await env.get("podcliqueset", "packed")
    assert pcs["spec"]["template"]["topologyConstraint"] == {
        "topologyName": "grove-topology", "packDomain": "zone"}

    async def levels(name: str, status: str) -> Json | None:
        found = condition(await env.get(BETA, name), "TopologyLevelsAvailable")
        return found if found.get("status") == status else None
    available = await eventually(lambda: levels("packed", "True"), within=30,
                                 what="TopologyLevelsAvailable True")
    assert available["reason"] == "AllTopologyLevelsAvailable"

    far = graph("far", topologyConstraint={"clusterTopologyName": "grove-topology",
                                           "packDomain": "datacenter"})
    await env.k("apply", "-f", "-", stdin=json.dumps(far))
    lacking = await eventually(lambda: levels("far", "False"), within=60,
                               what="TopologyLevelsAvailable False")
    assert lacking["reason"] == "TopologyLevelsUnavailable"
    assert lacking["message"] == "Unavailable topology domains: [datacenter]"

    async def warned() -> list[Json]:
        events = await env.get("events", selector=None)
        return [e for e in events["items"] if e["involvedObject"].get("name") == "far"
                and e.get("reason") == "TopologyLevelsUnavailable" and e["type"] == "Warning"]
    await eventually(warned, within=30, what="the Warning event on the graph")

    # A policy naming the ClusterTopology: every level of it is copied onto the workers.
    by_topology = {"kvTransferPolicy": {"clusterTopologyName": "grove-topology",
                                        "domain": "rack"}}
    await env.k("apply", "-f", "-", stdin=json.dumps(graph("racked", 2,
                                                            experimental=by_topology)))
    await env.wait_ready("racked", 120)

    async def levels_copied() -> list[Json] | None:
        workers = await pods(env, "racked", "VllmDecodeWorker")
        if len(workers) != 2 or not all("nvidia.com/dynamo-topology.host" in
                                        p["metadata"].get("labels", {}) for p in workers):
            return None
        return workers
    for pod in await eventually(levels_copied, within=60, what="the levels on the workers"):
        node = (await env.get("node", pod["spec"]["nodeName"]))["metadata"]["labels"]
        labels = pod["metadata"]["labels"]
        for level in topology["spec"]["levels"]:
            assert labels[f"nvidia.com/dynamo-topology.{level['domain']}"] == node[level["key"]]
        assert main_env(pod)["DYN_KV_TRANSFER_DOMAIN"] == "rack"

    # An administrator drops the zone level: the packed graph is told.
    remaining = [lv for lv in topology["spec"]["levels"] if lv["domain"] != "zone"]
    await env.kubectl.run("patch", "clustertopology", "grove-topology", "--type=json", "-p",
                          json.dumps([{"op": "replace", "path": "/spec/levels",
                                       "value": remaining}]))
    lost = await eventually(lambda: levels("packed", "False"), within=60,
                            what="TopologyLevelsAvailable False after the level went")
    assert lost["message"] == "Unavailable topology domains: [zone]"
