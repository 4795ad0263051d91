"""Models of the five nvidia.com/v1alpha1 custom resources.

Every class is an attrs class with keyword-only arguments. Optional fields default to None and
None means "absent": the converter (`api.convert`) leaves them out of the JSON, so loading and
dumping an object gives back exactly what the API server sent. Embedded Kubernetes types (pod
specs, probes, env vars, conditions...) stay plain JSON dicts; see `api.kube`.

Models are mutable on purpose: `api.convert.load` returns a fresh deep copy, so a reconciler
can edit what it loaded without touching the informer cache.
"""

from api.v1alpha1.component import (
    BACKEND_FRAMEWORKS,
    COMPONENT_TYPES,
    SUB_COMPONENT_TYPES,
    Autoscaling,
    DynamoComponentDeploymentSharedSpec,
    DynamoComponentDeploymentSpec,
    EPPConfig,
    ExtraPodMetadata,
    ExtraPodSpec,
    FrontendSidecarSpec,
    IngressSpec,
    IngressTLSSpec,
    ModelReference,
    MultinodeSpec,
    ResourceItem,
    Resources,
    ScalingAdapter,
    SharedMemorySpec,
    VolumeMount,
)
from api.v1alpha1.component_deployment import (
    DynamoComponentDeployment,
    DynamoComponentDeploymentStatus,
)
from api.v1alpha1.graph_deployment import (
    GROUP_VERSION,
    PVC,
    RESTART_PHASES,
    RESTART_STRATEGIES,
    VOLUME_ACCESS_MODES,
    DynamoGraphDeployment,
    DynamoGraphDeploymentSpec,
    DynamoGraphDeploymentStatus,
    Restart,
    RestartStatus,
    RestartStrategy,
    RollingUpdateStatus,
)
from api.v1alpha1.graph_deployment_request import (
    DGDR_BACKENDS,
    DGDR_FROZEN_STATES,
    DGDR_STATES,
    LEGACY_FIELDS,
    ConfigMapKeySelector,
    DeploymentOverridesSpec,
    DeploymentStatus,
    DynamoGraphDeploymentRequest,
    DynamoGraphDeploymentRequestSpec,
    DynamoGraphDeploymentRequestStatus,
    GPUSpec,
    ProfilingConfigSpec,
    SLASpec,
)
from api.v1alpha1.model import (
    MODEL_SOURCE_SCHEMES,
    MODEL_TYPES,
    DynamoModel,
    DynamoModelSpec,
    DynamoModelStatus,
    EndpointInfo,
    ModelSource,
)
from api.v1alpha1.replica_status import COMPONENT_KINDS, ServiceReplicaStatus
from api.v1alpha1.scaling_adapter import (
    DynamoGraphDeploymentScalingAdapter,
    DynamoGraphDeploymentScalingAdapterSpec,
    DynamoGraphDeploymentScalingAdapterStatus,
    DynamoGraphDeploymentServiceRef,
)

GROUP = "nvidia.com"
VERSION = "v1alpha1"

Resource = (
    DynamoGraphDeployment
    | DynamoComponentDeployment
    | DynamoGraphDeploymentRequest
    | DynamoGraphDeploymentScalingAdapter
    | DynamoModel
)

# kind -> model class, for code that starts from a JSON object.
KINDS: dict[str, type[Resource]] = {
    "DynamoGraphDeployment": DynamoGraphDeployment,
    "DynamoComponentDeployment": DynamoComponentDeployment,
    "DynamoGraphDeploymentRequest": DynamoGraphDeploymentRequest,
    "DynamoGraphDeploymentScalingAdapter": DynamoGraphDeploymentScalingAdapter,
    "DynamoModel": DynamoModel,
}

__all__ = [
    "BACKEND_FRAMEWORKS",
    "COMPONENT_KINDS",
    "COMPONENT_TYPES",
    "DGDR_BACKENDS",
    "DGDR_FROZEN_STATES",
    "DGDR_STATES",
    "GROUP",
    "GROUP_VERSION",
    "KINDS",
    "LEGACY_FIELDS",
    "MODEL_SOURCE_SCHEMES",
    "MODEL_TYPES",
    "PVC",
    "RESTART_PHASES",
    "RESTART_STRATEGIES",
    "SUB_COMPONENT_TYPES",
    "VERSION",
    "VOLUME_ACCESS_MODES",
    "Autoscaling",
    "ConfigMapKeySelector",
    "DeploymentOverridesSpec",
    "DeploymentStatus",
    "DynamoComponentDeployment",
    "DynamoComponentDeploymentSharedSpec",
    "DynamoComponentDeploymentSpec",
    "DynamoComponentDeploymentStatus",
    "DynamoGraphDeployment",
    "DynamoGraphDeploymentRequest",
    "DynamoGraphDeploymentRequestSpec",
    "DynamoGraphDeploymentRequestStatus",
    "DynamoGraphDeploymentScalingAdapter",
    "DynamoGraphDeploymentScalingAdapterSpec",
    "DynamoGraphDeploymentScalingAdapterStatus",
    "DynamoGraphDeploymentServiceRef",
    "DynamoGraphDeploymentSpec",
    "DynamoGraphDeploymentStatus",
    "DynamoModel",
    "DynamoModelSpec",
    "DynamoModelStatus",
    "EPPConfig",
    "EndpointInfo",
    "ExtraPodMetadata",
    "ExtraPodSpec",
    "FrontendSidecarSpec",
    "GPUSpec",
    "IngressSpec",
    "IngressTLSSpec",
    "ModelReference",
    "ModelSource",
    "MultinodeSpec",
    "ProfilingConfigSpec",
    "Resource",
    "ResourceItem",
    "Resources",
    "Restart",
    "RestartStatus",
    "RestartStrategy",
    "RollingUpdateStatus",
    "SLASpec",
    "ScalingAdapter",
    "ServiceReplicaStatus",
    "SharedMemorySpec",
    "VolumeMount",
]
