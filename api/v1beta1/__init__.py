"""Models of the five nvidia.com/v1beta1 custom resources (the hub version).

Same conventions as `api.v1alpha1`: attrs classes with keyword-only arguments, None means
absent, embedded Kubernetes types (pod templates, env vars, conditions...) stay plain JSON
dicts, and `api.convert.load` / `dump` turn JSON into models and back without loss.
Conversion to and from v1alpha1 lives in `api.conversion`.
"""

from api.v1beta1.common import (
    BACKEND_FRAMEWORKS,
    GROUP_VERSION,
    RESTART_STRATEGIES,
    CompilationCacheConfig,
    ComponentRoleSpec,
    EPPConfig,
    ModelReference,
    MultinodeSpec,
    ProviderOverride,
    Restart,
    RestartStrategy,
    ScalingAdapter,
    SpecTopologyConstraint,
    TopologyConstraint,
)
from api.v1beta1.component import (
    COMPONENT_TYPES,
    MAIN_CONTAINER,
    DynamoComponentDeploymentSharedSpec,
    DynamoComponentDeploymentSpec,
    main_container,
)
from api.v1beta1.component_deployment import (
    DynamoComponentDeployment,
    DynamoComponentDeploymentStatus,
)
from api.v1beta1.experimental import (
    ComponentCheckpointConfig,
    ComponentCheckpointJobConfig,
    DynamoCheckpointIdentity,
    ExperimentalSpec,
    FailoverSpec,
    GMSClientPodSpec,
    GPUMemoryServiceSpec,
    GroveSpec,
)
from api.v1beta1.graph_deployment import (
    MAX_COMPONENTS,
    RESTART_PHASES,
    ComponentCheckpointStatus,
    ComponentGroupComponentSpec,
    ComponentGroupSpec,
    DynamoGraphDeployment,
    DynamoGraphDeploymentExperimentalSpec,
    DynamoGraphDeploymentSpec,
    DynamoGraphDeploymentStatus,
    KvTransferPolicy,
    PlacementStatus,
    RestartStatus,
    RollingUpdateStatus,
)
from api.v1beta1.graph_deployment_request import (
    DGDR_BACKENDS,
    DGDR_PHASES,
    PROFILING_PHASES,
    DeploymentInfoStatus,
    DynamoGraphDeploymentRequest,
    DynamoGraphDeploymentRequestSpec,
    DynamoGraphDeploymentRequestStatus,
    FeaturesSpec,
    HardwareSpec,
    KVRouterSpec,
    MockerSpec,
    ModelCacheSpec,
    OverridesSpec,
    ParetoConfig,
    ProfilingResultsStatus,
    SLASpec,
    WorkloadSpec,
)
from api.v1beta1.model import DynamoModel, DynamoModelSpec, DynamoModelStatus
from api.v1beta1.replica_status import ComponentReplicaStatus
from api.v1beta1.scaling_adapter import (
    DynamoGraphDeploymentComponentRef,
    DynamoGraphDeploymentScalingAdapter,
    DynamoGraphDeploymentScalingAdapterSpec,
    DynamoGraphDeploymentScalingAdapterStatus,
)

GROUP = "nvidia.com"
VERSION = "v1beta1"

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
    "COMPONENT_TYPES",
    "DGDR_BACKENDS",
    "DGDR_PHASES",
    "GROUP",
    "GROUP_VERSION",
    "KINDS",
    "MAIN_CONTAINER",
    "MAX_COMPONENTS",
    "PROFILING_PHASES",
    "RESTART_PHASES",
    "RESTART_STRATEGIES",
    "VERSION",
    "CompilationCacheConfig",
    "ComponentCheckpointConfig",
    "ComponentCheckpointJobConfig",
    "ComponentCheckpointStatus",
    "ComponentGroupComponentSpec",
    "ComponentGroupSpec",
    "ComponentReplicaStatus",
    "ComponentRoleSpec",
    "DeploymentInfoStatus",
    "DynamoCheckpointIdentity",
    "DynamoComponentDeployment",
    "DynamoComponentDeploymentSharedSpec",
    "DynamoComponentDeploymentSpec",
    "DynamoComponentDeploymentStatus",
    "DynamoGraphDeployment",
    "DynamoGraphDeploymentComponentRef",
    "DynamoGraphDeploymentExperimentalSpec",
    "DynamoGraphDeploymentRequest",
    "DynamoGraphDeploymentRequestSpec",
    "DynamoGraphDeploymentRequestStatus",
    "DynamoGraphDeploymentScalingAdapter",
    "DynamoGraphDeploymentScalingAdapterSpec",
    "DynamoGraphDeploymentScalingAdapterStatus",
    "DynamoGraphDeploymentSpec",
    "DynamoGraphDeploymentStatus",
    "DynamoModel",
    "DynamoModelSpec",
    "DynamoModelStatus",
    "EPPConfig",
    "ExperimentalSpec",
    "FailoverSpec",
    "FeaturesSpec",
    "GMSClientPodSpec",
    "GPUMemoryServiceSpec",
    "GroveSpec",
    "HardwareSpec",
    "KVRouterSpec",
    "KvTransferPolicy",
    "MockerSpec",
    "ModelCacheSpec",
    "ModelReference",
    "MultinodeSpec",
    "OverridesSpec",
    "ParetoConfig",
    "PlacementStatus",
    "ProfilingResultsStatus",
    "ProviderOverride",
    "Resource",
    "Restart",
    "RestartStatus",
    "RestartStrategy",
    "RollingUpdateStatus",
    "SLASpec",
    "ScalingAdapter",
    "SpecTopologyConstraint",
    "TopologyConstraint",
    "WorkloadSpec",
    "main_container",
]
