"""`api.conversion.written_inputs.with_component_inputs`: a DCD built from its native fields
and its render inputs is the DCD they were read from, in its `v1alpha1` form and in the
inputs `render_inputs` reads back, for DCDs written in `v1alpha1` (what a graph's child was)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from api.conversion import HUB, SPOKE, convert
from api.conversion.render_inputs import ComponentInputs, render_inputs
from api.conversion.written_inputs import with_component_inputs
from api.convert import dump
from tests.api.model_strategies import objects

Json = dict[str, Any]
NATIVE = ("name", "backendFramework", "replicas", "multinode", "modelRef",
          "globalDynamoNamespace", "eppConfig", "topologyConstraint", "experimental")


def native(hub: Json) -> Json:
    """The DCD with only the fields both versions share (no payload)."""
    spec = {k: v for k, v in hub["spec"].items() if k in NATIVE}
    return {"apiVersion": HUB, "kind": hub["kind"],
            "metadata": {k: v for k, v in hub["metadata"].items() if k != "annotations"},
            "spec": spec}


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=objects("v1alpha1", "DynamoComponentDeployment").map(dump))
def test_a_dcd_rebuilt_from_its_inputs_is_the_same_dcd(data: Json) -> None:
    data["spec"]["serviceName"] = "svc"  # a graph's child always names its component
    for key in ("gpuMemoryService", "failover"):
        # A feature switched off is absent from the hub: it stays in its parent's payload
        # and no child carries it (as the original's children do not).
        if (data["spec"].get(key) or {}).get("enabled") is False:
            del data["spec"][key]
    hub = convert(data, HUB)
    try:
        inputs = render_inputs(hub).component("svc")
    except ValueError:
        return  # a saved field that fits no model: the view fails validation too
    rebuilt = with_component_inputs(native(hub), inputs)
    assert convert(rebuilt, SPOKE)["spec"] == convert(hub, SPOKE)["spec"]
    assert render_inputs(rebuilt) == render_inputs(hub)


def test_only_a_hub_dcd_takes_inputs() -> None:
    with pytest.raises(ValueError, match="DCD"):
        with_component_inputs({"apiVersion": SPOKE, "kind": "DynamoComponentDeployment"},
                              ComponentInputs())
