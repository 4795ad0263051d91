"""Inter-pod GPU memory service and inter-pod failover (issue #29), rendered as the original
renders them on Grove: a scaling group per component with, per node rank, a weight-server
clique and an engine clique sharing the rank's claim; refused off Grove naming the field.
Fixtures in both API versions (`fixtures/gms/*-interpod.*`), objects in golden files
(`golden/gms/*-interpod.*`). The builders are pure: no cluster."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml
from backend_cases import SETTINGS, check_golden, containers, env

from backends.errors import GenerationError
from backends.render import render

Json = dict[str, Any]

FIXTURES = Path(__file__).parent / "fixtures" / "gms"
DRA = dataclasses.replace(SETTINGS, dra_enabled=True)
GROVE = dataclasses.replace(DRA, grove_enabled=True)
CASES = ("gms-interpod", "failover-interpod")
VERSIONS = ("v1alpha1", "v1beta1")
SOCKETS = "/run/gms/shared"


def fixture(case: str, version: str) -> Json:
    loaded: Json = yaml.safe_load((FIXTURES / f"{case}.{version}.yaml").read_text())
    return loaded


def template(rendered: list[Json]) -> Json:
    found = [o for o in rendered if o["kind"] == "PodCliqueSet"]
    assert len(found) == 1
    spec: Json = found[0]["spec"]["template"]
    return spec


def cliques(rendered: list[Json]) -> dict[str, Json]:
    return {c["name"]: c for c in template(rendered)["cliques"]}


def group(rendered: list[Json], name: str) -> Json:
    found: Json = next(g for g in template(rendered)["podCliqueScalingGroups"]
                       if g["name"] == name)
    return found


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", CASES)
def test_every_fixture_renders_its_golden_objects_on_grove(case: str, version: str) -> None:
    check_golden(f"gms/{case}.{version}", render(fixture(case, version), GROVE))


@pytest.mark.parametrize("case", CASES)
def test_both_versions_give_the_same_pod_clique_set(case: str) -> None:
    alpha = template(render(fixture(case, "v1alpha1"), GROVE))
    beta = template(render(fixture(case, "v1beta1"), GROVE))
    assert alpha == beta


def test_one_node_gives_a_weight_server_and_an_engine_clique_in_a_scaling_group() -> None:
    rendered = render(fixture("gms-interpod", "v1beta1"), GROVE)
    found = cliques(rendered)
    assert sorted(found) == ["frontend", "vllmworker", "vllmworker-gms-0"]
    scaling = group(rendered, "vllmworker")
    assert scaling["cliqueNames"] == ["vllmworker-gms-0", "vllmworker"]
    assert scaling["replicas"] == 2  # the component's replicas: whole weight-server + engine pairs
    assert scaling["resourceSharing"] == [{
        "name": "vllmworker-gpu-rank-0", "scope": "PerReplica",
        "filter": {"childCliqueNames": ["vllmworker-gms-0", "vllmworker"]}}]
    assert template(rendered)["resourceClaimTemplates"] == [{
        "name": "vllmworker-gpu-rank-0",
        "templateSpec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount",
            "count": 2}}]}}}}]
    assert template(rendered)["cliqueStartupType"] == "CliqueStartupTypeExplicit"
    assert found["vllmworker"]["spec"]["startsAfter"] == ["vllmworker-gms-0"]
    assert found["vllmworker"]["spec"]["replicas"] == 1
    assert "startsAfter" not in found["vllmworker-gms-0"]["spec"]
    # No ResourceClaimTemplate object of the graph: the PodCliqueSet carries the templates.
    assert not [o for o in rendered if o["kind"] == "ResourceClaimTemplate"]


def test_the_weight_server_runs_one_gms_container_per_tag_on_the_rank_sockets() -> None:
    server = cliques(render(fixture("gms-interpod", "v1beta1"), GROVE))["vllmworker-gms-0"]
    pod = server["spec"]["podSpec"]
    assert sorted(containers(pod)) == ["gms-kv-cache", "gms-weights"]
    for tag, container in (("weights", containers(pod)["gms-weights"]),
                           ("kv_cache", containers(pod)["gms-kv-cache"])):
        assert container["command"] == ["bash", "-c"]
        assert f"GMS_SERVER_TAGS={tag} python3 -m gpu_memory_service.cli.server" in (
            container["args"][0])
        assert env(container)["GMS_SERVER_TAGS"] == tag
        assert env(container)["GMS_SOCKET_DIR"] == SOCKETS
        assert "ports" not in container
        assert "resources" not in container  # the claim gives the GPUs
        probe = container["readinessProbe"]["exec"]["command"][-1]
        assert probe == f"test $(ls {SOCKETS}/gms_*_{tag}.sock 2>/dev/null | wc -l) -ge 2"
        assert {"name": "gms-shared", "mountPath": SOCKETS,
                "subPathExpr": "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)/rank-0"} in (
            container["volumeMounts"])
    assert {"name": "gms-shared", "hostPath": {"path": "/run/gms",
                                               "type": "DirectoryOrCreate"}} in pod["volumes"]
    init = {c["name"]: c for c in pod["initContainers"]}["fix-gms-perms"]
    assert init["securityContext"] == {"runAsUser": 0, "runAsNonRoot": False}
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in (
        pod["tolerations"])


def test_the_engine_keeps_main_loads_from_gms_and_starts_not_ready() -> None:
    engine = cliques(render(fixture("gms-interpod", "v1beta1"), GROVE))["vllmworker"]
    pod = engine["spec"]["podSpec"]
    main = containers(pod)["main"]
    assert sorted(containers(pod)) == ["main"]
    assert main["args"][-2:] == ["--load-format", "gms"]  # added: the command gave none
    given = env(main)
    assert given["ENGINE_ID"] == {"fieldRef": {
        "fieldPath": "metadata.labels['grove.io/podclique-pod-index']"}}
    assert given["GMS_SOCKET_DIR"] == SOCKETS
    assert given["FAILOVER_LOCK_PATH"] == f"{SOCKETS}/failover.lock"
    assert given["DYN_SYSTEM_STARTING_HEALTH_STATUS"] == "notready"
    assert "DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS" not in given
    # Without failover: no shadow switches, and the kubelet restarts a crashed engine.
    assert "DYN_VLLM_GMS_SHADOW_MODE" not in given
    assert "DYN_DISCOVERY_LOGICAL_INSTANCE_KEY" not in given
    assert pod["restartPolicy"] == "Always"
    assert "nvidia.com/dynamo-failover-engine-group-member" not in engine["labels"]
    assert "resources" not in main
    # The probes stay on main's system port, which the Service targets.
    assert main["ports"] == [{"name": "system", "containerPort": 9090, "protocol": "TCP"}]
    assert main["readinessProbe"]["httpGet"]["port"] == "system"


def test_failover_on_two_nodes_pairs_each_rank_with_its_weight_server() -> None:
    rendered = render(fixture("failover-interpod", "v1beta1"), GROVE)
    found = cliques(rendered)
    scaling = group(rendered, "worker")
    assert scaling["cliqueNames"] == ["worker-gms-0", "worker-ldr", "worker-gms-1",
                                      "worker-wkr-1"]
    assert [s["filter"]["childCliqueNames"] for s in scaling["resourceSharing"]] == [
        ["worker-gms-0", "worker-ldr"], ["worker-gms-1", "worker-wkr-1"]]
    assert [t["name"] for t in template(rendered)["resourceClaimTemplates"]] == [
        "worker-gpu-rank-0", "worker-gpu-rank-1"]
    assert found["worker-ldr"]["spec"]["startsAfter"] == ["worker-gms-0"]
    assert found["worker-wkr-1"]["spec"]["startsAfter"] == ["worker-gms-1"]
    for name in ("worker-ldr", "worker-wkr-1"):
        clique = found[name]
        assert clique["spec"]["replicas"] == 3  # the primary and numShadows 2
        assert clique["spec"]["minAvailable"] == 1
        assert clique["labels"]["nvidia.com/dynamo-failover-engine-group-member"] == "true"
        pod = clique["spec"]["podSpec"]
        assert pod["restartPolicy"] == "Never"
        given = env(containers(pod)["main"])
        assert given["DYN_DISCOVERY_LOGICAL_INSTANCE_KEY"] == (
            f"$(POD_NAMESPACE)/$(GROVE_PCSG_NAME)/$(GROVE_PCSG_INDEX)/{name}")
        assert given["DYN_GMS_FAILOVER_SHADOW_MODE"] == "true"
        assert given["DYN_VLLM_GMS_SHADOW_MODE"] == "true"
        assert given["DYN_GRACEFUL_SHUTDOWN_GRACE_PERIOD_SECS"] == "0"
        assert given["DYN_GMS_FAILOVER_FAST_EXIT_ON_SIGTERM"] == "1"
        rank = 0 if name == "worker-ldr" else 1
        mount = next(m for m in containers(pod)["main"]["volumeMounts"]
                     if m["name"] == "gms-shared")
        assert mount["subPathExpr"].endswith(f"/rank-{rank}")
    for name in ("worker-gms-0", "worker-gms-1"):
        assert found[name]["spec"]["replicas"] == 1
        assert "nvidia.com/dynamo-failover-engine-group-member" not in found[name]["labels"]
        assert found[name]["spec"]["podSpec"]["restartPolicy"] == "Always"


def test_multinode_engines_find_their_leader_at_their_own_pod_index() -> None:
    found = cliques(render(fixture("failover-interpod", "v1beta1"), GROVE))
    worker = containers(found["worker-wkr-1"]["spec"]["podSpec"])["main"]
    # Ray across ranks (tensor parallel 4 over 2 GPUs a node): the leader of the same shadow.
    assert worker["args"] == [
        "ray start --address=$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-worker-ldr-"
        "$(GROVE_PCLQ_POD_INDEX).$(GROVE_HEADLESS_SERVICE):6379 --block"]
    leader = containers(found["worker-ldr"]["spec"]["podSpec"])["main"]
    assert leader["args"][0].count("--load-format gms") == 1  # given once, not added again


def test_a_failover_engine_may_keep_its_own_shutdown_grace() -> None:
    obj = fixture("failover-interpod", "v1beta1")
    main = obj["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]
    main["env"] = [{"name": "DYN_GRACEFUL_SHUTDOWN_GRACE_PERIOD_SECS", "value": "5"}]
    found = cliques(render(obj, GROVE))
    assert env(containers(found["worker-ldr"]["spec"]["podSpec"])["main"])[
        "DYN_GRACEFUL_SHUTDOWN_GRACE_PERIOD_SECS"] == "5"


def test_the_grove_workload_of_an_inter_pod_component_is_its_scaling_group() -> None:
    rendered = render(fixture("gms-interpod", "v1alpha1"), GROVE)
    assert group(rendered, "vllmworker")["replicas"] == 2


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", CASES)
def test_off_grove_the_mode_is_refused_naming_the_field(case: str, version: str) -> None:
    key = "VllmWorker" if case == "gms-interpod" else "worker"
    settings = dataclasses.replace(DRA, lws_enabled=True)
    with pytest.raises(GenerationError, match=(
            rf"spec.components\[{key}\].experimental.gpuMemoryService.mode: Forbidden: "
            "requires the Grove pathway, but Grove is disabled in the operator "
            "configuration")):
        render(fixture(case, version), settings)


def test_a_graph_turning_grove_off_is_told_so() -> None:
    obj = copy.deepcopy(fixture("gms-interpod", "v1beta1"))
    obj["metadata"]["annotations"] = {"nvidia.com/enable-grove": "false"}
    with pytest.raises(GenerationError, match=(
            r'requires the Grove pathway; remove or unset the "nvidia.com/enable-grove"')):
        render(obj, GROVE)


def test_without_dra_served_inter_pod_gms_is_refused_with_the_originals_words() -> None:
    with pytest.raises(GenerationError, match="gpuMemoryService requires DRA"):
        render(fixture("gms-interpod", "v1beta1"),
               dataclasses.replace(SETTINGS, grove_enabled=True))


def test_a_component_deployment_of_its_own_is_refused_the_layout() -> None:
    obj = fixture("gms-dcd", "v1beta1")
    obj["spec"]["experimental"]["gpuMemoryService"] = {"mode": "InterPod"}
    with pytest.raises(GenerationError, match=(
            r"experimental\.gpuMemoryService\.mode: Forbidden: requires the Grove pathway, "
            "which a DynamoComponentDeployment of its own does not take")):
        render(obj, GROVE)
