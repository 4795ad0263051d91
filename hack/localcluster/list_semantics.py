"""How lists of built-in kinds merge: strategic-merge-patch keys and server-side-apply map keys.

The facts come from the Go struct tags of k8s.io/api (`patchStrategy`/`patchMergeKey` for
strategic merge patch, `+listType`/`+listMapKey` for server-side apply). Lists not named here
are atomic: a patch or an apply replaces them whole. Custom resources never use this table:
their lists follow `x-kubernetes-list-type` in the CRD schema.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ListSemantics:
    """How one list field merges."""

    #: strategic merge patch: the merge key of a list of objects, or None.
    smp_merge_key: str | None = None
    #: strategic merge patch: a list of scalars merged as a set (`patchStrategy:"merge"`).
    smp_scalar_set: bool = False
    #: server-side apply: `listType=map` keys, or () when not a map.
    ssa_map_keys: tuple[str, ...] = ()
    #: server-side apply: `listType=set`.
    ssa_set: bool = False


def _m(key: str, *ssa_keys: str) -> ListSemantics:
    return ListSemantics(smp_merge_key=key, ssa_map_keys=ssa_keys or (key,))


_CONDITIONS = _m("type")

#: Lists inside a PodSpec, by field path relative to the PodSpec ("[]" = each element).
_POD_SPEC: dict[str, ListSemantics] = {
    "containers": _m("name"),
    "initContainers": _m("name"),
    "ephemeralContainers": _m("name"),
    "volumes": _m("name"),
    "imagePullSecrets": _m("name"),
    "hostAliases": _m("ip"),
    "topologySpreadConstraints": _m("topologyKey", "topologyKey", "whenUnsatisfiable"),
    "resourceClaims": _m("name"),
    "schedulingGates": _m("name"),
}
_CONTAINER: dict[str, ListSemantics] = {
    "ports": _m("containerPort", "containerPort", "protocol"),
    "env": _m("name"),
    "volumeMounts": _m("mountPath"),
    "volumeDevices": _m("devicePath"),
    "resizePolicy": ListSemantics(ssa_map_keys=("resourceName",)),
    "resources.claims": ListSemantics(ssa_map_keys=("name",)),
}
for _c in ("containers", "initContainers", "ephemeralContainers"):
    for _field, _sem in _CONTAINER.items():
        _POD_SPEC[f"{_c}[].{_field}"] = _sem

_META: dict[str, ListSemantics] = {
    "metadata.ownerReferences": _m("uid"),
    "metadata.finalizers": ListSemantics(smp_scalar_set=True, ssa_set=True),
}

#: Where each kind keeps its PodSpec.
_POD_SPEC_AT: dict[str, str] = {
    "Pod": "spec",
    "PodTemplate": "template.spec",
    "Deployment": "spec.template.spec",
    "ReplicaSet": "spec.template.spec",
    "StatefulSet": "spec.template.spec",
    "DaemonSet": "spec.template.spec",
    "Job": "spec.template.spec",
    "ReplicationController": "spec.template.spec",
    "CronJob": "spec.jobTemplate.spec.template.spec",
}

_KIND_LISTS: dict[str, dict[str, ListSemantics]] = {
    "Pod": {
        "status.conditions": _CONDITIONS,
        "status.podIPs": _m("ip"),
        "status.hostIPs": _m("ip"),
        "status.resourceClaimStatuses": _m("name"),
    },
    "ServiceAccount": {"secrets": _m("name")},
    "Node": {
        "status.conditions": _CONDITIONS,
        "status.addresses": _m("type"),
    },
    "Service": {
        "spec.ports": _m("port", "port", "protocol"),
        "status.conditions": _CONDITIONS,
    },
    "Namespace": {"status.conditions": _CONDITIONS},
    "PersistentVolumeClaim": {"status.conditions": _CONDITIONS},
    "Deployment": {"status.conditions": _CONDITIONS},
    "ReplicaSet": {"status.conditions": _CONDITIONS},
    "StatefulSet": {"status.conditions": _CONDITIONS},
    "DaemonSet": {"status.conditions": _CONDITIONS},
    "Job": {"status.conditions": ListSemantics(smp_merge_key="type")},
    "CustomResourceDefinition": {"status.conditions": _CONDITIONS},
    "HorizontalPodAutoscaler": {"status.conditions": _CONDITIONS},
    "PodDisruptionBudget": {"status.conditions": _CONDITIONS},
}


def list_semantics(kind: str, path: str) -> ListSemantics | None:
    """How the list at `path` (dotted, "[]" after each list on the way) of `kind` merges.

    Returns None for an atomic list (replaced whole by patches and applies).
    """
    if path in _META:
        return _META[path]
    own = _KIND_LISTS.get(kind, {}).get(path)
    if own is not None:
        return own
    prefix = _POD_SPEC_AT.get(kind)
    if prefix and path.startswith(prefix + "."):
        return _POD_SPEC.get(path[len(prefix) + 1 :])
    return None

