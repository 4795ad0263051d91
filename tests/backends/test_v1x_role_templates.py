"""`roles[].podTemplate`: a multinode component's leader and worker pods from templates of
their own, with the portable topology variables `DYNAMO_RANK` and `DYNAMO_LEADER_ADDRESS`
(issue #29 item 2), on the DCD path (LeaderWorkerSet) and on Grove."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
from backend_cases import SETTINGS, containers

from api.errors import InvalidObject
from api.hub_errors import validate_stored
from api.v1alpha1 import DynamoComponentDeployment, DynamoGraphDeployment
from backends.component_deployment import component_deployment
from backends.component_workload import component_objects
from backends.grove import pod_clique_set
from backends.hub_component import hub_component
from backends.hub_graph import hub_graph

Json = dict[str, Any]
LWS_SETTINGS = dataclasses.replace(SETTINGS, lws_enabled=True)
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.0"
TOPOLOGY_ARGS = ["--model", "Qwen/Qwen3-8B", "--tensor-parallel-size", "2", "--nnodes", "2",
                 "--node-rank", "$(DYNAMO_RANK)", "--master-addr", "$(DYNAMO_LEADER_ADDRESS)"]


def role(name: str, *extra_args: str, command: list[str] | None = None) -> Json:
    return {"name": name, "podTemplate": {
        "metadata": {"labels": {"pool": name}},
        "spec": {"nodeSelector": {"example.com/engine-role": name}, "containers": [{
            "name": "main", "image": IMAGE,
            "command": command or ["python3", "-m", "dynamo.vllm"],
            "args": [*TOPOLOGY_ARGS, *extra_args],
            "env": [{"name": "DYNAMO_RANK", "value": "mine"}, {"name": "OWN", "value": name}],
            "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}


def graph(backend: str = "vllm", **component: Any) -> Json:
    entry: Json = {"name": "decode", "type": "decode", "replicas": 1,
                   "multinode": {"nodeCount": 2},
                   "roles": [role("leader"), role("worker", "--headless")], **component}
    obj = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
           "metadata": {"name": "rs", "namespace": "team"},
           "spec": {"backendFramework": backend, "env": [{"name": "GRAPH", "value": "1"}],
                    "components": [entry]}}
    validate_stored(DynamoGraphDeployment, obj)
    return obj


def lws_templates(obj: Json) -> tuple[Json, Json, Json]:
    """The child DCD, and its LeaderWorkerSet's leader and worker templates."""
    dcd = component_deployment(hub_graph(obj), "decode", LWS_SETTINGS)
    assert validate_stored(DynamoComponentDeployment, dcd) is not None  # the DCD is valid
    owned = component_objects(hub_component(dcd), LWS_SETTINGS)
    lws = next(o for o in owned if o["kind"] == "LeaderWorkerSet")
    group = lws["spec"]["leaderWorkerTemplate"]
    return dcd, group["leaderTemplate"], group["workerTemplate"]


def env_of(container: Json) -> dict[str, Any]:
    return {e["name"]: e.get("value") for e in container.get("env", [])}


def test_each_role_runs_its_own_template_on_the_dcd_path() -> None:
    dcd, leader, worker = lws_templates(graph())
    assert [r["name"] for r in dcd["spec"]["roles"]] == ["leader", "worker"]
    for template, name in ((leader, "leader"), (worker, "worker")):
        assert template["spec"]["nodeSelector"] == {"example.com/engine-role": name}
        assert template["metadata"]["labels"]["pool"] == name
        main = containers(template["spec"])["main"]
        assert main["image"] == IMAGE
        assert main["command"] == ["python3", "-m", "dynamo.vllm"]  # the manifest's launch
        env = env_of(main)
        assert env["OWN"] == name
        assert env["GRAPH"] == "1"
        # The operator owns the topology variables: the template's value is replaced.
        assert env["DYNAMO_RANK"] == "$(LWS_WORKER_INDEX)"
        assert env["DYNAMO_LEADER_ADDRESS"] == "$(LWS_LEADER_ADDRESS)"
        assert env["DYN_NAMESPACE"] == "team-rs"
    assert containers(leader["spec"])["main"]["args"] == TOPOLOGY_ARGS
    assert containers(worker["spec"])["main"]["args"] == [*TOPOLOGY_ARGS, "--headless"]


def test_each_role_runs_its_own_template_on_grove() -> None:
    pcs = pod_clique_set(hub_graph(graph()), SETTINGS)
    cliques = {c["spec"]["roleName"]: c for c in pcs["spec"]["template"]["cliques"]}
    leader_host = "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-decode-ldr-0.$(GROVE_HEADLESS_SERVICE)"
    for name, clique in cliques.items():
        kind = "leader" if name.endswith("ldr") else "worker"
        assert clique["labels"]["pool"] == kind
        pod = clique["spec"]["podSpec"]
        assert pod["nodeSelector"] == {"example.com/engine-role": kind}
        env = env_of(containers(pod)["main"])
        assert env["DYNAMO_RANK"] == "$(GROVE_PCSG_POD_INDEX)"
        assert env["DYNAMO_LEADER_ADDRESS"] == leader_host
        assert env["GRAPH"] == "1"


def test_trtllm_keeps_the_workers_ssh_readiness_and_the_mpi_key() -> None:
    sshd = ["sh", "-c", "/usr/sbin/sshd -D -p 2222"]
    obj = graph("trtllm", roles=[role("leader", command=["trtllm-serve"]),
                                 role("worker", command=sshd)])
    _, leader, worker = lws_templates(obj)
    main = containers(worker["spec"])["main"]
    assert main["command"] == sshd  # the manifest starts sshd itself
    assert main["readinessProbe"]["tcpSocket"] == {"port": 2222}
    assert {"name": "mpi-run-ssh-secret", "mountPath": "/ssh-pk", "readOnly": True} in \
        main["volumeMounts"]
    assert containers(leader["spec"])["main"]["command"] == ["trtllm-serve"]


def test_without_role_templates_nothing_changes() -> None:
    obj = graph(roles=[{"name": "leader", "replicas": 1}, {"name": "worker", "replicas": 1}],
                podTemplate={"spec": {"containers": [
                    {"name": "main", "image": IMAGE, "command": ["python3", "-m", "dynamo.vllm"],
                     "args": ["--tensor-parallel-size", "2"],
                     "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}})
    dcd, leader, worker = lws_templates(obj)
    assert "roles" not in dcd["spec"]  # as an older operator built it
    for template in (leader, worker):
        env = env_of(containers(template["spec"])["main"])
        assert "DYNAMO_RANK" not in env and "DYNAMO_LEADER_ADDRESS" not in env
    # The backend's generated Ray launch, as before.
    assert "ray start" in containers(worker["spec"])["main"]["args"][0]


REFUSED = {
    "one role only": ({"roles": [role("leader"), {"name": "worker"}]},
                      "spec.components[0].roles[1].podTemplate"),
    "beside the component's": (
        {"podTemplate": {"spec": {"containers": [{"name": "main", "image": IMAGE}]}}},
        "spec.components[0].podTemplate"),
    "no main": ({"roles": [role("leader"), {"name": "worker", "podTemplate": {"spec": {
        "containers": [{"name": "engine", "image": IMAGE}]}}}]},
        "spec.components[0].roles[1].podTemplate.spec.containers"),
    "with gms": ({"experimental": {"gpuMemoryService": {"mode": "IntraPod"}}},
                 "spec.components[0].experimental.gpuMemoryService"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_role_templates_are_refused_where_the_original_refuses_them(case: str) -> None:
    fields, path = REFUSED[case]
    obj = copy.deepcopy(graph())
    obj["spec"]["components"][0].update(copy.deepcopy(fields))
    with pytest.raises(InvalidObject) as refused:
        validate_stored(DynamoGraphDeployment, obj)
    assert path in str(refused.value)


def test_role_pods_keep_the_kv_transfer_policys_topology_volume() -> None:
    obj = graph()
    obj["spec"]["experimental"] = {"kvTransferPolicy": {
        "labelKey": "topology.kubernetes.io/zone", "domain": "zone"}}
    validate_stored(DynamoGraphDeployment, obj)
    mount = {"name": "topology-labels", "mountPath": "/etc/dynamo/topology", "readOnly": True}
    _, leader, worker = lws_templates(obj)
    pcs = pod_clique_set(hub_graph(obj), SETTINGS)
    pods = [leader["spec"], worker["spec"],
            *(c["spec"]["podSpec"] for c in pcs["spec"]["template"]["cliques"])]
    assert len(pods) == 4
    for pod in pods:
        assert [v["name"] for v in pod["volumes"]].count("topology-labels") == 1
        main = containers(pod)["main"]
        assert mount in main["volumeMounts"]
        assert env_of(main)["DYN_KV_TRANSFER_DOMAIN"] == "zone"
        assert env_of(main)["OWN"] in ("leader", "worker")  # still each role's template
