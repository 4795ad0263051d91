"""The converter: camelCase names, omission of absent fields, exactness, strictness, errors."""

from __future__ import annotations

import copy

import pytest

from api.convert import ConversionError, dump, load, load_resource
from api.errors import FieldError
from api.v1alpha1 import (
    PVC,
    DynamoComponentDeploymentSharedSpec,
    DynamoGraphDeployment,
    DynamoGraphDeploymentScalingAdapter,
    DynamoGraphDeploymentSpec,
    DynamoModel,
    ExtraPodSpec,
    MultinodeSpec,
    RestartStatus,
)


def test_camel_case_and_irregular_names() -> None:
    status = RestartStatus(observed_id="r1", in_progress=["a"])
    assert dump(status) == {"observedID": "r1", "inProgress": ["a"]}
    assert dump(PVC(name="p", storage_class="fast")) == {"name": "p", "storageClass": "fast"}


def test_none_is_absent_but_empty_false_and_zero_are_kept() -> None:
    service = DynamoComponentDeploymentSharedSpec(
        replicas=0, labels={}, envs=[], global_dynamo_namespace=False
    )
    assert dump(service) == {
        "replicas": 0,
        "labels": {},
        "envs": [],
        "globalDynamoNamespace": False,
    }
    assert dump(DynamoComponentDeploymentSharedSpec()) == {}


def test_top_level_fields_are_always_written() -> None:
    dgd = DynamoGraphDeployment(metadata={"name": "g"})
    assert dump(dgd) == {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g"},
        "spec": {},
    }


def test_extra_pod_spec_keeps_every_pod_spec_field() -> None:
    data = {
        "mainContainer": {"image": "img", "someFutureField": {"x": [1, None]}},
        "volumes": [{"name": "v", "emptyDir": {}}],
        "runtimeClassName": "nvidia",
        "aBrandNewPodField": True,
    }
    extra = load(ExtraPodSpec, data)
    assert extra.main_container == data["mainContainer"]
    assert extra.pod_spec == {k: v for k, v in data.items() if k != "mainContainer"}
    assert dump(extra) == data


def test_unknown_fields_outside_free_form_places_are_dropped() -> None:
    # As the API server prunes them, the model does not keep them.
    assert dump(load(MultinodeSpec, {"nodeCount": 2, "typo": 1})) == {"nodeCount": 2}


def test_load_and_dump_copy_the_json() -> None:
    data = {"mainContainer": {"args": ["a"]}, "volumes": [{"name": "v"}]}
    original = copy.deepcopy(data)
    extra = load(ExtraPodSpec, data)
    assert extra.main_container is not None
    extra.main_container["args"].append("b")
    extra.pod_spec["volumes"].clear()
    assert data == original
    out = dump(extra)
    out["mainContainer"]["args"].clear()
    assert extra.main_container["args"] == ["a", "b"]


def test_quantities_keep_their_json_type() -> None:
    assert dump(load(PVC, {"name": "p", "size": 10})) == {"name": "p", "size": 10}
    assert dump(load(PVC, {"name": "p", "size": "10Gi"})) == {"name": "p", "size": "10Gi"}


@pytest.mark.parametrize(
    ("data", "path", "message"),
    [
        ({"replicas": "3"}, "replicas", "expected int, got str"),
        ({"replicas": True}, "replicas", "expected int, got bool"),
        ({"globalDynamoNamespace": "true"}, "globalDynamoNamespace", "expected bool, got str"),
        ({"serviceName": 5}, "serviceName", "expected str, got int"),
        ({"envs": {"name": "A"}}, "envs", "expected list, got dict"),
        ({"envs": ["A=1"]}, "envs[0]", "expected dict, got str"),
        ({"labels": {"a": 1}}, "labels.a", "expected str, got int"),
        ({"volumeMounts": [{"mountPoint": "/m"}]}, "volumeMounts[0].name", "required value"),
        ({"sharedMemory": {"size": 1.5}}, "sharedMemory.size", "expected int or str, got float"),
        ({"multinode": []}, "multinode", "expected object, got list"),
    ],
)
def test_type_errors_name_the_json_path(data: dict[str, object], path: str, message: str) -> None:
    with pytest.raises(ConversionError) as info:
        load(DynamoComponentDeploymentSharedSpec, data)
    assert info.value.errors == [FieldError(path, message)]


def test_every_problem_is_reported_with_full_paths() -> None:
    data = {
        "spec": {
            "services": {
                "Frontend": {"replicas": "1"},
                "Worker": {"multinode": {"nodeCount": "2"}},
            },
            "pvcs": [{"create": True}],
        }
    }
    with pytest.raises(ConversionError) as info:
        load(DynamoGraphDeployment, data)
    assert sorted(str(e) for e in info.value.errors) == [
        "spec.pvcs[0].name: required value",
        "spec.services.Frontend.replicas: expected int, got str",
        "spec.services.Worker.multinode.nodeCount: expected int, got str",
    ]
    assert "invalid DynamoGraphDeployment" in str(info.value)


def test_required_fields_of_the_model() -> None:
    with pytest.raises(ConversionError) as info:
        load(DynamoGraphDeploymentScalingAdapter, {"metadata": {"name": "a"}, "spec": {}})
    assert sorted(str(e) for e in info.value.errors) == [
        "spec.dgdRef: required value",
        "spec.replicas: required value",
    ]


def test_load_resource_picks_the_class_by_kind() -> None:
    obj = load_resource(
        {"kind": "DynamoModel", "metadata": {}, "spec": {"modelName": "m", "baseModelName": "b"}}
    )
    assert isinstance(obj, DynamoModel)
    with pytest.raises(ConversionError, match="unsupported kind 'Pod'"):
        load_resource({"kind": "Pod"})


def test_dump_refuses_plain_json() -> None:
    with pytest.raises(TypeError):
        dump({"a": 1})


def test_models_compare_by_value() -> None:
    spec = DynamoGraphDeploymentSpec(services={"a": DynamoComponentDeploymentSharedSpec()})
    assert load(DynamoGraphDeploymentSpec, dump(spec)) == spec
