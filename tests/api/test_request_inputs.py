"""`api.conversion.request_inputs`: what a hub request says that only `v1alpha1` can (its
profilingConfig, enableGpuDiscovery, deploymentOverrides, the older shape's fields) is exactly
what its `v1alpha1` view holds, for requests written in either version, after a change made in
`v1beta1`, and for every request manifest and example of the repository."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.conversion import HUB, SPOKE, convert
from api.conversion.request_inputs import RequestInputs, request_inputs
from api.convert import dump, load
from api.errors import ConversionError
from api.v1alpha1 import DynamoGraphDeploymentRequestSpec
from api.validation.request import profiles_by_config
from tests.api.model_strategies import objects

Json = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
KIND = "DynamoGraphDeploymentRequest"
SETTINGS = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
#: The v1beta1 fields a v1alpha1 field of the inputs is projected from.
PROJECTED = ("image", "features", "backend", "overrides", "autoApply", "model")


def of_view(stored: Json) -> RequestInputs | ConversionError:
    """The inputs as the request's `v1alpha1` view holds them (the error its loading gives)."""
    view = convert(stored, SPOKE)
    try:
        spec = load(DynamoGraphDeploymentRequestSpec, view.get("spec") or {})
    except ConversionError as error:
        return error
    return RequestInputs(**{f.name: getattr(spec, f.name)
                            for f in attrs.fields(RequestInputs)})


def check(stored: Json) -> None:
    expected = of_view(stored)
    if isinstance(expected, ConversionError):
        with pytest.raises(ConversionError):
            request_inputs(stored)
        return
    assert request_inputs(stored) == expected


def stored(obj: Json) -> Json:
    hub = convert(obj, HUB)
    hub.pop("status", None)
    hub["metadata"] = {**(hub.get("metadata") or {}), "name": "r", "namespace": "ns"}
    return hub


def drawn(version: str) -> st.SearchStrategy[Json]:
    return objects(version, KIND).map(dump)


@SETTINGS
@given(obj=drawn("v1alpha1"))
def test_a_request_written_in_v1alpha1(obj: Json) -> None:
    check(stored(obj))


@SETTINGS
@given(obj=drawn("v1beta1"))
def test_a_request_written_in_v1beta1(obj: Json) -> None:
    hub = stored(obj)
    check(hub)
    inputs = request_inputs(hub)
    # No payload: nothing but the image (and the mocker switch) of a profilingConfig.
    assert inputs.enable_gpu_discovery is None and inputs.model_name is None
    assert inputs.profiling_config is not None
    assert not profiles_by_config(inputs.profiling_config)


@SETTINGS
@given(alpha=drawn("v1alpha1"), beta=drawn("v1beta1"),
       taken=st.sets(st.sampled_from(PROJECTED)))
def test_a_request_edited_in_v1beta1(alpha: Json, beta: Json, taken: set[str]) -> None:
    """Written in v1alpha1, then v1beta1 fields changed with the payload kept: a saved group
    is given back only while it still converts to the live fields."""
    hub = stored(alpha)
    for key in taken:
        if key in (beta.get("spec") or {}):
            hub["spec"][key] = beta["spec"][key]
        else:
            hub["spec"].pop(key, None)
    check(hub)


def manifests() -> list[tuple[str, Json]]:
    files = sorted([*(ROOT / "deploy" / "examples").rglob("*.yaml"),
                    *(ROOT / "tests" / "api" / "manifests").rglob("*.yaml")])
    out = []
    for path in files:
        for index, doc in enumerate(yaml.safe_load_all(path.read_text(encoding="utf-8"))):
            if isinstance(doc, dict) and doc.get("kind") == KIND:
                name = f"{path.relative_to(ROOT)}#{index}"
                out.append((name, doc))
                other = SPOKE if doc["apiVersion"] == HUB else HUB
                out.append((f"{name}@other", convert(doc, other)))
    return out


@pytest.mark.parametrize(("name", "obj"), manifests(), ids=[n for n, _ in manifests()])
def test_every_request_manifest(name: str, obj: Json) -> None:
    check(stored(obj))


def test_the_example_given_in_v1beta1_keeps_its_profiling_config() -> None:
    [doc] = [d for d in yaml.safe_load_all((ROOT / "deploy" / "examples" / "v1beta1" /
                                            "dgdr-config-map-ref.yaml").read_text())
             if d and d["kind"] == KIND]
    inputs = request_inputs(stored(doc))
    assert inputs.profiling_config is not None and inputs.deployment_overrides is not None
    assert inputs.profiling_config.config_map_ref is not None
    assert inputs.profiling_config.config_map_ref.name == "qwen-base-graph"
    assert inputs.deployment_overrides.workers_image == \
        "nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.8.0"
    assert inputs.backend == "sglang"


def test_an_auto_backend_reads_as_none_and_other_kinds_are_refused() -> None:
    hub = {"apiVersion": HUB, "kind": KIND, "metadata": {"name": "r"},
           "spec": {"model": "m", "backend": "auto"}}
    assert request_inputs(hub).backend is None
    with pytest.raises(ValueError, match=r"from a request in nvidia\.com/v1beta1"):
        request_inputs({**hub, "apiVersion": SPOKE})
    with pytest.raises(ValueError, match="DynamoGraphDeployment"):
        request_inputs({**hub, "kind": "DynamoGraphDeployment"})
