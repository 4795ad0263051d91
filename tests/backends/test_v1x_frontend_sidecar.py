"""`frontendSidecar`: the frontend's defaults merged into the named container (issue #29
item 2), in both API versions, on the DCD path and on Grove; and behind the origin-version
gate, so a graph made by an operator that dropped the container keeps its pods."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from backend_cases import PULL_SECRETS, SETTINGS, check_golden, containers, env

from api.conversion import convert
from api.conversion.render_inputs import ComponentInputs, PodInputs
from api.hub_errors import validate_stored
from api.origin_version import ORIGIN_VERSION
from api.v1alpha1 import DynamoGraphDeployment, ExtraPodSpec
from api.v1beta1 import DynamoComponentDeploymentSharedSpec
from backends.component_deployment import component_deployment
from backends.component_spec import ComponentSpec
from backends.component_workload import component_objects
from backends.context import PodContext
from backends.errors import GenerationError
from backends.grove import pod_clique_set
from backends.hub_component import hub_component
from backends.hub_graph import hub_graph
from backends.multinode import GROVE, Role
from backends.pod_spec import generate_pod_spec

Json = dict[str, Any]
STAMPED = {ORIGIN_VERSION: "0.1.0"}
ENGINE_IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.0"
FRONTEND_IMAGE = "nvcr.io/nvidia/ai-dynamo/frontend:1.0.0"
GRAPH_ENV = [{"name": "GRAPH", "value": "g"}]


def alpha_graph(annotations: dict[str, str] | None = None, **worker: Any) -> Json:
    """A v1alpha1 graph whose vLLM worker `Worker` runs a frontend sidecar (the original's
    GAIE example's shape), with a model cache mounted."""
    meta: Json = {"name": "gaie", "namespace": "team"}
    if annotations:
        meta["annotations"] = dict(annotations)
    service: Json = {
        "componentType": "worker", "replicas": 1,
        "volumeMounts": [{"name": "model-cache", "mountPoint": "/models"}],
        "frontendSidecar": {"image": FRONTEND_IMAGE,
                            "args": ["-m", "dynamo.frontend", "--router-mode", "direct"],
                            "envs": [{"name": "DYN_HTTP_PORT", "value": "8080"},
                                     {"name": "OWN", "value": "sidecar"}],
                            "envFromSecret": "hf-token"},
        "resources": {"limits": {"gpu": "1"}},
        "extraPodSpec": {"mainContainer": {
            "image": ENGINE_IMAGE, "command": ["python3", "-m", "dynamo.vllm"],
            "args": ["--model", "Qwen/Qwen3-0.6B"]}},
        **worker,
    }
    obj = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
           "metadata": meta,
           "spec": {"backendFramework": "vllm", "envs": GRAPH_ENV,
                    "pvcs": [{"name": "model-cache", "create": False}],
                    "services": {"Worker": service}}}
    return obj


def beta_graph(annotations: dict[str, str] | None = None, *, sidecar: Json | None = None,
               name: str = "fe") -> Json:
    """The same graph written in v1beta1: the sidecar is a container of the template, named
    by `frontendSidecar`."""
    meta: Json = {"name": "gaie", "namespace": "team"}
    if annotations:
        meta["annotations"] = dict(annotations)
    fe = sidecar if sidecar is not None else {
        "name": name, "image": FRONTEND_IMAGE,
        "args": ["-m", "dynamo.frontend", "--router-mode", "direct"],
        "env": [{"name": "DYN_HTTP_PORT", "value": "8080"}, {"name": "OWN", "value": "sidecar"}],
        "envFrom": [{"secretRef": {"name": "hf-token"}}]}
    obj = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
           "metadata": meta,
           "spec": {"backendFramework": "vllm", "env": GRAPH_ENV, "components": [{
               "name": "Worker", "type": "worker", "replicas": 1, "frontendSidecar": name,
               "podTemplate": {"spec": {"containers": [
                   {"name": "main", "image": ENGINE_IMAGE,
                    "command": ["python3", "-m", "dynamo.vllm"],
                    "args": ["--model", "Qwen/Qwen3-0.6B"],
                    "resources": {"limits": {"nvidia.com/gpu": "1"}},
                    "volumeMounts": [{"name": "model-cache", "mountPath": "/models"}]},
                   fe],
                   "volumes": [{"name": "model-cache",
                                "persistentVolumeClaim": {"claimName": "model-cache"}}]}}}]}}
    validate_stored(DynamoGraphDeployment, obj)
    return obj


def hub(obj: Json) -> Json:
    return obj if obj["apiVersion"] == "nvidia.com/v1beta1" else convert(obj, "nvidia.com/v1beta1")


def dcd_pod(obj: Json) -> Json:
    """The pod template of the worker's Deployment (the DCD path)."""
    dcd = component_deployment(hub_graph(hub(obj)), "Worker", SETTINGS)
    owned = component_objects(hub_component(dcd), SETTINGS, pull_secrets=PULL_SECRETS)
    template: Json = next(o for o in owned if o["kind"] == "Deployment")["spec"]["template"]
    return template


def grove_pod(obj: Json) -> Json:
    """The pod spec of the worker's clique (Grove)."""
    pcs = pod_clique_set(hub_graph(hub(obj)), SETTINGS, pull_secrets=PULL_SECRETS)
    clique: Json = pcs["spec"]["template"]["cliques"][0]
    return dict(clique["spec"]["podSpec"])


def test_a_graph_without_the_stamp_keeps_the_old_pods() -> None:
    # v1alpha1: the sidecar was dropped; v1beta1 (whose sidecar v1alpha1 can hold): likewise.
    for obj in (alpha_graph(), beta_graph()):
        assert list(containers(dcd_pod(obj)["spec"])) == ["main"]
        assert list(containers(grove_pod(obj))) == ["main"]


def test_a_stamped_v1alpha1_graph_gets_the_frontend_sidecar() -> None:
    template = dcd_pod(alpha_graph(STAMPED))
    check_golden("frontend_sidecar/v1alpha1-deployment", [template])
    pod = template["spec"]
    sidecar = containers(pod)["sidecar-frontend"]
    assert sidecar["image"] == FRONTEND_IMAGE
    assert sidecar["command"] == ["python3"]
    assert sidecar["args"] == ["-m", "dynamo.frontend", "--router-mode", "direct"]
    assert sidecar["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"}]
    assert sidecar["livenessProbe"]["httpGet"] == {"path": "/health", "port": "http"}
    assert "exec" in sidecar["readinessProbe"]
    values = env(sidecar)
    # The frontend's env, with the user's winning by name and the graph's beside it.
    assert values["DYN_COMPONENT"] == "frontend"
    assert values["DYN_NAMESPACE"] == "team-gaie"
    assert values["DYN_HTTP_PORT"] == "8080" and values["DYNAMO_PORT"] == "8000"
    assert values["OWN"] == "sidecar"
    assert values["NATS_SERVER"] == SETTINGS.nats_address
    assert sidecar["envFrom"] == [{"secretRef": {"name": "hf-token"}}]
    # main's mounts (the model cache), not /dev/shm; no GPU.
    assert sidecar["volumeMounts"] == [{"name": "model-cache", "mountPath": "/models"}]
    assert "resources" not in sidecar
    # The engine is what it was.
    assert containers(pod)["main"] == containers(dcd_pod(alpha_graph())["spec"])["main"]
    assert {"name": "nvcr-pull"} in pod["imagePullSecrets"]


def test_both_versions_and_both_paths_render_one_sidecar() -> None:
    alpha, beta = alpha_graph(STAMPED), beta_graph(STAMPED)
    # The DCD path's children carry v1alpha1's form, whose container is `sidecar-frontend`.
    assert containers(dcd_pod(beta)["spec"])["sidecar-frontend"] == \
        containers(dcd_pod(alpha)["spec"])["sidecar-frontend"]
    # Grove renders the graph itself: the v1beta1 container keeps its name.
    grove = grove_pod(beta)
    check_golden("frontend_sidecar/v1beta1-clique", [grove])
    fe = containers(grove)["fe"]
    assert fe == {**containers(grove_pod(alpha))["sidecar-frontend"], "name": "fe"}
    # The graph's env is main's, as the original gives it (the sidecar states its own).
    assert "GRAPH" not in env(fe) and env(containers(grove)["main"])["GRAPH"] == "g"


def test_the_users_fields_win_as_they_do_in_main() -> None:
    sidecar = {"name": "router", "image": FRONTEND_IMAGE, "command": ["dynamo-frontend"],
               "env": [{"name": "DYN_COMPONENT", "value": "router"}],
               "ports": [{"name": "metrics", "containerPort": 9100}],
               "resources": {"limits": {"cpu": "2"}}}
    fe = containers(grove_pod(beta_graph(STAMPED, sidecar=sidecar, name="router")))["router"]
    # A command without args runs on its own; env merges by name, ports by name and number.
    assert fe["command"] == ["dynamo-frontend"] and "args" not in fe
    assert env(fe)["DYN_COMPONENT"] == "router"
    assert fe["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"},
                           {"name": "metrics", "containerPort": 9100}]
    assert fe["resources"] == {"limits": {"cpu": "2"}}


def test_a_container_kept_among_the_pods_others_gets_the_defaults() -> None:
    # A v1beta1 sidecar conversion left among extraPodSpec's containers, named by the field.
    given = {"name": "fe", "image": FRONTEND_IMAGE,
             "ports": [{"name": "http", "containerPort": 9000, "protocol": "TCP"}],
             "readinessProbe": {"httpGet": {"path": "/ready", "port": "http"}}}
    spec = ComponentSpec(
        DynamoComponentDeploymentSharedSpec(frontend_sidecar="fe"),
        ComponentInputs(component_type="worker", annotations=STAMPED, pod=PodInputs(
            extra_pod_spec=ExtraPodSpec(main_container={"image": ENGINE_IMAGE},
                                        pod_spec={"containers": [copy.deepcopy(given)]}))))
    ctx = PodContext(namespace="team", graph_name="g", dynamo_namespace="team-g",
                     host_name="g-worker", backend_framework="vllm", deployer=GROVE,
                     settings=SETTINGS)
    fe = containers(generate_pod_spec(spec, Role("main", "worker", 1, 1), ctx))["fe"]
    assert fe["ports"] == given["ports"]
    assert fe["readinessProbe"] == given["readinessProbe"]
    assert fe["livenessProbe"]["httpGet"]["path"] == "/health"
    assert env(fe)["DYN_COMPONENT"] == "frontend"
    unstamped = ComponentSpec(spec.spec, spec.inputs.replace(annotations=None))
    assert containers(generate_pod_spec(unstamped, Role("main", "worker", 1, 1), ctx))["fe"] == \
        given


def test_the_sidecar_name_taken_by_another_container_is_refused() -> None:
    obj = alpha_graph(STAMPED, extraPodSpec={
        "mainContainer": {"image": ENGINE_IMAGE},
        "containers": [{"name": "sidecar-frontend", "image": "mine:1"}]})
    with pytest.raises(GenerationError, match=r"frontendSidecar: .*sidecar-frontend"):
        dcd_pod(obj)


@pytest.mark.parametrize(("stamp", "rendered"), [
    (None, False), ("not-a-version", False), ("0.0.9", False), ("0.1.0-rc.1", False),
    ("0.1.0", True), ("v0.1", True), ("1", True), ("1.2.3+build.7", True)])
def test_the_gate_follows_the_origin_version(stamp: str | None, rendered: bool) -> None:
    annotations = {ORIGIN_VERSION: stamp} if stamp is not None else None
    names = set(containers(dcd_pod(alpha_graph(annotations))["spec"]))
    assert ("sidecar-frontend" in names) is rendered


def test_the_stamp_reaches_the_dcd_and_the_clique() -> None:
    dcd = component_deployment(hub_graph(hub(alpha_graph(STAMPED))), "Worker", SETTINGS)
    spoke = convert(dcd, "nvidia.com/v1alpha1")
    assert spoke["spec"]["annotations"][ORIGIN_VERSION] == "0.1.0"
    pcs = pod_clique_set(hub_graph(hub(alpha_graph(STAMPED))), SETTINGS)
    assert pcs["spec"]["template"]["cliques"][0]["annotations"][ORIGIN_VERSION] == "0.1.0"
    # Unstamped: no trace of it.
    dcd = component_deployment(hub_graph(hub(alpha_graph())), "Worker", SETTINGS)
    assert ORIGIN_VERSION not in str(dcd)


def test_a_stamped_graph_without_a_sidecar_renders_the_same_pods() -> None:
    plain = alpha_graph()
    del plain["spec"]["services"]["Worker"]["frontendSidecar"]
    stamped = copy.deepcopy(plain)
    stamped["metadata"]["annotations"] = dict(STAMPED)
    assert dcd_pod(stamped)["spec"] == dcd_pod(plain)["spec"]
    assert grove_pod(stamped) == grove_pod(plain)


def test_a_standalone_dcd_opts_in_through_its_pod_template() -> None:
    dcd = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoComponentDeployment",
           "metadata": {"name": "solo", "namespace": "team"},
           "spec": {"backendFramework": "vllm", "type": "worker", "frontendSidecar": "fe",
                    "podTemplate": {
                        "metadata": {"annotations": dict(STAMPED)},
                        "spec": {"containers": [
                            {"name": "main", "image": ENGINE_IMAGE},
                            {"name": "fe", "image": FRONTEND_IMAGE}]}}}}
    def pod_of(obj: Json) -> Json:
        owned = component_objects(hub_component(obj), SETTINGS)
        return dict(next(o for o in owned if o["kind"] == "Deployment")
                    ["spec"]["template"]["spec"])

    # Its own template holds the container: it keeps its name.
    assert env(containers(pod_of(dcd))["fe"])["DYN_COMPONENT"] == "frontend"
    del dcd["spec"]["podTemplate"]["metadata"]
    assert list(containers(pod_of(dcd))) == ["main"]


def test_the_sidecar_has_no_runtime_version() -> None:
    """The frontend's startup probe is gated on the runtime version; the sidecar's context has
    none (as the original's), whatever the component's runtimeVersionOverride."""
    obj = beta_graph(STAMPED)
    obj["spec"]["components"][0]["runtimeVersionOverride"] = "1.6.0"
    assert "startupProbe" not in containers(grove_pod(obj))["fe"]
    obj["spec"]["components"][0]["type"] = "frontend"
    del obj["spec"]["components"][0]["frontendSidecar"]
    obj["spec"]["components"][0]["podTemplate"]["spec"]["containers"].pop()
    assert "startupProbe" in containers(grove_pod(obj))["main"]  # a frontend's own has it
