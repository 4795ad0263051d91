"""Rules of the component spec (a graph's service or component, and a DCD's spec) and of a
component's replica status.

Conversion decisions, field by field (v1alpha1 -> v1beta1):

- native: replicas, multinode, modelRef, globalDynamoNamespace, eppConfig, topologyConstraint;
  a DCD's backendFramework, and its serviceName as `name`.
- projected (`api.conversion.pod_template`): the pod fields into `podTemplate`,
  `compilationCache` and `frontendSidecar`.
- derived: componentType + subComponentType -> `type` (a worker with subComponentType
  prefill or decode becomes type prefill or decode; a type v1beta1 does not know is left
  out); scalingAdapter.enabled: true -> `scalingAdapter: {}`; sharedMemory -> sharedMemorySize
  (disabled -> "0"); checkpoint, gpuMemoryService and failover -> `experimental`
  (`api.conversion.gpu_memory`: the last two switched by `enabled`, their modes respelled).
- saved in the payload (v1alpha1 only): dynamoNamespace, autoscaling, ingress, and a graph
  service's serviceName; restored (v1beta1 only): providerOverride, runtimeVersionOverride,
  minAvailable, roles, dynamoSidecar, experimental.grove.
"""

from __future__ import annotations

from api.conversion.gpu_memory import experimental_rule
from api.conversion.pod_template import (
    HUB_KEYS,
    SPOKE_KEYS,
    hub_stands_for,
    pod_to_hub,
    pod_to_spoke,
    spoke_stands_for,
)
from api.conversion.rules import Rule, nested, projection, rename, same
from api.kube import Json

__all__ = ["COMPONENT_DEPLOYMENT_SPEC_RULES", "REPLICA_STATUS_RULES", "SHARED_SPEC_RULES"]

HUB_TYPES = ("frontend", "worker", "prefill", "decode", "planner", "epp")
SPLIT_TYPES = ("prefill", "decode")


def _type_to_hub(spoke: Json) -> Json:
    kind = spoke.get("componentType")
    sub = spoke.get("subComponentType")
    if sub in SPLIT_TYPES and kind in (None, "worker"):
        return {"type": sub}
    return {"type": kind} if kind in HUB_TYPES else {}


def _type_to_spoke(hub: Json) -> Json:
    return {"componentType": hub["type"]} if "type" in hub else {}


def _adapter_to_hub(spoke: Json) -> Json:
    adapter = spoke.get("scalingAdapter")
    enabled = isinstance(adapter, dict) and adapter.get("enabled") is True
    return {"scalingAdapter": {}} if enabled else {}


def _adapter_to_spoke(hub: Json) -> Json:
    return {"scalingAdapter": {"enabled": True}} if "scalingAdapter" in hub else {}


def _shm_to_hub(spoke: Json) -> Json:
    shm = spoke.get("sharedMemory")
    if not isinstance(shm, dict):
        return {}
    if shm.get("disabled") is True:
        return {"sharedMemorySize": "0"}
    return {"sharedMemorySize": shm["size"]} if "size" in shm else {}


def _shm_to_spoke(hub: Json) -> Json:
    if "sharedMemorySize" not in hub:
        return {}
    size = hub["sharedMemorySize"]
    return {"sharedMemory": {"disabled": True} if size in ("0", 0) else {"size": size}}


SHARED_SPEC_RULES: list[Rule] = [
    *same(
        "replicas",
        "multinode",
        "modelRef",
        "globalDynamoNamespace",
        "eppConfig",
        "topologyConstraint",
    ),
    projection(SPOKE_KEYS, HUB_KEYS, pod_to_hub, pod_to_spoke,
               hub_matches=hub_stands_for, spoke_matches=spoke_stands_for),
    projection(("componentType", "subComponentType"), ("type",), _type_to_hub, _type_to_spoke),
    projection(("scalingAdapter",), ("scalingAdapter",), _adapter_to_hub, _adapter_to_spoke),
    projection(("sharedMemory",), ("sharedMemorySize",), _shm_to_hub, _shm_to_spoke),
    experimental_rule(),
]

COMPONENT_DEPLOYMENT_SPEC_RULES: list[Rule] = [
    *SHARED_SPEC_RULES,
    *same("backendFramework"),
    rename("serviceName", "name"),
]


def _names_to_hub(spoke: Json) -> Json:
    if "componentNames" in spoke:
        return {"componentNames": spoke["componentNames"]}
    return {"componentNames": [spoke["componentName"]]} if "componentName" in spoke else {}


def _names_to_spoke(hub: Json) -> Json:
    names = hub.get("componentNames")
    if not isinstance(names, list):
        return {}
    if names:
        return {"componentName": names[-1], "componentNames": names}
    return {"componentNames": names}


REPLICA_STATUS_RULES: list[Rule] = [
    *same("componentKind", "replicas", "updatedReplicas", "readyReplicas", "availableReplicas"),
    projection(
        ("componentName", "componentNames"), ("componentNames",), _names_to_hub, _names_to_spoke
    ),
]


def component_status_rule() -> Rule:
    """A DCD's `status.service` <-> `status.component`."""
    return nested("service", "component", REPLICA_STATUS_RULES)
