"""An operator upgrade rewrites nothing: for every graph and DCD the operator may find stored,
the builders on the hub give what the builders on the `v1alpha1` view gave.

`golden/upgrade-baseline.json` was recorded by the view's path (before the builders moved to
`v1beta1`, commit 622308d) for the cases of `upgrade_cases.py`, the hypothesis-drawn ones
with their inputs; it is never regenerated. Per case and settings it holds, for a graph: each
child DCD's name, spec hash (`nvidia.com/last-applied-hash`), labels and annotations as the
child writer compares them (the conversion's payloads aside), and the digest of everything the
DCD renders from its stored (hub) form, plus the digest of every other child of the graph; for
a DCD of its own, the digest of its desired children. Equal hashes and metadata mean the child
writer leaves every DCD alone; equal digests mean every Deployment, LeaderWorkerSet, Service,
Ingress and PodCliqueSet is byte for byte what it was.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from upgrade_cases import (
    BASELINE,
    TOKEN,
    digest,
    golden_cases,
    manifest_cases,
    settings_variants,
)

from api.conversion import HUB, SPOKE, convert
from api.conversion.payloads import PAYLOAD_ANNOTATIONS
from api.errors import InvalidObject
from api.hub_errors import load_valid_view
from api.v1alpha1 import DynamoComponentDeployment, DynamoGraphDeployment
from backends.component_workload import component_children
from backends.errors import GenerationError
from backends.graph_children import graph_children
from backends.hub_component import hub_component
from backends.hub_graph import hub_graph
from reconcilers.machinery.children import spec_hash

Json = dict[str, Any]
PULL_SECRETS = {"nvcr.io": ["nvcr-pull"]}
_BASELINE: Json = json.loads(BASELINE.read_text(encoding="utf-8"))
_CASES = {**dict(manifest_cases()), **dict(golden_cases()), **_BASELINE["inputs"]}


def _view(obj: Json) -> Json:
    return convert({k: v for k, v in obj.items() if k != "status"}, SPOKE)


def _dcd_children(stored: Json, settings: Any) -> list[str]:
    load_valid_view(DynamoComponentDeployment, stored, _view(stored))  # as the reconciler
    desired = component_children(hub_component(stored), settings,
                                 pull_secrets=PULL_SECRETS, service_account="sa")
    return [digest(c.obj) for c in desired.children]


def _graph(stored: Json, settings: Any) -> Json:
    load_valid_view(DynamoGraphDeployment, stored, _view(stored))  # as the reconciler
    hub = hub_graph(stored)
    first = next((name for name, _ in hub.components()), None)
    desired = graph_children(hub, settings, tokens={first: TOKEN} if first else {},
                             pull_secrets=PULL_SECRETS)
    others: list[Any] = []
    dcds = []
    for child in desired.children:
        obj = child.obj
        if obj.get("kind") != "DynamoComponentDeployment":
            others.append([obj, child.write.name])
            continue
        meta = obj["metadata"]
        annotations = {k: v for k, v in (meta.get("annotations") or {}).items()
                       if k not in PAYLOAD_ANNOTATIONS}
        wire = obj if obj.get("apiVersion") == HUB else convert(obj, HUB)
        try:
            rendered: Any = _dcd_children(wire, settings)
        except (GenerationError, InvalidObject, ValueError) as error:
            rendered = f"error: {type(error).__name__}"
        dcds.append([meta["name"], spec_hash(obj)[:24],
                     digest([meta.get("labels"), annotations]), digest(rendered)])
    # The view's path named the DCDs it prunes in `v1alpha1`, the version it built them in;
    # the kinds pruned are compared as such (a version there only finds the resource).
    pruned = [[SPOKE if k == (HUB, "DynamoComponentDeployment") else k[0], k[1]]
              for k in desired.pruned]
    others.append({"required": [[r.api_version, r.kind, r.name] for r in desired.required],
                   "pruned": pruned})
    return {"dcds": dcds, "others": digest(others)}


def outcome(stored: Json) -> Json | None:
    """What the builders make of `stored` under each settings variant (None: invalid)."""
    result: Json = {}
    for name, settings in settings_variants().items():
        try:
            if stored["kind"] == "DynamoGraphDeployment":
                result[name] = _graph(stored, settings)
            else:
                result[name] = digest(_dcd_children(stored, settings))
        except InvalidObject:
            return None
        except (GenerationError, ValueError) as error:
            result[name] = f"error: {type(error).__name__}"
    return result


def test_the_baseline_covers_every_manifest_golden_case_and_drawn_object() -> None:
    recorded = set(_BASELINE["cases"])
    assert set(dict(manifest_cases())) - recorded <= {
        "tests/api/manifests/v1beta1/dgd-disagg-topology.yaml#0",  # invalid without the
        "tests/api/manifests/v1beta1/dgd-disagg-topology.yaml#0@other",  # cluster's topology
    }
    assert set(dict(golden_cases())) <= recorded
    drawn = [n for n in recorded if n.startswith("drawn:graph")]
    assert len(drawn) >= 200 and len(recorded) >= 350


@pytest.mark.parametrize("case", sorted(_BASELINE["cases"]))
def test_the_hub_builders_give_what_the_view_builders_gave(case: str) -> None:
    assert outcome(_CASES[case]) == _BASELINE["cases"][case]
