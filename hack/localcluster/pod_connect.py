"""The pod subresources kube-apiserver hands to a node's kubelet: log, exec, attach, portforward.

The API server's part is what `LogLocation` / `streamLocation` do before connecting to the
kubelet: the pod must exist, the container must be named when the pod has several (400 `a
container name must be specified for pod x, choose one of: [a b]`, `container c is not valid
for pod x`), and the pod must be bound to a node (logs of an unbound pod are empty; exec,
attach and port-forward answer 400 `pod x does not have a host assigned`). The rest is the
node's: a `Kubelets` (the simulation's) answers for the nodes it runs; any other node's kubelet
cannot be reached, which kube-apiserver reports as the failed dial.
"""

from __future__ import annotations

from typing import Any, Protocol

from aiohttp import web

from .errors import ApiError, bad_request
from .operations import Operations
from .registry import ResourceType

Json = dict[str, Any]

#: The subresources served here (besides status, binding and eviction, which are writes).
SUBRESOURCES = ("log", "exec", "attach", "portforward")
KUBELET_PORT = 10250


class Kubelets(Protocol):
    """The node side: the kubelets of the nodes a simulation runs."""

    def serves(self, node: str) -> bool:
        """Whether `node`'s kubelet is up and answers."""

    async def logs(self, request: web.Request, pod: Json, container: str
                   ) -> web.StreamResponse:
        """GET /containerLogs/<ns>/<pod>/<container> with the request's options."""

    async def exec(self, request: web.Request, pod: Json, container: str,
                   subresource: str) -> web.StreamResponse:
        """An exec or attach upgrade (websocket or SPDY)."""

    async def port_forward(self, request: web.Request, pod: Json) -> web.StreamResponse:
        """A port-forward upgrade (websocket-tunneled SPDY)."""


class PodConnect:
    """Serves pods/log, pods/exec, pods/attach and pods/portforward."""

    def __init__(self, ops: Operations) -> None:
        self.ops = ops
        #: The node side (None: no kubelet answers, as with a bare API server).
        self.kubelets: Kubelets | None = None

    async def handle(self, request: web.Request, rt: ResourceType, namespace: str, name: str,
                     subresource: str) -> web.StreamResponse:
        allowed = ("GET",) if subresource == "log" else ("GET", "POST")
        if request.method not in allowed:
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on "
                                                    "the requested resource")
        pod = self.ops.get(rt, namespace, name)
        container = ""
        if subresource != "portforward":
            container = _container(pod, request.query.get("container", ""))
        node = str((pod.get("spec") or {}).get("nodeName") or "")
        if not node:
            if subresource == "log":
                return web.Response(body=b"", content_type="text/plain")
            raise bad_request(f"pod {name} does not have a host assigned")
        if self.kubelets is None or not self.kubelets.serves(node):
            raise ApiError(500, "InternalError", self._unreachable(node, request.path_qs))
        if subresource == "log":
            return await self.kubelets.logs(request, pod, container)
        if subresource == "portforward":
            return await self.kubelets.port_forward(request, pod)
        return await self.kubelets.exec(request, pod, container, subresource)

    def _unreachable(self, node: str, path: str) -> str:
        rt = self.ops.registry.get("", "v1", "nodes")
        address = node
        obj = self.ops.storage.get(rt.stored_as, "", node) if rt is not None else None
        for entry in ((obj or {}).get("status") or {}).get("addresses") or ():
            if entry.get("type") == "InternalIP":
                address = str(entry.get("address"))
        return (f'Get "https://{address}:{KUBELET_PORT}{path}": dial tcp '
                f"{address}:{KUBELET_PORT}: connect: connection refused")


def _container(pod: Json, container: str) -> str:
    """The container a request means (LogLocation's and streamLocation's checks)."""
    name = pod["metadata"]["name"]
    spec = pod.get("spec") or {}
    containers = [str(c.get("name", "")) for c in spec.get("containers") or ()]
    init = [str(c.get("name", "")) for c in spec.get("initContainers") or ()]
    ephemeral = [str(c.get("name", "")) for c in spec.get("ephemeralContainers") or ()]
    if not container:
        if len(containers) == 1:
            return containers[0]
        if not containers:
            raise bad_request(f"a container name must be specified for pod {name}")
        message = (f"a container name must be specified for pod {name}, choose one of: "
                   f"[{' '.join(containers)}]")
        if init:
            message += f" or one of the init containers: [{' '.join(init)}]"
        raise bad_request(message)
    if container not in containers + init + ephemeral:
        raise bad_request(f"container {container} is not valid for pod {name}")
    return container
