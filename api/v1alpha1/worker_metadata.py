"""DynamoWorkerMetadata (dwm): what one Dynamo worker pod publishes for Kubernetes discovery.

The Dynamo runtime of a pod that runs with `DYN_DISCOVERY_BACKEND=kubernetes` writes one of
these, named after its pod and owned by it, holding its discovery registrations (endpoints,
model cards, ...) as one JSON object under `spec.data`. Readers pair it with the pod's
readiness in the EndpointSlices. The operator neither writes nor reads it: it serves the CRD,
grants the pods (and the planner and EPP) access to it, and garbage collection removes it with
its pod. It has one version, `v1alpha1`, and no status, as the original's.
"""

from __future__ import annotations

from attrs import define, field

from api.kube import FreeForm, ObjectMeta
from api.markers import doc
from api.v1alpha1.graph_deployment import GROUP_VERSION

__all__ = ["DynamoWorkerMetadata", "DynamoWorkerMetadataSpec"]


@define(kw_only=True)
class DynamoWorkerMetadataSpec:
    """Spec contains the worker metadata."""

    data: FreeForm = field(metadata=doc("Raw JSON blob containing DiscoveryMetadata."))


@define(kw_only=True)
class DynamoWorkerMetadata:
    """DynamoWorkerMetadata stores discovery metadata for a Dynamo worker pod."""

    api_version: str = field(
        default=GROUP_VERSION,
        metadata=doc("APIVersion defines the versioned schema of this representation."),
    )
    kind: str = field(
        default="DynamoWorkerMetadata",
        metadata=doc("Kind is a string value representing the REST resource."),
    )
    # No description: the API server allows nothing on metadata but its name rules.
    metadata: ObjectMeta = field(factory=dict, metadata=doc(""))
    spec: DynamoWorkerMetadataSpec | None = field(
        default=None, metadata=doc("Spec contains the worker metadata.")
    )
