"""`frontendSidecar` through conversion: `v1alpha1`'s object holds a sidecar's image, args, env
and Secret; what else the `v1beta1` container states (its name, ports, probes, resources,
mounts, securityContext...) is `v1beta1`'s remainder, kept whole in the payload, and the saved
`v1alpha1` fields keep standing for the pod while only that remainder differs
(`api.conversion.pod_template.spoke_stands_for`)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from api.conversion import HUB, SPOKE, convert
from api.conversion.pod_template import (
    FRONTEND_SIDECAR,
    hub_stands_for,
    pod_to_hub,
    pod_to_spoke,
    sidecar_as_spoke_shows_it,
    spoke_stands_for,
)
from api.conversion.render_inputs import render_inputs
from api.conversion.written_inputs import with_frontend_container
from api.convert import dump
from tests.api.model_strategies import objects

Json = dict[str, Any]
IMAGE = "nvcr.io/nvidia/ai-dynamo/frontend:1.0.0"
SIDECAR: Json = {
    "name": "router", "image": IMAGE, "args": ["-m", "dynamo.frontend"],
    "env": [{"name": "OWN", "value": "sidecar"}],
    "envFrom": [{"secretRef": {"name": "hf-token"}}],
    "ports": [{"name": "metrics", "containerPort": 9100, "protocol": "TCP"}],
    "readinessProbe": {"httpGet": {"path": "/ready", "port": "metrics"}},
    "livenessProbe": {"tcpSocket": {"port": "metrics"}},
    "resources": {"requests": {"cpu": "500m"}, "limits": {"cpu": "2", "memory": "2Gi"}},
    "volumeMounts": [{"name": "cfg", "mountPath": "/etc/router", "readOnly": True}],
    "securityContext": {"runAsNonRoot": True, "capabilities": {"drop": ["ALL"]}},
}


def component(sidecar: Json | None = None, **more: Any) -> Json:
    fe = copy.deepcopy(sidecar if sidecar is not None else SIDECAR)
    return {"name": "w", "type": "worker", "frontendSidecar": fe["name"], "podTemplate": {
        "spec": {"containers": [{"name": "main", "image": "engine:1"}, fe],
                 "volumes": [{"name": "cfg", "configMap": {"name": "router"}}]}}, **more}


def beta_graph(comp: Json) -> Json:
    return {"apiVersion": HUB, "kind": "DynamoGraphDeployment",
            "metadata": {"name": "g", "namespace": "ns"}, "spec": {"components": [comp]}}


def beta_dcd(comp: Json) -> Json:
    return {"apiVersion": HUB, "kind": "DynamoComponentDeployment",
            "metadata": {"name": "d", "namespace": "ns"}, "spec": comp}


def test_a_v1beta1_sidecar_round_trips_whole_through_v1alpha1() -> None:
    for obj in (beta_graph(component()), beta_dcd(component())):
        spoke = convert(obj, SPOKE)
        if obj["kind"] == "DynamoGraphDeployment":
            service = spoke["spec"]["services"]["w"]
        else:
            service = spoke["spec"]
        # v1alpha1 shows what its object holds...
        assert service["frontendSidecar"] == {
            "image": IMAGE, "args": ["-m", "dynamo.frontend"],
            "envs": [{"name": "OWN", "value": "sidecar"}], "envFromSecret": "hf-token"}
        # ...and the way back gives the container whole, under its name.
        assert convert(spoke, HUB) == obj


def v1alpha1_graph_in_hub() -> Json:
    """A graph written in v1alpha1 whose service has labels of its own and a frontend
    sidecar, as stored (the hub, with the v1alpha1 pod fields saved)."""
    spoke = {"apiVersion": SPOKE, "kind": "DynamoGraphDeployment",
             "metadata": {"name": "g", "namespace": "ns"},
             "spec": {"services": {"w": {
                 "componentType": "worker", "labels": {"team": "a"},
                 "envs": [{"name": "A", "value": "1"}],
                 "extraPodSpec": {"mainContainer": {
                     "image": "engine:1", "env": [{"name": "B", "value": "2"}]}},
                 "frontendSidecar": {"image": IMAGE, "args": ["-m", "dynamo.frontend"]}}}}}
    return convert(spoke, HUB)


def sidecar_of(hub: Json) -> Json:
    comp = hub["spec"]["components"][0]
    found: Json = next(c for c in comp["podTemplate"]["spec"]["containers"]
                       if c["name"] == comp["frontendSidecar"])
    return found


def test_more_of_the_sidecar_in_v1beta1_keeps_the_saved_v1alpha1_fields() -> None:
    hub = v1alpha1_graph_in_hub()
    before = render_inputs(hub)
    sidecar_of(hub)["ports"] = [{"name": "metrics", "containerPort": 9100}]
    sidecar_of(hub)["securityContext"] = {"runAsNonRoot": True}
    # The service's own labels, envs beside mainContainer.env: still v1alpha1's.
    assert render_inputs(hub) == before
    spoke = convert(hub, SPOKE)
    service = spoke["spec"]["services"]["w"]
    assert service["labels"] == {"team": "a"}
    assert service["envs"] == [{"name": "A", "value": "1"}]
    assert service["extraPodSpec"]["mainContainer"]["env"] == [{"name": "B", "value": "2"}]
    assert service["frontendSidecar"] == {"image": IMAGE, "args": ["-m", "dynamo.frontend"]}
    # Both ways round.
    assert convert(spoke, HUB) == hub
    assert convert(convert(spoke, HUB), SPOKE) == spoke


def test_a_change_of_what_v1alpha1_holds_of_the_sidecar_wins_over_the_saved_fields() -> None:
    hub = v1alpha1_graph_in_hub()
    sidecar_of(hub)["image"] = "frontend:2"
    service = convert(hub, SPOKE)["spec"]["services"]["w"]
    assert service["frontendSidecar"]["image"] == "frontend:2"
    # The live fields give the group: the template's labels are pod metadata now.
    assert "labels" not in service
    assert service["extraPodMetadata"]["labels"] == {"team": "a"}


def test_the_sidecar_as_v1alpha1_shows_it() -> None:
    hub = {k: v for k, v in component().items() if k in ("podTemplate", "frontendSidecar")}
    shown = sidecar_as_spoke_shows_it(hub)
    assert shown["frontendSidecar"] == FRONTEND_SIDECAR
    assert shown["podTemplate"]["spec"]["containers"][-1] == {
        "name": FRONTEND_SIDECAR, "image": IMAGE, "args": ["-m", "dynamo.frontend"],
        "env": [{"name": "OWN", "value": "sidecar"}],
        "envFrom": [{"secretRef": {"name": "hf-token"}}]}
    assert shown == pod_to_hub(pod_to_spoke(hub))
    assert spoke_stands_for(pod_to_spoke(hub), hub)
    assert hub_stands_for(hub, pod_to_spoke(hub))
    # No sidecar, or one v1alpha1 cannot hold: the fields themselves.
    plain = {"podTemplate": hub["podTemplate"]}
    assert sidecar_as_spoke_shows_it(plain) is plain
    odd = copy.deepcopy(hub)
    odd["podTemplate"]["spec"]["containers"][1]["args"] = [1]
    assert sidecar_as_spoke_shows_it(odd) is odd


def child_dcd() -> Json:
    """A child DCD as `with_component_inputs` writes it: v1alpha1's form of the sidecar."""
    spoke = {"apiVersion": SPOKE, "kind": "DynamoComponentDeployment",
             "metadata": {"name": "g-w", "namespace": "ns"},
             "spec": {"serviceName": "w", "componentType": "worker",
                      "labels": {"nvidia.com/dynamo-component": "w"},
                      "extraPodSpec": {"mainContainer": {"image": "engine:1"},
                                       "volumes": [{"name": "cfg",
                                                    "configMap": {"name": "router"}}]},
                      "frontendSidecar": pod_to_spoke(
                          {k: v for k, v in component().items()
                           if k in ("podTemplate", "frontendSidecar")})["frontendSidecar"]}}
    return convert(spoke, HUB)


def test_a_child_carries_the_sidecar_whole_and_reads_back_the_same_inputs() -> None:
    dcd = child_dcd()
    whole = with_frontend_container(dcd, SIDECAR)
    assert whole["spec"]["frontendSidecar"] == "router"
    assert whole["spec"]["podTemplate"]["spec"]["containers"][-1] == SIDECAR
    assert render_inputs(whole) == render_inputs(dcd)
    spoke = convert(whole, SPOKE)
    assert spoke["spec"]["labels"] == {"nvidia.com/dynamo-component": "w"}
    assert convert(spoke, HUB) == whole
    assert convert(dcd, HUB) == dcd  # the input is not changed


@pytest.mark.parametrize("change", [
    {"image": "other:1"}, {"args": ["--other"]}, {"env": []},
    {"envFrom": [{"secretRef": {"name": "other"}}]}])
def test_a_container_the_object_does_not_stand_for_is_not_carried(change: Json) -> None:
    dcd = child_dcd()
    assert with_frontend_container(dcd, {**SIDECAR, **change}) is dcd


def test_a_container_named_as_another_of_the_pod_is_not_carried() -> None:
    dcd = child_dcd()
    assert with_frontend_container(dcd, {**SIDECAR, "name": "main"}) is dcd


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=objects("v1alpha1", "DynamoComponentDeployment").map(dump),
       name=st.sampled_from(["router", "fe", FRONTEND_SIDECAR]),
       extra=st.fixed_dictionaries({}, optional={
           "ports": st.just([{"name": "metrics", "containerPort": 9100}]),
           "readinessProbe": st.just({"tcpSocket": {"port": 9100}}),
           "resources": st.just({"limits": {"cpu": "1"}}),
           "securityContext": st.just({"runAsNonRoot": True})}))
def test_any_child_carries_its_sidecar_whole_and_round_trips(data: Json, name: str,
                                                              extra: Json) -> None:
    """Whatever else a child's v1alpha1 pod fields say (the saved group: own labels, envs
    beside mainContainer.env...), the container carried whole leaves its inputs as they were
    and comes back from v1alpha1 as it went."""
    data["spec"]["serviceName"] = "svc"
    data["spec"]["frontendSidecar"] = {"image": IMAGE, "args": ["-m", "dynamo.frontend"]}
    containers = (data["spec"].get("extraPodSpec") or {}).get("containers") or []
    assume(all(c.get("name") not in (name, FRONTEND_SIDECAR, "main") for c in containers))
    hub = convert(data, HUB)
    try:
        before = render_inputs(hub)
    except ValueError:
        return  # a saved field that fits no model: the view fails validation too
    whole = with_frontend_container(
        hub, {"name": name, "image": IMAGE, "args": ["-m", "dynamo.frontend"], **extra})
    assert whole is not hub
    assert whole["spec"]["frontendSidecar"] == name
    assert render_inputs(whole) == before
    spoke = convert(whole, SPOKE)
    assert convert(spoke, HUB) == whole
    assert convert(convert(spoke, HUB), SPOKE) == spoke
