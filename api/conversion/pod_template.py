"""The pod of a component: v1alpha1's separate fields <-> v1beta1's one `podTemplate`.

v1alpha1 configures the pod through resources, envs, envFromSecret, probes, volumeMounts,
extraPodMetadata, extraPodSpec (with its mainContainer), the component's labels and
annotations, and a frontendSidecar object; v1beta1 has a PodTemplateSpec whose container
`main` is the component, plus `compilationCache` and `frontendSidecar` (a container name).

To the hub: the fields are composed into the template (main first, then the extraPodSpec
containers, then the frontend sidecar, named `FRONTEND_SIDECAR`; each non-cache volume mount
becomes a PVC volume and a mount of main). To the spoke: the template is taken apart again
(labels and annotations to extraPodMetadata; main's env, probes and plain resources to their
fields; the rest of main to extraPodSpec.mainContainer, the rest of the pod to extraPodSpec).
The two are not inverse in general; `api.conversion.rules.projection` saves what one side
loses.

Saved fields of one side stand for the live fields of the other when they convert to them
(`spoke_stands_for`, `hub_stands_for`), and also where the two differ only in what
`v1alpha1`'s frontendSidecar object cannot hold of the container `v1beta1` names: the object
holds its image, args, env and Secret; its name and what else it states (ports, probes,
resources, mounts...) are `v1beta1`'s remainder, kept whole in the payload. So a pod group
whose sidecar states more than the object keeps its other `v1alpha1` fields (the component's
own labels, `envs` beside `mainContainer.env`...) across a round trip, and a child DCD can
carry a `v1beta1` sidecar whole (`api.conversion.written_inputs`).
"""

from __future__ import annotations

from typing import Any

from api.kube import Json

__all__ = [
    "FRONTEND_SIDECAR",
    "HUB_KEYS",
    "SPOKE_KEYS",
    "hub_stands_for",
    "pod_to_hub",
    "pod_to_spoke",
    "sidecar_as_spoke_shows_it",
    "spoke_stands_for",
]

SPOKE_KEYS = (
    "resources",
    "envs",
    "envFromSecret",
    "livenessProbe",
    "readinessProbe",
    "volumeMounts",
    "extraPodMetadata",
    "extraPodSpec",
    "annotations",
    "labels",
    "frontendSidecar",
)
HUB_KEYS = ("podTemplate", "compilationCache", "frontendSidecar")
MAIN = "main"
FRONTEND_SIDECAR = "sidecar-frontend"
GPU = "nvidia.com/gpu"
_PROBES = ("livenessProbe", "readinessProbe")


def pod_to_hub(spoke: Json) -> Json:
    """The hub fields composed from the spoke's pod fields."""
    if not spoke:
        return {}
    out: Json = {}
    mounts = [m for m in _dicts(spoke.get("volumeMounts")) if "name" in m]
    cache = next((m for m in mounts if m.get("useAsCompilationCache") is True), None)
    if cache is not None:
        out["compilationCache"] = {"pvcName": cache["name"]}
        if "mountPoint" in cache:
            out["compilationCache"]["mountPath"] = cache["mountPoint"]
    plain = [m for m in mounts if m is not cache]
    if any(k in spoke for k in SPOKE_KEYS if k != "volumeMounts") or plain:
        out["podTemplate"] = _template(spoke, plain)
        if isinstance(spoke.get("frontendSidecar"), dict):
            out["frontendSidecar"] = FRONTEND_SIDECAR
    return out


def _template(spoke: Json, mounts: list[Json]) -> Json:
    extra = spoke.get("extraPodSpec")
    spec: Json = dict(extra) if isinstance(extra, dict) else {}
    override = spec.pop("mainContainer", None)
    main: Json = {"name": MAIN}
    if isinstance(override, dict):
        main.update({k: v for k, v in override.items() if k != "name"})
    if "envs" in spoke:
        main["env"] = [*_list(main.get("env")), *_list(spoke["envs"])]
    if "envFromSecret" in spoke:
        secret = {"secretRef": {"name": spoke["envFromSecret"]}}
        main["envFrom"] = [*_list(main.get("envFrom")), secret]
    for probe in _PROBES:
        if probe in spoke:
            main[probe] = spoke[probe]
    if isinstance(spoke.get("resources"), dict):
        main["resources"] = {
            **_read(main.get("resources")),
            **_resources_to_hub(spoke["resources"]),
        }
    if mounts:
        main["volumeMounts"] = [*_list(main.get("volumeMounts")), *map(_mount, mounts)]
        spec["volumes"] = [*_list(spec.get("volumes")), *map(_volume, mounts)]
    containers = [main, *_list(spec.get("containers"))]
    sidecar = spoke.get("frontendSidecar")
    if isinstance(sidecar, dict):
        containers.append(_frontend_container(sidecar))
    spec["containers"] = containers
    template: Json = {}
    metadata = _pod_metadata(spoke)
    if metadata:
        template["metadata"] = metadata
    template["spec"] = spec
    return template


def _pod_metadata(spoke: Json) -> Json:
    extra = _read(spoke.get("extraPodMetadata"))
    out: Json = {}
    for key in ("labels", "annotations"):
        merged = {**_read(spoke.get(key)), **_read(extra.get(key))}
        if merged or key in extra or key in spoke:
            out[key] = merged
    return out


def _mount(mount: Json) -> Json:
    out = {"name": mount["name"]}
    if "mountPoint" in mount:
        out["mountPath"] = mount["mountPoint"]
    return out


def _volume(mount: Json) -> Json:
    return {"name": mount["name"], "persistentVolumeClaim": {"claimName": mount["name"]}}


def _frontend_container(sidecar: Json) -> Json:
    out: Json = {"name": FRONTEND_SIDECAR}
    for spoke_key, hub_key in (("image", "image"), ("args", "args"), ("envs", "env")):
        if spoke_key in sidecar:
            out[hub_key] = sidecar[spoke_key]
    if "envFromSecret" in sidecar:
        out["envFrom"] = [{"secretRef": {"name": sidecar["envFromSecret"]}}]
    return out


def _resources_to_hub(resources: Json) -> Json:
    out: Json = {}
    for side in ("requests", "limits"):
        item = resources.get(side)
        if isinstance(item, dict):
            amounts = {k: item[k] for k in ("cpu", "memory") if k in item}
            if "gpu" in item:
                amounts[item.get("gpuType") or GPU] = item["gpu"]
            amounts.update(_read(item.get("custom")))
            out[side] = amounts
    if "claims" in resources:
        out["claims"] = resources["claims"]
    return out


def pod_to_spoke(hub: Json) -> Json:
    """The spoke's pod fields taken from the hub's template; what has no place is left in
    extraPodSpec (or, where the template's shape is not a pod's, not converted)."""
    out: Json = {}
    template = hub.get("podTemplate")
    if isinstance(template, dict):
        out.update(_take_apart(template, hub.get("frontendSidecar")))
    cache = hub.get("compilationCache")
    if isinstance(cache, dict) and "pvcName" in cache:
        mount: Json = {"name": cache["pvcName"]}
        if "mountPath" in cache:
            mount["mountPoint"] = cache["mountPath"]
        mount["useAsCompilationCache"] = True
        out["volumeMounts"] = [*out.get("volumeMounts", []), mount]
    return out


def spoke_stands_for(spoke: Json, hub: Json) -> bool:
    """Whether saved `v1alpha1` pod fields `spoke` stand for the live `v1beta1` ones `hub`:
    they compose to them, or to them with the frontend sidecar as `v1alpha1` shows it."""
    composed = pod_to_hub(spoke)
    if composed == hub:
        return True
    shown = sidecar_as_spoke_shows_it(hub)
    return shown is not hub and composed == shown


def hub_stands_for(hub: Json, spoke: Json) -> bool:
    """Whether saved `v1beta1` pod fields `hub` stand for the live `v1alpha1` ones `spoke`:
    they take apart to them, or `spoke` stands for them (`spoke_stands_for`)."""
    return pod_to_spoke(hub) == spoke or spoke_stands_for(spoke, hub)


def sidecar_as_spoke_shows_it(hub: Json) -> Json:
    """The hub pod fields with the container `frontendSidecar` names replaced by the one
    `v1alpha1`'s object for it composes to (named `FRONTEND_SIDECAR`, last); `hub` itself
    where there is no such container or the object cannot hold it."""
    name = hub.get("frontendSidecar")
    template = hub.get("podTemplate")
    if not isinstance(name, str) or name == MAIN or not isinstance(template, dict):
        return hub
    spec = template.get("spec")
    containers = spec.get("containers") if isinstance(spec, dict) else None
    if not isinstance(spec, dict) or not _dicts_only(containers):
        return hub
    assert isinstance(containers, list)
    index = next((i for i, c in enumerate(containers) if c.get("name") == name), None)
    if index is None:
        return hub
    object_form = _frontend_spec(containers[index])
    if object_form is None:
        return hub
    shown = [*containers[:index], *containers[index + 1:], _frontend_container(object_form)]
    return {**hub, "podTemplate": {**template, "spec": {**spec, "containers": shown}},
            "frontendSidecar": FRONTEND_SIDECAR}


def _take_apart(template: Json, sidecar_name: Any) -> Json:
    metadata = template.get("metadata", {})
    spec = template.get("spec", {})
    if not isinstance(metadata, dict) or not isinstance(spec, dict):
        return {}
    containers = spec.get("containers", [])
    if not isinstance(containers, list) or not all(isinstance(c, dict) for c in containers):
        return {}
    out: Json = {}
    pod_metadata = {
        k: metadata[k] for k in ("labels", "annotations") if _string_map(metadata.get(k))
    }
    if pod_metadata:
        out["extraPodMetadata"] = pod_metadata
    rest = list(containers)
    main = _pop_named(rest, MAIN)
    sidecar = _pop_named(rest, sidecar_name) if isinstance(sidecar_name, str) else None
    if sidecar is not None:
        spec_of_sidecar = _frontend_spec(sidecar)
        if spec_of_sidecar is None:
            rest.append(sidecar)
        else:
            out["frontendSidecar"] = spec_of_sidecar
    extra: Json = {k: v for k, v in spec.items() if k != "containers"}
    if rest:
        extra["containers"] = rest
    if main is not None:
        main = {k: v for k, v in main.items() if k != "name"}
        if _dicts_only(main.get("env")):
            out["envs"] = main.pop("env")
        secret = _env_secret(main)
        if secret is not None:
            out["envFromSecret"] = secret
        mounts = _pvc_mounts(main, extra)
        if mounts:
            out["volumeMounts"] = mounts
        for probe in _PROBES:
            if isinstance(main.get(probe), dict):
                out[probe] = main.pop(probe)
        resources = _resources_to_spoke(main.get("resources"))
        if resources is not None:
            out["resources"] = resources
            del main["resources"]
        if main:
            extra["mainContainer"] = main
    if extra:
        out["extraPodSpec"] = extra
    return out


def _env_secret(main: Json) -> Any:
    """Takes the last envFrom entry of main when it is a bare Secret reference."""
    env_from = main.get("envFrom")
    if not isinstance(env_from, list) or not env_from:
        return None
    last = env_from[-1]
    ref = last.get("secretRef") if isinstance(last, dict) and len(last) == 1 else None
    if not isinstance(ref, dict) or set(ref) != {"name"} or not isinstance(ref["name"], str):
        return None
    rest = env_from[:-1]
    if rest:
        main["envFrom"] = rest
    else:
        del main["envFrom"]
    return ref["name"]


def _pvc_mounts(main: Json, spec: Json) -> list[Json]:
    """Takes the trailing mounts of main that mount a PVC volume of the same name, with the
    trailing volumes they use, as v1alpha1 volume mounts."""
    mounts = main.get("volumeMounts")
    volumes = spec.get("volumes")
    if not isinstance(mounts, list) or not isinstance(volumes, list):
        return []
    taken: list[Json] = []
    while mounts and volumes:
        mount, volume = mounts[-1], volumes[-1]
        if not (isinstance(mount, dict) and isinstance(volume, dict)):
            break
        name = mount.get("name")
        if not isinstance(name, str) or not set(mount) <= {"name", "mountPath"}:
            break
        if volume != _volume({"name": name}):
            break
        taken.insert(
            0,
            {"name": name, **({"mountPoint": mount["mountPath"]} if "mountPath" in mount else {})},
        )
        mounts, volumes = mounts[:-1], volumes[:-1]
    if not taken:
        return []
    for key, rest, owner in (("volumeMounts", mounts, main), ("volumes", volumes, spec)):
        if rest:
            owner[key] = rest
        else:
            del owner[key]
    return taken


def _frontend_spec(container: Json) -> Json | None:
    """v1alpha1's frontendSidecar for the named container, or None when its image, args or
    env have shapes v1alpha1 cannot hold."""
    image = container.get("image", "")
    args = container.get("args", [])
    if not isinstance(image, str) or not isinstance(args, list):
        return None
    if not all(isinstance(a, str) for a in args) or not _dicts_only(container.get("env", [])):
        return None
    out: Json = {"image": image}
    if "args" in container:
        out["args"] = args
    if "env" in container:
        out["envs"] = container["env"]
    secret = _env_secret(dict(container))
    if secret is not None and isinstance(secret, str):
        out["envFromSecret"] = secret
    return out


def _string_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def _dicts_only(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, dict) for v in value)


def _resources_to_spoke(resources: Any) -> Json | None:
    """v1alpha1 resources for a container's, or None when they do not fit (other keys, or
    amounts that are not strings)."""
    if not isinstance(resources, dict) or not set(resources) <= {"requests", "limits", "claims"}:
        return None
    out: Json = {}
    for side in ("requests", "limits"):
        if side not in resources:
            continue
        amounts = resources[side]
        if not isinstance(amounts, dict) or not all(isinstance(v, str) for v in amounts.values()):
            return None
        item: Json = {k: amounts[k] for k in ("cpu", "memory") if k in amounts}
        if GPU in amounts:
            item["gpu"] = amounts[GPU]
        custom = {k: v for k, v in amounts.items() if k not in ("cpu", "memory", GPU)}
        if custom:
            item["custom"] = custom
        out[side] = item
    if "claims" in resources:
        if not _dicts_only(resources["claims"]):
            return None
        out["claims"] = resources["claims"]
    return out


def _pop_named(containers: list[Json], name: str) -> Json | None:
    for index, container in enumerate(containers):
        if container.get("name") == name:
            return containers.pop(index)
    return None


def _dicts(value: Any) -> list[Json]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _read(value: Any) -> Json:
    """`value` itself when it is an object, else an empty one: only to be read."""
    return value if isinstance(value, dict) else _EMPTY


_EMPTY: Json = {}
