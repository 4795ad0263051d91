"""Focused tests of v1alpha1 <-> v1beta1 conversion: one per conversion decision (native
mapping, saved in the payload, restored from it, derived or lossy), the named-list rules, the
payload annotations, and the `convert` entry point."""

from __future__ import annotations

import json
from typing import Any

import pytest

from api.conversion import (
    ConversionFailure,
    convert,
    graph_deployment_from_hub,
    graph_deployment_to_hub,
    private_annotations,
    scaling_adapter_to_hub,
)
from api.kube import copy_json

Json = dict[str, Any]
DGD_SPEC, DGD_STATUS = private_annotations("DynamoGraphDeployment")
HUB_MAIN = {"name": "main", "image": "runtime:1.4.0"}


def alpha_graph(services: Json, **spec: Any) -> Json:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": {"services": services, **spec},
    }


def beta_graph(components: list[Json], **spec: Any) -> Json:
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": {"components": components, **spec},
    }


def payload(obj: Json, name: str = DGD_SPEC) -> Json:
    raw = obj["metadata"].get("annotations", {}).get(name)
    return json.loads(raw) if raw is not None else {}


def main_container(component: Json) -> Json:
    containers = component["podTemplate"]["spec"]["containers"]
    return next(c for c in containers if c["name"] == "main")


# --- native mappings: no payload at all ----------------------------------------------------


def test_fields_both_versions_hold_convert_natively_without_a_payload() -> None:
    spoke = alpha_graph(
        {"Frontend": {"componentType": "frontend", "replicas": 2}},
        backendFramework="vllm",
        envs=[{"name": "A", "value": "1"}],
        restart={"id": "r1", "strategy": {"type": "Parallel"}},
        annotations={"team": "x"},
        labels={"tier": "y"},
    )
    hub = convert(spoke, "v1beta1")
    assert hub["apiVersion"] == "nvidia.com/v1beta1"
    assert hub["spec"] == {
        "backendFramework": "vllm",
        "restart": {"id": "r1", "strategy": {"type": "Parallel"}},
        "annotations": {"team": "x"},
        "labels": {"tier": "y"},
        "env": [{"name": "A", "value": "1"}],
        "components": [{"name": "Frontend", "replicas": 2, "type": "frontend"}],
    }
    assert "annotations" not in hub["metadata"]
    assert convert(hub, "v1alpha1") == spoke


def test_scaling_adapter_reference_renames_service_name_to_component_name() -> None:
    spoke = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeploymentScalingAdapter",
        "metadata": {"name": "g-worker"},
        "spec": {"replicas": 3, "dgdRef": {"name": "g", "serviceName": "Worker"}},
        "status": {"replicas": 3, "selector": "a=b"},
    }
    hub = scaling_adapter_to_hub(spoke)
    assert hub["spec"]["dgdRef"] == {"name": "g", "componentName": "Worker"}
    assert hub["status"] == spoke["status"]
    assert "annotations" not in hub["metadata"]
    assert convert(hub, "v1alpha1") == spoke


def test_pod_fields_compose_the_pod_template_and_come_apart_again() -> None:
    service = {
        "componentType": "worker",
        "envs": [{"name": "A", "value": "1"}],
        "envFromSecret": "hf-token",
        "livenessProbe": {"httpGet": {"path": "/live", "port": "system"}},
        "resources": {"requests": {"cpu": "2"}, "limits": {"gpu": "1", "memory": "8Gi"}},
        "volumeMounts": [{"name": "models", "mountPoint": "/models"}],
        "extraPodSpec": {
            "nodeSelector": {"gpu": "h100"},
            "mainContainer": {"image": "runtime:1.4.0", "args": ["--model", "m"]},
        },
        "extraPodMetadata": {"labels": {"l": "1"}},
    }
    hub = convert(alpha_graph({"Worker": service}), "v1beta1")
    component = hub["spec"]["components"][0]
    assert component["podTemplate"] == {
        "metadata": {"labels": {"l": "1"}},
        "spec": {
            "nodeSelector": {"gpu": "h100"},
            "volumes": [{"name": "models", "persistentVolumeClaim": {"claimName": "models"}}],
            "containers": [
                {
                    "name": "main",
                    "image": "runtime:1.4.0",
                    "args": ["--model", "m"],
                    "env": [{"name": "A", "value": "1"}],
                    "envFrom": [{"secretRef": {"name": "hf-token"}}],
                    "livenessProbe": {"httpGet": {"path": "/live", "port": "system"}},
                    "resources": {
                        "requests": {"cpu": "2"},
                        "limits": {"memory": "8Gi", "nvidia.com/gpu": "1"},
                    },
                    "volumeMounts": [{"name": "models", "mountPath": "/models"}],
                }
            ],
        },
    }
    assert DGD_SPEC not in hub["metadata"].get("annotations", {})  # it comes apart exactly
    assert convert(hub, "v1alpha1")["spec"]["services"]["Worker"] == service


def test_status_services_become_components_with_component_names() -> None:
    spoke = alpha_graph({})
    spoke["status"] = {
        "state": "successful",
        "observedGeneration": 4,
        "services": {
            "Worker": {
                "componentKind": "Deployment",
                "componentName": "g-worker-b",
                "componentNames": ["g-worker-a", "g-worker-b"],
                "replicas": 2,
            }
        },
        "restart": {"observedID": "r", "phase": "Superseded"},
    }
    hub = convert(spoke, "v1beta1")
    assert hub["status"]["components"] == {
        "Worker": {
            "componentKind": "Deployment",
            "componentNames": ["g-worker-a", "g-worker-b"],
            "replicas": 2,
        }
    }
    assert DGD_STATUS not in hub["metadata"].get("annotations", {})
    assert convert(hub, "v1alpha1") == spoke


# --- saved in the payload, and restored ----------------------------------------------------


def test_spoke_only_fields_are_saved_on_the_hub_and_restored() -> None:
    pvcs = [{"name": "models", "create": True, "size": "100Gi", "storageClass": "rwx"}]
    ingress = {"enabled": True, "host": "g"}
    spoke = alpha_graph(
        {"Frontend": {"componentType": "frontend", "ingress": ingress, "dynamoNamespace": "d"}},
        pvcs=pvcs,
    )
    hub = convert(spoke, "v1beta1")
    assert "pvcs" not in hub["spec"]
    assert "ingress" not in hub["spec"]["components"][0]
    assert payload(hub) == {
        "pvcs": pvcs,
        "services": {"Frontend": {"ingress": ingress, "dynamoNamespace": "d"}},
    }
    assert convert(hub, "v1alpha1") == spoke


def test_hub_only_fields_are_saved_on_the_spoke_and_restored_by_component_name() -> None:
    components = [
        {"name": "a", "type": "worker", "minAvailable": 1, "runtimeVersionOverride": "1.4.0"},
        {"name": "b", "type": "frontend", "dynamoSidecar": "runtime"},
    ]
    hub = beta_graph(components, priorityClassName="high")
    spoke = convert(hub, "v1alpha1")
    assert spoke["spec"]["services"] == {
        "a": {"componentType": "worker"},
        "b": {"componentType": "frontend"},
    }
    assert payload(spoke) == {
        "priorityClassName": "high",
        "components": [
            {"name": "a", "minAvailable": 1, "runtimeVersionOverride": "1.4.0"},
            {"name": "b", "dynamoSidecar": "runtime"},
        ],
    }
    assert convert(spoke, "v1beta1") == hub


def test_experimental_keeps_its_hub_only_features_leaf_by_leaf() -> None:
    gms = {"mode": "IntraPod"}
    hub = beta_graph(
        [
            {
                "name": "w",
                "experimental": {"gpuMemoryService": gms, "grove": {"forceScalingGroup": True}},
            }
        ]
    )
    spoke = convert(hub, "v1alpha1")
    # v1alpha1 switches GMS with `enabled` and spells the modes intraPod/interPod.
    assert spoke["spec"]["services"]["w"] == {
        "gpuMemoryService": {"enabled": True, "mode": "intraPod"}}
    assert payload(spoke) == {
        "components": [{"name": "w", "experimental": {"grove": {"forceScalingGroup": True}}}]
    }
    # The v1alpha1 side changes the GMS mode: the change wins, grove is still restored.
    spoke["spec"]["services"]["w"]["gpuMemoryService"] = {"enabled": True, "mode": "interPod"}
    again = convert(spoke, "v1beta1")
    assert again["spec"]["components"][0]["experimental"] == {
        "gpuMemoryService": {"mode": "InterPod"},
        "grove": {"forceScalingGroup": True},
    }


@pytest.mark.parametrize("key", ["gpuMemoryService", "failover"])
def test_a_disabled_preview_feature_is_absent_from_the_hub_and_comes_back(key: str) -> None:
    disabled = {"enabled": False, "mode": "interPod"}
    spoke = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
             "metadata": {"name": "g", "namespace": "team"},
             "spec": {"services": {"w": {"componentType": "worker", key: disabled}}}}
    hub = convert(spoke, "v1beta1")
    assert "experimental" not in hub["spec"]["components"][0]
    assert convert(hub, "v1alpha1") == spoke
    # Switched on in v1beta1 meanwhile: the hub wins over the saved switch.
    hub["spec"]["components"][0]["experimental"] = {key: {"mode": "IntraPod"}}
    assert convert(hub, "v1alpha1")["spec"]["services"]["w"][key] == {
        "enabled": True, "mode": "intraPod"}


def test_an_enabled_preview_feature_is_present_without_its_switch() -> None:
    spoke = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
             "metadata": {"name": "g", "namespace": "team"},
             "spec": {"services": {"w": {
                 "componentType": "worker",
                 "gpuMemoryService": {"enabled": True, "mode": "intraPod",
                                      "deviceClassName": "gpu.example.com"},
                 "failover": {"enabled": True, "numShadows": 1}}}}}
    hub = convert(spoke, "v1beta1")
    assert hub["spec"]["components"][0]["experimental"] == {
        "gpuMemoryService": {"mode": "IntraPod", "deviceClassName": "gpu.example.com"},
        "failover": {"numShadows": 1}}
    assert "annotations" not in hub["metadata"]
    assert convert(hub, "v1alpha1") == spoke


def test_the_hub_order_of_components_is_kept() -> None:
    hub = beta_graph([{"name": "z"}, {"name": "a"}, {"name": "m"}])
    spoke = convert(hub, "v1alpha1")
    assert payload(spoke) == {"components": [{"name": "z"}, {"name": "a"}, {"name": "m"}]}
    assert [c["name"] for c in convert(spoke, "v1beta1")["spec"]["components"]] == ["z", "a", "m"]
    # Without an order saved, components come out sorted by name.
    sorted_hub = beta_graph([{"name": "a"}, {"name": "m"}])
    assert "annotations" not in convert(sorted_hub, "v1alpha1")["metadata"]
    unsorted = alpha_graph({"m": {}, "a": {}})
    assert [c["name"] for c in convert(unsorted, "v1beta1")["spec"]["components"]] == ["a", "m"]


def test_saved_entries_match_by_key_and_stale_ones_are_ignored() -> None:
    hub = beta_graph([{"name": "a", "minAvailable": 2}, {"name": "b", "minAvailable": 3}])
    spoke = convert(hub, "v1alpha1")
    services = spoke["spec"]["services"]
    del services["a"]  # gone: its saved entry is ignored
    services["c"] = {"replicas": 1}  # new: gets nothing saved
    again = convert(spoke, "v1beta1")
    assert again["spec"]["components"] == [
        {"name": "b", "minAvailable": 3},
        {"name": "c", "replicas": 1},
    ]


# --- derived and lossy mappings ----------------------------------------------------------


def test_worker_with_a_sub_component_type_becomes_a_first_class_type() -> None:
    spoke = alpha_graph({"P": {"componentType": "worker", "subComponentType": "prefill"}})
    hub = convert(spoke, "v1beta1")
    assert hub["spec"]["components"][0]["type"] == "prefill"
    assert payload(hub) == {
        "services": {"P": {"componentType": "worker", "subComponentType": "prefill"}}
    }
    assert convert(hub, "v1alpha1") == spoke  # restored: the live type still matches


def test_a_changed_type_wins_over_the_saved_pair_and_the_sub_type_is_lost() -> None:
    spoke = alpha_graph({"P": {"componentType": "worker", "subComponentType": "prefill"}})
    hub = convert(spoke, "v1beta1")
    hub["spec"]["components"][0]["type"] = "decode"
    assert convert(hub, "v1alpha1")["spec"]["services"]["P"] == {"componentType": "decode"}


def test_component_types_v1beta1_does_not_know_are_left_out_and_saved() -> None:
    spoke = alpha_graph({"M": {"componentType": "main", "replicas": 1}})
    hub = convert(spoke, "v1beta1")
    assert hub["spec"]["components"] == [{"name": "M", "replicas": 1}]
    assert payload(hub) == {"services": {"M": {"componentType": "main"}}}
    assert convert(hub, "v1alpha1") == spoke


@pytest.mark.parametrize(
    ("spoke", "hub"),
    [
        ({"scalingAdapter": {"enabled": True}}, {"scalingAdapter": {}}),
        ({"sharedMemory": {"disabled": True}}, {"sharedMemorySize": "0"}),
        ({"sharedMemory": {"size": "16Gi"}}, {"sharedMemorySize": "16Gi"}),
        (
            {"volumeMounts": [{"name": "cc", "mountPoint": "/c", "useAsCompilationCache": True}]},
            {"compilationCache": {"pvcName": "cc", "mountPath": "/c"}},
        ),
        ({"checkpoint": {"enabled": True}}, {"experimental": {"checkpoint": {"enabled": True}}}),
    ],
)
def test_derived_component_fields(spoke: Json, hub: Json) -> None:
    converted = convert(alpha_graph({"w": spoke}), "v1beta1")
    assert converted["spec"]["components"] == [{"name": "w", **hub}]
    assert "annotations" not in converted["metadata"]
    assert convert(beta_graph([{"name": "w", **hub}]), "v1alpha1")["spec"]["services"] == {
        "w": spoke
    }


def test_a_disabled_scaling_adapter_has_no_v1beta1_form_and_is_saved() -> None:
    spoke = alpha_graph({"w": {"scalingAdapter": {"enabled": False}}})
    hub = convert(spoke, "v1beta1")
    assert hub["spec"]["components"] == [{"name": "w"}]
    assert payload(hub) == {"services": {"w": {"scalingAdapter": {"enabled": False}}}}
    assert convert(hub, "v1alpha1") == spoke
    # Enabled on the hub meanwhile: the live presence wins.
    hub["spec"]["components"][0]["scalingAdapter"] = {}
    assert convert(hub, "v1alpha1")["spec"]["services"]["w"] == {
        "scalingAdapter": {"enabled": True}
    }


def test_a_pod_template_change_wins_over_the_saved_pod_fields() -> None:
    spoke = alpha_graph(
        {"w": {"labels": {"a": "1"}, "extraPodSpec": {"mainContainer": {"image": "x:1"}}}}
    )
    hub = convert(spoke, "v1beta1")
    assert payload(hub)["services"]["w"]["labels"] == {"a": "1"}  # saved: labels merge
    main_container(hub["spec"]["components"][0])["image"] = "x:2"
    again = convert(hub, "v1alpha1")["spec"]["services"]["w"]
    assert again == {
        "extraPodMetadata": {"labels": {"a": "1"}},
        "extraPodSpec": {"mainContainer": {"image": "x:2"}},
    }


def request(version: str, spec: Json, status: Json | None = None) -> Json:
    obj: Json = {
        "apiVersion": f"nvidia.com/{version}",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": "r"},
        "spec": spec,
    }
    if status is not None:
        obj["status"] = status
    return obj


def test_request_by_intent_reads_as_v1alpha1_with_the_required_profiling_config() -> None:
    """v1alpha1 requires profilingConfig.profilerImage: an intent request without an image
    gets an empty one (an image becomes it), and an empty one is no image going back."""
    spoke = convert(request("v1beta1", {"model": "m", "backend": "vllm"}), "v1alpha1")
    assert spoke["spec"]["profilingConfig"] == {"profilerImage": ""}
    with_image = convert(request("v1beta1", {"model": "m", "image": "p:1"}), "v1alpha1")
    assert with_image["spec"]["profilingConfig"] == {"profilerImage": "p:1"}
    edited = convert(request("v1alpha1", {"model": "m", "profilingConfig": {"profilerImage": ""}}),
                     "v1beta1")
    assert "image" not in edited["spec"]


def test_request_auto_apply_keeps_its_meaning_across_the_default_change() -> None:
    hub = convert(request("v1alpha1", {"model": "m"}), "v1beta1")
    assert hub["spec"] == {"model": "m", "autoApply": False}
    spoke = convert(request("v1beta1", {"model": "m"}), "v1alpha1")
    assert spoke["spec"] == {
        "model": "m", "autoApply": True, "profilingConfig": {"profilerImage": ""}}
    assert convert(hub, "v1alpha1") == request("v1alpha1", {"model": "m"})
    assert convert(spoke, "v1beta1") == request("v1beta1", {"model": "m"})


def test_request_profiling_image_mocker_and_overrides_map_to_the_intent() -> None:
    spoke = request(
        "v1alpha1",
        {
            "model": "m",
            "backend": "vllm",
            "autoApply": True,
            "useMocker": True,
            "profilingConfig": {"profilerImage": "planner:1.4.0"},
            "deploymentOverrides": {"name": "g", "labels": {"t": "x"}},
        },
    )
    hub = convert(spoke, "v1beta1")
    assert hub["spec"] == {
        "model": "m",
        "backend": "vllm",
        "autoApply": True,
        "image": "planner:1.4.0",
        "features": {"mocker": {"enabled": True}},
        "overrides": {
            "dgd": {
                "apiVersion": "nvidia.com/v1beta1",
                "kind": "DynamoGraphDeployment",
                "metadata": {"name": "g", "labels": {"t": "x"}},
            }
        },
    }
    assert "annotations" not in hub["metadata"]
    assert convert(hub, "v1alpha1") == spoke


def test_request_auto_backend_and_intent_fields_are_saved_on_v1alpha1() -> None:
    hub = request(
        "v1beta1",
        {"model": "m", "backend": "auto", "sla": {"ttft": 200.5}, "searchStrategy": "thorough"},
    )
    spoke = convert(hub, "v1alpha1")
    assert spoke["spec"] == {
        "model": "m", "autoApply": True, "profilingConfig": {"profilerImage": ""}}
    assert payload(spoke, "nvidia.com/dgdr-spec") == {
        "autoApply": None,
        "backend": "auto",
        "sla": {"ttft": 200.5},
        "searchStrategy": "thorough",
    }
    assert convert(spoke, "v1beta1") == hub


def test_request_status_state_maps_to_phase() -> None:
    spoke = request(
        "v1alpha1",
        {"model": "m"},
        {
            "state": "Ready",
            "deployment": {"name": "g", "created": True},
            "generatedDeployment": {"kind": "DynamoGraphDeployment"},
            "profilingResults": "configmap/r-results",
        },
    )
    hub = convert(spoke, "v1beta1")
    assert hub["status"] == {
        "phase": "Deployed",
        "dgdName": "g",
        "profilingResults": {"selectedConfig": {"kind": "DynamoGraphDeployment"}},
    }
    assert payload(hub, "nvidia.com/dgdr-status") == {
        "profilingResults": "configmap/r-results",
        "generatedDeployment": {"kind": "DynamoGraphDeployment"},
    }
    assert convert(hub, "v1alpha1") == spoke


def test_deployment_deleted_has_no_v1beta1_phase_and_reads_as_ready() -> None:
    spoke = request("v1alpha1", {"model": "m"}, {"state": "DeploymentDeleted"})
    hub = convert(spoke, "v1beta1")
    assert hub["status"] == {"phase": "Ready"}
    assert convert(hub, "v1alpha1") == spoke
    hub["status"]["phase"] = "Failed"  # changed on the hub: the change wins
    assert convert(hub, "v1alpha1")["status"] == {"state": "Failed"}


# --- payload annotations and the entry point ---------------------------------------------


def test_user_annotations_are_kept_and_private_ones_scrubbed() -> None:
    spoke = alpha_graph({}, pvcs=[{"name": "p"}])
    spoke["metadata"]["annotations"] = {"nvidia.com/grove-update-strategy": "Coherent"}
    hub = convert(spoke, "v1beta1")
    assert set(hub["metadata"]["annotations"]) == {"nvidia.com/grove-update-strategy", DGD_SPEC}
    back = convert(hub, "v1alpha1")
    assert back["metadata"]["annotations"] == {"nvidia.com/grove-update-strategy": "Coherent"}


def test_an_unreadable_payload_is_ignored() -> None:
    hub = beta_graph([{"name": "a"}])
    hub["metadata"]["annotations"] = {DGD_SPEC: "{not json", DGD_STATUS: "[1]"}
    spoke = convert(hub, "v1alpha1")
    assert "annotations" not in spoke["metadata"]
    assert spoke["spec"] == {"services": {"a": {}}}


def test_conversion_never_changes_its_input() -> None:
    hub = beta_graph([{"name": "b", "minAvailable": 1}, {"name": "a"}])
    snapshot = copy_json(hub)
    spoke = graph_deployment_from_hub(hub)
    spoke_snapshot = copy_json(spoke)
    graph_deployment_to_hub(spoke)
    assert hub == snapshot
    assert spoke == spoke_snapshot


def test_convert_accepts_short_and_full_versions_and_copies_same_version() -> None:
    spoke = alpha_graph({})
    assert convert(spoke, "nvidia.com/v1beta1") == convert(spoke, "v1beta1")
    same = convert(spoke, "v1alpha1")
    assert same == spoke and same is not spoke


@pytest.mark.parametrize(
    ("obj", "version", "message"),
    [
        ({"apiVersion": "nvidia.com/v1alpha1", "kind": "Widget"}, "v1beta1", "kind 'Widget'"),
        ({"apiVersion": "nvidia.com/v1alpha1"}, "v1beta1", "kind None"),
        (alpha_graph({}), "v2", "cannot convert to 'v2'"),
        (alpha_graph({}), "apps/v1", "cannot convert to 'apps/v1'"),
        (
            {"apiVersion": "nvidia.com/v1", "kind": "DynamoModel"},
            "v1beta1",
            "from apiVersion 'nvidia.com/v1'",
        ),
    ],
)
def test_convert_refuses_unknown_kinds_and_versions(obj: Json, version: str, message: str) -> None:
    with pytest.raises(ConversionFailure, match=message):
        convert(obj, version)


@pytest.mark.parametrize(
    ("components", "message"),
    [
        ([{"name": "a"}, {"name": "a"}], r"spec.components\[1\].name: duplicate name 'a'"),
        ([{"type": "worker"}], r"spec.components\[0\].name: required value"),
    ],
)
def test_components_without_a_unique_name_cannot_become_a_map(
    components: list[Json], message: str
) -> None:
    with pytest.raises(ConversionFailure, match=message):
        convert(beta_graph(components), "v1alpha1")


def test_component_deployment_service_name_is_its_name_and_pod_selector_is_saved() -> None:
    spoke = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "g-worker"},
        "spec": {"serviceName": "Worker", "backendFramework": "vllm", "componentType": "worker"},
        "status": {
            "observedGeneration": 1,
            "podSelector": {"app": "w"},
            "service": {"componentKind": "Deployment", "componentName": "g-worker"},
        },
    }
    hub = convert(spoke, "v1beta1")
    assert hub["spec"] == {"name": "Worker", "backendFramework": "vllm", "type": "worker"}
    assert hub["status"] == {
        "observedGeneration": 1,
        "component": {"componentKind": "Deployment", "componentNames": ["g-worker"]},
    }
    dcd_status = private_annotations("DynamoComponentDeployment")[1]
    assert payload(hub, dcd_status) == {
        "podSelector": {"app": "w"},
        "service": {"componentName": "g-worker"},
    }
    assert convert(hub, "v1alpha1") == spoke


def test_a_model_converts_field_for_field() -> None:
    spoke = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoModel",
        "metadata": {"name": "m"},
        "spec": {"modelName": "a-lora", "baseModelName": "a", "modelType": "lora"},
        "status": {"readyEndpoints": 1, "endpoints": [{"podName": "p", "ready": True}]},
    }
    hub = convert(spoke, "v1beta1")
    assert hub == {**spoke, "apiVersion": "nvidia.com/v1beta1"}
    assert convert(hub, "v1alpha1") == spoke


def test_a_status_change_on_the_hub_wins_over_the_saved_component_name() -> None:
    spoke = alpha_graph({})
    spoke["status"] = {"services": {"W": {"componentName": "w-old"}}}
    hub = convert(spoke, "v1beta1")
    assert payload(hub, DGD_STATUS) == {"services": {"W": {"componentName": "w-old"}}}
    hub["status"]["components"]["W"]["componentNames"] = ["w-old", "w-new"]
    assert convert(hub, "v1alpha1")["status"]["services"]["W"] == {
        "componentName": "w-new",
        "componentNames": ["w-old", "w-new"],
    }


def test_the_result_shares_nothing_with_the_input() -> None:
    spoke = alpha_graph(
        {"W": {"envs": [{"name": "A"}], "extraPodSpec": {"mainContainer": {"args": ["x"]}}}},
        envs=[{"name": "B"}],
    )
    snapshot = copy_json(spoke)
    hub = convert(spoke, "v1beta1")
    hub["spec"]["env"][0]["name"] = "changed"
    main_container(hub["spec"]["components"][0])["args"].append("y")
    hub["metadata"]["name"] = "other"
    assert spoke == snapshot
