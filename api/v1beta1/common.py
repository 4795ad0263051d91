"""Small types shared by the v1beta1 graph and component specs: provider overrides, topology
constraints, model references, multinode and role layout, restart, EPP and compilation cache."""

from __future__ import annotations

from typing import Annotated

from attrs import define, field

from api.kube import ConfigMapKeyRef, Embedded, FreeForm, Json
from api.markers import doc

GROUP_VERSION = "nvidia.com/v1beta1"
BACKEND_FRAMEWORKS = ("sglang", "vllm", "trtllm")
RESTART_STRATEGIES = ("Sequential", "Parallel")
ROLE_NAMES = ("leader", "worker")
#: A topology level's name (the original's TopologyDomain).
TOPOLOGY_DOMAIN_PATTERN = "^[a-z0-9]([a-z0-9-]*[a-z0-9])?$"

# A JSON number: an int or a float ("number" in OpenAPI).
Number = Annotated[int | float, Embedded("Number", (int, float))]
# A whole PodTemplateSpec (metadata and spec), kept as given.
PodTemplate = Annotated[Json, Embedded("PodTemplateSpec")]


@define(kw_only=True)
class ProviderOverride:
    """A sparse fragment of the workload provider's own schema (Grove only), applied to the
    resource generated at the place where it is written: graph, component or role."""

    api_version: str = field(
        metadata=doc("Provider schema version; grove.io/v1alpha1.", min_length=1)
    )
    target: str | None = field(
        default=None,
        metadata=doc(
            "Provider resource or embedded schema (PodCliqueSet, PodCliqueTemplateSpec or "
            "PodCliqueScalingGroupConfig); filled in by admission when left out."
        ),
    )
    value: FreeForm = field(metadata=doc("Sparse fragment of the target schema."))


@define(kw_only=True)
class SpecTopologyConstraint:
    """Graph-level topology placement: the ClusterTopology to use and a default pack domain."""

    cluster_topology_name: str = field(
        metadata=doc("Name of the ClusterTopology defining the hierarchy.", min_length=1)
    )
    pack_domain: str | None = field(
        default=None, metadata=doc("Default topology domain to pack pods within.",
                                   pattern=TOPOLOGY_DOMAIN_PATTERN)
    )


@define(kw_only=True)
class TopologyConstraint:
    """Component-level topology placement; the topology comes from the graph's constraint."""

    pack_domain: str = field(
        metadata=doc("Topology domain to pack pods within; no wider than the graph's packDomain.",
                     pattern=TOPOLOGY_DOMAIN_PATTERN)
    )


@define(kw_only=True)
class ModelReference:
    """Names the model a component serves, for endpoint discovery by DynamoModel."""

    name: str = field(metadata=doc("Base model identifier.", min_length=1))
    revision: str | None = field(default=None, metadata=doc("Model revision or version."))


@define(kw_only=True)
class MultinodeSpec:
    """Runs each replica of a worker, prefill or decode component across several nodes."""

    node_count: int | None = field(
        default=None,
        metadata=doc("Nodes per replica; at least 2, immutable.", minimum=2, default=2),
    )


@define(kw_only=True)
class ComponentRoleSpec:
    """One named pod-producing role of a compound (multinode) component."""

    name: str = field(metadata=doc("Role name: leader or worker.", min_length=1))
    replicas: int | None = field(
        default=None,
        metadata=doc("Pods of this role in one component instance.", minimum=1),
    )
    provider_override: ProviderOverride | None = field(
        default=None, metadata=doc("Provider settings of the workload unit of this role.")
    )
    pod_template: PodTemplate | None = field(
        default=None, metadata=doc("Pod template of this role, where the type allows one.")
    )


@define(kw_only=True)
class ScalingAdapter:
    """Marker: present (even as {}) means a DynamoGraphDeploymentScalingAdapter owns the
    component's replicas; absent means replicas are edited directly."""


@define(kw_only=True)
class EPPConfig:
    """Deprecated legacy Go EPP configuration; exactly one of configMapRef and config."""

    config_map_ref: ConfigMapKeyRef | None = field(
        default=None, metadata=doc("Key of a ConfigMap holding an EndpointPickerConfig.")
    )
    config: FreeForm | None = field(
        default=None, metadata=doc("An EndpointPickerConfig given inline.")
    )


@define(kw_only=True)
class CompilationCacheConfig:
    """A PVC used as the backend's compilation cache."""

    pvc_name: str = field(metadata=doc("Name of an existing PVC.", min_length=1))
    mount_path: str | None = field(
        default=None, metadata=doc("Mount path; the backend's default when left out.")
    )


@define(kw_only=True)
class RestartStrategy:
    """How the components of a graph are restarted."""

    type: str | None = field(
        default=None,
        metadata=doc("Sequential or Parallel.", enum=RESTART_STRATEGIES, default="Sequential"),
    )
    order: list[str] | None = field(
        default=None, metadata=doc("Component names in restart order (Sequential only).")
    )


@define(kw_only=True)
class Restart:
    """A request to restart the pods of the graph; changing id starts a new restart."""

    id: str = field(metadata=doc("Any string; a new value starts a restart.", min_length=1))
    strategy: RestartStrategy | None = field(
        default=None, metadata=doc("Order in which the components are restarted.")
    )
