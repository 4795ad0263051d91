"""The worker hash of every graph the upgrade cases hold is pinned: a change of any of them
would start a worker rollout of every such graph when the operator is upgraded.

The hash covers what the graph states of its workers in both versions' terms
(`backends.worker_generation.worker_hash`), including how conversion writes down what only
`v1alpha1` says, so a change of the conversion's payloads or of the dump's shape moves it
without any graph changing. `golden/worker-hashes.json` was recorded once (2026-11-28, from
the same cases as the upgrade baseline) and is not regenerated to make this test pass. A
deliberate change of what the hash covers bumps `HASH_VERSION` and records the file again,
saying in the commit that every graph rolls on upgrade.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from upgrade_cases import BASELINE, golden_cases, manifest_cases

from api.conversion import HUB, convert
from api.errors import InvalidObject
from backends.hub_graph import hub_graph
from backends.worker_generation import HASH_VERSION, graph_workers, worker_hash

Json = dict[str, Any]
PINNED = Path(__file__).parent / "golden" / "worker-hashes.json"


def hashes() -> dict[str, list[str]]:
    """Case -> [the rolled workers' hash, every worker's (the Grove path's)]."""
    baseline: Json = json.loads(BASELINE.read_text(encoding="utf-8"))
    cases = {**dict(manifest_cases()), **dict(golden_cases()), **baseline["inputs"]}
    out: dict[str, list[str]] = {}
    for name, obj in sorted(cases.items()):
        if obj.get("kind") != "DynamoGraphDeployment":
            continue
        try:
            hub = hub_graph(obj if obj.get("apiVersion") == HUB else convert(obj, HUB))
            out[name] = [worker_hash(hub), worker_hash(hub, graph_workers(hub))]
        except (InvalidObject, ValueError):
            continue
    return out


def test_no_graph_changes_worker_generation_across_an_operator_upgrade() -> None:
    pinned: Json = json.loads(PINNED.read_text(encoding="utf-8"))
    assert pinned["hashVersion"] == HASH_VERSION
    now = hashes()
    moved = {name: (pinned["hashes"][name], got) for name, got in now.items()
             if name in pinned["hashes"] and pinned["hashes"][name] != got}
    assert not moved, f"{len(moved)} graphs would roll their workers on upgrade: {moved}"
    assert len(set(now) & set(pinned["hashes"])) >= 0.9 * len(pinned["hashes"]) > 20


if __name__ == "__main__":
    # Recording, once per deliberate HASH_VERSION change: python tests/backends/<this file>
    PINNED.write_text(json.dumps({"hashVersion": HASH_VERSION, "hashes": hashes()},
                                 indent=1, sort_keys=True) + "\n", encoding="utf-8")
