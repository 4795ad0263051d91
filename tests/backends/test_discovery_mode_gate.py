"""A graph's `nvidia.com/dynamo-kube-discovery-mode: container` behind its origin gate
(`backends.discovery_mode`): a graph the previous release created (stamped 0.1.0, or not
stamped) renders what that release rendered, byte for byte (`golden/discovery-mode`, recorded
by the operator of commit 8aceee7, never by these builders), so this operator taking over
restarts none of its pods; a graph created now passes the mode on to its components, whose
`main` gets `CONTAINER_NAME` and `DYN_KUBE_DISCOVERY_MODE`; a graph that fails over passes it
on whatever its origin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from backends.render import render_documents
from backends.settings import OperatorSettings

Json = dict[str, Any]
HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "fixtures" / "discovery-mode" / "container.v1beta1.yaml"
GOLDEN = HERE / "golden" / "discovery-mode"
MODE = "nvidia.com/dynamo-kube-discovery-mode"
ORIGIN = "nvidia.com/dynamo-operator-origin-version"
CONTAINER_ENV = {"CONTAINER_NAME": "main", "DYN_KUBE_DISCOVERY_MODE": "container"}


def graph(origin: str | None) -> Json:
    obj: Json = yaml.safe_load(FIXTURE.read_text(encoding="utf-8"))
    if origin is None:
        del obj["metadata"]["annotations"][ORIGIN]
    else:
        obj["metadata"]["annotations"][ORIGIN] = origin
    return obj


def render(obj: Json, grove: bool) -> list[Json]:
    objects, _ = render_documents([obj], OperatorSettings(grove_enabled=grove,
                                                          dra_enabled=True))
    # As the render CLI prints them (plain YAML), for an equal comparison.
    return list(yaml.safe_load_all(yaml.safe_dump_all(objects)))


def pod_templates(objects: list[Json]) -> list[Json]:
    """Every pod template: the Deployments' and each Grove clique's (with its annotations)."""
    out = []
    for obj in objects:
        if obj["kind"] == "Deployment":
            out.append(obj["spec"]["template"])
        if obj["kind"] == "PodCliqueSet":
            out += [{"annotations": c.get("annotations") or {}, "spec": c["spec"]["podSpec"]}
                    for c in obj["spec"]["template"]["cliques"]]
    return out


def main_env(template: Json) -> dict[str, str]:
    main = next(c for c in template["spec"]["containers"] if c["name"] == "main")
    return {e["name"]: e.get("value", "") for e in main.get("env") or []}


@pytest.mark.parametrize("grove", [False, True], ids=["dcd-path", "grove"])
def test_a_graph_of_the_previous_release_renders_as_it_did(grove: bool) -> None:
    recorded = GOLDEN / ("previous-release-grove.yaml" if grove else "previous-release.yaml")
    expected = list(yaml.safe_load_all(recorded.read_text(encoding="utf-8")))
    assert render(graph("0.1.0"), grove) == expected


@pytest.mark.parametrize("grove", [False, True], ids=["dcd-path", "grove"])
def test_a_graph_without_the_stamp_keeps_its_children_too(grove: bool) -> None:
    rendered = render(graph(None), grove)
    for template in pod_templates(rendered):
        assert not CONTAINER_ENV.keys() & main_env(template).keys()
    assert MODE not in yaml.safe_dump_all(rendered)


@pytest.mark.parametrize("grove", [False, True], ids=["dcd-path", "grove"])
def test_a_graph_created_now_registers_per_container(grove: bool) -> None:
    rendered = render(graph("0.2.0"), grove)
    templates = pod_templates(rendered)
    assert len(templates) == 2
    for template in templates:
        assert CONTAINER_ENV.items() <= main_env(template).items()
    dcds = [o for o in rendered if o["kind"] == "DynamoComponentDeployment"]
    assert len(dcds) == (0 if grove else 2)
    assert all(d["spec"]["annotations"][MODE] == "container" for d in dcds)
    if grove:
        assert all(t["annotations"][MODE] == "container" for t in templates)


def test_a_graph_that_fails_over_passes_the_mode_on_whatever_its_origin() -> None:
    """Failover needs container mode, and is rendered anew: the gate does not hold it back."""
    obj = graph(None)
    worker = obj["spec"]["components"][1]
    worker["experimental"] = {"gpuMemoryService": {"mode": "IntraPod"},
                              "failover": {"mode": "IntraPod"}}
    dcds = [o for o in render(obj, False) if o["kind"] == "DynamoComponentDeployment"]
    assert [d["spec"]["annotations"][MODE] for d in dcds] == ["container", "container"]
