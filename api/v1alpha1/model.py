"""DynamoModel (dmodel, dm): a model served by components of graphs, base or LoRA adapter.

The controller finds the pods serving `baseModelName` and, for a LoRA model, loads the adapter
from `source.uri` into each of them.
"""

from __future__ import annotations

from attrs import define, field

from api.kube import Condition, ObjectMeta
from api.markers import doc
from api.v1alpha1.graph_deployment import GROUP_VERSION

MODEL_TYPES = ("base", "lora", "adapter")
MODEL_SOURCE_SCHEMES = ("s3://", "hf://")


@define(kw_only=True)
class ModelSource:
    """Where a model's files are."""

    uri: str = field(
        metadata=doc("Location of the model: s3://bucket/path or hf://org/model@revision.")
    )


@define(kw_only=True)
class DynamoModelSpec:
    """Desired state of a DynamoModel."""

    model_name: str = field(
        metadata=doc('Full model identifier, e.g. "meta-llama/Llama-3.3-70B-Instruct-lora".')
    )
    base_model_name: str = field(
        metadata=doc(
            "Base model identifier; it matches the modelRef of the serving components, whose "
            "endpoints are found through their headless Service."
        )
    )
    model_type: str | None = field(
        default=None,
        metadata=doc("base, lora or adapter.", enum=MODEL_TYPES, default="base"),
    )
    source: ModelSource | None = field(
        default=None, metadata=doc("Where the model is; required for a lora model.")
    )


@define(kw_only=True)
class EndpointInfo:
    """One pod serving the model."""

    address: str | None = field(
        default=None, metadata=doc('Address of the endpoint, e.g. "http://10.0.1.5:9090".')
    )
    pod_name: str | None = field(default=None, metadata=doc("Pod behind the endpoint."))
    ready: bool | None = field(
        default=None,
        metadata=doc(
            "For a lora model: the endpoint is ready and the adapter is loaded in it (POST "
            "/engine/v1/load_lora answered 2xx). Always false for a base model, which is not "
            "probed."
        ),
    )
    loaded_on: str | None = field(
        default=None,
        metadata=doc(
            "For a lora model: the pod uid and container restart count (<uid>/<restarts>) of "
            "the run the adapter was loaded into. A new pod or a restarted container no longer "
            "matches and is loaded again; a matching one is not called."
        ),
    )


@define(kw_only=True)
class DynamoModelStatus:
    """Observed state of a DynamoModel."""

    observed_generation: int | None = field(
        default=None,
        metadata=doc("The metadata.generation this status was computed from.", format="int64"),
    )
    endpoints: list[EndpointInfo] | None = field(
        default=None, metadata=doc("Every endpoint currently serving the model.")
    )
    ready_endpoints: int | None = field(default=None, metadata=doc("How many endpoints are ready."))
    total_endpoints: int | None = field(default=None, metadata=doc("How many endpoints exist."))
    conditions: list[Condition] | None = field(
        default=None, metadata=doc("Latest observations of the model's state.")
    )


@define(kw_only=True)
class DynamoModel:
    """A model served by Dynamo components: a base model, or a LoRA adapter that the operator
    loads into every pod serving its base model."""

    api_version: str = field(
        default=GROUP_VERSION, metadata=doc("Versioned schema of this object.")
    )
    kind: str = field(default="DynamoModel", metadata=doc("Kind of this object."))
    # No description: the API server allows nothing on metadata but its name rules.
    metadata: ObjectMeta = field(factory=dict, metadata=doc(""))
    spec: DynamoModelSpec = field(metadata=doc("Desired state of the model."))
    status: DynamoModelStatus | None = field(
        default=None, metadata=doc("Observed state of the model.")
    )
