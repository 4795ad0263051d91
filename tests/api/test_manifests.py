"""The manifest corpus: every object loads, dumps back to the same JSON, and validates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from api.convert import dump, load, load_resource
from api.v1alpha1 import KINDS, DynamoGraphDeploymentRequest
from api.validation import validate, warnings

MANIFESTS = Path(__file__).parent / "manifests"


def _documents(pattern: str) -> list[Any]:
    params = []
    for path in sorted(MANIFESTS.glob(pattern)):
        for i, doc in enumerate(yaml.safe_load_all(path.read_text())):
            params.append(pytest.param(doc, id=f"{path.stem}-{i}"))
    return params


CORPUS = _documents("*.yaml")
LEGACY = _documents("legacy/*.yaml")


def test_corpus_covers_every_kind() -> None:
    kinds = {p.values[0]["kind"] for p in CORPUS}
    assert kinds == set(KINDS)


@pytest.mark.parametrize("doc", CORPUS + LEGACY)
def test_round_trip_is_exact(doc: dict[str, Any]) -> None:
    obj = load_resource(doc)
    out = dump(obj)
    assert out == doc
    # Key order and JSON types survive too (no int/float/bool confusion).
    assert json.dumps(out, sort_keys=True) == json.dumps(doc, sort_keys=True)
    assert load(type(obj), out) == obj


@pytest.mark.parametrize("doc", CORPUS)
def test_corpus_is_valid(doc: dict[str, Any]) -> None:
    assert validate(load_resource(doc)) == []


@pytest.mark.parametrize("doc", CORPUS)
def test_updating_to_itself_is_valid(doc: dict[str, Any]) -> None:
    obj = load_resource(doc)
    assert validate(obj, load_resource(doc)) == []


def test_deprecated_fields_are_kept_and_warned_about() -> None:
    doc = next(p.values[0] for p in CORPUS if p.id == "dgd-deprecated-fields-0")
    obj = load_resource(doc)
    assert obj.spec.services["decode"].autoscaling.max_replicas == 4
    assert sorted(w.path for w in warnings(obj)) == [
        "spec.services.Frontend.dynamoNamespace",
        "spec.services.decode.autoscaling",
        "spec.services.decode.dynamoNamespace",
    ]


def test_older_request_shape_loads_but_is_rejected_with_migration_messages() -> None:
    (param,) = LEGACY
    dgdr = load(DynamoGraphDeploymentRequest, param.values[0])
    assert dgdr.spec.model_name == "meta/llama3-70b"
    assert dgdr.spec.sla is not None and dgdr.spec.sla.ttft == 300
    errors = {e.path: e.message for e in validate(dgdr)}
    assert errors["spec.modelName"] == "was replaced by spec.model; move the value there"
    assert "spec.profilingConfig.config.sla" in errors["spec.sla"]
    assert "spec.profilingConfig.config.hardware" in errors["spec.gpu"]
    assert "use_ai_configurator" in errors["spec.online"]
    assert errors["spec.model"] == "required"
    assert errors["spec.profilingConfig.profilerImage"] == "required"
