"""The portable topology variables behind their origin gate (`backends.portable_topology`,
issue #29): a multinode graph created by this operator (stamped 0.2.0) gets `DYNAMO_RANK` and
`DYNAMO_LEADER_ADDRESS` in `main` of its leader and worker pods, on Grove and on
LeaderWorkerSet, and its generated SGLang launch reads them; a graph of the previous release
(stamped 0.1.0) or without the stamp renders as it did, so this operator taking over restarts
none of its pods."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml
from backend_cases import SETTINGS, containers

from backends.portable_topology import PORTABLE_TOPOLOGY_ENV
from backends.render import render

Json = dict[str, Any]
ORIGIN = "nvidia.com/dynamo-operator-origin-version"
NEW = ".".join(str(n) for n in PORTABLE_TOPOLOGY_ENV.min_version.numbers)
GROVE = dataclasses.replace(SETTINGS, grove_enabled=True)
LWS = dataclasses.replace(SETTINGS, lws_enabled=True)
ORCHESTRATORS = {"grove": GROVE, "lws": LWS}
GROVE_LEADER = "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-decode-ldr-0.$(GROVE_HEADLESS_SERVICE)"
EXPECTED = {
    "grove": {"DYNAMO_RANK": "$(GROVE_PCSG_POD_INDEX)", "DYNAMO_LEADER_ADDRESS": GROVE_LEADER},
    "lws": {"DYNAMO_RANK": "$(LWS_WORKER_INDEX)",
            "DYNAMO_LEADER_ADDRESS": "$(LWS_LEADER_ADDRESS)"},
}
FIXTURES = Path(__file__).parent / "fixtures" / "gms"
TOPOLOGY = ("DYNAMO_RANK", "DYNAMO_LEADER_ADDRESS")
MODULES = {"sglang": "dynamo.sglang", "vllm": "dynamo.vllm", "trtllm": "dynamo.trtllm"}


def graph(backend: str, origin: str | None, nodes: int = 2, **main: Any) -> Json:
    """A multinode `decode` component of `backend` (TP 2 on one GPU a node), with the pod
    template's own `DYNAMO_RANK`."""
    container: Json = {
        "name": "main", "image": f"nvcr.io/nvidia/ai-dynamo/{backend}-runtime:1.4.0",
        "command": ["python3", "-m", MODULES[backend]],
        "args": ["--model", "Qwen/Qwen3-8B", "--tensor-parallel-size", "2"],
        "env": [{"name": "DYNAMO_RANK", "value": "mine"}, {"name": "OWN", "value": "1"}],
        "resources": {"limits": {"nvidia.com/gpu": "1"}}, **main}
    metadata: Json = {"name": "topo", "namespace": "team"}
    if origin is not None:
        metadata["annotations"] = {ORIGIN: origin}
    return {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
            "metadata": metadata,
            "spec": {"backendFramework": backend, "components": [{
                "name": "decode", "type": "decode", "replicas": 1,
                **({"multinode": {"nodeCount": nodes}} if nodes > 1 else {}),
                "podTemplate": {"spec": {"containers": [container]}}}]}}


def role_pods(objects: list[Json]) -> dict[str, Json]:
    """leader/worker -> the pod spec of that role (Grove clique or LeaderWorkerSet template)."""
    found: dict[str, Json] = {}
    for obj in objects:
        if obj["kind"] == "PodCliqueSet":
            for clique in obj["spec"]["template"]["cliques"]:
                kind = "leader" if clique["name"].endswith("-ldr") else "worker"
                found[kind] = clique["spec"]["podSpec"]
        if obj["kind"] == "LeaderWorkerSet":
            group = obj["spec"]["leaderWorkerTemplate"]
            found["leader"] = group["leaderTemplate"]["spec"]
            found["worker"] = group["workerTemplate"]["spec"]
    assert sorted(found) == ["leader", "worker"]
    return found


def main_of(pod: Json) -> Json:
    main: Json = containers(pod)["main"]
    return main


def env_of(pod: Json) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in main_of(pod).get("env", [])}


def pods(obj: Json, orchestrator: str) -> dict[str, Json]:
    return role_pods(render(obj, ORCHESTRATORS[orchestrator]))


@pytest.mark.parametrize("orchestrator", sorted(ORCHESTRATORS))
@pytest.mark.parametrize("backend", sorted(MODULES))
def test_a_multinode_graph_created_now_tells_each_pod_its_place(backend: str,
                                                                orchestrator: str) -> None:
    for kind, pod in pods(graph(backend, NEW), orchestrator).items():
        env = env_of(pod)
        # The operator owns the two names: the template's DYNAMO_RANK is replaced.
        assert {n: env[n] for n in TOPOLOGY} == EXPECTED[orchestrator], kind
        assert env["OWN"] == "1"
        assert [e["name"] for e in main_of(pod)["env"]].count("DYNAMO_RANK") == 1


@pytest.mark.parametrize("origin", [None, "0.1.0", "0.1.9", "not-a-version"])
@pytest.mark.parametrize("orchestrator", sorted(ORCHESTRATORS))
@pytest.mark.parametrize("backend", sorted(MODULES))
def test_a_graph_of_an_older_operator_renders_as_it_did(backend: str, orchestrator: str,
                                                        origin: str | None) -> None:
    before = pods(graph(backend, None), orchestrator)
    after = pods(graph(backend, origin), orchestrator)
    assert after == before  # the pods of a graph without the stamp, as before the gate
    for pod in after.values():
        env = env_of(pod)
        assert env["DYNAMO_RANK"] == "mine"  # the template's own, left alone
        assert "DYNAMO_LEADER_ADDRESS" not in env


@pytest.mark.parametrize("orchestrator", sorted(ORCHESTRATORS))
def test_sglang_launches_from_the_variables(orchestrator: str) -> None:
    for kind, pod in pods(graph("sglang", NEW, nodes=3), orchestrator).items():
        main = main_of(pod)
        # No shell: the kubelet expands the variables in the exec form.
        assert main["command"] == ["python3", "-m", "dynamo.sglang"], kind
        assert main["args"] == [
            "--model", "Qwen/Qwen3-8B", "--tensor-parallel-size", "2",
            "--dist-init-addr", "$(DYNAMO_LEADER_ADDRESS):29500", "--nnodes", "3",
            "--node-rank", "$(DYNAMO_RANK)"], kind
    assert "livenessProbe" not in main_of(pods(graph("sglang", NEW), orchestrator)["worker"])


def test_sglang_of_an_older_graph_keeps_the_orchestrators_forms() -> None:
    grove = pods(graph("sglang", "0.1.0"), "grove")
    assert main_of(grove["leader"])["args"][-6:] == [
        "--dist-init-addr", f"{GROVE_LEADER}:29500", "--nnodes", "2", "--node-rank", "0"]
    worker = main_of(grove["worker"])
    assert worker["command"] == ["sh", "-c"]  # Grove's worker rank is shell arithmetic
    assert worker["args"][0].endswith("--node-rank $((GROVE_PCLQ_POD_INDEX + 1))")
    lws = main_of(pods(graph("sglang", None), "lws")["worker"])
    assert lws["args"][-6:] == ["--dist-init-addr", "$(LWS_LEADER_ADDRESS):29500",
                                "--nnodes", "2", "--node-rank", "$(LWS_WORKER_INDEX)"]


@pytest.mark.parametrize("orchestrator", sorted(ORCHESTRATORS))
@pytest.mark.parametrize("backend", ["vllm", "trtllm"])
def test_other_launches_keep_their_own_forms(backend: str, orchestrator: str) -> None:
    """The original aliases only vLLM's multiprocessing launch (not generated here) and
    SGLang's: vLLM's Ray launch and TRT-LLM's mpirun are the older graph's, env aside."""
    new = pods(graph(backend, NEW), orchestrator)
    old = pods(graph(backend, None), orchestrator)

    def launch(main: Json) -> Json:
        # mpirun forwards `main`'s env by name: the new graph's has its generation's suffix
        # (`backends.worker_generation.PROVIDER_GENERATION`).
        return {k: [a.replace(" -x DYN_NAMESPACE_WORKER_SUFFIX", "") for a in v]
                if k == "args" else v for k, v in main.items() if k != "env"}
    for kind in ("leader", "worker"):
        assert launch(main_of(new[kind])) == launch(main_of(old[kind]))
    assert "ray start" in main_of(new["worker"])["args"][0] or backend == "trtllm"


@pytest.mark.parametrize("orchestrator", sorted(ORCHESTRATORS))
def test_a_single_node_component_gets_nothing(orchestrator: str) -> None:
    objects = render(graph("sglang", NEW, nodes=1), ORCHESTRATORS[orchestrator])
    assert "DYNAMO_LEADER_ADDRESS" not in yaml.safe_dump_all(objects)
    found = [o["spec"]["template"]["spec"] for o in objects if o["kind"] == "Deployment"]
    found += [c["spec"]["podSpec"] for o in objects if o["kind"] == "PodCliqueSet"
              for c in o["spec"]["template"]["cliques"]]
    assert [env_of(pod)["DYNAMO_RANK"] for pod in found] == ["mine"]


def test_a_value_from_entry_of_the_same_name_is_replaced_too() -> None:
    secret = {"secretKeyRef": {"name": "s", "key": "k"}}
    obj = graph("vllm", NEW)
    main = obj["spec"]["components"][0]["podTemplate"]["spec"]["containers"][0]
    main["env"] = [{"name": "DYNAMO_LEADER_ADDRESS", "valueFrom": secret}]
    for pod in pods(obj, "lws").values():
        entry = next(e for e in main_of(pod)["env"] if e["name"] == "DYNAMO_LEADER_ADDRESS")
        assert entry == {"name": "DYNAMO_LEADER_ADDRESS", "value": "$(LWS_LEADER_ADDRESS)"}


def test_a_dcd_of_its_own_states_its_origin_in_its_pod_template() -> None:
    """No webhook stamps a DCD of its own: its pod template's annotation opts it in."""
    component = copy.deepcopy(graph("sglang", None)["spec"]["components"][0])
    component.pop("name")
    component["podTemplate"]["metadata"] = {"annotations": {ORIGIN: NEW}}
    dcd = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoComponentDeployment",
           "metadata": {"name": "decode", "namespace": "team"},
           "spec": {"backendFramework": "sglang", **component}}
    found = role_pods(render(dcd, LWS))
    assert {n: env_of(found["worker"])[n] for n in TOPOLOGY} == EXPECTED["lws"]
    component["podTemplate"].pop("metadata")
    found = role_pods(render(dcd | {"spec": {"backendFramework": "sglang", **component}}, LWS))
    assert "DYNAMO_LEADER_ADDRESS" not in env_of(found["worker"])


def test_inter_pod_gms_engines_take_their_rank_from_their_role() -> None:
    """The scaling group holds the weight servers too: its pod index is no rank."""
    obj = yaml.safe_load((FIXTURES / "gms-interpod.v1beta1.yaml").read_text())
    obj["metadata"]["annotations"] = {ORIGIN: NEW}
    worker = obj["spec"]["components"][1]
    worker["multinode"] = {"nodeCount": 2}
    settings = dataclasses.replace(GROVE, dra_enabled=True)
    pcs = next(o for o in render(obj, settings) if o["kind"] == "PodCliqueSet")
    found = {c["name"]: env_of(c["spec"]["podSpec"]) if "main" in containers(
        c["spec"]["podSpec"]) else {} for c in pcs["spec"]["template"]["cliques"]}
    leader = ("$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-vllmworker-ldr-$(GROVE_PCLQ_POD_INDEX)."
              "$(GROVE_HEADLESS_SERVICE)")
    assert found["vllmworker-ldr"]["DYNAMO_RANK"] == "0"
    assert found["vllmworker-wkr-1"]["DYNAMO_RANK"] == "1"
    for name in ("vllmworker-ldr", "vllmworker-wkr-1"):
        assert found[name]["DYNAMO_LEADER_ADDRESS"] == leader
    for name in ("vllmworker-gms-0", "vllmworker-gms-1", "frontend"):
        assert "DYNAMO_RANK" not in found[name]
