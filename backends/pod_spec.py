"""A component's pod spec for one role: defaults, the user's overrides, resources, volumes,
the backend's changes, then canonical ordering (with a dynamoSidecar, the defaults go to the
runtime init container and `main` is the user's engine: `backends.dynamo_sidecar`; a role
with a template of its own keeps its command: `backends.role_templates`; a multinode engine
pod is told its place, for graphs whose origin version says so:
`backends.portable_topology`; a frontendSidecar
gets the frontend's defaults, for graphs whose origin version says so:
`backends.frontend_sidecar`).

Precedence of environment variables, lowest first: platform addresses (NATS, etcd...), the
component-type defaults, `extraPodSpec.mainContainer.env`, the component's `envs` (which
already include the graph's), then what the backend adds. The component is a `ComponentSpec`:
its pod fields are read as `v1alpha1` states them (`inputs.pod`), which is what decides those
layers.
"""

from __future__ import annotations

from typing import Any

from api.kube import copy_json
from backends import constants, frameworks, naming
from backends.canonical import canonical_pod_spec
from backends.component_defaults import default_container, default_pod_spec, infrastructure_env
from backends.component_spec import ComponentSpec
from backends.context import PodContext, discovery_backend
from backends.dynamo_sidecar import runtime_container, runtime_name, unsupported
from backends.errors import GenerationError
from backends.failover import apply_failover
from backends.frontend_sidecar import add_frontend_sidecar, main_mounts
from backends.gpu_memory_service import apply_gpu_memory_service
from backends.merge import merge_env, merge_keyed, merge_over
from backends.multinode import Role
from backends.origin_gates import FRONTEND_SIDECAR
from backends.portable_topology import portable_topology, topology_env
from backends.pull_secrets import lookup
from backends.resources import apply_resources
from backends.role_templates import authored
from backends.volumes import cache_mount_point, pvc_volumes, shared_memory_volume

Json = dict[str, Any]

__all__ = ["generate_pod_spec", "main_container_of"]

PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
# Container lists merged with the defaults, and the fields that identify their entries.
_KEYED = {"ports": ("name", "containerPort"), "volumeMounts": ("name", "mountPath")}
# Pod-spec lists the generator extends instead of replacing.
_APPENDED = ("containers", "volumes", "imagePullSecrets")


def main_container_of(spec: ComponentSpec) -> Json:
    """The user's `extraPodSpec.mainContainer` ({} when absent)."""
    return spec.main_container()


def generate_pod_spec(spec: ComponentSpec, role: Role, ctx: PodContext) -> Json:
    """The pod spec of `role` pods of a component."""
    user = main_container_of(spec)
    _check_image(user.get("image"))
    backend = frameworks.resolve(
        spec.component_type,
        list(user.get("command") or []),
        list(user.get("args") or []),
        ctx.backend_framework,
    )
    runtime = runtime_name(spec)
    if runtime is not None:
        _refuse_unsupported(spec)
        container = _engine_container(spec, user)
    else:
        container = _main_container(spec, user, ctx)
    volumes = _add_volumes(container, spec, backend)
    sidecar_mounts = main_mounts(container)
    backend_ctx = frameworks.BackendContext(
        role=role,
        host_name=ctx.host_name,
        deployer=ctx.deployer,
        resources=spec.inputs.pod.resources,
        cache_mount=_cache_mount(spec, backend),
        mpi_secret=ctx.settings.mpi_run_secret_name,
        portable_topology=portable_topology(spec, role),
    )
    if authored(spec, role):
        # The role's template owns its launch command; the rest of the backend's changes
        # stay.
        launch: Json = {k: container[k] for k in ("command", "args") if k in container}
        backend.update_container(container, backend_ctx)
        container.pop("command", None)
        container.pop("args", None)
        container.update(launch)
    else:
        backend.update_container(container, backend_ctx)
    if backend_ctx.portable_topology:
        # The pod learns its place in the replica (`backends.portable_topology`).
        container["env"] = merge_env(container.get("env") or [],
                                     topology_env(ctx.deployer, ctx.host_name, role))

    pod = _pod(spec, ctx, container, volumes)
    if runtime is not None:
        _run_runtime(pod, spec, ctx, runtime)
    if FRONTEND_SIDECAR.enabled_for(spec):
        _run_frontend_sidecar(pod, spec, ctx, sidecar_mounts)
    backend.update_pod_spec(pod, backend_ctx)
    if role.inter_pod is None:
        # The inter-pod layout's pods are wired by the Grove path (`backends.inter_pod_gms`).
        apply_gpu_memory_service(pod, spec, ctx)
        apply_failover(pod, spec.spec, backend.name, role.nodes)
    canonical_pod_spec(pod)
    return pod


def _check_image(image: object) -> None:
    """An image reference is a string (a missing one is left to the API server, which
    refuses the workload naming the field; `render` shows such specs as they are)."""
    if image is not None and not isinstance(image, str):
        raise GenerationError("extraPodSpec.mainContainer.image: must be a string, got "
                              f"{type(image).__name__}")


def _main_container(spec: ComponentSpec, user: Json, ctx: PodContext) -> Json:
    given_pod = spec.inputs.pod
    default = default_container(spec, ctx)
    overrides = {k: v for k, v in user.items() if k not in ("env", *_KEYED, *PROBES)}
    if user.get("command") and not user.get("args"):
        # Default args belong to the default command; a user command runs on its own.
        default.pop("args", None)
    container = merge_over(default, overrides)
    # A probe is replaced as a whole: half of one merged into the other is no probe at all.
    for probe in PROBES:
        if user.get(probe) is not None:
            container[probe] = copy_json(user[probe])
    for probe, given in (
        ("livenessProbe", given_pod.liveness_probe),
        ("readinessProbe", given_pod.readiness_probe),
    ):
        if given is not None:
            container[probe] = copy_json(given)
    for key, fields in _KEYED.items():
        merged = merge_keyed(default.get(key) or [], user.get(key) or [], *fields)
        if merged:
            container[key] = merged
    container["env"] = merge_env(
        infrastructure_env(ctx), default["env"], user.get("env") or [], given_pod.envs or []
    )
    apply_resources(container, given_pod.resources)
    if given_pod.env_from_secret:
        container["envFrom"] = [
            *container.get("envFrom", []),
            {"secretRef": {"name": given_pod.env_from_secret}},
        ]
    return container


def _engine_container(spec: ComponentSpec, user: Json) -> Json:
    """`main` beside a dynamoSidecar: the user's engine as written (its env, with the
    component's `envs` and the graph's, its probes, resources and envFromSecret), without
    the runtime's defaults."""
    given_pod = spec.inputs.pod
    container: Json = {"name": constants.MAIN_CONTAINER,
                       **{k: copy_json(v) for k, v in user.items() if k not in ("name", "env")}}
    env = merge_env(user.get("env") or [], given_pod.envs or [])
    if env:
        container["env"] = env
    for probe, given in (
        ("livenessProbe", given_pod.liveness_probe),
        ("readinessProbe", given_pod.readiness_probe),
    ):
        if given is not None:
            container[probe] = copy_json(given)
    apply_resources(container, given_pod.resources)
    if given_pod.env_from_secret:
        container["envFrom"] = [
            *container.get("envFrom", []),
            {"secretRef": {"name": given_pod.env_from_secret}},
        ]
    return container


def _refuse_unsupported(spec: ComponentSpec) -> None:
    refused = unsupported(spec.spec)
    if refused is not None:
        raise GenerationError(f"{refused[0]}: {refused[1]}")


def _run_runtime(pod: Json, spec: ComponentSpec, ctx: PodContext, name: str) -> None:
    """The named init container becomes the runtime (`backends.dynamo_sidecar`), and its
    image's pull secrets join the pod's."""
    inits = pod.get("initContainers") or []
    index = next((i for i, c in enumerate(inits) if c.get("name") == name), None)
    if index is None:
        raise GenerationError(f'dynamoSidecar "{name}" names no init container of the '
                              "pod template")
    inits[index] = runtime_container(spec, ctx, inits[index])
    image = inits[index].get("image")
    if image:
        secrets = _pull_secrets(spec, ctx, image, pod.get("imagePullSecrets") or [])
        if secrets:
            pod["imagePullSecrets"] = secrets


def _run_frontend_sidecar(pod: Json, spec: ComponentSpec, ctx: PodContext,
                          mounts: list[Json]) -> None:
    """The frontendSidecar gets the frontend's defaults (`backends.frontend_sidecar`), and
    its image's pull secrets join the pod's."""
    image = add_frontend_sidecar(pod, spec, ctx, mounts)
    if image:
        secrets = _pull_secrets(spec, ctx, image, pod.get("imagePullSecrets") or [])
        if secrets:
            pod["imagePullSecrets"] = secrets


def _add_volumes(container: Json, spec: ComponentSpec, backend: frameworks.Backend) -> list[Json]:
    """Mount the component's PVCs and shared memory; return the pod volumes they need."""
    volumes, mounts = pvc_volumes(
        spec.inputs.pod.volume_mounts or [], backend.name, backend.default_cache_mount
    )
    shm = shared_memory_volume(spec.inputs.shared_memory)
    if shm is not None:
        volumes.append(shm[0])
        mounts.append(shm[1])
    if mounts:
        container["volumeMounts"] = [*container.get("volumeMounts", []), *mounts]
    return volumes


def _cache_mount(spec: ComponentSpec, backend: frameworks.Backend) -> str | None:
    for mount in spec.inputs.pod.volume_mounts or []:
        if mount.use_as_compilation_cache:
            return cache_mount_point(mount, backend.name, backend.default_cache_mount)
    return None


def _pod(spec: ComponentSpec, ctx: PodContext, main: Json, volumes: list[Json]) -> Json:
    extra = spec.inputs.pod.extra_pod_spec
    user: Json = extra.pod_spec if extra is not None else {}
    pod = merge_over(
        default_pod_spec(spec, ctx), {k: v for k, v in user.items() if k not in _APPENDED}
    )
    if not isinstance(user.get("securityContext"), dict):
        pod["securityContext"] = {"fsGroup": constants.DEFAULT_FS_GROUP}
    if (
        not pod.get("serviceAccountName")
        and ctx.graph_name
        and discovery_backend(spec, ctx.settings) == constants.DISCOVERY_KUBERNETES
    ):
        pod["serviceAccountName"] = naming.discovery_service_account(ctx.graph_name)

    containers = copy_json(user.get("containers") or [])
    if any(c.get("name") == main["name"] for c in containers):
        raise GenerationError(
            f'extraPodSpec.containers has a container named "{main["name"]}", the name of the '
            "main container; set its fields in extraPodSpec.mainContainer instead"
        )
    pod["containers"] = [*containers, main]

    user_volumes = copy_json(user.get("volumes") or [])
    taken = {v.get("name") for v in user_volumes}
    generated = [*pod.get("volumes", []), *volumes]
    # A user volume of the same name replaces the generated one.
    all_volumes = [*user_volumes, *(v for v in generated if v["name"] not in taken)]
    if all_volumes:
        pod["volumes"] = all_volumes

    secrets = _pull_secrets(spec, ctx, main.get("image"), user.get("imagePullSecrets") or [])
    if secrets:
        pod["imagePullSecrets"] = secrets
    return pod


def _pull_secrets(
    spec: ComponentSpec, ctx: PodContext, image: Any, given: list[Json]
) -> list[Json]:
    """`given`, then the discovered pull secrets of `image` not among them."""
    secrets = copy_json(given)
    annotations = spec.inputs.annotations or {}
    disabled = annotations.get(constants.ANNOTATION_DISABLE_PULL_SECRET_DISCOVERY)
    if disabled != "true" and image:
        names = {s.get("name") for s in secrets}
        secrets += [{"name": n} for n in lookup(ctx.pull_secrets, image) if n not in names]
    return secrets
