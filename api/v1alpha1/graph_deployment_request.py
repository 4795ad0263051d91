"""DynamoGraphDeploymentRequest (dgdr): "deploy this model to meet these SLAs".

The controller profiles the model (on GPUs or by AI Configurator simulation), generates a
DynamoGraphDeployment from the results and, with autoApply, creates it. The spec is frozen
once profiling starts.

Fields of the older request shape (`modelName`, `sla`, `gpu`, `online`) are still declared so
stored objects load without loss, but they are rejected (by the CRD's CEL rules and by
`api.validation`) with a message saying where each one moved; see `LEGACY_FIELDS`.
"""

from __future__ import annotations

from typing import ClassVar

from attrs import define, field

from api.kube import Condition, FreeForm, ObjectMeta, RawExtension, ResourceRequirements, Toleration
from api.markers import CelRule, doc
from api.v1alpha1.graph_deployment import GROUP_VERSION

DGDR_BACKENDS = ("vllm", "sglang", "trtllm")
DGDR_STATES = ("Pending", "Profiling", "Deploying", "Ready", "DeploymentDeleted", "Failed")
# States in which the spec may no longer change.
DGDR_FROZEN_STATES = ("Profiling", "Deploying", "Ready", "DeploymentDeleted")

# JSON name of each field of the older shape -> how to migrate it (said of `spec.<name>`).
LEGACY_FIELDS: dict[str, str] = {
    "modelName": "was replaced by spec.model; move the value there",
    "sla": "was removed; put its ttft and itl under spec.profilingConfig.config.sla",
    "gpu": (
        "was removed; describe the GPUs under spec.profilingConfig.config.hardware "
        "or set spec.enableGpuDiscovery"
    ),
    "online": (
        "was removed; choose the profiling mode with "
        "spec.profilingConfig.config.sweep.use_ai_configurator (true for the old online: false)"
    ),
}


def _legacy(name: str) -> str:
    return f"Deprecated, rejected: this field of the older request shape {LEGACY_FIELDS[name]}."


@define(kw_only=True)
class ConfigMapKeySelector:
    """A key of a ConfigMap in the request's namespace."""

    name: str = field(metadata=doc("Name of the ConfigMap."))
    key: str | None = field(
        default=None,
        metadata=doc("Key inside the ConfigMap; disagg.yaml when left out.", default="disagg.yaml"),
    )


@define(kw_only=True)
class ProfilingConfigSpec:
    """Settings of the profiling job. `config` goes to the profiler as is (its profile_sla
    format); the controller fills in deployment.model and engine.backend itself."""

    config: FreeForm | None = field(
        default=None,
        metadata=doc(
            "Profiler configuration as arbitrary JSON/YAML, passed through unchanged; the "
            "profiler validates it and reports problems."
        ),
    )
    config_map_ref: ConfigMapKeySelector | None = field(
        default=None,
        metadata=doc(
            "ConfigMap with the base DynamoGraphDeployment config (disagg.yaml) to profile; "
            "its path is passed to the profiler as engine.config."
        ),
    )
    profiler_image: str | None = field(
        default=None,
        metadata=doc(
            'Container image of the profiling job, e.g. "nvcr.io/nvidia/ai-dynamo/'
            'vllm-runtime:0.6.1".',
            required=True,
        ),
    )
    output_pvc: str | None = field(
        default=None,
        metadata=doc(
            "Existing PVC in the request's namespace that receives every profiling artifact "
            "(logs, plots, configs, raw data) instead of a throw-away emptyDir. The results "
            "ConfigMaps are written either way.",
            json="outputPVC",
        ),
    )
    resources: ResourceRequirements | None = field(
        default=None,
        metadata=doc("CPU, memory and GPU requests and limits of the profiling container."),
    )
    tolerations: list[Toleration] | None = field(
        default=None,
        metadata=doc(
            "Tolerations of the profiling pod, e.g. for the nvidia.com/gpu taint of GPU nodes."
        ),
    )


@define(kw_only=True)
class DeploymentOverridesSpec:
    """Metadata and image changes applied to the DynamoGraphDeployment created by autoApply."""

    name: str | None = field(
        default=None, metadata=doc("Name of the created graph; the request's name if unset.")
    )
    namespace: str | None = field(
        default=None,
        metadata=doc("Namespace of the created graph; the request's namespace if unset."),
    )
    labels: dict[str, str] | None = field(
        default=None,
        metadata=doc("Labels added to the graph, next to those the profiler generates."),
    )
    annotations: dict[str, str] | None = field(
        default=None, metadata=doc("Annotations added to the graph.")
    )
    workers_image: str | None = field(
        default=None,
        metadata=doc(
            "Image of the worker components, both in the graphs made while profiling and in "
            "the final one. Taken from the base config when unset."
        ),
    )


@define(kw_only=True)
class SLASpec:
    """Deprecated (older request shape): latency targets, now in profilingConfig.config.sla."""

    itl: int = field(metadata=doc("Target inter-token latency in milliseconds."))
    ttft: int = field(metadata=doc("Target time to first token in milliseconds."))


@define(kw_only=True)
class GPUSpec:
    """Deprecated (older request shape): GPU type, now in profilingConfig.config.hardware."""

    type: str | None = field(default=None, metadata=doc('GPU type, e.g. "h100".'))


@define(kw_only=True)
class DynamoGraphDeploymentRequestSpec:
    """Desired state of a DynamoGraphDeploymentRequest. `model`, `backend` and
    `profilingConfig` are required by the schema; they are optional here only so that objects
    of the older shape can still be read and reported."""

    cel_rules: ClassVar[tuple[CelRule, ...]] = tuple(
        CelRule(rule=f"!has(self.{name})", message=f"spec.{name} {message}")
        for name, message in LEGACY_FIELDS.items()
    )

    model: str | None = field(
        default=None,
        metadata=doc(
            'Model to deploy, e.g. "Qwen/Qwen3-0.6B"; shown by kubectl and copied into '
            "profilingConfig.config.deployment.model.",
            required=True,
        ),
    )
    backend: str | None = field(
        default=None,
        metadata=doc(
            "Inference backend to profile and deploy; copied into "
            "profilingConfig.config.engine.backend.",
            enum=DGDR_BACKENDS,
            required=True,
        ),
    )
    use_mocker: bool | None = field(
        default=None,
        metadata=doc(
            "Deploy a mocker graph (simulated engines timed from the profiling data, no GPUs) "
            "instead of the real backend. Profiling still uses the real backend.",
            default=False,
        ),
    )
    enable_gpu_discovery: bool | None = field(
        default=None,
        metadata=doc(
            "Let the profiler read GPU facts from the cluster's nodes, overriding the hardware "
            "settings in the config. Needs node read access, so only a cluster-wide operator "
            "supports it.",
            default=False,
        ),
    )
    profiling_config: ProfilingConfigSpec | None = field(
        default=None,
        metadata=doc("Configuration of the profiling job.", required=True),
    )
    auto_apply: bool | None = field(
        default=None,
        metadata=doc(
            "Create the generated DynamoGraphDeployment when profiling is done. Otherwise the "
            "spec is only written to status.generatedDeployment.",
            default=False,
        ),
    )
    deployment_overrides: DeploymentOverridesSpec | None = field(
        default=None,
        metadata=doc("Metadata and image overrides for the graph created by autoApply."),
    )
    model_name: str | None = field(
        default=None, metadata=doc(_legacy("modelName"), deprecated=True)
    )
    sla: SLASpec | None = field(default=None, metadata=doc(_legacy("sla"), deprecated=True))
    gpu: GPUSpec | None = field(default=None, metadata=doc(_legacy("gpu"), deprecated=True))
    online: bool | None = field(default=None, metadata=doc(_legacy("online"), deprecated=True))


@define(kw_only=True)
class DeploymentStatus:
    """The DynamoGraphDeployment created for the request."""

    name: str | None = field(default=None, metadata=doc("Name of the created graph."))
    namespace: str | None = field(default=None, metadata=doc("Namespace of the created graph."))
    state: str | None = field(default=None, metadata=doc("The graph's status.state, copied here."))
    created: bool | None = field(
        default=None,
        metadata=doc("The graph was created; it is not created again if a user deletes it."),
    )


@define(kw_only=True)
class DynamoGraphDeploymentRequestStatus:
    """Observed state of a DynamoGraphDeploymentRequest."""

    state: str | None = field(
        default=None,
        metadata=doc(
            "Lifecycle state: empty before the first reconcile, then Pending, Profiling, "
            "Deploying, Ready, DeploymentDeleted or Failed."
        ),
    )
    backend: str | None = field(
        default=None, metadata=doc("Backend being profiled, for display by kubectl.")
    )
    observed_generation: int | None = field(
        default=None,
        metadata=doc(
            "The metadata.generation last accepted; used to refuse spec changes once "
            "profiling has started.",
            format="int64",
        ),
    )
    conditions: list[Condition] | None = field(
        default=None,
        metadata=doc(
            "Latest observations, one per type: Validation, Profiling, SpecGenerated, "
            "DeploymentReady."
        ),
    )
    profiling_results: str | None = field(
        default=None,
        metadata=doc('ConfigMap with the profiling data, as "configmap/<name>".'),
    )
    generated_deployment: RawExtension | None = field(
        default=None,
        metadata=doc(
            "The complete DynamoGraphDeployment (metadata included) generated from the "
            "profiling results, ready to apply by hand or used by autoApply. A mocker graph "
            "when useMocker is set."
        ),
    )
    deployment: DeploymentStatus | None = field(
        default=None, metadata=doc("The graph created by autoApply.")
    )


@define(kw_only=True)
class DynamoGraphDeploymentRequest:
    """A request to deploy a model within latency targets: the operator profiles it, generates a
    DynamoGraphDeployment and, with autoApply, creates it. The spec cannot change once
    profiling has started; delete and recreate the request instead."""

    api_version: str = field(
        default=GROUP_VERSION, metadata=doc("Versioned schema of this object.")
    )
    kind: str = field(default="DynamoGraphDeploymentRequest", metadata=doc("Kind of this object."))
    # No description: the API server allows nothing on metadata but its name rules.
    metadata: ObjectMeta = field(factory=dict, metadata=doc(""))
    spec: DynamoGraphDeploymentRequestSpec = field(
        factory=DynamoGraphDeploymentRequestSpec,
        metadata=doc("Desired state of the request.", required=True),
    )
    status: DynamoGraphDeploymentRequestStatus | None = field(
        default=None, metadata=doc("Observed state of the request.")
    )
