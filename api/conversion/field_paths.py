"""Where a field of an object's v1alpha1 view stands in the v1beta1 object it came from.

Validation rules are written against v1alpha1; a v1beta1 object is checked through its
v1alpha1 view (`read_as`), and an error must then name the field as the user wrote it. This
module maps a v1alpha1 field path (`spec.services.Worker.extraPodSpec.mainContainer.image`)
to the v1beta1 path (`spec.components[1].podTemplate.spec.containers[0].image`), following
the conversion decisions of the other modules: map keys become list indexes (looked up by
name in the v1beta1 object), the pod fields of a component go into its `podTemplate` (the
`main` container, found by name), renamed fields get their new names.

A field v1beta1 has no place for (kept in a payload annotation: a graph's pvcs, a service's
ingress or autoscaling, most of a request's profilingConfig) maps to the nearest v1beta1
path, and the rest of the v1alpha1 path is returned so the error can say what it is about.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from api.conversion.pod_template import GPU, MAIN
from api.kube import Json

__all__ = ["HubPath", "hub_path"]


@attrs.frozen
class HubPath:
    """A v1beta1 field path; `spoke_only` is the part of the v1alpha1 path that v1beta1 has
    no field for (empty when the mapping is exact)."""

    path: str
    spoke_only: str = ""


def hub_path(spoke_path: str, hub: Json, spoke: Json) -> HubPath:
    """`spoke_path`, a field path of `spoke` (the v1alpha1 view of `hub`), in `hub`."""
    if spoke_path == "spec" or not spoke_path.startswith("spec"):
        return HubPath(spoke_path)  # metadata, and the spec as a whole, are where they were
    kind = hub.get("kind")
    rest = spoke_path[len("spec"):]
    hub_spec, spoke_spec = _dict(hub.get("spec")), _dict(spoke.get("spec"))
    if kind == "DynamoGraphDeployment":
        mapped = _graph(rest, hub_spec, spoke_spec)
    elif kind == "DynamoComponentDeployment":
        mapped = _component(rest, hub_spec, spoke_spec, deployment=True)
    elif kind == "DynamoGraphDeploymentRequest":
        mapped = _table(rest, _REQUEST)
    elif kind == "DynamoGraphDeploymentScalingAdapter":
        mapped = _table(rest, _SCALING_ADAPTER)
    else:
        mapped = (rest, "")
    return HubPath("spec" + mapped[0], mapped[1])


Mapped = tuple[str, str]
#: An entry maps a v1alpha1 path prefix to its v1beta1 prefix, or (None) to no field.
Table = tuple[tuple[str, str | None], ...]


def _split(rest: str, prefix: str) -> str | None:
    """What follows `prefix` in `rest` when `prefix` is a whole segment of it, else None."""
    if not rest.startswith(prefix):
        return None
    tail = rest[len(prefix):]
    return tail if tail == "" or tail[0] in ".[" else None


def _table(rest: str, table: Table) -> Mapped:
    for prefix, target in table:
        tail = _split(rest, prefix)
        if tail is None:
            continue
        return (target + tail, "") if target is not None else ("", rest[1:])
    return rest, ""


def _graph(rest: str, hub: Json, spoke: Json) -> Mapped:
    tail = _split(rest, ".services")
    if tail is None:
        return _table(rest, _GRAPH)
    if not tail:
        return ".components", ""
    key, after = _key(tail[1:])
    components = _list(hub.get("components"))
    index = next((i for i, c in enumerate(components)
                  if isinstance(c, dict) and c.get("name") == key), None)
    if index is None:
        return ".components", rest[1:]
    if not after:  # the map key is the component's name
        return f".components[{index}].name", ""
    path, spoke_only = _component(after, _dict(components[index]),
                                  _dict(_dict(spoke.get("services")).get(key)), deployment=False)
    return f".components[{index}]{path}", spoke_only


def _key(text: str) -> tuple[str, str]:
    """A map key segment (service names hold no dots or brackets) and what follows it."""
    end = len(text)
    for stop in ".[":
        at = text.find(stop)
        if at != -1:
            end = min(end, at)
    return text[:end], text[end:]


def _component(rest: str, hub: Json, spoke: Json, *, deployment: bool) -> Mapped:
    if not rest:
        return "", ""
    containers = _list(_dict(_dict(hub.get("podTemplate")).get("spec")).get("containers"))
    main = _container_path(containers, MAIN)
    handlers: list[tuple[str, Callable[[str], Mapped]]] = [
        (".extraPodSpec.mainContainer", lambda t: (main + t, "")),
        (".extraPodSpec.containers", lambda t: _sidecar(t, containers, spoke)),
        (".resources", lambda t: (main + ".resources" + _resources(t), "")),
        (".volumeMounts", lambda t: _mount(t, containers, main, spoke)),
        (".frontendSidecar", lambda t: _frontend(t, containers, hub)),
    ]
    for prefix, handler in handlers:
        tail = _split(rest, prefix)
        if tail is not None:
            return handler(tail)
    for spoke_field, hub_field in _MAIN_FIELDS:
        tail = _split(rest, spoke_field)
        if tail is not None:
            return main + hub_field + tail, ""
    return _table(rest, _DEPLOYMENT if deployment else _SERVICE)


def _container_path(containers: list[Any], name: Any) -> str:
    index = next((i for i, c in enumerate(containers)
                  if isinstance(c, dict) and c.get("name") == name), None)
    where = ".podTemplate.spec.containers"
    return f"{where}[{index}]" if index is not None else where


def _sidecar(tail: str, containers: list[Any], spoke: Json) -> Mapped:
    """extraPodSpec.containers[k]: the container of that name in the template."""
    if not tail.startswith("["):
        return ".podTemplate.spec.containers" + tail, ""
    index_text, _, after = tail[1:].partition("]")
    listed = _list(_dict(spoke.get("extraPodSpec")).get("containers"))
    name = None
    if index_text.isdigit() and int(index_text) < len(listed):
        name = _dict(listed[int(index_text)]).get("name")
    return _container_path(containers, name) + (after if name is not None else ""), ""


def _resources(tail: str) -> str:
    """v1alpha1's gpu and custom amounts are resource names of the container's resources."""
    for side in (".requests", ".limits"):
        after = _split(tail, side)
        if after is None:
            continue
        if _split(after, ".gpu") is not None:
            return f"{side}[{GPU}]" + after[len(".gpu"):]
        custom = _split(after, ".custom")
        if custom:
            return f"{side}[{custom[1:]}]"
        return side + after
    return tail


def _mount(tail: str, containers: list[Any], main: str, spoke: Json) -> Mapped:
    """A cache mount is compilationCache; the others are the last mounts of main."""
    mounts = _list(spoke.get("volumeMounts"))
    if not tail.startswith("["):
        return main + ".volumeMounts" + tail, ""
    index_text, _, after = tail[1:].partition("]")
    if not index_text.isdigit() or int(index_text) >= len(mounts):
        return main + ".volumeMounts", ""
    j = int(index_text)
    if _dict(mounts[j]).get("useAsCompilationCache") is True:
        return ".compilationCache" + _renamed(after, _CACHE_FIELDS), ""
    plain = [m for m in mounts if _dict(m).get("useAsCompilationCache") is not True]
    main_container: Any = next((c for c in containers if _dict(c).get("name") == MAIN), None)
    own = _list(_dict(main_container).get("volumeMounts"))
    index = len(own) - len(plain) + plain.index(mounts[j])
    if index < 0:
        return main + ".volumeMounts", ""
    return f"{main}.volumeMounts[{index}]" + _renamed(after, _MOUNT_FIELDS), ""


def _frontend(tail: str, containers: list[Any], hub: Json) -> Mapped:
    name = hub.get("frontendSidecar")
    if not tail or not isinstance(name, str):
        return ".frontendSidecar", ""
    return _container_path(containers, name) + _renamed(tail, _SIDECAR_FIELDS), ""


def _renamed(tail: str, renames: Table) -> str:
    mapped, _ = _table(tail, renames)
    return mapped


def _dict(value: Any) -> Json:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


_CACHE_FIELDS: Table = ((".name", ".pvcName"), (".mountPoint", ".mountPath"))
_MOUNT_FIELDS: Table = ((".mountPoint", ".mountPath"),)
_SIDECAR_FIELDS: Table = ((".envs", ".env"), (".envFromSecret", ".envFrom"))

#: A component's fields that are fields of its main container in v1beta1.
_MAIN_FIELDS: tuple[tuple[str, str], ...] = (
    (".envs", ".env"),
    (".envFromSecret", ".envFrom"),
    (".livenessProbe", ".livenessProbe"),
    (".readinessProbe", ".readinessProbe"),
)

_GRAPH: Table = (
    (".envs", ".env"),
    (".pvcs", None),
)

#: A component's fields (after the pod fields, which need the template to be found).
_SHARED: Table = (
    (".componentType", ".type"),
    (".subComponentType", ".type"),
    (".scalingAdapter.enabled", ".scalingAdapter"),
    (".sharedMemory.size", ".sharedMemorySize"),
    (".sharedMemory.disabled", ".sharedMemorySize"),
    (".sharedMemory", ".sharedMemorySize"),
    (".checkpoint", ".experimental.checkpoint"),
    (".gpuMemoryService", ".experimental.gpuMemoryService"),
    (".failover", ".experimental.failover"),
    (".extraPodSpec", ".podTemplate.spec"),
    (".extraPodMetadata", ".podTemplate.metadata"),
    (".labels", ".podTemplate.metadata.labels"),
    (".annotations", ".podTemplate.metadata.annotations"),
    (".dynamoNamespace", None),
    (".autoscaling", None),
    (".ingress", None),
)
_SERVICE: Table = ((".serviceName", None), *_SHARED)
_DEPLOYMENT: Table = ((".serviceName", ".name"), *_SHARED)

_REQUEST: Table = (
    (".profilingConfig.profilerImage", ".image"),
    (".useMocker", ".features.mocker.enabled"),
    (".deploymentOverrides.name", ".overrides.dgd.metadata.name"),
    (".deploymentOverrides.namespace", ".overrides.dgd.metadata.namespace"),
    (".deploymentOverrides.labels", ".overrides.dgd.metadata.labels"),
    (".deploymentOverrides.annotations", ".overrides.dgd.metadata.annotations"),
    (".deploymentOverrides", None),
    (".profilingConfig", None),
    (".enableGpuDiscovery", None),
    (".modelName", None),
    (".sla", None),
    (".gpu", None),
    (".online", None),
)
_SCALING_ADAPTER: Table = ((".dgdRef.serviceName", ".dgdRef.componentName"),)
