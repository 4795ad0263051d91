"""The operator's defaults are merged into the podTemplate's `main` container, and every other
container and init container of the user's template is kept as it is (issue #29 item 2;
ai-dynamo/dynamo#2753, where the user's command and args were lost)."""

from __future__ import annotations

from typing import Any

from backend_cases import containers
from test_v1x_graph_fields import beta_graph, pod_of

Json = dict[str, Any]

MAIN: Json = {
    "name": "main", "image": "img:1", "command": ["python3"],
    "args": ["-m", "dynamo.vllm", "--model", "Qwen/Qwen3-0.6B"],
    "env": [{"name": "DYN_SYSTEM_PORT", "value": "9999"}, {"name": "MINE", "value": "1"}],
    "ports": [{"name": "system", "containerPort": 9999}],
    "livenessProbe": {"exec": {"command": ["true"]}},
    "volumeMounts": [{"name": "cfg", "mountPath": "/cfg"}],
    "resources": {"limits": {"nvidia.com/gpu": "1"}},
}
PROXY: Json = {"name": "proxy", "image": "envoy:1", "command": ["envoy"], "args": ["-c", "x"],
               "ports": [{"name": "admin", "containerPort": 9901}]}
WARM: Json = {"name": "warm", "image": "busybox:1", "command": ["sh", "-c", "true"]}


def template(*extra: Json, init: list[Json] | None = None) -> Json:
    spec: Json = {"containers": [MAIN, *extra],
                  "volumes": [{"name": "cfg", "configMap": {"name": "c"}}]}
    if init is not None:
        spec["initContainers"] = init
    return {"podTemplate": {"spec": spec}}


def test_the_users_command_and_args_are_kept() -> None:
    main = containers(pod_of(beta_graph(template()))["spec"])["main"]
    assert main["command"] == ["python3"]
    assert main["args"] == ["-m", "dynamo.vllm", "--model", "Qwen/Qwen3-0.6B"]
    assert main["image"] == "img:1"


def test_defaults_are_merged_into_main_by_name() -> None:
    main = containers(pod_of(beta_graph(template()))["spec"])["main"]
    env = {e["name"]: e.get("value") for e in main["env"]}
    assert env["DYN_SYSTEM_PORT"] == "9999"  # the user's entry wins
    assert env["MINE"] == "1"
    assert env["DYN_SYSTEM_ENABLED"] == "true"  # the defaults stay
    assert env["DYN_NAMESPACE"] == "team-g"
    assert main["ports"] == [{"name": "system", "containerPort": 9999}]
    assert main["livenessProbe"] == {"exec": {"command": ["true"]}}  # replaced whole
    assert main["readinessProbe"]["httpGet"]["path"] == "/health"  # default kept
    assert {"name": "cfg", "mountPath": "/cfg"} in main["volumeMounts"]
    assert {"name": "shared-memory", "mountPath": "/dev/shm"} in main["volumeMounts"]
    assert main["resources"] == {"limits": {"nvidia.com/gpu": "1"}}


def test_every_other_container_and_init_container_is_kept() -> None:
    pod = pod_of(beta_graph(template(PROXY, init=[WARM])))["spec"]
    by_name = containers(pod)
    assert set(by_name) == {"main", "proxy"}
    assert by_name["proxy"] == PROXY  # no defaults injected into a sidecar
    assert pod["initContainers"] == [WARM]
    assert {"name": "cfg", "configMap": {"name": "c"}} in pod["volumes"]


def test_the_pod_fields_of_the_template_are_kept() -> None:
    given = template()
    given["podTemplate"]["spec"].update(
        nodeSelector={"gpu": "h100"}, tolerations=[{"key": "gpu", "operator": "Exists"}],
        serviceAccountName="mine", securityContext={"runAsUser": 1000})
    pod = pod_of(beta_graph(given))["spec"]
    assert pod["nodeSelector"] == {"gpu": "h100"}
    assert pod["tolerations"] == [{"key": "gpu", "operator": "Exists"}]
    assert pod["serviceAccountName"] == "mine"
    assert pod["securityContext"] == {"runAsUser": 1000}
