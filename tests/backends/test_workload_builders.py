"""Workload builders: DCDs from a graph, Deployments, LeaderWorkerSets, Grove PodCliqueSets,
Services, Ingresses and VirtualServices (spec/podgen.md sections 2-4 and 9-13, cases 1-8 and
21-24)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from backend_cases import (
    IMAGE,
    SETTINGS,
    child,
    child_objects,
    child_view,
    component,
    dcd_children,
    graph,
    hub_dcd,
    hub_of,
    main_of,
)

from api.convert import dump
from api.v1alpha1 import IngressSpec, IngressTLSSpec
from backends import naming
from backends.component_workload import component_children, component_objects
from backends.deployment import deployment_strategy
from backends.errors import GenerationError
from backends.graph_objects import scaling_adapters
from backends.grove import grove_objects, pod_clique_set
from backends.hub_component import hub_component
from backends.ingress import ingress, ingress_host, virtual_service
from backends.leader_worker_set import LwsLayout
from backends.multinode import Role, roles
from backends.render import render

Json = dict[str, Any]
IDENTITY = {
    "nvidia.com/dynamo-component": "service1",
    "nvidia.com/dynamo-namespace": "default-test-dynamographdeployment",
    "nvidia.com/dynamo-graph-deployment-name": "test-dynamographdeployment",
}


def _frontend(**fields: Any) -> Json:
    main = {"image": IMAGE}
    return {"componentType": "frontend", "extraPodSpec": {"mainContainer": main}, **fields}


def _kinds(objects: list[Json]) -> list[tuple[str, str]]:
    return [(o["kind"], o["metadata"]["name"]) for o in objects]


# --- DCDs from a graph ---------------------------------------------------------------------
def test_dcd_name_labels_and_dynamo_namespace() -> None:
    # spec case 1: the deprecated dynamoNamespace is replaced by the computed one.
    resources = {"requests": {"cpu": "1", "memory": "1Gi", "gpu": "0"}}
    service = _frontend(
        dynamoNamespace="default", subComponentType="test-sub-component", replicas=3,
        resources=resources,
    )  # fmt: skip
    dgd = graph({"service1": service}, name="test-dynamographdeployment", namespace="default")
    dcd = dump(child_view(dgd, "service1", SETTINGS))
    assert dcd["metadata"] == {
        "name": "test-dynamographdeployment-service1",
        "namespace": "default",
        "labels": IDENTITY,
    }
    assert dcd["spec"]["labels"] == IDENTITY
    assert dcd["spec"]["dynamoNamespace"] == "default-test-dynamographdeployment"
    assert dcd["spec"]["replicas"] == 3
    assert dcd["spec"]["resources"] == resources
    assert "ingress" not in dcd["spec"]


def test_global_dynamo_namespace() -> None:
    # spec case 2.
    dgd = graph(
        {"service1": _frontend(globalDynamoNamespace=True), "worker": {"componentType": "worker"}},
        name="test-dynamographdeployment",
        namespace="default",
    )
    assert child_view(dgd, "service1", SETTINGS).spec.dynamo_namespace == "dynamo"
    worker = child_view(dgd, "worker", SETTINGS)
    assert worker.spec.dynamo_namespace == "default-test-dynamographdeployment"
    clique = pod_clique_set(hub_of(dgd), SETTINGS)["spec"]["template"]["cliques"][0]
    assert clique["labels"]["nvidia.com/dynamo-namespace"] == "dynamo"
    env = {e["name"]: e.get("value") for e in main_of(clique["spec"]["podSpec"])["env"]}
    assert env["DYN_NAMESPACE"] == "dynamo"


def test_dots_in_the_graph_name_become_dashes_in_the_dynamo_namespace() -> None:
    assert naming.dynamo_namespace("ns", "my.graph", global_namespace=False) == "ns-my-graph"


def test_only_frontends_without_ingress_get_the_default_ingress() -> None:
    # spec case 3.
    settings = replace(SETTINGS, ingress_controller_class_name="nginx")
    dgd = graph(
        {"service1": _frontend(), "own": _frontend(ingress={"enabled": False}),
         "worker": {"componentType": "worker"}},
        name="test-dynamographdeployment",
    )  # fmt: skip
    assert child_view(dgd, "service1", settings).spec.ingress == IngressSpec(
        enabled=True, host="test-dynamographdeployment", ingress_controller_class_name="nginx"
    )
    assert child_view(dgd, "own", settings).spec.ingress == IngressSpec(enabled=False)
    assert child_view(dgd, "worker", settings).spec.ingress is None
    assert child_view(dgd, "service1", SETTINGS).spec.ingress is None


def test_dcd_merges_graph_env_under_service_env_sorted() -> None:
    dgd = graph(
        {"s": {"envs": [{"name": "B", "value": "svc"}, {"name": "A", "value": "svc"}]}},
        envs=[{"name": "B", "value": "graph"}, {"name": "C", "value": "graph"}],
    )
    assert child_view(dgd, "s", SETTINGS).spec.envs == [
        {"name": "A", "value": "svc"},
        {"name": "B", "value": "svc"},
        {"name": "C", "value": "graph"},
    ]


def test_dcd_keeps_user_labels_and_inherits_graph_annotations() -> None:
    dgd = graph(
        {"s": {"labels": {"team": "a", "nvidia.com/dynamo-component": "spoofed"},
               "annotations": {"nvidia.com/enable-metrics": "true"}}},
        annotations={"nvidia.com/enable-metrics": "false",
                     "nvidia.com/dynamo-discovery-backend": "etcd", "other": "x"},
    )  # fmt: skip
    dcd = child_view(dgd, "s", SETTINGS)
    assert dcd.spec.labels == {
        "team": "a",
        "nvidia.com/dynamo-component": "s",
        "nvidia.com/dynamo-namespace": "team-graph",
        "nvidia.com/dynamo-graph-deployment-name": "graph",
    }
    assert dcd.spec.annotations == {
        "nvidia.com/enable-metrics": "true",
        "nvidia.com/dynamo-discovery-backend": "etcd",
    }


def test_planner_dcd_is_forced_onto_the_planner_account() -> None:
    planner = {"componentType": "planner", "extraPodSpec": {"serviceAccountName": "mine"}}
    dcd = child_view(graph({"p": planner}), "p", SETTINGS)
    assert dcd.spec.extra_pod_spec is not None
    assert dcd.spec.extra_pod_spec.pod_spec["serviceAccountName"] == "planner-serviceaccount"


def test_legacy_deployment_config_env() -> None:
    # spec case 6.
    config = {"service1": {"port": 8080, "ServiceArgs": {"Workers": 2, "Resources": {
        "CPU": "2", "Memory": "2Gi", "GPU": "2"}}}}  # fmt: skip
    resources = {"requests": {"cpu": "1", "memory": "1Gi", "gpu": "0", "custom": {}}}
    dgd = graph(
        {"service1": _frontend(replicas=3, resources=resources),
         "service2": {"componentType": "worker", "resources": resources}},
        envs=[{"name": "DYN_DEPLOYMENT_CONFIG", "value": json.dumps(config)}],
    )  # fmt: skip
    first = dump(child_view(dgd, "service1", SETTINGS))["spec"]
    assert first["envs"] == [
        {
            "name": "DYN_DEPLOYMENT_CONFIG",
            "value": '{"service1":{"ServiceArgs":{"Resources":{"CPU":"2","GPU":"2",'
            '"Memory":"2Gi"},"Workers":2},"port":8000}}',
        }
    ]
    assert first["replicas"] == 3
    assert first["resources"] == {
        "requests": {"cpu": "2", "memory": "2Gi", "gpu": "2", "custom": {}},
        "limits": {"cpu": "2", "memory": "2Gi", "gpu": "2"},
    }
    second = dump(child_view(dgd, "service2", SETTINGS))["spec"]
    assert second["envs"][0]["value"] == json.dumps(config)
    assert second["resources"] == resources


def test_legacy_deployment_config_workers_set_missing_replicas() -> None:
    config = {"s": {"ServiceArgs": {"workers": 4}}}
    dgd = graph({"s": {}}, envs=[{"name": "DYN_DEPLOYMENT_CONFIG", "value": json.dumps(config)}])
    assert child_view(dgd, "s", SETTINGS).spec.replicas == 4


def test_invalid_legacy_deployment_config_is_an_error() -> None:
    dgd = graph({"s": {}}, envs=[{"name": "DYN_DEPLOYMENT_CONFIG", "value": "{nope"}])
    with pytest.raises(GenerationError, match=r"^invalid DYN_DEPLOYMENT_CONFIG JSON: "):
        child_view(dgd, "s", SETTINGS)


# --- Deployment ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("annotations", "strategy"),
    [
        ({}, {"type": "RollingUpdate",
              "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}),
        ({"nvidia.com/deployment-strategy": "Recreate",
          "nvidia.com/deployment-rolling-update-max-surge": "3"}, {"type": "Recreate"}),
        ({"nvidia.com/deployment-strategy": "RampedSlowRollout"},
         {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}),
        ({"nvidia.com/deployment-strategy": "BestEffortControlledRollout"},
         {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": "20%"}}),
        ({"nvidia.com/deployment-rolling-update-max-surge": "2",
          "nvidia.com/deployment-rolling-update-max-unavailable": "10%"},
         {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2, "maxUnavailable": "10%"}}),
    ],
)  # fmt: skip
def test_deployment_strategy_from_annotations(annotations: dict[str, str], strategy: Json) -> None:
    assert deployment_strategy(annotations) == strategy


def test_unknown_deployment_strategy_is_an_error() -> None:
    with pytest.raises(GenerationError) as err:
        deployment_strategy({"nvidia.com/deployment-strategy": "BlueGreen"})
    assert str(err.value) == (
        'unsupported nvidia.com/deployment-strategy "BlueGreen": supported values are '
        "RollingUpdate, Recreate, RampedSlowRollout and BestEffortControlledRollout"
    )


def test_deployment_selects_its_pods_and_uses_the_fallback_account() -> None:
    etcd = replace(SETTINGS, discovery_backend="etcd")
    deployment = child_objects(graph({"W": {"componentType": "worker"}}), "W", etcd,
                               service_account="labelled-sa")[0]
    template = deployment["spec"]["template"]
    assert deployment["spec"]["selector"] == {"matchLabels": {"nvidia.com/selector": "graph-w"}}
    assert template["metadata"]["labels"]["nvidia.com/selector"] == "graph-w"
    assert template["spec"]["serviceAccountName"] == "labelled-sa"


def test_metrics_label_is_dropped_when_metrics_are_disabled() -> None:
    off = {"nvidia.com/enable-metrics": "false"}
    dgd = graph({"W": {"componentType": "worker"}}, annotations=off)
    labels = child_objects(dgd, "W", SETTINGS)[0]["spec"]["template"]["metadata"]["labels"]
    assert "nvidia.com/metrics-enabled" not in labels


def test_standalone_dcd_gets_a_dynamo_namespace_of_its_own() -> None:
    dcd = component(
        {"componentType": "worker", "extraPodSpec": {"mainContainer": {"image": IMAGE}}}
    )
    deployment, service = component_objects(hub_dcd(dcd), SETTINGS)
    main = main_of(deployment["spec"]["template"]["spec"])
    env = {e["name"]: e.get("value") for e in main["env"]}
    assert env["DYN_NAMESPACE"] == "team-dcd"
    # Its own parent: named after itself, with the discovery account a graph would give it.
    assert env["DYN_PARENT_DGD_K8S_NAME"] == "dcd"
    account = "dcd-k8s-service-discovery"
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == account
    assert service["spec"]["selector"]["nvidia.com/dynamo-namespace"] == "team-dcd"
    desired = dcd_children(dcd, SETTINGS)
    assert {(c.obj["kind"], c.name) for c in desired.children} >= {
        ("ServiceAccount", account), ("Role", f"{account}-role"),
        ("RoleBinding", f"{account}-binding")}
    assert ("v1", "ServiceAccount") in desired.pruned


def test_a_graph_dcd_leaves_discovery_rbac_to_its_graph() -> None:
    dcd = child(graph({"W": {"componentType": "worker"}}), "W", SETTINGS)
    kinds = {c.obj["kind"] for c in component_children(hub_component(dcd), SETTINGS).children}
    assert "ServiceAccount" not in kinds


# --- LeaderWorkerSet -----------------------------------------------------------------------
def _multinode(nodes: int = 2, replicas: int | None = 2, **fields: Any) -> Json:
    main = {"image": IMAGE, "command": ["python3", "-m", "dynamo.vllm"]}
    main["args"] = ["--tensor-parallel-size", "4"]
    service: Json = {
        "componentType": "worker",
        "multinode": {"nodeCount": nodes},
        "resources": {"limits": {"gpu": "1"}},
        "extraPodSpec": {"mainContainer": main},
        **fields,
    }
    if replicas is not None:
        service["replicas"] = replicas
    return service


def test_one_native_leader_worker_set_holds_every_replica() -> None:
    dgd = graph({"W": _multinode(replicas=3)})
    objects = child_objects(dgd, "W", SETTINGS)
    assert _kinds(objects) == [("LeaderWorkerSet", "graph-w-0"), ("Service", "graph-w")]
    lws = objects[0]
    assert "instance-id" not in lws["metadata"]["labels"]
    assert lws["spec"]["replicas"] == 3
    assert lws["spec"]["startupPolicy"] == "LeaderCreated"
    assert "rolloutStrategy" not in lws["spec"]  # LWS's own: one group at a time
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == 2
    for role in ("leader", "worker"):
        template = lws["spec"]["leaderWorkerTemplate"][f"{role}Template"]
        assert template["metadata"]["labels"]["role"] == role
        assert "nvidia.com/selector" not in template["metadata"]["labels"]
        assert "instance-id" not in template["metadata"]["labels"]
        # No PodGroup of ours: gang scheduling is LWS's own Volcano provider's.
        assert "annotations" not in template["metadata"]
        assert template["spec"]["schedulerName"] == "volcano"
    assert objects[1]["spec"]["selector"]["role"] == "leader"


def test_the_legacy_layout_is_one_leader_worker_set_and_pod_group_per_replica() -> None:
    dgd = graph({"W": _multinode(replicas=2)})
    objects = child_objects(dgd, "W", SETTINGS, lws_layout=LwsLayout.LEGACY)
    assert _kinds(objects) == [
        ("PodGroup", "graph-w-0"), ("LeaderWorkerSet", "graph-w-0"),
        ("PodGroup", "graph-w-1"), ("LeaderWorkerSet", "graph-w-1"), ("Service", "graph-w"),
    ]  # fmt: skip
    lws = objects[3]
    assert lws["metadata"]["labels"]["instance-id"] == "1"
    assert lws["spec"]["replicas"] == 1
    leader = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]
    assert leader["metadata"]["labels"]["instance-id"] == "1"
    assert leader["metadata"]["annotations"] == {"scheduling.k8s.io/group-name": "graph-w-1"}
    assert leader["spec"]["schedulerName"] == "volcano"
    assert objects[2]["spec"] == {"minMember": 2}


def test_native_and_legacy_templates_differ_only_in_the_legacy_marks() -> None:
    dgd = graph({"W": _multinode(replicas=1)})
    native = child_objects(dgd, "W", SETTINGS)[0]
    legacy = child_objects(dgd, "W", SETTINGS, lws_layout=LwsLayout.LEGACY)[1]
    for role in ("leaderTemplate", "workerTemplate"):
        ours = native["spec"]["leaderWorkerTemplate"][role]
        theirs = json.loads(json.dumps(legacy["spec"]["leaderWorkerTemplate"][role]))
        del theirs["metadata"]["labels"]["instance-id"]
        del theirs["metadata"]["annotations"]
        assert ours == theirs


def test_leader_worker_sets_without_volcano() -> None:
    settings = replace(SETTINGS, volcano_enabled=False)
    dgd = graph({"W": _multinode(replicas=2)})
    for layout in LwsLayout:
        objects = child_objects(dgd, "W", settings, lws_layout=layout)
        assert {kind for kind, _ in _kinds(objects)} == {"LeaderWorkerSet", "Service"}
        leader = objects[0]["spec"]["leaderWorkerTemplate"]["leaderTemplate"]
        assert "schedulerName" not in leader["spec"]
        assert "annotations" not in leader["metadata"]


@pytest.mark.parametrize(("replicas", "surge", "unavailable", "expected"), [
    (4, "1", "0", {"maxSurge": 1, "maxUnavailable": 0}),
    (4, "0", "25%", {"maxSurge": 0, "maxUnavailable": "25%"}),
    # 25% of 2 is 0 unavailable, and no surge: LWS refuses that pair; one surge instead.
    (2, "0", "25%", {"maxSurge": 1, "maxUnavailable": "25%"}),
    (3, "0", "0", {"maxSurge": 1, "maxUnavailable": 0}),
])
def test_the_native_budgets_never_come_to_zero_and_zero(
        replicas: int, surge: str, unavailable: str, expected: Json) -> None:
    annotations = {"nvidia.com/deployment-rolling-update-max-surge": surge,
                   "nvidia.com/deployment-rolling-update-max-unavailable": unavailable}
    dgd = graph({"W": _multinode(replicas=replicas, annotations=annotations)})
    lws = child_objects(dgd, "W", SETTINGS)[0]
    assert lws["spec"]["rolloutStrategy"] == {"type": "RollingUpdate",
                                              "rollingUpdateConfiguration": expected}


def test_multinode_without_an_orchestrator_is_an_error() -> None:
    settings = replace(SETTINGS, lws_enabled=False)
    dgd = graph({"W": _multinode()})
    with pytest.raises(GenerationError) as err:
        child_objects(dgd, "W", settings)
    assert str(err.value) == "no multinode orchestrator available"


# --- Grove ---------------------------------------------------------------------------------
def test_roles_of_single_and_multinode_components() -> None:
    # spec case 8 (nodeCount 0 and 1 are single-node).
    from api.convert import load
    from api.v1beta1 import DynamoComponentDeploymentSharedSpec as Shared

    assert roles("test-service", load(Shared, {"replicas": 2})) == [
        Role("main", "test-service", 2, 1)
    ]
    assert roles("test-service", load(Shared, {"replicas": 2, "multinode": {"nodeCount": 5}})) == [
        Role("leader", "test-service-ldr", 1, 5),
        Role("worker", "test-service-wkr", 4, 5),
    ]
    assert roles("s", load(Shared, {"multinode": {"nodeCount": 0}})) == [Role("main", "s", 1, 1)]
    assert roles("s", load(Shared, {"multinode": {}}))[1] == Role("worker", "s-wkr", 1, 2)


def test_grove_multinode_service_is_a_scaling_group_of_leader_and_worker_cliques() -> None:
    service = _multinode(nodes=3, replicas=5)
    dgd = graph(
        {"Worker": service}, name="test-dynamo-graph-deployment", namespace="test-namespace"
    )
    template = pod_clique_set(hub_of(dgd), SETTINGS)["spec"]["template"]
    assert template["podCliqueScalingGroups"] == [
        {"name": "worker", "cliqueNames": ["worker-ldr", "worker-wkr"], "replicas": 5,
         "minAvailable": 1}
    ]  # fmt: skip
    leader, worker = template["cliques"]
    assert (leader["name"], leader["spec"]["replicas"]) == ("worker-ldr", 1)
    assert (worker["name"], worker["spec"]["replicas"]) == ("worker-wkr", 2)
    for clique in (leader, worker):
        assert clique["labels"]["nvidia.com/selector"] == "test-dynamo-graph-deployment-worker"
        assert clique["labels"]["nvidia.com/dynamo-component"] == "Worker"
    assert template["cliqueStartupType"] == "CliqueStartupTypeAnyOrder"


def test_grove_starts_trtllm_workers_before_their_leader() -> None:
    service = _multinode()
    service["extraPodSpec"]["mainContainer"]["command"] = ["python3", "-m", "dynamo.trtllm"]
    template = pod_clique_set(hub_of(graph({"W": service})), SETTINGS)["spec"]["template"]
    assert template["cliqueStartupType"] == "CliqueStartupTypeExplicit"
    assert template["cliques"][0]["spec"]["startsAfter"] == ["w-wkr"]
    assert "startsAfter" not in template["cliques"][1]["spec"]


def test_grove_creates_services_for_frontends_or_all_under_discovery() -> None:
    dgd = graph({"Frontend": _frontend(), "W": {"componentType": "worker"}})
    assert _kinds(grove_objects(hub_of(dgd), SETTINGS)[1:]) == [
        ("Service", "graph-frontend"),
        ("Service", "graph-w"),
    ]
    etcd = replace(SETTINGS, discovery_backend="etcd")
    objects = grove_objects(hub_of(dgd), etcd)
    assert _kinds(objects[1:]) == [("Service", "graph-frontend")]
    assert "nvidia.com/dynamo-discovery-backend" not in objects[1]["metadata"]["labels"]
    assert objects[0]["spec"]["template"]["cliques"][0]["annotations"] == {
        "nvidia.com/dynamo-discovery-backend": "etcd"
    }


def test_grove_termination_delay_and_kai_queue_default() -> None:
    settings = replace(SETTINGS, grove_termination_delay_seconds=3600, kai_scheduler_enabled=True)
    template = pod_clique_set(hub_of(graph({"F": _frontend()})), settings)["spec"]["template"]
    assert template["terminationDelay"] == "1h0m0s"
    assert template["cliques"][0]["labels"]["kai.scheduler/queue"] == "dynamo"
    no_delay = replace(SETTINGS, grove_termination_delay_seconds=0)
    no_delay_template = pod_clique_set(hub_of(graph({"F": _frontend()})), no_delay)["spec"][
        "template"]
    assert "terminationDelay" not in no_delay_template


def test_render_picks_grove_unless_the_graph_opts_out() -> None:
    manifest = {"kind": "DynamoGraphDeployment", "metadata": {"name": "g"},
                "spec": {"services": {"F": _frontend()}}}  # fmt: skip
    grove = replace(SETTINGS, grove_enabled=True)
    assert ("PodCliqueSet", "g") in _kinds(render(manifest, grove))
    manifest["metadata"]["annotations"] = {"nvidia.com/enable-grove": "FALSE"}
    assert ("Deployment", "g-f") in _kinds(render(manifest, grove))


# --- Ingress and VirtualService ------------------------------------------------------------
def test_ingress_needs_enabled_and_a_class() -> None:
    # spec case 4.
    spec = IngressSpec(enabled=True, host="someservice", ingress_controller_class_name="nginx")
    obj = ingress("service1", "default", spec, object_labels={})
    assert obj is not None
    assert obj["spec"] == {
        "ingressClassName": "nginx",
        "rules": [{"host": "someservice.local", "http": {"paths": [{
            "path": "/", "pathType": "Prefix",
            "backend": {"service": {"name": "service1", "port": {"number": 8000}}}}]}}],
    }  # fmt: skip
    assert ingress("s", "d", IngressSpec(enabled=True, host="h"), object_labels={}) is None
    disabled = IngressSpec(enabled=False, host="h", ingress_controller_class_name="n")
    assert ingress("s", "d", disabled, object_labels={}) is None


def test_ingress_host_prefix_suffix_tls_labels_and_annotations() -> None:
    spec = IngressSpec(
        enabled=True, host="someservice", host_prefix="pre-", host_suffix="example.com",
        tls=IngressTLSSpec(secret_name="tls"), ingress_controller_class_name="nginx",
        labels={"l": "1"}, annotations={"a": "1"},
    )  # fmt: skip
    assert ingress_host(spec) == "pre-someservice.example.com"
    obj = ingress("service1", "default", spec, object_labels={"mine": "x"})
    assert obj is not None
    assert obj["spec"]["tls"] == [{"hosts": ["pre-someservice.example.com"], "secretName": "tls"}]
    assert obj["metadata"]["labels"] == {"l": "1", "mine": "x"}
    assert obj["metadata"]["annotations"] == {"a": "1"}


def test_virtual_service_routes_the_host_through_the_gateway() -> None:
    # spec case 5.
    spec = IngressSpec(enabled=True, host="someservice", use_virtual_service=True,
                       virtual_service_gateway="istio-system/ingress-alb")  # fmt: skip
    settings = replace(SETTINGS, virtual_service_gateway="istio-system/ingress-alb")
    obj = virtual_service("service1", "default", spec, settings, object_labels={})
    assert obj is not None
    assert obj["apiVersion"] == "networking.istio.io/v1beta1"
    assert obj["spec"] == {
        "hosts": ["someservice.local"],
        "gateways": ["istio-system/ingress-alb"],
        "http": [{"match": [{"uri": {"prefix": "/"}}],
                  "route": [{"destination": {"host": "service1", "port": {"number": 8000}}}]}],
    }  # fmt: skip
    assert virtual_service("s", "d", IngressSpec(enabled=True), settings, object_labels={}) is None
    assert virtual_service("s", "d", spec, SETTINGS, object_labels={}) is None


def test_default_ingress_from_a_gateway_makes_a_virtual_service() -> None:
    settings = replace(SETTINGS, virtual_service_gateway="gw", ingress_host_suffix="example.com",
                       ingress_controller_tls_secret_name="tls")  # fmt: skip
    objects = child_objects(graph({"F": _frontend()}), "F", settings)
    assert _kinds(objects) == [
        ("Deployment", "graph-f"), ("Service", "graph-f"), ("VirtualService", "graph-f"),
    ]  # fmt: skip
    assert objects[2]["spec"]["hosts"] == ["graph.example.com"]


# --- model Services and scaling adapters ---------------------------------------------------
@pytest.mark.parametrize(
    ("model", "digest"),
    [
        ("Qwen/Qwen3-0.6B", "fb68f5a6"),
        ("llama-3-70b-instruct-v1", "c21c2fb2"),
        ("meta-llama/Llama-3.1-8B-Instruct", "08a20b29"),
    ],
)
def test_model_hashes(model: str, digest: str) -> None:
    assert naming.model_hash(model) == digest


def test_one_headless_service_per_model() -> None:
    # spec case 24.
    ref = {"name": "Qwen/Qwen3-0.6B"}
    services = {key: {"componentType": "worker", "modelRef": ref} for key in ("A", "B")}
    manifest = {
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "n"},
        "spec": {"services": services},
    }
    objects = render(manifest, SETTINGS)
    services = [o for o in objects if o["metadata"]["name"].startswith("dynamo-model")]
    assert len(services) == 1
    assert services[0]["metadata"]["name"] == "dynamo-model-fb68f5a6"
    annotations = services[0]["metadata"]["annotations"]
    assert annotations == {"nvidia.com/dynamo-base-model": "Qwen/Qwen3-0.6B"}
    assert services[0]["spec"]["clusterIP"] == "None"
    assert services[0]["spec"]["selector"] == {"nvidia.com/dynamo-base-model-hash": "fb68f5a6"}


def test_scaling_adapters_only_for_services_that_opt_in() -> None:
    dgd = graph({"A": {"scalingAdapter": {"enabled": True}, "replicas": 3},
                 "B": {"scalingAdapter": {"enabled": False}}, "C": {}})  # fmt: skip
    assert scaling_adapters(hub_of(dgd)) == [
        {
            "apiVersion": "nvidia.com/v1alpha1",
            "kind": "DynamoGraphDeploymentScalingAdapter",
            "metadata": {
                "name": "graph-a",
                "namespace": "team",
                "labels": {"nvidia.com/dynamo-graph-deployment-name": "graph",
                           "nvidia.com/dynamo-component": "A"},
            },
            "spec": {"replicas": 3, "dgdRef": {"name": "graph", "serviceName": "A"}},
        }
    ]  # fmt: skip
