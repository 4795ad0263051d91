"""`frontendSidecar`: a frontend in a container of a component's pod, beside its engine.

The named container gets the frontend's defaults as a frontend component's `main` gets them
(`backends.component_defaults`: `python3 -m dynamo.frontend`, the HTTP port, the liveness and
readiness probes, the Dynamo env of a frontend of the graph and the platform addresses), with
the user's fields merged over them the way they are merged into `main`: a field the user sets
replaces the default, env merges by name, ports by name and number, a probe replaces the
default probe whole, and a user command without args drops the default args. Like the newest
original, it also mounts what `main` mounts (its volume mounts and the compilation cache, not
/dev/shm), where it has no mount of that name; its image's pull secrets join the pod's.

The container comes from either form of the field:
* `v1alpha1`'s object (image, args, envs, envFromSecret) makes a container named as the
  `v1beta1` field names it (`sidecar-frontend` for a graph written in `v1alpha1`); a container
  of that name already in the pod is refused, as the original refuses it. Where the
  component's `v1beta1` template holds the container (a graph on Grove, a DCD of its own), it
  is taken from there whole. A graph's child DCD carries the container whole, under its own
  name, for graphs at or above `backends.origin_gates.FRONTEND_SIDECAR_LOSSLESS`
  (`backends.component_deployment`); for a graph made before, the child carries the
  `v1alpha1` form only, so on the DCD path the container is `sidecar-frontend` and has what
  that form holds (image, args, env, envFrom).
* `v1beta1`'s container name, when conversion kept the container among the pod's others
  (one whose image, args or env `v1alpha1` cannot hold): the defaults are merged into it.

Rendering it is gated on the graph's origin version (`backends.origin_gates.FRONTEND_SIDECAR`),
so a graph made by an operator that dropped the container keeps its pods at an upgrade.
"""

from __future__ import annotations

from typing import Any

from api.conversion.pod_template import FRONTEND_SIDECAR as DEFAULT_NAME
from api.kube import copy_json
from backends import constants
from backends.component_defaults import default_container, infrastructure_env
from backends.component_spec import ComponentSpec
from backends.context import PodContext
from backends.errors import GenerationError
from backends.merge import merge_env, merge_keyed, merge_over

Json = dict[str, Any]

__all__ = ["add_frontend_sidecar", "main_mounts"]

_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
_KEYED = {"ports": ("name", "containerPort"), "volumeMounts": ("name", "mountPath")}


def main_mounts(main: Json) -> list[Json]:
    """What the sidecar mounts of `main`'s: all but /dev/shm."""
    return [copy_json(m) for m in main.get("volumeMounts") or []
            if m.get("name") != constants.SHARED_MEMORY_VOLUME]


def add_frontend_sidecar(pod: Json, spec: ComponentSpec, ctx: PodContext,
                         mounts: list[Json]) -> str | None:
    """The component's frontend sidecar in `pod` (changed in place), `mounts` being `main`'s;
    its image (None without a sidecar). GenerationError naming the field when the container
    cannot be placed."""
    containers: list[Json] = pod.setdefault("containers", [])
    given = spec.inputs.pod.frontend_sidecar
    name = spec.spec.frontend_sidecar
    if given is not None:
        name = name or DEFAULT_NAME
        if any(c.get("name") == name for c in containers):
            raise GenerationError(f'frontendSidecar: cannot inject the frontend sidecar: a '
                                  f'container named "{name}" already exists in the pod')
        written = _template_container(spec, name)
        if written is None:
            written = {"name": name, "image": given.image}
            if given.args:
                written["args"] = list(given.args)
            if given.envs:
                written["env"] = copy_json(list(given.envs))
            if given.env_from_secret:
                written["envFrom"] = [{"secretRef": {"name": given.env_from_secret}}]
        containers.append(frontend_container(spec, ctx, written, mounts))
        image = written.get("image")
        return image if isinstance(image, str) else None
    if not name:
        return None
    index = next((i for i, c in enumerate(containers) if c.get("name") == name), None)
    if index is None or name == constants.MAIN_CONTAINER:
        raise GenerationError(f'frontendSidecar "{name}": names no container of the pod '
                              "template besides main")
    containers[index] = frontend_container(spec, ctx, containers[index], mounts)
    image = containers[index].get("image")
    return image if isinstance(image, str) else None


def _template_container(spec: ComponentSpec, name: str) -> Json | None:
    """The named container as the component's `v1beta1` template states it, whole (what
    `v1alpha1`'s object cannot hold, a command or ports say, included); None where the
    template does not hold it."""
    template = spec.spec.pod_template or {}
    for container in (template.get("spec") or {}).get("containers") or []:
        if isinstance(container, dict) and container.get("name") == name:
            return copy_json(container)
    return None


def frontend_container(spec: ComponentSpec, ctx: PodContext, given: Json,
                       mounts: list[Json]) -> Json:
    """The frontend's default container with `given` (the user's) merged over it."""
    # The frontend of this graph: its Dynamo namespace, discovery and pod, a frontend's type.
    frontend = ComponentSpec(
        spec.spec, spec.inputs.replace(component_type=constants.FRONTEND, sub_component_type=None))
    default = default_container(frontend, ctx)
    # The original's sidecar context has no runtime version: no version-gated startup probe.
    default.pop("startupProbe", None)
    if given.get("command") and not given.get("args"):
        default.pop("args", None)
    container = merge_over(default, {k: v for k, v in given.items()
                                     if k not in ("env", *_KEYED, *_PROBES)})
    for probe in _PROBES:
        if given.get(probe) is not None:
            container[probe] = copy_json(given[probe])
    for key, fields in _KEYED.items():
        merged = merge_keyed(default.get(key) or [], given.get(key) or [], *fields)
        if merged:
            container[key] = merged
    taken = {m.get("name") for m in container.get("volumeMounts") or []}
    missing = [m for m in mounts if m.get("name") not in taken]
    if missing:
        container["volumeMounts"] = [*container.get("volumeMounts", []), *missing]
    container["env"] = merge_env(infrastructure_env(ctx), default["env"],
                                 given.get("env") or [])
    return container
