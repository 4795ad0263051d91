"""`frontendSidecar` on the DCD path, whole (issue #29, the leftover of item 2): a `v1beta1`
graph's sidecar container reaches its child DCD, and the pods, under its own name with all it
states (ports, probes, resources, mounts, securityContext...), for graphs whose origin version
is at or above `backends.origin_gates.FRONTEND_SIDECAR_LOSSLESS`; a graph made before keeps
the `sidecar-frontend` container `v1alpha1`'s form gave its child (its pods do not roll)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from backend_cases import PULL_SECRETS, SETTINGS, containers, env

from api.conversion import convert
from api.conversion.render_inputs import render_inputs
from api.hub_errors import validate_stored
from api.origin_version import ORIGIN_VERSION
from api.v1alpha1 import DynamoGraphDeployment
from backends.component_deployment import component_deployment
from backends.component_workload import component_objects
from backends.grove import pod_clique_set
from backends.hub_component import hub_component
from backends.hub_graph import hub_graph
from backends.origin_gates import FRONTEND_SIDECAR, FRONTEND_SIDECAR_LOSSLESS

Json = dict[str, Any]
HUB = "nvidia.com/v1beta1"
SPOKE = "nvidia.com/v1alpha1"
ENGINE_IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.0"
FRONTEND_IMAGE = "nvcr.io/nvidia/ai-dynamo/frontend:1.0.0"
NEW = {ORIGIN_VERSION: ".".join(str(n) for n in FRONTEND_SIDECAR_LOSSLESS.min_version.numbers)}
PREVIOUS = {ORIGIN_VERSION: ".".join(str(n) for n in FRONTEND_SIDECAR.min_version.numbers)}

SIDECAR: Json = {
    "name": "router", "image": FRONTEND_IMAGE,
    "args": ["-m", "dynamo.frontend", "--router-mode", "kv"],
    "env": [{"name": "OWN", "value": "sidecar"}],
    "envFrom": [{"secretRef": {"name": "hf-token"}}],
    "ports": [{"name": "metrics", "containerPort": 9100, "protocol": "TCP"}],
    "readinessProbe": {"httpGet": {"path": "/ready", "port": "metrics"}, "periodSeconds": 7},
    "livenessProbe": {"tcpSocket": {"port": "metrics"}},
    "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "2"}},
    "volumeMounts": [{"name": "router-config", "mountPath": "/etc/router", "readOnly": True}],
    "securityContext": {"runAsNonRoot": True, "allowPrivilegeEscalation": False},
}


def graph(annotations: dict[str, str] | None = None, *, sidecar: Json | None = None,
          labels: dict[str, str] | None = None) -> Json:
    """A v1beta1 graph whose vLLM worker runs `sidecar` (by default `SIDECAR`), with a model
    cache and the sidecar's config map mounted."""
    meta: Json = {"name": "gaie", "namespace": "team"}
    if annotations:
        meta["annotations"] = dict(annotations)
    template: Json = {"spec": {
        "containers": [
            {"name": "main", "image": ENGINE_IMAGE,
             "command": ["python3", "-m", "dynamo.vllm"],
             "args": ["--model", "Qwen/Qwen3-0.6B"],
             "resources": {"limits": {"nvidia.com/gpu": "1"}},
             "volumeMounts": [{"name": "model-cache", "mountPath": "/models"}]},
            copy.deepcopy(sidecar if sidecar is not None else SIDECAR)],
        "volumes": [{"name": "model-cache", "persistentVolumeClaim": {"claimName": "model-cache"}},
                    {"name": "router-config", "configMap": {"name": "router"}}]}}
    if labels:
        template["metadata"] = {"labels": dict(labels)}
    name = (sidecar if sidecar is not None else SIDECAR)["name"]
    obj = {"apiVersion": HUB, "kind": "DynamoGraphDeployment", "metadata": meta,
           "spec": {"backendFramework": "vllm", "env": [{"name": "GRAPH", "value": "g"}],
                    "components": [{"name": "Worker", "type": "worker", "replicas": 1,
                                    "frontendSidecar": name, "podTemplate": template}]}}
    validate_stored(DynamoGraphDeployment, obj)
    return obj


def child(obj: Json) -> Json:
    return component_deployment(hub_graph(obj), "Worker", SETTINGS)


def dcd_pod(obj: Json) -> Json:
    """The pod spec of the worker's Deployment (the DCD path)."""
    owned = component_objects(hub_component(child(obj)), SETTINGS, pull_secrets=PULL_SECRETS)
    return dict(next(o for o in owned if o["kind"] == "Deployment")["spec"]["template"]["spec"])


def grove_pod(obj: Json) -> Json:
    pcs = pod_clique_set(hub_graph(obj), SETTINGS, pull_secrets=PULL_SECRETS)
    return dict(pcs["spec"]["template"]["cliques"][0]["spec"]["podSpec"])


def test_the_gate_is_later_than_every_gate_before_it() -> None:
    assert FRONTEND_SIDECAR_LOSSLESS.min_version > FRONTEND_SIDECAR.min_version


def test_a_newly_stamped_graph_runs_the_whole_sidecar_under_its_own_name() -> None:
    pod = dcd_pod(graph(NEW))
    assert list(containers(pod)) == ["main", "router"]
    fe = containers(pod)["router"]
    # All the user states, as written (a probe replaces the default whole).
    for key in ("image", "args", "readinessProbe", "livenessProbe", "resources",
                "securityContext", "envFrom"):
        assert fe[key] == SIDECAR[key], key
    # The frontend's defaults merged in: its command, port and env; ports merge by name.
    assert fe["command"] == ["python3"]
    assert fe["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"},
                           *SIDECAR["ports"]]
    values = env(fe)
    assert values["DYN_COMPONENT"] == "frontend" and values["OWN"] == "sidecar"
    assert values["DYN_NAMESPACE"] == "team-gaie"
    # Its own mount and main's (the model cache; not /dev/shm).
    assert sorted(fe["volumeMounts"], key=lambda m: m["name"]) == [
        {"name": "model-cache", "mountPath": "/models"}, *SIDECAR["volumeMounts"]]
    # The DCD path renders what Grove renders from the graph itself.
    assert fe == containers(grove_pod(graph(NEW)))["router"]
    assert {"name": "router-config", "configMap": {"name": "router"}} in pod["volumes"]


def test_the_engine_renders_as_before() -> None:
    new, previous = dcd_pod(graph(NEW)), dcd_pod(graph(PREVIOUS))
    assert containers(new)["main"] == containers(previous)["main"]
    assert {k: v for k, v in new.items() if k != "containers"} == \
        {k: v for k, v in previous.items() if k != "containers"}


@pytest.mark.parametrize("annotations", [None, PREVIOUS, {ORIGIN_VERSION: "0.1.9"}])
def test_a_graph_made_before_the_gate_keeps_its_child_and_pods(
        annotations: dict[str, str] | None) -> None:
    obj = graph(annotations)
    dcd = child(obj)
    template = dcd["spec"]["podTemplate"]["spec"]
    assert dcd["spec"]["frontendSidecar"] == "sidecar-frontend"
    sidecar = containers(template)["sidecar-frontend"]
    assert set(sidecar) == {"name", "image", "args", "env", "envFrom"}
    names = list(containers(dcd_pod(obj)))
    # Stamped at or above FRONTEND_SIDECAR: that container, with the defaults; else none.
    assert names == (["main"] if annotations is None else ["main", "sidecar-frontend"])


def test_the_newly_stamped_child_carries_the_container_whole() -> None:
    dcd = child(graph(NEW))
    assert dcd["spec"]["frontendSidecar"] == "router"
    assert containers(dcd["spec"]["podTemplate"]["spec"])["router"] == SIDECAR
    # What only v1alpha1 says of the child is read back as it was written.
    previous = child(graph(PREVIOUS))
    inputs = render_inputs(dcd).component("Worker")
    assert inputs == render_inputs(previous).component("Worker").replace(
        annotations=NEW, pod=inputs.pod)
    assert inputs.pod == render_inputs(previous).component("Worker").pod.replace(
        extra_pod_spec=inputs.pod.extra_pod_spec)
    assert inputs.pod.frontend_sidecar is not None
    assert inputs.pod.frontend_sidecar.image == FRONTEND_IMAGE


def test_the_newly_stamped_child_round_trips_through_v1alpha1() -> None:
    dcd = child(graph(NEW, labels={"team": "a"}))
    spoke = convert(dcd, SPOKE)
    # The v1alpha1 view shows the sidecar as v1alpha1's frontendSidecar, and the child's own
    # labels and annotations as its own.
    assert spoke["spec"]["frontendSidecar"]["image"] == FRONTEND_IMAGE
    assert spoke["spec"]["annotations"][ORIGIN_VERSION] == NEW[ORIGIN_VERSION]
    assert spoke["spec"]["labels"]["nvidia.com/dynamo-component"] == "Worker"
    back = convert(spoke, HUB)
    assert back == dcd
    assert render_inputs(back) == render_inputs(dcd)


def test_a_sidecar_that_v1alpha1_can_hold_keeps_its_name_too() -> None:
    plain = {k: SIDECAR[k] for k in ("name", "image", "args", "env")}
    pod = dcd_pod(graph(NEW, sidecar=plain))
    assert list(containers(pod)) == ["main", "router"]
    assert containers(pod)["router"] == containers(grove_pod(graph(NEW, sidecar=plain)))["router"]


def test_a_graph_made_before_the_gate_reads_its_saved_pod_fields_as_it_did() -> None:
    """A graph written in v1alpha1 (its service's own labels saved), whose sidecar was given
    ports in v1beta1 since: its saved fields stand for the pod again only for graphs made at
    or after the gate; one made before renders from what the live fields give, as it did."""
    spoke: Json = {"apiVersion": SPOKE, "kind": "DynamoGraphDeployment",
                   "metadata": {"name": "gaie", "namespace": "team"},
                   "spec": {"services": {"Worker": {
                       "componentType": "worker", "labels": {"team": "a"},
                       "extraPodSpec": {"mainContainer": {"image": ENGINE_IMAGE}},
                       "frontendSidecar": {"image": FRONTEND_IMAGE}}}}}
    for stamp in (None, PREVIOUS, NEW):
        obj = convert({**spoke, "metadata": {**spoke["metadata"],
                                             "annotations": dict(stamp or {})}}, HUB)
        sidecar = obj["spec"]["components"][0]["podTemplate"]["spec"]["containers"][-1]
        sidecar["ports"] = [{"name": "metrics", "containerPort": 9100}]
        inputs = hub_graph(obj).inputs.component("Worker")
        if stamp is NEW:
            assert inputs == render_inputs(obj).component("Worker")
            assert inputs.labels == {"team": "a"}
        else:
            assert inputs == render_inputs(obj, sidecar_remainder=False).component("Worker")
            assert inputs.labels is None
            assert inputs.pod.extra_pod_metadata is not None
            assert inputs.pod.extra_pod_metadata.labels == {"team": "a"}
