"""Any API server, shaped as the part of the local cluster's `Operations` that the in-process
simulation's `Writer` uses: `registry.versions_of`, `storage` reads, and `create`, `update`
and `delete`. Reads come from a `Mirror`; writes are HTTP requests, and their refusals are
raised as the local cluster's `ApiError`, so the `Writer` (its conflict retries, its quiet
404s) and the controllers built on it run unchanged as clients of a real cluster.

Only the kinds in `KINDS` are known: what the LeaderWorkerSet and Grove controllers read
and write.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from controller.resource import Resource
from hack.localcluster.errors import ApiError
from hack.localcluster.operations import WriteOptions
from hack.localcluster.registry import ResourceType
from hack.localcluster.selectors.label_selector import LabelSelector
from hack.localcluster.storage import ResourceKey

from .kube_http import KubeHttp
from .mirror import Mirror, resource_key

Json = dict[str, Any]

KINDS = [
    Resource("", "v1", "pods", "Pod"),
    Resource("", "v1", "services", "Service"),
    Resource("", "v1", "events", "Event"),
    Resource("leaderworkerset.x-k8s.io", "v1", "leaderworkersets", "LeaderWorkerSet"),
    Resource("grove.io", "v1alpha1", "podcliquesets", "PodCliqueSet"),
    Resource("grove.io", "v1alpha1", "podcliquescalinggroups", "PodCliqueScalingGroup"),
    Resource("grove.io", "v1alpha1", "podcliques", "PodClique"),
]
BY_KEY = {resource_key(r): r for r in KINDS}
#: Written, never read back: not mirrored.
WRITE_ONLY = {("", "events")}


@dataclass(frozen=True)
class Written:
    """What `Operations.create`/`update` return, as far as the `Writer` reads it."""

    obj: Json


class RemoteRegistry:
    """Which of `KINDS` the server serves (the mirror has listed them)."""

    def __init__(self, mirror: Mirror) -> None:
        self.mirror = mirror

    def versions_of(self, group: str, plural: str) -> list[ResourceType]:
        resource = BY_KEY.get((group, plural))
        if resource is None or ((group, plural) not in self.mirror.served
                                and (group, plural) not in WRITE_ONLY):
            return []
        return [ResourceType(group=group, version=resource.version, kind=resource.kind,
                             plural=plural, namespaced=resource.namespaced,
                             storage_version=resource.version)]


class RemoteStorage:
    """Reads of the mirror, as the local storage answers them."""

    def __init__(self, mirror: Mirror) -> None:
        self.mirror = mirror

    def get(self, resource: ResourceKey, namespace: str, name: str) -> Json | None:
        return self.mirror.get(resource, namespace, name)

    def list_objects(self, resource: ResourceKey, namespace: str | None = None) -> list[Json]:
        return self.mirror.items(resource, namespace)

    def list_selected(self, resource: ResourceKey, namespace: str | None,
                      selector: LabelSelector) -> list[Json]:
        return [o for o in self.mirror.items(resource, namespace)
                if selector.matches(o["metadata"].get("labels") or {})]

    def list_by_field(self, resource: ResourceKey, namespace: str | None, path: str,
                      value: str) -> list[Json]:
        if path != "spec.nodeName":
            raise NotImplementedError(path)
        return [o for o in self.mirror.items(resource, namespace)
                if (o.get("spec") or {}).get("nodeName") == value]

    def dependents(self, uid: str) -> list[tuple[ResourceKey, Json]]:
        return [(rkey, obj) for rkey in self.mirror.objects
                for obj in self.mirror.items(rkey)
                if any(ref.get("uid") == uid
                       for ref in obj["metadata"].get("ownerReferences") or ())]


class RemoteOperations:
    """Writes over HTTP with a `Writer`'s options (its field manager); reads of a mirror."""

    def __init__(self, http: KubeHttp, mirror: Mirror) -> None:
        self.http = http
        self.mirror = mirror
        self.registry = RemoteRegistry(mirror)
        self.storage = RemoteStorage(mirror)

    def _path(self, rt: ResourceType, namespace: str, name: str = "",
              subresource: str = "") -> str:
        resource = BY_KEY[(rt.group, rt.plural)]
        return resource.path(namespace, name, subresource)

    def _answer(self, rt: ResourceType, code: int, body: Json) -> Json:
        if code >= 400:
            raise ApiError(code, str(body.get("reason", "")), str(body.get("message", "")),
                           dict(body.get("details") or {}))
        self.mirror.observe((rt.group, rt.plural), body)
        return body

    def create(self, rt: ResourceType, namespace: str, body: Json,
               opts: WriteOptions) -> Written:
        code, answer = self.http.request("POST", self._path(rt, namespace), body,
                                         {"fieldManager": opts.manager})
        return Written(self._answer(rt, code, answer))

    def update(self, rt: ResourceType, namespace: str, name: str, body: Json,
               opts: WriteOptions, *, subresource: str = "") -> Written:
        code, answer = self.http.request("PUT", self._path(rt, namespace, name, subresource),
                                         body, {"fieldManager": opts.manager})
        return Written(self._answer(rt, code, answer))

    def delete(self, rt: ResourceType, namespace: str, name: str, options: Json) -> None:
        code, answer = self.http.request("DELETE", self._path(rt, namespace, name),
                                         {"apiVersion": "v1", "kind": "DeleteOptions",
                                          **options})
        if code >= 400:
            raise ApiError(code, str(answer.get("reason", "")), str(answer.get("message", "")))
