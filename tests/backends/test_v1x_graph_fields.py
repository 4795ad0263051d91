"""The `v1beta1` fields of issue #29 item 2 that reach a graph's pods through the DCD path
and Grove: sharedMemorySize, compilationCache, graph env, labels, annotations,
priorityClassName and runtimeVersionOverride (the builders, pure)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from backend_cases import SETTINGS, containers

from api.hub_errors import validate_stored
from api.v1alpha1 import DynamoGraphDeployment
from backends.component_deployment import component_deployment
from backends.component_workload import component_objects
from backends.graph_objects import scaling_adapters
from backends.grove import pod_clique_set
from backends.hub_component import hub_component
from backends.hub_graph import hub_graph
from backends.runtime_features import parse_version

Json = dict[str, Any]


def beta_graph(component: Json, **spec: Any) -> Json:
    """A `v1beta1` graph of one component `c` (a vllm worker unless `component` says)."""
    entry: Json = {
        "name": "c", "type": "worker",
        "podTemplate": {"spec": {"containers": [
            {"name": "main", "image": "img:1.0", "command": ["python3"],
             "args": ["-m", "dynamo.vllm"]}]}},
        **component,
    }
    obj = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
           "metadata": {"name": "g", "namespace": "team"},
           "spec": {"backendFramework": "vllm", "components": [entry], **spec}}
    validate_stored(DynamoGraphDeployment, obj)
    return obj


def rendered(obj: Json) -> tuple[Json, dict[str, Json]]:
    """The component's DCD and what the DCD owns, by kind."""
    dcd = component_deployment(hub_graph(obj), "c", SETTINGS)
    owned = component_objects(hub_component(dcd), SETTINGS)
    return dcd, {o["kind"]: o for o in owned}


def pod_of(obj: Json) -> Json:
    return rendered(obj)[1]["Deployment"]["spec"]["template"]


def shm(pod: Json) -> Json | None:
    return next((v for v in pod["spec"].get("volumes", []) if v["name"] == "shared-memory"),
                None)


def test_shared_memory_size_sizes_dev_shm_and_zero_disables_it() -> None:
    assert shm(pod_of(beta_graph({}))) == {
        "name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}}
    sized = pod_of(beta_graph({"sharedMemorySize": "16Gi"}))
    assert shm(sized) == {"name": "shared-memory",
                          "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}}
    assert {"name": "shared-memory", "mountPath": "/dev/shm"} in \
        containers(sized["spec"])["main"]["volumeMounts"]
    off = pod_of(beta_graph({"sharedMemorySize": "0"}))
    assert shm(off) is None
    assert all(m["mountPath"] != "/dev/shm"
               for m in containers(off["spec"])["main"].get("volumeMounts", []))


def test_compilation_cache_mounts_the_pvc_at_the_backends_path() -> None:
    main = containers(pod_of(beta_graph({"compilationCache": {"pvcName": "cc"}}))["spec"])["main"]
    assert {"name": "cc", "mountPath": "/root/.cache/vllm"} in main["volumeMounts"]
    assert {"name": "VLLM_CACHE_ROOT", "value": "/root/.cache/vllm"} in main["env"]
    given = beta_graph({"compilationCache": {"pvcName": "cc", "mountPath": "/cache"}})
    pod = pod_of(given)
    assert {"name": "cc", "mountPath": "/cache"} in containers(pod["spec"])["main"]["volumeMounts"]
    assert {"name": "cc", "persistentVolumeClaim": {"claimName": "cc"}} in pod["spec"]["volumes"]


def test_graph_env_is_under_the_components_own() -> None:
    component = {"podTemplate": {"spec": {"containers": [
        {"name": "main", "image": "img", "env": [{"name": "B", "value": "own"}]}]}}}
    obj = beta_graph(component, env=[{"name": "A", "value": "graph"},
                                     {"name": "B", "value": "graph"}])
    env = {e["name"]: e.get("value") for e in containers(pod_of(obj)["spec"])["main"]["env"]}
    assert env["A"] == "graph"
    assert env["B"] == "own"


def test_graph_labels_and_annotations_reach_every_child_and_the_pods() -> None:
    component = {"scalingAdapter": {}, "podTemplate": {
        "metadata": {"labels": {"team": "pod"}, "annotations": {"note": "pod"}},
        "spec": {"containers": [{"name": "main", "image": "img"}]}}}
    obj = beta_graph(component,
                     labels={"team": "graph", "cost": "x",
                             "nvidia.com/dynamo-component": "not-this"},
                     annotations={"note": "graph", "owner": "me"})
    dcd, owned = rendered(obj)
    assert dcd["metadata"]["labels"]["cost"] == "x"
    assert dcd["metadata"]["labels"]["nvidia.com/dynamo-component"] == "c"
    assert dcd["metadata"]["annotations"]["owner"] == "me"
    for kind in ("Deployment", "Service"):
        assert owned[kind]["metadata"]["labels"]["cost"] == "x"
        assert owned[kind]["metadata"]["annotations"]["owner"] == "me"
    pod = owned["Deployment"]["spec"]["template"]["metadata"]
    assert pod["labels"]["cost"] == "x"
    assert pod["labels"]["team"] == "pod"  # the podTemplate wins
    assert pod["labels"]["nvidia.com/dynamo-component"] == "c"
    assert pod["annotations"] == {"note": "pod", "owner": "me"}
    (adapter,) = scaling_adapters(hub_graph(obj))
    assert adapter["metadata"]["labels"]["cost"] == "x"
    assert adapter["metadata"]["labels"]["nvidia.com/dynamo-component"] == "c"
    assert adapter["metadata"]["annotations"] == {"note": "graph", "owner": "me"}
    pcs = pod_clique_set(hub_graph(obj), SETTINGS)
    assert pcs["metadata"]["labels"]["cost"] == "x"
    clique = pcs["spec"]["template"]["cliques"][0]
    assert clique["labels"]["cost"] == "x" and clique["labels"]["team"] == "pod"
    assert clique["labels"]["nvidia.com/dynamo-component"] == "c"
    assert clique["annotations"]["note"] == "pod"
    assert clique["annotations"]["owner"] == "me"


def test_a_graph_without_them_renders_as_before() -> None:
    obj = beta_graph({})
    dcd, _ = rendered(obj)
    assert "annotations" not in dcd["metadata"] or set(dcd["metadata"]["annotations"]) <= {
        "nvidia.com/dcd-spec"}
    assert "runtimeVersionOverride" not in dcd["spec"]
    assert "priorityClassName" not in pod_clique_set(hub_graph(obj), SETTINGS)["spec"][
        "template"]


def test_priority_class_name_is_the_pod_clique_sets() -> None:
    obj = beta_graph({}, priorityClassName="inference-high")
    pcs = pod_clique_set(hub_graph(obj), SETTINGS)
    assert pcs["spec"]["template"]["priorityClassName"] == "inference-high"
    # The DCD path has no PodCliqueSet; the reference says the field requires Grove.
    assert "priorityClassName" not in pod_of(obj)["spec"]


@pytest.mark.parametrize(("text", "version"), [
    ("1.6.0", (1, 6, 0)), ("10.0.12", (10, 0, 12)), ("v1.5.2", None), ("1.6.0-rc1", None),
    ("01.6.0", None), ("latest", None), ("1.6", None), ("", None), (None, None)])
def test_runtime_versions_parse_as_major_minor_patch(text: str | None,
                                                     version: tuple[int, ...] | None) -> None:
    assert parse_version(text) == version


def frontend(version: str | None) -> Json:
    entry: Json = {"type": "frontend", "podTemplate": {"spec": {"containers": [
        {"name": "main", "image": "img"}]}}}
    if version is not None:
        entry["runtimeVersionOverride"] = version
    return containers(pod_of(beta_graph(entry))["spec"])["main"]


def test_runtime_version_gates_the_frontend_startup_probe() -> None:
    assert "startupProbe" not in frontend(None)
    assert "startupProbe" not in frontend("1.5.9")
    assert frontend("1.6.0")["startupProbe"] == {
        "httpGet": {"path": "/live", "port": "http"}, "periodSeconds": 10,
        "timeoutSeconds": 1, "failureThreshold": 30}


def test_runtime_version_gates_the_worker_liveness_threshold() -> None:
    def threshold(version: str | None) -> int:
        entry: Json = copy.deepcopy({} if version is None
                                    else {"runtimeVersionOverride": version})
        main = containers(pod_of(beta_graph(entry))["spec"])["main"]
        return int(main["livenessProbe"]["failureThreshold"])

    assert threshold(None) == 1
    assert threshold("1.4.0") == 1
    assert threshold("1.5.0") == 3


def test_the_child_dcd_carries_the_runtime_version() -> None:
    dcd, _ = rendered(beta_graph({"runtimeVersionOverride": "1.6.0"}))
    assert dcd["spec"]["runtimeVersionOverride"] == "1.6.0"
    assert hub_component(dcd).model.spec.runtime_version_override == "1.6.0"
