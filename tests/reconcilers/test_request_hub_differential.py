"""The DGDR controller on the hub makes what it made on the `v1alpha1` view: for every request
the operator may find stored (`request_hub_cases.py`), the check (the Validation status'
message, cluster-wide or namespace-restricted, new or admitted), whether it profiles by its
profilingConfig, and on that path what it reads (output key, the user's hardware, GPU
discovery, the ConfigMap it checks) and builds (profile config, its YAML, the AIC event, and
each child, ServiceAccount, Role, RoleBinding and Job, by kind, write mode, immutable fields
and a digest of its JSON as sent) with and without discovered hardware, under a profiling
ClusterRole and without one.

`golden/request-hub-baseline.json` was recorded by the view's path (the request's `v1alpha1`
view, `hub.view`, and the builders on the `v1alpha1` model), before the controller moved to
the hub; it is never recorded again by the hub's path.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from request_hub_cases import BASELINE, fixture_cases, manifest_cases, outcome

Json = dict[str, Any]
_BASELINE: Json = json.loads(BASELINE.read_text(encoding="utf-8"))
_CASES = {**dict(manifest_cases()), **dict(fixture_cases()), **_BASELINE["inputs"]}


def test_the_baseline_covers_every_case_and_both_paths() -> None:
    assert set(_CASES) == set(_BASELINE["outcomes"])
    outcomes = _BASELINE["outcomes"].values()
    legacy = [o for o in outcomes if o["legacy"]]
    assert len(legacy) >= 60 and len(outcomes) - len(legacy) >= 60
    assert sum(1 for o in legacy if o["check"]["restricted=False,new=False"]["message"]) >= 10
    assert sum(1 for o in legacy if "error" in o["built"]["none"]) >= 1
    assert sum(1 for o in legacy if o["built"]["none"].get("aic")) >= 1


@pytest.mark.parametrize("name", sorted(_CASES))
def test_the_hub_path_makes_what_the_view_path_made(name: str) -> None:
    assert outcome(_CASES[name]) == _BASELINE["outcomes"][name]
