"""DynamoGraphDeploymentRequest (dgdr), v1beta1: deploy a model by intent.

The spec says what to serve and the targets (model, backend, hardware, workload, SLA); the
operator profiles it, generates a DynamoGraphDeployment and, unless autoApply is false,
creates it. `status.phase` follows the lifecycle, `status.profilingPhase` the profiler.
"""

from __future__ import annotations

from attrs import define, field

from api.kube import Condition, FreeForm, ObjectMeta, RawExtension
from api.markers import doc
from api.v1beta1.common import GROUP_VERSION, Number

DGDR_BACKENDS = ("auto", "vllm", "sglang", "trtllm")
SEARCH_STRATEGIES = ("rapid", "thorough")
OPTIMIZATION_TYPES = ("latency", "throughput")
DGDR_PHASES = ("Pending", "Profiling", "Ready", "Deploying", "Deployed", "Failed")
PROFILING_PHASES = (
    "Initializing",
    "SweepingPrefill",
    "SweepingDecode",
    "SelectingConfig",
    "BuildingCurves",
    "GeneratingDGD",
    "Done",
)


@define(kw_only=True)
class WorkloadSpec:
    """Expected traffic: sequence lengths and a concurrency or request rate."""

    isl: int | None = field(
        default=None, metadata=doc("Average input sequence length.", default=4000)
    )
    osl: int | None = field(
        default=None, metadata=doc("Average output sequence length.", default=1000)
    )
    concurrency: Number | None = field(
        default=None, metadata=doc("Target concurrency; not with requestRate.")
    )
    request_rate: Number | None = field(
        default=None, metadata=doc("Target requests per second; not with concurrency.")
    )


@define(kw_only=True)
class SLASpec:
    """Latency targets in milliseconds: ttft and itl, or e2eLatency."""

    ttft: Number | None = field(
        default=None, metadata=doc("Time to first token (ms).", default=2000)
    )
    itl: Number | None = field(default=None, metadata=doc("Inter-token latency (ms).", default=30))
    e2e_latency: Number | None = field(
        default=None, metadata=doc("End-to-end latency (ms); not with ttft and itl.")
    )
    optimization_type: str | None = field(
        default=None, metadata=doc("latency or throughput.", enum=OPTIMIZATION_TYPES)
    )


@define(kw_only=True)
class HardwareSpec:
    """GPU hardware to profile and deploy on; discovered when left out."""

    gpu_sku: str | None = field(default=None, metadata=doc("GPU SKU, e.g. h100_sxm."))
    vram_mb: Number | None = field(default=None, metadata=doc("VRAM per GPU in MiB."))
    total_gpus: int | None = field(default=None, metadata=doc("GPU budget."))
    num_gpus_per_node: int | None = field(default=None, metadata=doc("GPUs per node."))
    interconnect: str | None = field(
        default=None, metadata=doc("GPU interconnect within a node, e.g. nvlink or pcie.")
    )
    rdma: bool | None = field(default=None, metadata=doc("RDMA-capable networking."))


@define(kw_only=True)
class ModelCacheSpec:
    """A PVC holding pre-downloaded model weights."""

    pvc_name: str | None = field(default=None, metadata=doc("ReadWriteMany PVC with weights."))
    pvc_model_path: str | None = field(
        default=None, metadata=doc("Path of the model inside the PVC.")
    )
    pvc_mount_path: str | None = field(
        default=None, metadata=doc("Mount path of the PVC.", default="/opt/model-cache")
    )


@define(kw_only=True)
class KVRouterSpec:
    """KV-cache-aware routing in the generated graph."""

    enabled: bool | None = field(default=None, metadata=doc("Enable KV-aware routing."))


@define(kw_only=True)
class MockerSpec:
    """Simulated (mocker) workers instead of real engines."""

    enabled: bool | None = field(default=None, metadata=doc("Deploy mocker workers."))


@define(kw_only=True)
class FeaturesSpec:
    """Optional platform features of the generated graph."""

    planner: FreeForm | None = field(
        default=None, metadata=doc("PlannerConfig; its presence enables the planner.")
    )
    kv_router: KVRouterSpec | None = field(
        default=None, metadata=doc("KV-cache-aware routing.", json="kvRouter")
    )
    mocker: MockerSpec | None = field(default=None, metadata=doc("Mocker backend."))


@define(kw_only=True)
class OverridesSpec:
    """Changes merged into the profiling Job and the generated graph."""

    profiling_job: FreeForm | None = field(
        default=None, metadata=doc("A batch/v1 JobSpec merged into the profiling Job.")
    )
    trust_remote_code: bool | None = field(
        default=None,
        metadata=doc(
            "Let the generated vLLM and SGLang workers run the model repository's own code "
            "(--trust-remote-code).",
            default=False,
        ),
    )
    dgd: RawExtension | None = field(
        default=None, metadata=doc("A partial, versioned DGD merged into the generated one.")
    )


@define(kw_only=True)
class DynamoGraphDeploymentRequestSpec:
    """Desired state of a DynamoGraphDeploymentRequest."""

    model: str | None = field(
        default=None,
        metadata=doc("Model to deploy (HuggingFace ID or name).", required=True, min_length=1),
    )
    image: str | None = field(default=None, metadata=doc("Image of the profiling job."))
    runtime_version_override: str | None = field(
        default=None, metadata=doc("Dynamo runtime version of an image without a version tag.")
    )
    backend: str | None = field(
        default=None,
        metadata=doc("auto, vllm, sglang or trtllm.", enum=DGDR_BACKENDS, default="auto"),
    )
    search_strategy: str | None = field(
        default=None,
        metadata=doc("rapid or thorough profiling.", enum=SEARCH_STRATEGIES, default="rapid"),
    )
    auto_apply: bool | None = field(
        default=None, metadata=doc("Create the generated graph.", default=True)
    )
    workload: WorkloadSpec | None = field(default=None, metadata=doc("Expected workload."))
    sla: SLASpec | None = field(default=None, metadata=doc("Latency targets."))
    hardware: HardwareSpec | None = field(default=None, metadata=doc("GPU hardware."))
    model_cache: ModelCacheSpec | None = field(
        default=None, metadata=doc("PVC with pre-downloaded weights.")
    )
    features: FeaturesSpec | None = field(
        default=None, metadata=doc("Platform features of the generated graph.")
    )
    overrides: OverridesSpec | None = field(
        default=None, metadata=doc("Overrides of the profiling Job and the generated graph.")
    )


@define(kw_only=True)
class ParetoConfig:
    """Deprecated: one Pareto point of older profiling runs."""

    config: RawExtension | None = field(
        default=None, metadata=doc("Deployment configuration of the point.")
    )


@define(kw_only=True)
class ProfilingResultsStatus:
    """Output of profiling."""

    pareto: list[ParetoConfig] | None = field(
        default=None, metadata=doc("Deprecated; not populated.", deprecated=True)
    )
    selected_config: RawExtension | None = field(
        default=None, metadata=doc("The configuration chosen for the SLA targets.")
    )


@define(kw_only=True)
class DeploymentInfoStatus:
    """State of the deployed graph."""

    replicas: int | None = field(default=None, metadata=doc("Desired replicas."))
    available_replicas: int | None = field(default=None, metadata=doc("Available replicas."))


@define(kw_only=True)
class DynamoGraphDeploymentRequestStatus:
    """Observed state of a DynamoGraphDeploymentRequest."""

    phase: str | None = field(default=None, metadata=doc("Lifecycle phase.", enum=DGDR_PHASES))
    profiling_phase: str | None = field(
        default=None, metadata=doc("Profiler sub-phase while Profiling.", enum=PROFILING_PHASES)
    )
    dgd_name: str | None = field(
        default=None, metadata=doc("Name of the generated or created graph.", json="dgdName")
    )
    profiling_job_name: str | None = field(default=None, metadata=doc("Name of the profiling Job."))
    conditions: list[Condition] | None = field(
        default=None, metadata=doc("Latest observations, one per type.")
    )
    profiling_results: ProfilingResultsStatus | None = field(
        default=None, metadata=doc("Output of profiling.")
    )
    deployment_info: DeploymentInfoStatus | None = field(
        default=None, metadata=doc("State of the deployed graph.")
    )
    observed_generation: int | None = field(
        default=None, metadata=doc("The metadata.generation observed.", format="int64")
    )


@define(kw_only=True)
class DynamoGraphDeploymentRequest:
    """A request to deploy a model by intent: profiled, turned into a DynamoGraphDeployment
    and, unless autoApply is false, deployed."""

    api_version: str = field(default=GROUP_VERSION, metadata=doc("Versioned schema."))
    kind: str = field(default="DynamoGraphDeploymentRequest", metadata=doc("Kind of this object."))
    metadata: ObjectMeta = field(factory=dict, metadata=doc(""))
    spec: DynamoGraphDeploymentRequestSpec = field(
        factory=DynamoGraphDeploymentRequestSpec,
        metadata=doc("Desired state of the request.", required=True),
    )
    status: DynamoGraphDeploymentRequestStatus | None = field(
        default=None, metadata=doc("Observed state of the request.")
    )
