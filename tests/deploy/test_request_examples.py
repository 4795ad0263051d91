"""The DynamoGraphDeploymentRequest examples in deploy/examples: valid requests, accepted by
the API server with their ConfigMaps; and the intent-based v1beta1 ones, as the upstream
reference writes them (no v1alpha1 original), valid in both versions and accepted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from api.conversion import convert
from api.convert import load_resource
from api.validation import validate
from api.validation.request_versions import check_request
from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import Kubectl
from hack.our_crds import write_our_crds

pytestmark = pytest.mark.kubectl

Json = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "deploy" / "examples"
FILES = ["dgdr-auto-apply.yaml", "dgdr-spec-only.yaml", "dgdr-config-map-ref.yaml",
         "dgdr-mocker.yaml"]
INTENT = sorted((EXAMPLES / "v1beta1").glob("dgdr-intent-*.yaml"))


def requests(path: Path) -> list[Json]:
    return [d for d in yaml.safe_load_all(path.read_text())
            if d and d["kind"] == "DynamoGraphDeploymentRequest"]


@pytest.mark.parametrize("name", FILES)
def test_each_example_is_a_valid_request(name: str) -> None:
    [request] = requests(EXAMPLES / name)
    assert validate(load_resource(request)) == []
    assert check_request(request).errors == []


def test_the_intent_examples_include_the_references() -> None:
    names = {p.name for p in INTENT}
    assert {"dgdr-intent-qwen3-sglang.yaml", "dgdr-intent-minimal.yaml"} <= names


@pytest.mark.parametrize("path", INTENT, ids=lambda p: p.name)
def test_each_intent_example_is_valid_in_both_versions(path: Path) -> None:
    [request] = requests(path)
    assert request["apiVersion"] == "nvidia.com/v1beta1"
    assert "profilingConfig" not in request["spec"]
    checked = check_request(request)
    assert (checked.errors, checked.warnings) == ([], [])
    assert check_request(convert(request, "v1alpha1")).errors == []


async def test_examples_are_accepted(cluster: LocalCluster, kubectl: Kubectl,
                                     tmp_path: Path) -> None:
    await kubectl("apply", "-f", str(write_our_crds(tmp_path / "our-crds")))
    await kubectl("wait", "--for=condition=Established", "crd", "--all", "--timeout=30s")
    for name in FILES:
        await kubectl("apply", "-f", str(EXAMPLES / name))
    for path in INTENT:
        await kubectl("apply", "-f", str(path))
    names = (await kubectl("get", "dynamographdeploymentrequests.v1beta1.nvidia.com", "-o",
                                 "name")).split()
    assert len(names) == len(FILES) + len(INTENT)
