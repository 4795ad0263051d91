"""Fixed strings and numbers of the generated objects: label and annotation keys, ports,
well-known names. Tests and the users' tooling (`kubectl get -l`) depend on them byte for byte.
"""

from __future__ import annotations

from typing import Final

from api.origin_version import ORIGIN_VERSION

# --- labels ---------------------------------------------------------------------------------
LABEL_SELECTOR: Final = "nvidia.com/selector"
LABEL_COMPONENT: Final = "nvidia.com/dynamo-component"
LABEL_DYNAMO_NAMESPACE: Final = "nvidia.com/dynamo-namespace"
LABEL_GRAPH_NAME: Final = "nvidia.com/dynamo-graph-deployment-name"
LABEL_COMPONENT_TYPE: Final = "nvidia.com/dynamo-component-type"
LABEL_SUB_COMPONENT_TYPE: Final = "nvidia.com/dynamo-sub-component-type"
LABEL_METRICS_ENABLED: Final = "nvidia.com/metrics-enabled"
LABEL_BASE_MODEL_HASH: Final = "nvidia.com/dynamo-base-model-hash"
LABEL_DISCOVERY_BACKEND: Final = "nvidia.com/dynamo-discovery-backend"
LABEL_DISCOVERY_ENABLED: Final = "nvidia.com/dynamo-discovery-enabled"
LABEL_MANAGED_BY: Final = "nvidia.com/managed-by"
LABEL_KAI_QUEUE: Final = "kai.scheduler/queue"
LABEL_ROLE: Final = "role"
LABEL_INSTANCE_ID: Final = "instance-id"
MANAGED_BY: Final = "dynamo-operator"

# --- annotations ----------------------------------------------------------------------------
ANNOTATION_ORIGIN_VERSION: Final = ORIGIN_VERSION
ANNOTATION_ENABLE_GROVE: Final = "nvidia.com/enable-grove"
ANNOTATION_ENABLE_METRICS: Final = "nvidia.com/enable-metrics"
ANNOTATION_DISCOVERY_BACKEND: Final = "nvidia.com/dynamo-discovery-backend"
# "container": each container of a pod registers as a worker of its own (failover's engines).
ANNOTATION_KUBE_DISCOVERY_MODE: Final = "nvidia.com/dynamo-kube-discovery-mode"
ANNOTATION_DISABLE_PULL_SECRET_DISCOVERY: Final = "nvidia.com/disable-image-pull-secret-discovery"
ANNOTATION_KAI_QUEUE: Final = "nvidia.com/kai-scheduler-queue"
ANNOTATION_DEPLOYMENT_STRATEGY: Final = "nvidia.com/deployment-strategy"
ANNOTATION_MAX_SURGE: Final = "nvidia.com/deployment-rolling-update-max-surge"
ANNOTATION_MAX_UNAVAILABLE: Final = "nvidia.com/deployment-rolling-update-max-unavailable"
ANNOTATION_BASE_MODEL: Final = "nvidia.com/dynamo-base-model"
# Worker generations (rollouts): the original's names, so tools and dashboards carry over.
LABEL_WORKER_HASH: Final = "nvidia.com/dynamo-worker-hash"
ANNOTATION_CURRENT_WORKER_HASH_V2: Final = "nvidia.com/current-worker-hash-v2"
ANNOTATION_ROLLOUT_PROGRESS_DEADLINE: Final = "nvidia.com/rollout-progress-deadline"
ANNOTATION_ROLLOUT_PARTITION: Final = "nvidia.com/rollout-partition"
ANNOTATION_GROVE_UPDATE_STRATEGY: Final = "nvidia.com/grove-update-strategy"
GROVE_UPDATE_STRATEGIES: Final = ("Coherent", "RollingRecreate", "OnDelete")
ENV_WORKER_SUFFIX: Final = "DYN_NAMESPACE_WORKER_SUFFIX"
ENV_NAMESPACE_PREFIX: Final = "DYN_NAMESPACE_PREFIX"
ANNOTATION_GROUP_NAME: Final = "scheduling.k8s.io/group-name"
# Restart token of a graph restart: on a DCD's spec.annotations or a Grove clique, carried onto
# the pod template so that a new value rolls the pods.
ANNOTATION_RESTART_AT: Final = "nvidia.com/restartAt"
# DGD metadata annotations a DCD inherits in its spec.annotations.
# The origin version is inherited so the DCD's builders can read their graph's gates
# (`backends.origin_gates`).
# The discovery mode is inherited too, behind its origin gate (`backends.discovery_mode`).
INHERITED_GRAPH_ANNOTATIONS: Final = (ANNOTATION_ENABLE_METRICS, ANNOTATION_DISCOVERY_BACKEND,
                                      ANNOTATION_ORIGIN_VERSION)

# --- component types ------------------------------------------------------------------------
FRONTEND: Final = "frontend"
WORKER: Final = "worker"
PREFILL: Final = "prefill"
DECODE: Final = "decode"
PLANNER: Final = "planner"
EPP: Final = "epp"
WORKER_TYPES: Final = (WORKER, PREFILL, DECODE)

# --- names and values -----------------------------------------------------------------------
MAIN_CONTAINER: Final = "main"
GLOBAL_DYNAMO_NAMESPACE: Final = "dynamo"
PLANNER_SERVICE_ACCOUNT: Final = "planner-serviceaccount"
EPP_SERVICE_ACCOUNT: Final = "epp-serviceaccount"
DISCOVERY_KUBERNETES: Final = "kubernetes"
DISCOVERY_ETCD: Final = "etcd"
DEFAULT_INGRESS_SUFFIX: Final = "local"
GPU_RESOURCE: Final = "nvidia.com/gpu"

# --- ports ----------------------------------------------------------------------------------
FRONTEND_PORT: Final = 8000
FRONTEND_PORT_NAME: Final = "http"
SYSTEM_PORT: Final = 9090
SYSTEM_PORT_NAME: Final = "system"
PLANNER_METRICS_PORT: Final = 9085
METRICS_PORT_NAME: Final = "metrics"
EPP_GRPC_PORT: Final = 9002
EPP_GRPC_PORT_NAME: Final = "grpc"
EPP_HEALTH_PORT: Final = 9003
EPP_HEALTH_PORT_NAME: Final = "grpc-health"

# --- shared memory --------------------------------------------------------------------------
SHARED_MEMORY_VOLUME: Final = "shared-memory"
SHARED_MEMORY_PATH: Final = "/dev/shm"
SHARED_MEMORY_SIZE: Final = "8Gi"

# --- security and lifecycle -----------------------------------------------------------------
DEFAULT_FS_GROUP: Final = 1000
TERMINATION_GRACE_SECONDS: Final = 60
EPP_TERMINATION_GRACE_SECONDS: Final = 130

# --- API versions of the kinds we write -----------------------------------------------------
DYNAMO_API_VERSION: Final = "nvidia.com/v1alpha1"
LWS_API_VERSION: Final = "leaderworkerset.x-k8s.io/v1"
GROVE_API_VERSION: Final = "grove.io/v1alpha1"
VOLCANO_API_VERSION: Final = "scheduling.volcano.sh/v1beta1"
ISTIO_API_VERSION: Final = "networking.istio.io/v1beta1"
INFERENCE_POOL_GROUP: Final = "inference.networking.k8s.io"
INFERENCE_POOL_API_VERSION: Final = f"{INFERENCE_POOL_GROUP}/v1"

#: The Dynamo release whose images the operator defaults to (the original's own version, as
#: its chart sets it; ours is a separate package, so it is a setting of its own).
DYNAMO_VERSION: Final = "1.4.0"
