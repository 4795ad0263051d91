"""The DynamoModel examples in deploy/examples: a graph whose worker names its base model, and
a base and a LoRA model of it; valid, and accepted by the API server."""

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
FILES = ["vllm-lora.yaml", "dynamomodel-base.yaml", "dynamomodel-lora.yaml"]


def document(name: str) -> Json:
    [doc] = [d for d in yaml.safe_load_all((EXAMPLES / name).read_text()) if d]
    return dict(doc)


@pytest.mark.parametrize("name", FILES)
def test_each_example_is_valid(name: str) -> None:
    assert validate(load_resource(document(name))) == []


def test_the_models_name_the_model_the_graph_serves() -> None:
    graph = document("vllm-lora.yaml")
    served = {s["modelRef"]["name"] for s in graph["spec"]["services"].values()
              if s.get("modelRef")}
    for name in FILES[1:]:
        assert document(name)["spec"]["baseModelName"] in served
    assert document("dynamomodel-lora.yaml")["spec"]["source"]["uri"].startswith("s3://")


async def test_examples_are_accepted(cluster: LocalCluster, kubectl: Kubectl,
                                     tmp_path: Path) -> None:
    await kubectl("apply", "-f", str(write_our_crds(tmp_path / "our-crds")))
    await kubectl("wait", "--for=condition=Established", "crd", "--all", "--timeout=30s")
    for name in FILES:
        await kubectl("apply", "-f", str(EXAMPLES / name))
    listed = await kubectl("get", "dynamomodels.v1alpha1.nvidia.com", "-o", "name")
    assert len(listed.split()) == 2
