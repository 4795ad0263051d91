"""Operator-wide settings the builders read: infrastructure addresses injected into every
pod, the discovery backend, the installed orchestrators and ingress defaults.

The operator process fills an `OperatorSettings` from its flags; tests and `render` use the
defaults, which are those of the original operator's flags.
"""

from __future__ import annotations

from dataclasses import dataclass

from backends import constants


@dataclass(frozen=True, kw_only=True)
class OperatorSettings:
    """What the operator was started with, as far as the generated objects depend on it."""

    #: NATS_SERVER for every pod, when not empty.
    nats_address: str = ""
    #: ETCD_ENDPOINTS for every pod, when not empty.
    etcd_address: str = ""
    #: MODEL_EXPRESS_URL for every pod, when not empty.
    model_express_url: str = ""
    #: PROMETHEUS_ENDPOINT for every pod, when not empty.
    prometheus_endpoint: str = ""
    #: "kubernetes" or "etcd"; a graph may override it with an annotation.
    discovery_backend: str = constants.DISCOVERY_KUBERNETES
    #: Secret holding the SSH key pair TRT-LLM multinode pods use for mpirun.
    mpi_run_secret_name: str = "mpi-run-ssh-secret"
    #: Where that Secret is kept; it is copied into each namespace running TRT-LLM multinode
    #: services ("": each namespace must hold its own).
    mpi_run_secret_namespace: str = ""
    #: Grove (grove.io) is installed: graphs become one PodCliqueSet unless opted out.
    grove_enabled: bool = False
    #: LeaderWorkerSet (and Volcano) are installed: multinode components can run on the DCD path.
    lws_enabled: bool = True
    #: Volcano is installed: LeaderWorkerSet pods are scheduled by it (gang scheduling is LWS's
    #: own Volcano provider's; the legacy layout had a PodGroup per LeaderWorkerSet).
    volcano_enabled: bool = True
    #: Grove gang-termination delay in seconds; 0 leaves Grove's own default.
    grove_termination_delay_seconds: int = 15 * 60
    #: The gateway-api-inference-extension's InferencePool API is served: EPP services get
    #: their pool.
    inference_pool_enabled: bool = False
    #: Dynamic Resource Allocation (resource.k8s.io/v1) is served: DeviceClasses, ResourceSlices,
    #: ResourceClaims and their templates can be read (and GPUs reached through claims counted).
    dra_enabled: bool = False
    #: Schedule Grove pods with the Kai scheduler.
    kai_scheduler_enabled: bool = False
    #: Istio gateway; when set, components may get a VirtualService.
    virtual_service_gateway: str = ""
    #: Defaults for frontends that do not configure their own ingress.
    ingress_controller_class_name: str = ""
    ingress_controller_tls_secret_name: str = ""
    ingress_host_suffix: str = ""
    #: The Dynamo release of the default images (the profiler's:
    #: `dynamo-planner:<dynamo_version>`), MAJOR.MINOR.PATCH.
    dynamo_version: str = constants.DYNAMO_VERSION
