"""Helpers of the backends tests: graphs built from a few fields, YAML as the golden files
hold it, and the golden-file check itself (UPDATE_GOLDEN=1 rewrites the files)."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import yaml

from api.conversion import SPOKE, convert
from api.convert import dump, load
from api.v1alpha1 import DynamoComponentDeployment, DynamoGraphDeployment
from backends.children import DesiredChildren
from backends.component_deployment import component_deployment
from backends.component_workload import component_children, component_objects
from backends.context import PodContext
from backends.hub_component import HubComponent, hub_component
from backends.hub_graph import HubGraph, hub_graph
from backends.multinode import GROVE, MultinodeDeployer, Role, RoleKind
from backends.pod_spec import generate_pod_spec
from backends.settings import OperatorSettings

Json = dict[str, Any]

GOLDEN = Path(__file__).parent / "golden"
IMAGE = "nvcr.io/nvidia/ai-dynamo/runtime:0.8.0"
# The settings of every golden case: platform addresses set, so their env shows.
SETTINGS = OperatorSettings(nats_address="nats://nats.dynamo:4222", etcd_address="etcd.dynamo:2379")
PULL_SECRETS = {"nvcr.io": ["nvcr-pull"]}


def graph(
    services: dict[str, Json],
    *,
    name: str = "graph",
    namespace: str = "team",
    backend: str | None = None,
    annotations: dict[str, str] | None = None,
    envs: list[Json] | None = None,
) -> DynamoGraphDeployment:
    """A DynamoGraphDeployment model from its services as JSON."""
    meta: Json = {"name": name, "namespace": namespace}
    if annotations:
        meta["annotations"] = annotations
    spec: Json = {"services": copy.deepcopy(services)}
    if backend:
        spec["backendFramework"] = backend
    if envs:
        spec["envs"] = envs
    return load(DynamoGraphDeployment, {"metadata": meta, "spec": spec})


def hub_of(dgd: DynamoGraphDeployment) -> HubGraph:
    """The graph as the builders moved to `v1beta1` take it (written in `v1alpha1`)."""
    return hub_graph(dump(dgd))


def component(
    spec: Json, *, name: str = "dcd", namespace: str = "team"
) -> DynamoComponentDeployment:
    """A standalone DynamoComponentDeployment model from its spec as JSON."""
    return load(
        DynamoComponentDeployment,
        {"metadata": {"name": name, "namespace": namespace}, "spec": copy.deepcopy(spec)},
    )


def hub_dcd(dcd: DynamoComponentDeployment) -> HubComponent:
    """The DCD as the builders moved to `v1beta1` take it (written in `v1alpha1`)."""
    return hub_component(dump(dcd))


def dcd_children(dcd: DynamoComponentDeployment, settings: OperatorSettings,
                 **options: Any) -> DesiredChildren:
    """`component_children` of a DCD written in `v1alpha1` (taken to the hub)."""
    return component_children(hub_dcd(dcd), settings, **options)


def child(dgd: DynamoGraphDeployment, service: str,
          settings: OperatorSettings = SETTINGS) -> Json:
    """A service's DCD as the graph builds it (the hub, JSON)."""
    return component_deployment(hub_of(dgd), service, settings)


def child_view(dgd: DynamoGraphDeployment, service: str,
               settings: OperatorSettings = SETTINGS) -> DynamoComponentDeployment:
    """A service's DCD read as `v1alpha1` (its fields as users read them)."""
    return load(DynamoComponentDeployment, convert(child(dgd, service, settings), SPOKE))


def child_objects(dgd: DynamoGraphDeployment, service: str,
                  settings: OperatorSettings = SETTINGS, **options: Any) -> list[Json]:
    """What a service's DCD owns, rendered from the DCD as stored."""
    return component_objects(hub_component(child(dgd, service, settings)), settings, **options)


def dcd_path(
    dgd: DynamoGraphDeployment, service: str, settings: OperatorSettings = SETTINGS
) -> list[Json]:
    """A service's DCD (shown in `v1alpha1`) followed by everything that DCD owns."""
    dcd = child(dgd, service, settings)
    return [convert(dcd, SPOKE),
            *component_objects(hub_component(dcd), settings, pull_secrets=PULL_SECRETS)]


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: object) -> bool:
        return True


def to_yaml(objects: list[Json]) -> str:
    return yaml.dump_all(
        objects,
        Dumper=_Dumper,
        sort_keys=True,
        explicit_start=True,
        width=1 << 16,
        allow_unicode=True,
    )


def check_golden(name: str, objects: list[Json]) -> None:
    """The objects equal, byte for byte, the reviewed golden/<name>.yaml."""
    path = GOLDEN / f"{name}.yaml"
    text = to_yaml(objects)
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"{path.name} missing: run with UPDATE_GOLDEN=1, then review it"
    assert list(yaml.safe_load_all(path.read_text(encoding="utf-8"))) == objects
    assert text == path.read_text(encoding="utf-8")


def containers(pod_spec: Json) -> dict[str, Json]:
    return {c["name"]: c for c in pod_spec["containers"]}


def env(container: Json) -> dict[str, Any]:
    """A container's env as name -> value (or valueFrom)."""
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env", [])}


def pod(
    service: Json,
    *,
    role: RoleKind = "main",
    nodes: int = 1,
    backend: str | None = None,
    settings: OperatorSettings = SETTINGS,
    deployer: MultinodeDeployer = GROVE,
    pull_secrets: dict[str, list[str]] | None = None,
) -> Json:
    """The pod spec of one role of a graph service `Svc` in graph `graph`, namespace `team`."""
    spec = hub_component({"apiVersion": SPOKE, "kind": "DynamoComponentDeployment",
                          "metadata": {"name": "svc", "namespace": "team"},
                          "spec": copy.deepcopy(service)}).component
    ctx = PodContext(
        namespace="team",
        graph_name="graph",
        dynamo_namespace="team-graph",
        host_name="svc",
        backend_framework=backend,
        deployer=deployer,
        settings=settings,
        pull_secrets=pull_secrets or {},
    )
    replicas = 1 if role != "worker" else nodes - 1
    name = {"main": "svc", "leader": "svc-ldr", "worker": "svc-wkr"}[role]
    return generate_pod_spec(spec, Role(role, name, replicas, nodes), ctx)


def main_of(pod_spec: Json) -> Json:
    return containers(pod_spec)["main"]


def worker_service(command: list[str], args: list[str], gpus: str = "4", **fields: Any) -> Json:
    main = {"image": IMAGE, "command": command, "args": args}
    return {
        "componentType": "worker",
        "resources": {"limits": {"gpu": gpus}},
        "extraPodSpec": {"mainContainer": main},
        **fields,
    }
