"""The five CustomResourceDefinitions: names, printer columns, subresources and schema.

Each CRD serves `v1alpha1` and `v1beta1`, each version's schema generated from its models and
its own printer columns (v1beta1's paths where fields moved). `v1beta1` is the storage version
of the DGD, DCD and DGDR, as in the original; the scaling adapter and the DynamoModel store
`v1alpha1`, as the original does (the DynamoModel's two versions have one schema, so nothing is
gained by moving its objects). `spec.conversion` names the operator's conversion webhook
(`/convert` of the webhook Service, as a kubebuilder CRD carries it); the operator
(or cert-manager) keeps its clientConfig and caBundle current. `v1alpha1` is deprecated, with the
original's warning, for the kinds the original stores as v1beta1 (DGD, DCD, DGDR); the original
deprecates neither the scaling adapter's nor the DynamoModel's. Discovery prefers v1beta1
either way (the highest served version). `build_crds()` returns them as JSON dicts, ready to
serialize or to install; hack/gen_crds.py writes them to deploy/crds/.
"""

from __future__ import annotations

import attrs

import api.v1beta1 as v1beta1
from api.crd.schema import object_schema
from api.kube import Json
from api.v1alpha1 import (
    GROUP,
    VERSION,
    DynamoComponentDeployment,
    DynamoGraphDeployment,
    DynamoGraphDeploymentRequest,
    DynamoGraphDeploymentScalingAdapter,
    DynamoModel,
)

__all__ = [
    "CONVERSION_PATH",
    "CONVERSION_SERVICE",
    "CRDS",
    "STORAGE_VERSION",
    "Column",
    "CrdDefinition",
    "build_crd",
    "build_crds",
    "conversion",
    "deprecation_warning",
]

CATEGORY = "dynamo"
#: The version the DGD, DCD and DGDR are stored in: the hub, which can represent everything.
STORAGE_VERSION = v1beta1.VERSION
#: Where the conversion webhook is until the operator points the CRD at itself.
CONVERSION_SERVICE = {"name": "dynamo-operator-webhook-service", "namespace": "dynamo-system"}
CONVERSION_PATH = "/convert"


@attrs.frozen
class Column:
    """One `additionalPrinterColumns` entry; priority 1 shows only with `-o wide`."""

    name: str
    json_path: str
    type: str = "string"
    priority: int = 0
    description: str = ""


@attrs.frozen(kw_only=True)
class CrdDefinition:
    """What a CRD needs beyond the model's schema."""

    model: type
    #: The v1beta1 model of the kind.
    hub_model: type
    plural: str
    singular: str
    short_names: tuple[str, ...]
    columns: tuple[Column, ...]
    #: v1beta1's columns; empty: the same as v1alpha1's.
    hub_columns: tuple[Column, ...] = ()
    scale: bool = False
    #: v1alpha1 is deprecated (it is for the kinds the original stores as v1beta1).
    deprecated: bool = False
    #: The version objects are stored in: v1beta1 for the deprecated kinds, else v1alpha1.
    storage: str = VERSION

    def versions(self) -> tuple[tuple[str, type, tuple[Column, ...]], ...]:
        """(version, model, columns) of each served version, oldest first."""
        return (
            (VERSION, self.model, self.columns),
            (v1beta1.VERSION, self.hub_model, self.hub_columns or self.columns),
        )


def deprecation_warning(kind: str) -> str:
    """What kubectl prints for a request to a deprecated v1alpha1: the original's text."""
    return f"{GROUP}/{VERSION} {kind} is deprecated; use {GROUP}/{v1beta1.VERSION} {kind}"


def _age() -> Column:
    return Column("Age", ".metadata.creationTimestamp", "date")


def _condition(kind: str) -> str:
    return f'.status.conditions[?(@.type=="{kind}")]'


CRDS: tuple[CrdDefinition, ...] = (
    CrdDefinition(
        model=DynamoGraphDeployment,
        hub_model=v1beta1.DynamoGraphDeployment,
        plural="dynamographdeployments",
        deprecated=True,
        storage=STORAGE_VERSION,
        singular="dynamographdeployment",
        short_names=("dgd",),
        columns=(
            Column("Ready", _condition("Ready") + ".status", description="Ready condition."),
            Column("Backend", ".spec.backendFramework", description="Inference backend."),
            _age(),
            Column("State", ".status.state", priority=1, description="Lifecycle state."),
            Column(
                "Reason",
                _condition("Ready") + ".reason",
                priority=1,
                description="Reason of the Ready condition.",
            ),
            Column(
                "Restart",
                ".status.restart.phase",
                priority=1,
                description="Phase of the latest restart.",
            ),
            Column(
                "GPUs",
                ".status.gpus.requested",
                "integer",
                priority=1,
                description="GPUs the graph's pods request at their desired replicas.",
            ),
        ),
    ),
    CrdDefinition(
        model=DynamoComponentDeployment,
        hub_model=v1beta1.DynamoComponentDeployment,
        plural="dynamocomponentdeployments",
        deprecated=True,
        storage=STORAGE_VERSION,
        singular="dynamocomponentdeployment",
        short_names=("dcd",),
        hub_columns=(
            Column("Type", ".spec.type", description="Component type."),
            Column(
                "Available", _condition("Available") + ".status", description="Available condition."
            ),
            _age(),
            Column(
                "Backend", ".spec.backendFramework", priority=1, description="Inference backend."
            ),
            Column("Component", ".spec.name", priority=1, description="Component name."),
            Column(
                "Replicas", ".spec.replicas", "integer", priority=1, description="Desired replicas."
            ),
            Column(
                "Ready-Replicas",
                ".status.component.readyReplicas",
                "integer",
                priority=1,
                description="Ready replicas.",
            ),
        ),
        columns=(
            Column("Component", ".spec.componentType", description="Component type."),
            Column(
                "Available", _condition("Available") + ".status", description="Available condition."
            ),
            _age(),
            Column(
                "Backend", ".spec.backendFramework", priority=1, description="Inference backend."
            ),
            Column("Service", ".spec.serviceName", priority=1, description="Service name."),
            Column(
                "Replicas", ".spec.replicas", "integer", priority=1, description="Desired replicas."
            ),
            Column(
                "Ready-Replicas",
                ".status.service.readyReplicas",
                "integer",
                priority=1,
                description="Ready replicas.",
            ),
        ),
    ),
    CrdDefinition(
        model=DynamoGraphDeploymentRequest,
        hub_model=v1beta1.DynamoGraphDeploymentRequest,
        plural="dynamographdeploymentrequests",
        deprecated=True,
        storage=STORAGE_VERSION,
        singular="dynamographdeploymentrequest",
        short_names=("dgdr",),
        # As the original's v1beta1 columns, in its order; the Job is ours, with -o wide.
        hub_columns=(
            Column("Model", ".spec.model", description="Model to deploy."),
            Column("Backend", ".spec.backend", description="Inference backend."),
            Column("Phase", ".status.phase", description="Lifecycle phase."),
            Column("Profiling", ".status.profilingPhase",
                   description="Step of the profiling run."),
            Column("Reason", '.status.conditions[?(@.type=="Succeeded")].reason',
                   description="Why the request is in its phase."),
            Column("Message", '.status.conditions[?(@.type=="Succeeded")].message',
                   description="What the request is doing or what failed."),
            Column("DGD", ".status.dgdName", description="Name of the created graph."),
            _age(),
            Column(
                "Job",
                ".status.profilingJobName",
                priority=1,
                description="Name of the profiling Job.",
            ),
        ),
        columns=(
            Column("Model", ".spec.model", description="Model to deploy."),
            Column("Backend", ".status.backend", description="Backend being profiled."),
            Column("State", ".status.state", description="Lifecycle state."),
            Column(
                "DGD-State", ".status.deployment.state", description="State of the created graph."
            ),
            _age(),
            Column(
                "DGD",
                ".status.deployment.name",
                priority=1,
                description="Name of the created graph.",
            ),
        ),
    ),
    CrdDefinition(
        model=DynamoGraphDeploymentScalingAdapter,
        hub_model=v1beta1.DynamoGraphDeploymentScalingAdapter,
        plural="dynamographdeploymentscalingadapters",
        singular="dynamographdeploymentscalingadapter",
        short_names=("dgdsa",),
        columns=(
            Column("DGD", ".spec.dgdRef.name", description="Target graph."),
            Column("Service", ".spec.dgdRef.serviceName", description="Target service."),
            Column(
                "Replicas",
                ".status.replicas",
                "integer",
                description="Replicas last applied to the service.",
            ),
            _age(),
            Column(
                "Desired",
                ".spec.replicas",
                "integer",
                priority=1,
                description="Replicas asked for by the autoscaler.",
            ),
            Column(
                "Last-Scaled",
                ".status.lastScaleTime",
                "date",
                priority=1,
                description="When the service was last scaled.",
            ),
            Column(
                "Ready",
                '.status.conditions[?(@.type=="Ready")].status',
                priority=1,
                description="Whether the service runs the replicas asked for.",
            ),
        ),
        hub_columns=(
            Column("DGD", ".spec.dgdRef.name", description="Target graph."),
            Column("Component", ".spec.dgdRef.componentName", description="Target component."),
            Column(
                "Replicas",
                ".status.replicas",
                "integer",
                description="Replicas last applied to the component.",
            ),
            _age(),
            Column(
                "Desired",
                ".spec.replicas",
                "integer",
                priority=1,
                description="Replicas asked for by the autoscaler.",
            ),
            Column(
                "Last-Scaled",
                ".status.lastScaleTime",
                "date",
                priority=1,
                description="When the component was last scaled.",
            ),
            Column(
                "Ready",
                '.status.conditions[?(@.type=="Ready")].status',
                priority=1,
                description="Whether the component runs the replicas asked for.",
            ),
        ),
        scale=True,
    ),
    CrdDefinition(
        model=DynamoModel,
        hub_model=v1beta1.DynamoModel,
        plural="dynamomodels",
        singular="dynamomodel",
        short_names=("dmodel", "dm"),
        columns=(
            Column("BaseModel", ".spec.baseModelName", description="Base model name."),
            Column("Type", ".spec.modelType", description="base, lora or adapter."),
            Column("Ready", ".status.readyEndpoints", "integer", description="Ready endpoints."),
            Column("Total", ".status.totalEndpoints", "integer", description="All endpoints."),
            _age(),
            Column("Model", ".spec.modelName", priority=1, description="Full model name."),
        ),
    ),
)


def build_crd(definition: CrdDefinition) -> Json:
    """The CustomResourceDefinition object of one kind."""
    kind = definition.model.__name__
    subresources: Json = {"status": {}}
    if definition.scale:
        subresources["scale"] = {
            "labelSelectorPath": ".status.selector",
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas",
        }
    versions = []
    for version, model, columns in definition.versions():
        served: Json = {"additionalPrinterColumns": _columns(columns)}
        if definition.deprecated and version == VERSION:
            served["deprecated"] = True
            served["deprecationWarning"] = deprecation_warning(kind)
        served.update({
            "name": version,
            "schema": {"openAPIV3Schema": object_schema(model)},
            "served": True,
            "storage": version == definition.storage,
            "subresources": subresources,
        })
        versions.append(served)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{definition.plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "names": {
                "categories": [CATEGORY],
                "kind": kind,
                "listKind": f"{kind}List",
                "plural": definition.plural,
                "shortNames": list(definition.short_names),
                "singular": definition.singular,
            },
            "conversion": conversion(),
            "scope": "Namespaced",
            "versions": versions,
        },
    }


def conversion() -> Json:
    """`spec.conversion`: the operator's conversion webhook, reached through its Service."""
    service = {**CONVERSION_SERVICE, "path": CONVERSION_PATH}
    return {
        "strategy": "Webhook",
        "webhook": {"clientConfig": {"service": service}, "conversionReviewVersions": ["v1"]},
    }


def _columns(columns: tuple[Column, ...]) -> list[Json]:
    out = []
    for c in columns:
        column: Json = {"jsonPath": c.json_path, "name": c.name, "type": c.type}
        if c.description:
            column["description"] = c.description
        if c.priority:
            column["priority"] = c.priority
        out.append(column)
    return out


def build_crds() -> list[Json]:
    """All five CRDs, in a fixed order."""
    return [build_crd(d) for d in CRDS]
