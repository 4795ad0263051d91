"""The profiling run of a DynamoGraphDeploymentRequest written as v1alpha1 with a
profilingConfig, as data: the profile config handed to the profiler, its Job `profile-<dgdr>`,
and the identity the Job's pod runs as (shared with the intent's Job, `profiling_intent`).

The request is read as stored, the hub: its `v1beta1` model (name, namespace, uid, model)
and what only `v1alpha1` says (`api.conversion.request_inputs.RequestInputs`: the
profilingConfig, enableGpuDiscovery, deploymentOverrides.workersImage, backend as `v1alpha1`
reads it), each exactly as the request's `v1alpha1` view holds it.

The pod has two containers: `profiler` runs the SLA profiler with the config inline, and
`output-copier` waits for it and publishes its results as ConfigMap `dgdr-output-<dgdr>`,
which the controller reads back. The copier writes that ConfigMap with the pod's service
account `dgdr-profiling-job`, shared by every request of a namespace (no owner reference):
bound to the operator's profiling ClusterRole in cluster-wide mode, or to a Role of its own
in the namespace otherwise.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from api.conversion.request_inputs import RequestInputs
from api.v1beta1.graph_deployment_request import DynamoGraphDeploymentRequest
from backends import constants
from backends.children import Child, DesiredChildren, Write
from backends.errors import GenerationError

Json = dict[str, Any]

__all__ = [
    "COPIER_CONTAINER",
    "COPIER_IMAGE",
    "LABEL_DGDR_NAME",
    "LABEL_DGDR_NAMESPACE",
    "MOCKER_OUTPUT_KEY",
    "OUTPUT_KEY",
    "STATUS_KEY",
    "copier_script",
    "job_name",
    "labels",
    "output_config_map_name",
    "profile_config",
    "profiler_app",
    "profiling_children",
    "rbac",
]

LABEL_DGDR_NAME: Final = "dgdr.nvidia.com/name"
LABEL_DGDR_NAMESPACE: Final = "dgdr.nvidia.com/namespace"
SERVICE_ACCOUNT: Final = "dgdr-profiling-job"
PROFILER_CONTAINER: Final = "profiler"
COPIER_CONTAINER: Final = "output-copier"
COPIER_IMAGE: Final = "bitnami/kubectl:latest"
PULL_SECRET: Final = "nvcr-imagepullsecret"
OUTPUT_DIR: Final = "/data"
CONFIG_DIR: Final = "/config"
DEFAULT_CONFIG_KEY: Final = "disagg.yaml"
OUTPUT_KEY: Final = "config_with_planner.yaml"
MOCKER_OUTPUT_KEY: Final = "mocker_config_with_planner.yaml"
STATUS_KEY: Final = "profiler_status.yaml"
BACKOFF_LIMIT: Final = 3
_RBAC = "rbac.authorization.k8s.io"


def job_name(dgdr: str) -> str:
    return f"profile-{dgdr}"


def output_config_map_name(dgdr: str) -> str:
    return f"dgdr-output-{dgdr}"


def profiler_app(config: Json) -> str:
    """`aic-profiler` when AI Configurator simulates the profile, `dynamo-profiler` else."""
    sweep = config.get("sweep")
    aic = isinstance(sweep, dict) and sweep.get("use_ai_configurator") is True
    return "aic-profiler" if aic else "dynamo-profiler"


def _section(config: Json, key: str) -> Json:
    value = config.setdefault(key, {})
    if not isinstance(value, dict):
        raise GenerationError(f"profilingConfig.config.{key} must be an object, got "
                              f"{type(value).__name__}")
    return value


def profile_config(dgdr: DynamoGraphDeploymentRequest, inputs: RequestInputs, namespace: str,
                   hardware: Json | None = None) -> Json:
    """The user's profile config with what the request decides filled in: deployment.model
    and engine.backend always, the namespace and output directory unless given, the workers
    image and base config when the request names them, and discovered `hardware` facts only
    where the user left them out. GenerationError for a section that is not an object."""
    profiling = inputs.profiling_config
    config: Json = copy.deepcopy(dict(profiling.config or {})) if profiling else {}
    deployment = _section(config, "deployment")
    deployment.setdefault("namespace", namespace)
    deployment["model"] = dgdr.spec.model
    overrides = inputs.deployment_overrides
    if overrides is not None and overrides.workers_image:
        deployment["dgd_image"] = overrides.workers_image
    config.setdefault("output_dir", OUTPUT_DIR)
    engine = _section(config, "engine")
    engine["backend"] = inputs.backend
    if profiling is not None and profiling.config_map_ref is not None:
        engine["config"] = f"{CONFIG_DIR}/{DEFAULT_CONFIG_KEY}"
    if hardware:
        section = _section(config, "hardware")
        for key, value in hardware.items():
            if section.get(key) in (None, ""):
                section[key] = value
    return config


def labels(app: str, dgdr: str) -> dict[str, str]:
    return {"app": app, "dgdr": dgdr, constants.LABEL_MANAGED_BY: constants.MANAGED_BY}


def copier_script(dgdr: str, namespace: str,
                  outputs: tuple[str, ...] = (OUTPUT_KEY, MOCKER_OUTPUT_KEY)) -> str:
    """The output copier's shell script: wait for the profiler, publish `outputs` and the
    status file as the output ConfigMap, exit non-zero unless the profiler succeeded."""
    cm = output_config_map_name(dgdr)
    files = " ".join(f"--from-file={OUTPUT_DIR}/{k}" for k in (*outputs, STATUS_KEY))
    return "\n".join([
        "set -e",
        # The copier runs beside the profiler: wait until the profiler container has ended.
        "until kubectl get pod \"$HOSTNAME\" -n " + namespace + " -o jsonpath="
        "'{.status.containerStatuses[?(@.name==\"profiler\")].state.terminated.exitCode}'"
        " | grep -q .; do sleep 5; done",
        f"for i in $(seq 24); do [ -f {OUTPUT_DIR}/{STATUS_KEY} ] && break; sleep 5; done",
        f"for f in {' '.join(outputs)}; do [ -f {OUTPUT_DIR}/$f ] || "
        f": > {OUTPUT_DIR}/$f; done",
        f"kubectl create configmap {cm} -n {namespace} {files} --dry-run=client -o yaml"
        f" | kubectl label -f - --local -o yaml {LABEL_DGDR_NAME}={dgdr}"
        f" {constants.LABEL_MANAGED_BY}={constants.MANAGED_BY}"
        " | kubectl apply -f -",
        f"grep -q 'status: success' {OUTPUT_DIR}/{STATUS_KEY}",
    ])


def _pod_spec(dgdr: DynamoGraphDeploymentRequest, inputs: RequestInputs, namespace: str,
              config_text: str, uid: str) -> Json:
    profiling = inputs.profiling_config
    assert profiling is not None
    name = str(dgdr.metadata["name"])
    args = ["--profile-config", config_text]
    if inputs.enable_gpu_discovery:
        args.append("--enable-gpu-discovery")
    env = [
        {"name": "HUGGING_FACE_HUB_TOKEN", "valueFrom": {"secretKeyRef": {
            # Optional: a public model needs no token, and a missing Secret must not keep
            # the pod from starting.
            "name": "hf-token-secret", "key": "HF_TOKEN", "optional": True}}},
        {"name": "NATS_SERVER", "value": f"nats://{namespace}-nats:4222"},
        {"name": "ETCD_ENDPOINTS", "value": f"{namespace}-etcd:2379"},
        {"name": "DGDR_NAME", "value": name},
        {"name": "DGDR_NAMESPACE", "value": namespace},
        {"name": "DGDR_UID", "value": uid},
    ]
    mounts: list[Json] = [{"name": "profiling-output", "mountPath": OUTPUT_DIR}]
    volumes: list[Json] = [
        {"name": "profiling-output", "persistentVolumeClaim": {"claimName": profiling.output_pvc}}
        if profiling.output_pvc else {"name": "profiling-output", "emptyDir": {}}]
    ref = profiling.config_map_ref
    if ref is not None:
        mounts.append({"name": "profiling-config", "mountPath": CONFIG_DIR, "readOnly": True})
        volumes.append({"name": "profiling-config", "configMap": {
            "name": ref.name,
            "items": [{"key": ref.key or DEFAULT_CONFIG_KEY, "path": DEFAULT_CONFIG_KEY}]}})
    resources = copy.deepcopy(profiling.resources) if profiling.resources else {
        "requests": {"cpu": "16", "memory": "10Gi"}}
    profiler: Json = {
        "name": PROFILER_CONTAINER, "image": profiling.profiler_image,
        "command": ["python", "-m", "benchmarks.profiler.profile_sla"], "args": args,
        "env": env, "resources": resources, "volumeMounts": mounts,
    }
    copier: Json = {
        "name": COPIER_CONTAINER, "image": COPIER_IMAGE,
        "command": ["/bin/sh", "-c", copier_script(name, namespace)],
        "volumeMounts": [{"name": "profiling-output", "mountPath": OUTPUT_DIR,
                          "readOnly": True}],
    }
    pod: Json = {
        "serviceAccountName": SERVICE_ACCOUNT,
        "restartPolicy": "Never",
        "securityContext": {"runAsNonRoot": True, "runAsUser": 1000, "runAsGroup": 1000,
                            "fsGroup": 1000},
        "imagePullSecrets": [{"name": PULL_SECRET}],
        "containers": [profiler, copier],
        "volumes": volumes,
    }
    if profiling.tolerations:
        pod["tolerations"] = copy.deepcopy(profiling.tolerations)
    return pod


def _job(dgdr: DynamoGraphDeploymentRequest, inputs: RequestInputs, namespace: str,
         config: Json, config_text: str, uid: str) -> Json:
    name = str(dgdr.metadata["name"])
    job_labels = labels(profiler_app(config), name)
    return {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": job_name(name), "namespace": namespace, "labels": job_labels},
        "spec": {
            "backoffLimit": BACKOFF_LIMIT,
            "template": {"metadata": {"labels": dict(job_labels)},
                         "spec": _pod_spec(dgdr, inputs, namespace, config_text, uid)},
        },
    }


def _rbac_labels() -> dict[str, str]:
    return {"app.kubernetes.io/managed-by": constants.MANAGED_BY,
            "app.kubernetes.io/component": "rbac", "app.kubernetes.io/name": SERVICE_ACCOUNT}


def rbac(namespace: str, cluster_role: str) -> list[Child]:
    meta = {"namespace": namespace, "labels": _rbac_labels()}
    account = {"apiVersion": "v1", "kind": "ServiceAccount",
               "metadata": {"name": SERVICE_ACCOUNT, **meta}}
    children = [Child(account, Write.UNOWNED)]
    if cluster_role:
        role_ref = {"apiGroup": _RBAC, "kind": "ClusterRole", "name": cluster_role}
    else:
        # Without a profiling ClusterRole (namespace-restricted mode), a Role of the
        # namespace grants what the copier does: read its pod, write its ConfigMap.
        role = {"apiVersion": f"{_RBAC}/v1", "kind": "Role",
                "metadata": {"name": SERVICE_ACCOUNT, **meta},
                "rules": [{"apiGroups": [""], "resources": ["configmaps"],
                           "verbs": ["get", "create", "update", "patch"]},
                          {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}
        children.append(Child(role, Write.UNOWNED))
        role_ref = {"apiGroup": _RBAC, "kind": "Role", "name": SERVICE_ACCOUNT}
    binding = {"apiVersion": f"{_RBAC}/v1", "kind": "RoleBinding",
               "metadata": {"name": f"{SERVICE_ACCOUNT}-binding", **meta},
               "roleRef": role_ref,
               "subjects": [{"kind": "ServiceAccount", "name": SERVICE_ACCOUNT,
                             "namespace": namespace}]}
    children.append(Child(binding, Write.UNOWNED, immutable=("roleRef",)))
    return children


def profiling_children(dgdr: DynamoGraphDeploymentRequest, inputs: RequestInputs, config: Json,
                       config_text: str, *, cluster_role: str = "") -> DesiredChildren:
    """The profiling identity and Job of a request (profiled by the profilingConfig of
    `inputs`, which it must have). `config` is `profile_config`'s result and
    `config_text` its YAML; `cluster_role` the profiling ClusterRole ("" for a Role of the
    namespace). The Job is created once: its pod template cannot change, and the request's
    spec is frozen while it runs."""
    namespace = str(dgdr.metadata["namespace"])
    uid = str(dgdr.metadata.get("uid", ""))
    job = _job(dgdr, inputs, namespace, config, config_text, uid)
    return DesiredChildren(children=(*rbac(namespace, cluster_role),
                                     Child(job, Write.CREATE_ONLY)))
