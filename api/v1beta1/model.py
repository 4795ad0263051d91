"""DynamoModel (dmodel), v1beta1: a base model or LoRA adapter served by graph components.
Same shape as v1alpha1."""

from __future__ import annotations

from attrs import define, field

from api.kube import Condition, ObjectMeta
from api.markers import doc
from api.v1beta1.common import GROUP_VERSION

MODEL_TYPES = ("base", "lora", "adapter")


@define(kw_only=True)
class ModelSource:
    """Where a model's files are."""

    uri: str = field(metadata=doc("s3://bucket/path or hf://org/model@revision."))


@define(kw_only=True)
class DynamoModelSpec:
    """Desired state of a DynamoModel."""

    model_name: str = field(metadata=doc("Full model identifier."))
    base_model_name: str = field(
        metadata=doc("Base model identifier, matched against components' modelRef.")
    )
    model_type: str | None = field(
        default=None, metadata=doc("base, lora or adapter.", enum=MODEL_TYPES, default="base")
    )
    source: ModelSource | None = field(
        default=None, metadata=doc("Where the model is; required for lora.")
    )


@define(kw_only=True)
class EndpointInfo:
    """One pod serving the model."""

    address: str | None = field(default=None, metadata=doc("Address of the endpoint."))
    pod_name: str | None = field(default=None, metadata=doc("Pod behind the endpoint."))
    ready: bool | None = field(default=None, metadata=doc("The adapter is loaded there."))
    loaded_on: str | None = field(
        default=None, metadata=doc("<pod uid>/<restarts> of the run the adapter was loaded into.")
    )


@define(kw_only=True)
class DynamoModelStatus:
    """Observed state of a DynamoModel."""

    observed_generation: int | None = field(
        default=None, metadata=doc("The metadata.generation observed.", format="int64")
    )
    endpoints: list[EndpointInfo] | None = field(
        default=None, metadata=doc("Endpoints serving the model.")
    )
    ready_endpoints: int | None = field(default=None, metadata=doc("Ready endpoints."))
    total_endpoints: int | None = field(default=None, metadata=doc("All endpoints."))
    conditions: list[Condition] | None = field(default=None, metadata=doc("Latest observations."))


@define(kw_only=True)
class DynamoModel:
    """A model served by Dynamo components: a base model, or a LoRA adapter loaded into every
    pod serving its base model."""

    api_version: str = field(default=GROUP_VERSION, metadata=doc("Versioned schema."))
    kind: str = field(default="DynamoModel", metadata=doc("Kind of this object."))
    metadata: ObjectMeta = field(factory=dict, metadata=doc(""))
    spec: DynamoModelSpec = field(metadata=doc("Desired state of the model."))
    status: DynamoModelStatus | None = field(
        default=None, metadata=doc("Observed state of the model.")
    )
