"""APIServices (apiregistration.k8s.io/v1) for the group versions the server serves itself.

kube-apiserver's aggregator registers one local APIService per served group version: the
built-in ones at start (`autoregister`, label `kube-aggregator.kubernetes.io/automanaged:
onstart`, the priorities of `apiVersionPriorities`) and one per served CRD version while it is
served (`crdregistration`, label `true`, group priority 1000, version priority 100). Local
APIServices have no `service` and are Available with reason Local.

`ApiServiceRegistration.sync` makes the stored APIServices match the registry; the system
controllers call it when a CRD changes.
"""

from __future__ import annotations

import contextlib
from typing import Any

from .errors import ApiError
from .operations import Operations, WriteOptions, now_rfc3339
from .registry import ResourceType

Json = dict[str, Any]
API_SERVICES = ("apiregistration.k8s.io", "apiservices")
AUTOMANAGED = "kube-aggregator.kubernetes.io/automanaged"
_WRITER = WriteOptions(manager="kube-apiserver")

#: (groupPriorityMinimum, versionPriority) of the built-in group versions, from
#: kube-apiserver's apiVersionPriorities (the aggregator's own group included).
BUILTIN_PRIORITIES: dict[tuple[str, str], tuple[int, int]] = {
    ("", "v1"): (18000, 1),
    ("apiregistration.k8s.io", "v1"): (18000, 15),
    ("apps", "v1"): (17800, 15),
    ("events.k8s.io", "v1"): (17750, 15),
    ("authentication.k8s.io", "v1"): (17700, 15),
    ("authorization.k8s.io", "v1"): (17600, 15),
    ("autoscaling", "v1"): (17500, 15),
    ("autoscaling", "v2"): (17500, 30),
    ("batch", "v1"): (17400, 15),
    ("certificates.k8s.io", "v1"): (17300, 15),
    ("networking.k8s.io", "v1"): (17200, 15),
    ("policy", "v1"): (17100, 15),
    ("rbac.authorization.k8s.io", "v1"): (17000, 15),
    ("storage.k8s.io", "v1"): (16800, 15),
    ("apiextensions.k8s.io", "v1"): (16700, 15),
    ("admissionregistration.k8s.io", "v1"): (16700, 15),
    ("scheduling.k8s.io", "v1"): (16600, 15),
    ("coordination.k8s.io", "v1"): (16500, 15),
    ("node.k8s.io", "v1"): (16300, 15),
    ("discovery.k8s.io", "v1"): (16200, 15),
    ("resource.k8s.io", "v1"): (16200, 21),
}
#: What the CRD registration gives every CRD version.
CRD_PRIORITY = (1000, 100)


def desired(types: list[ResourceType]) -> dict[str, Json]:
    """APIService name -> the object the aggregator registers, for the served types."""
    out: dict[str, Json] = {}
    for rt in types:
        name = f"{rt.version}.{rt.group}"
        if name in out:
            continue
        if rt.custom:
            priority, managed = CRD_PRIORITY, "true"
        elif (rt.group, rt.version) in BUILTIN_PRIORITIES:
            priority, managed = BUILTIN_PRIORITIES[(rt.group, rt.version)], "onstart"
        else:
            continue  # unlisted group versions are not registered (as upstream skips them)
        out[name] = {"metadata": {"name": name, "labels": {AUTOMANAGED: managed}},
                     "spec": {"group": rt.group, "version": rt.version,
                              "groupPriorityMinimum": priority[0],
                              "versionPriority": priority[1]}}
    return out


class ApiServiceRegistration:
    """Keeps the local APIServices in storage equal to what the registry serves."""

    def __init__(self, ops: Operations) -> None:
        self.ops = ops

    def sync(self) -> None:
        rt = self.ops.registry.get("apiregistration.k8s.io", "v1", "apiservices")
        if rt is None:
            return
        wanted = desired(list(self.ops.registry))
        for current in self.ops.storage.list_objects(API_SERVICES):
            name = current["metadata"]["name"]
            labels = current["metadata"].get("labels") or {}
            if name not in wanted and labels.get(AUTOMANAGED) == "true":
                with contextlib.suppress(ApiError):
                    self.ops.delete(rt, "", name, {}, False, None)
        for name, obj in wanted.items():
            self._ensure(rt, name, obj)

    def _ensure(self, rt: ResourceType, name: str, obj: Json) -> None:
        current = self.ops.storage.get(API_SERVICES, "", name)
        with contextlib.suppress(ApiError):
            if current is None:
                current = self.ops.create(rt, "", obj, _WRITER).obj
            elif current.get("spec") != obj["spec"]:
                current = self.ops.update(rt, "", name, {**current, "spec": obj["spec"]},
                                          _WRITER).obj
            if not _available(current):
                condition = {"type": "Available", "status": "True",
                             "lastTransitionTime": now_rfc3339(), "reason": "Local",
                             "message": "Local APIServices are always available"}
                self.ops.update(rt, "", name, {**current, "status": {
                    "conditions": [condition]}}, _WRITER, subresource="status")


def _available(obj: Json) -> bool:
    return any(c.get("type") == "Available" and c.get("status") == "True"
               for c in (obj.get("status") or {}).get("conditions") or [])


__all__ = ["ApiServiceRegistration", "desired"]
