"""What a pod needs from its namespace before it can run, and the errors when it is missing.

Three checks, each with the words of the component that makes it:

* the scheduler's VolumeBinding PreFilter: a `persistentVolumeClaim` volume whose claim does
  not exist (`persistentvolumeclaim "x" not found`) or is being deleted leaves the pod
  unschedulable (`claim_problem`);
* the kubelet's volume manager: a `configMap` or `secret` volume, or a `projected` volume's
  configMap / secret source, naming an object that does not exist (`configmap "x" not found`,
  `secret "x" not found`, as the kubelet's object cache reports it) or a key it lacks
  (`configmap references non-existent config key: k`, `references non-existent secret key:
  k`) keeps the pod in ContainerCreating (`mount_problems`; a projected volume reports all of
  its sources' errors, bracketed when there are several);
* the kubelet's container config: `envFrom` and `valueFrom` references
  (`configmap "x" not found`, `couldn't find key k in ConfigMap ns/x`, and the Secret
  equivalents) give the container CreateContainerConfigError (`env_problems`; the first error
  of each container, in the order the kubelet resolves them: envFrom, then env).

A reference marked `optional: true` never blocks, missing or not. Init containers' env is not
checked, and, as in a kubelet of this version, no `Unable to attach or mount volumes` event
follows when the wait for volumes times out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..storage import ResourceKey

__all__ = ["CLAIMS", "CONFIG_MAPS", "SECRETS", "claim_problem", "env_problems",
           "mount_problems"]

Json = dict[str, Any]
Lookup = Callable[[ResourceKey, str, str], Json | None]

CONFIG_MAPS: ResourceKey = ("", "configmaps")
SECRETS: ResourceKey = ("", "secrets")
CLAIMS: ResourceKey = ("", "persistentvolumeclaims")

#: The resource, the kubelet's name for it in NotFound errors, and its reference's name field.
_KINDS = {"configMap": (CONFIG_MAPS, "configmap", "name"),
          "secret": (SECRETS, "secret", "secretName")}


def claim_problem(pod: Json, lookup: Lookup) -> str | None:
    """Why the scheduler cannot place the pod for its claims, or None."""
    namespace = pod["metadata"]["namespace"]
    for volume in (pod.get("spec") or {}).get("volumes") or ():
        source = volume.get("persistentVolumeClaim")
        if not isinstance(source, dict):
            continue
        name = str(source.get("claimName", ""))
        claim = lookup(CLAIMS, namespace, name)
        if claim is None:
            return f'persistentvolumeclaim "{name}" not found'
        if claim["metadata"].get("deletionTimestamp"):
            return f'persistentvolumeclaim "{name}" is being deleted'
    return None


def mount_problems(pod: Json, lookup: Lookup) -> list[tuple[str, str]]:
    """(volume name, SetUp error) of each volume the kubelet cannot set up."""
    namespace = pod["metadata"]["namespace"]
    out: list[tuple[str, str]] = []
    for volume in (pod.get("spec") or {}).get("volumes") or ():
        errors: list[str] = []
        for kind in _KINDS:
            if isinstance(volume.get(kind), dict):
                errors += _source_errors(kind, volume[kind], namespace, lookup, projected=False)
        projected = volume.get("projected")
        if isinstance(projected, dict):
            for source in projected.get("sources") or ():
                for kind in _KINDS:
                    if isinstance(source.get(kind), dict):
                        errors += _source_errors(kind, source[kind], namespace, lookup,
                                                 projected=True)
        if errors:
            unique = list(dict.fromkeys(errors))
            text = unique[0] if len(unique) == 1 else f"[{', '.join(unique)}]"
            out.append((str(volume.get("name", "")), text))
    return out


def _source_errors(kind: str, ref: Json, namespace: str, lookup: Lookup, *,
                   projected: bool) -> list[str]:
    resource, noun, name_field = _KINDS[kind]
    name = str(ref.get("name" if projected else name_field, ""))
    optional = ref.get("optional") is True
    obj = lookup(resource, namespace, name)
    if obj is None:
        return [] if optional else [f'{noun} "{name}" not found']
    keys = set(obj.get("data") or {}) | set(obj.get("binaryData") or {})
    for item in ref.get("items") or ():
        key = str(item.get("key", ""))
        if key not in keys and not optional:
            return [f"configmap references non-existent config key: {key}" if kind == "configMap"
                    else f"references non-existent secret key: {key}"]
    return []


def env_problems(pod: Json, lookup: Lookup) -> dict[str, str]:
    """The CreateContainerConfigError message of each app container that has one."""
    namespace = pod["metadata"]["namespace"]
    out: dict[str, str] = {}
    for container in (pod.get("spec") or {}).get("containers") or ():
        problem = _env_problem(container, namespace, lookup)
        if problem is not None:
            out[str(container.get("name", ""))] = problem
    return out


def _env_problem(container: Json, namespace: str, lookup: Lookup) -> str | None:
    for source in container.get("envFrom") or ():
        for field, resource, noun in (("configMapRef", CONFIG_MAPS, "configmap"),
                                      ("secretRef", SECRETS, "secret")):
            ref = source.get(field)
            if isinstance(ref, dict) and ref.get("optional") is not True:
                name = str(ref.get("name", ""))
                if lookup(resource, namespace, name) is None:
                    return f'{noun} "{name}" not found'
    for env in container.get("env") or ():
        value_from = env.get("valueFrom") or {}
        for field, resource, noun, kind in (
                ("configMapKeyRef", CONFIG_MAPS, "configmap", "ConfigMap"),
                ("secretKeyRef", SECRETS, "secret", "Secret")):
            ref = value_from.get(field)
            if not isinstance(ref, dict) or ref.get("optional") is True:
                continue
            name, key = str(ref.get("name", "")), str(ref.get("key", ""))
            obj = lookup(resource, namespace, name)
            if obj is None:
                return f'{noun} "{name}" not found'
            if key not in (obj.get("data") or {}):
                return f"couldn't find key {key} in {kind} {namespace}/{name}"
    return None
