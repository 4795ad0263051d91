"""The GPUs counted from a graph as stored are those of the pods the builders render for it: for
every GPU-memory-service and failover fixture (`fixtures/gms/`, v1beta1), each component's
pools per replica (`gpu_demand.component_replica_gpus`) equal what its rendered pod takes,
counted the way the scheduler does with the rendered ResourceClaimTemplates. A change of the
GMS rendering that moves GPUs elsewhere fails here before the GPUS column or the capacity
warning lies."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml
from backend_cases import SETTINGS

from backends.dra_demand import ClaimContext
from backends.gpu_demand import component_replica_gpus, pod_pools
from backends.render import render

Json = dict[str, Any]
FIXTURES = Path(__file__).parent / "fixtures" / "gms"
DRA = dataclasses.replace(SETTINGS, dra_enabled=True)
COMPONENT_LABEL = "nvidia.com/dynamo-component"


@pytest.mark.parametrize("case", ["gms", "gms-device-class", "gms-clients", "failover"])
def test_the_counted_gpus_are_the_rendered_pods(case: str) -> None:
    graph: Json = yaml.safe_load((FIXTURES / f"{case}.v1beta1.yaml").read_text())
    rendered = render(graph, DRA)
    context = ClaimContext(templates={o["metadata"]["name"]: o["spec"]["spec"]
                                      for o in rendered if o["kind"] == "ResourceClaimTemplate"})
    assert context.templates, [o["kind"] for o in rendered]
    pods = {d["spec"]["template"]["metadata"]["labels"][COMPONENT_LABEL]:
            d["spec"]["template"]["spec"] for d in rendered if d["kind"] == "Deployment"}
    counted = {c["name"]: component_replica_gpus(c, context).pools()
               for c in graph["spec"]["components"]}
    assert counted == {name: pod_pools(spec, context) for name, spec in pods.items()}
    assert any(pools for pools in counted.values())
