"""The DynamoGraphDeploymentRequest examples in deploy/examples: valid requests, accepted by
the API server with their ConfigMaps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from api.convert import load_resource
from api.validation import validate
from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import Kubectl
from hack.our_crds import write_our_crds

pytestmark = pytest.mark.kubectl

Json = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "deploy" / "examples"
FILES = ["dgdr-auto-apply.yaml", "dgdr-spec-only.yaml", "dgdr-config-map-ref.yaml",
         "dgdr-mocker.yaml"]


def requests(name: str) -> list[Json]:
    return [d for d in yaml.safe_load_all((EXAMPLES / name).read_text())
            if d and d["kind"] == "DynamoGraphDeploymentRequest"]


@pytest.mark.parametrize("name", FILES)
def test_each_example_is_a_valid_request(name: str) -> None:
    [request] = requests(name)
    assert validate(load_resource(request)) == []


async def test_examples_are_accepted(cluster: LocalCluster, kubectl: Kubectl,
                                     tmp_path: Path) -> None:
    await kubectl("apply", "-f", str(write_our_crds(tmp_path / "our-crds")))
    await kubectl("wait", "--for=condition=Established", "crd", "--all", "--timeout=30s")
    for name in FILES:
        await kubectl("apply", "-f", str(EXAMPLES / name))
    names = (await kubectl("get", "dynamographdeploymentrequests.v1alpha1.nvidia.com", "-o",
                                 "name")).split()
    assert len(names) == len(FILES)
