"""`dynamoSidecar`: the Dynamo runtime as a restartable init container beside the user's
engine in `main`, and the combinations refused as the original refuses them (issue #29
item 2)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from backend_cases import SETTINGS, containers
from test_v1x_graph_fields import beta_graph

from api.errors import InvalidObject
from api.hub_errors import validate_stored
from api.v1alpha1 import DynamoGraphDeployment
from backends.component_deployment import component_deployment
from backends.component_workload import component_objects
from backends.errors import GenerationError
from backends.grove import pod_clique_set
from backends.hub_component import hub_component
from backends.hub_graph import hub_graph

Json = dict[str, Any]

ENGINE: Json = {"name": "main", "image": "vllm/vllm-openai:latest", "command": ["vllm-rs"],
                "args": ["serve", "model"], "resources": {"limits": {"nvidia.com/gpu": "1"}},
                "env": [{"name": "GLOBAL", "value": "engine"}]}
RUNTIME: Json = {"name": "runtime", "image": "nvcr.io/nvidia/ai-dynamo/runtime:1.5.0",
                 "restartPolicy": "Always",
                 "env": [{"name": "GLOBAL", "value": "runtime"},
                         {"name": "NATS_SERVER", "value": "nats://mine:4222"}],
                 "startupProbe": {"exec": {"command": ["true"]}}}
SETUP: Json = {"name": "setup", "image": "setup:latest"}
GRAPH_ENV = [{"name": "GLOBAL", "value": "default"}, {"name": "SHARED", "value": "value"}]


def sidecar_component(**fields: Any) -> Json:
    return {"dynamoSidecar": "runtime",
            "compilationCache": {"pvcName": "cache", "mountPath": "/cache"},
            "podTemplate": {"spec": {"containers": [copy.deepcopy(ENGINE)],
                                     "initContainers": [copy.deepcopy(SETUP),
                                                        copy.deepcopy(RUNTIME)]}},
            **fields}


def pod(obj: Json) -> Json:
    dcd = component_deployment(hub_graph(obj), "c", SETTINGS)
    owned = component_objects(hub_component(dcd), SETTINGS,
                              pull_secrets={"nvcr.io": ["nvcr-pull"], "docker.io": ["hub"]})
    deployment = next(o for o in owned if o["kind"] == "Deployment")
    return dict(deployment["spec"]["template"]["spec"])


def env_of(container: Json) -> dict[str, Any]:
    return {e["name"]: e.get("value") for e in container.get("env", [])}


def test_the_runtime_runs_in_the_named_init_container() -> None:
    spec = pod(beta_graph(sidecar_component(), env=GRAPH_ENV))
    setup, runtime = spec["initContainers"]
    assert setup == SETUP  # other init containers are kept
    assert runtime["name"] == "runtime" and runtime["restartPolicy"] == "Always"
    assert "command" not in runtime  # the image's entrypoint
    assert runtime["startupProbe"] == {"exec": {"command": ["true"]}}  # the user's, whole
    assert runtime["readinessProbe"]["httpGet"] == {"path": "/health", "port": "system"}
    assert runtime["livenessProbe"] == {"httpGet": {"path": "/live", "port": "system"},
                                        "periodSeconds": 5, "timeoutSeconds": 4,
                                        "failureThreshold": 3}
    assert runtime["ports"] == [{"name": "system", "containerPort": 9090, "protocol": "TCP"}]
    env = env_of(runtime)
    assert env["GLOBAL"] == "runtime"  # its own over the graph's
    assert env["SHARED"] == "value"  # the graph's env reaches the runtime too
    assert env["NATS_SERVER"] == "nats://mine:4222"
    assert env["ETCD_ENDPOINTS"] == "etcd.dynamo:2379"
    assert env["DYN_NAMESPACE"] == "team-g" and env["DYN_COMPONENT"] == "worker"
    assert env["DYN_SYSTEM_ENABLED"] == "true" and env["DYN_SYSTEM_PORT"] == "9090"
    for absent in ("DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS", "DYN_HEALTH_CHECK_ENABLED"):
        assert absent not in env
    assert "resources" not in runtime


def test_main_is_the_users_engine_with_cache_and_shared_memory() -> None:
    spec = pod(beta_graph(sidecar_component(), env=GRAPH_ENV))
    main = containers(spec)["main"]
    assert main["command"] == ["vllm-rs"] and main["args"] == ["serve", "model"]
    assert main["resources"] == {"limits": {"nvidia.com/gpu": "1"}}
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        assert probe not in main
    assert "ports" not in main
    env = env_of(main)
    assert env == {"GLOBAL": "engine", "SHARED": "value", "VLLM_CACHE_ROOT": "/cache"}
    mounts = {m["name"]: m["mountPath"] for m in main["volumeMounts"]}
    assert mounts == {"cache": "/cache", "shared-memory": "/dev/shm"}


def test_the_runtime_images_pull_secrets_join_the_pods() -> None:
    spec = pod(beta_graph(sidecar_component()))
    # The engine's (docker.io) first, then the runtime's (nvcr.io).
    assert spec["imagePullSecrets"] == [{"name": "hub"}, {"name": "nvcr-pull"}]


def test_the_child_dcd_carries_the_sidecar_and_grove_renders_it_too() -> None:
    obj = beta_graph(sidecar_component(), env=GRAPH_ENV)
    dcd = component_deployment(hub_graph(obj), "c", SETTINGS)
    assert dcd["spec"]["dynamoSidecar"] == "runtime"
    clique = pod_clique_set(hub_graph(obj), SETTINGS)["spec"]["template"]["cliques"][0]
    runtime = clique["spec"]["podSpec"]["initContainers"][1]
    assert env_of(runtime)["SHARED"] == "value"
    assert runtime["readinessProbe"]["httpGet"]["port"] == "system"
    assert "readinessProbe" not in containers(clique["spec"]["podSpec"])["main"]


REFUSED = {
    "frontend": ({"type": "frontend"}, "spec.components[0].dynamoSidecar"),
    "multinode": ({"multinode": {"nodeCount": 2}}, "spec.components[0].multinode"),
    "checkpoint": ({"experimental": {"checkpoint": {"enabled": True}}},
                   "spec.components[0].experimental.checkpoint"),
    "gms": ({"experimental": {"gpuMemoryService": {"mode": "IntraPod"}}},
            "spec.components[0].experimental.gpuMemoryService"),
    "failover": ({"experimental": {"gpuMemoryService": {"mode": "IntraPod"},
                                   "failover": {"mode": "IntraPod"}}},
                 "spec.components[0].experimental.failover"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_unsupported_combinations_are_refused(case: str) -> None:
    fields, path = REFUSED[case]
    obj = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
           "metadata": {"name": "g", "namespace": "team"},
           "spec": {"backendFramework": "vllm", "components": [
               {"name": "c", "type": "worker", **sidecar_component(**fields)}]}}
    with pytest.raises(InvalidObject) as refused:
        validate_stored(DynamoGraphDeployment, obj)
    assert path in str(refused.value)
    # A DCD that bypassed admission is refused by the builders, naming the field.
    with pytest.raises(GenerationError, match=path.rsplit("].", 1)[1].split(".")[0]):
        pod(obj)


def test_a_disabled_checkpoint_is_no_reason_to_refuse() -> None:
    fields = {"experimental": {"checkpoint": {"enabled": False}}}
    spec = pod(beta_graph(sidecar_component(**fields)))
    assert spec["initContainers"][1]["name"] == "runtime"
