"""The simulated kubelets' HTTP side: container logs, exec / attach, port-forward.

What kube-apiserver reaches on a node for `pods/log`, `pods/exec`, `pods/attach` and
`pods/portforward` (`pod_connect` routes them here):

* logs (`/containerLogs`): the kubelet picks the container run from the pod's status as
  `validateContainerLogStatus` does (the running or last run; `previous`: the run before,
  else 400 `previous terminated container "c" in pod "p" not found`; a waiting container:
  400 `container "c" in pod "p" is waiting to start: <reason>`), then serves the lines
  `container_logs` kept, with `tailLines`, `sinceSeconds` / `sinceTime`, `timestamps`,
  `limitBytes`, and `follow` until the run ends;
* exec and attach: the simulated runtime runs no processes, so they fail as a runtime that
  cannot exec fails: over a websocket (kubectl 1.30 and later) the upgrade succeeds and the
  error comes as a Status on the error channel, as kube-apiserver's stream translator sends
  it (`Internal error occurred: unable to upgrade connection: ...`); a SPDY upgrade gets the
  kubelet's answer, a 500 with the runtime's text (`container not found ("c")` when the
  container is not running);
* port-forward: SPDY tunneled in a websocket, or after a plain SPDY upgrade (`port_forward`).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from aiohttp import web

from ..errors import ApiError, bad_request
from .clock import parse_rfc3339
from .container_logs import ContainerLog, LogLine
from .node_objects import SIMULATED_LABEL
from .pod_status import RUNNING
from .port_forward import TUNNEL_PROTOCOL, serve_spdy, serve_websocket
from .writer import NODES

if TYPE_CHECKING:
    from .kubelet import Kubelet

Json = dict[str, Any]

#: Exec protocols of kubectl's websocket executor; v4 and v5 carry a Status on channel 3.
EXEC_PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io", "v3.channel.k8s.io",
                  "v2.channel.k8s.io", "channel.k8s.io")
_ERROR_CHANNEL = 3


class SimulatedKubelets:
    """The kubelets of the simulated nodes, as kube-apiserver's connections reach them."""

    def __init__(self, kubelet: Kubelet) -> None:
        self.kubelet = kubelet

    def serves(self, node: str) -> bool:
        obj = self.kubelet.writer.get(NODES, "", node)
        return (obj is not None and SIMULATED_LABEL in (obj["metadata"].get("labels") or {})
                and node not in self.kubelet.ctx.nodes_down)

    # --- logs ----------------------------------------------------------------------------

    async def logs(self, request: web.Request, pod: Json, container: str
                   ) -> web.StreamResponse:
        q = request.query
        previous = _flag(q.get("previous"))
        log = self._log_of(pod, container, previous)
        lines = log.snapshot() if log is not None else []
        follow_from = log.first + len(lines) if log is not None else 0
        cutoff = _since(q.get("sinceSeconds"), q.get("sinceTime"))
        if cutoff is not None:
            lines = [line for line in lines if line.at >= cutoff]
        tail = _int(q, "tailLines")
        if tail is not None:
            lines = lines[len(lines) - tail:] if tail else []
        limit = _int(q, "limitBytes")
        timestamps = _flag(q.get("timestamps"))
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await response.prepare(request)
        sent = 0

        async def write(line: LogLine) -> bool:
            nonlocal sent
            data = ((line.timestamp() + " " if timestamps else "") + line.text + "\n").encode()
            if limit is not None and sent + len(data) > limit:
                await response.write(data[:limit - sent])
                return False
            sent += len(data)
            await response.write(data)
            return True

        going = True
        for line in lines:
            going = await write(line)
            if not going:
                break
        if going and log is not None and _flag(q.get("follow")) and not previous:
            async for line in log.follow(follow_from):
                if not await write(line):
                    break
        await response.write_eof()
        return response

    def _log_of(self, pod: Json, container: str, previous: bool) -> ContainerLog | None:
        """The run `validateContainerLogStatus` picks (400 when there is none to read)."""
        meta = pod["metadata"]
        status = pod.get("status") or {}
        found = next((c for c in [*(status.get("containerStatuses") or ()),
                                  *(status.get("initContainerStatuses") or ())]
                      if c.get("name") == container), None)
        if found is None:
            raise bad_request(f'container "{container}" in pod "{meta["name"]}" is not '
                              "available")
        key = (meta["namespace"], meta["name"])
        restarts = int(found.get("restartCount") or 0)
        state = found.get("state") or {}
        last = (found.get("lastState") or {}).get("terminated")
        if previous:
            if not last or not last.get("containerID"):
                raise bad_request(f'previous terminated container "{container}" in pod '
                                  f'"{meta["name"]}" not found')
            return self._run(key, container, restarts - 1)
        if state.get("running") or state.get("terminated"):
            return self._run(key, container, restarts)
        if last:
            return self._run(key, container, restarts - 1)
        reason = (state.get("waiting") or {}).get("reason", "")
        why = {"ErrImagePull": "image can't be pulled",
               "ImagePullBackOff": "trying and failing to pull image"}.get(reason, reason)
        raise bad_request(f'container "{container}" in pod "{meta["name"]}" is waiting to '
                          f"start: {why}")

    def _run(self, key: tuple[str, str], container: str, restarts: int) -> ContainerLog | None:
        logs = self.kubelet.logs
        for log in (logs.current(key, container), logs.previous(key, container)):
            if log is not None and log.restarts == restarts:
                return log
        return None

    # --- exec and attach ------------------------------------------------------------------

    async def exec(self, request: web.Request, pod: Json, container: str,
                   subresource: str) -> web.StreamResponse:
        meta = pod["metadata"]
        run = self.kubelet.runs.get((meta["namespace"], meta["name"]))
        if run is None or run.stage != RUNNING:
            problem = f'container not found ("{container}")'
        else:
            problem = (f"rpc error: code = Unimplemented desc = the simulated container "
                       f"runtime (localcluster) cannot {subresource}: container "
                       f'"{container}" of pod {meta["namespace"]}/{meta["name"]} runs no '
                       "process")
        if not request.headers.get("Upgrade"):
            raise bad_request("Upgrade request required")
        if not _is_websocket(request):
            return web.Response(status=500, text=problem)
        ws = web.WebSocketResponse(protocols=EXEC_PROTOCOLS)
        await ws.prepare(request)
        message = f"unable to upgrade connection: {problem}"
        if ws.ws_protocol in ("v5.channel.k8s.io", "v4.channel.k8s.io"):
            status = ApiError(500, "InternalError", f"Internal error occurred: {message}")
            body = status.status()
            body["details"] = {"causes": [{"message": message}]}
            await ws.send_bytes(bytes([_ERROR_CHANNEL]) + json.dumps(body).encode())
        else:
            await ws.send_bytes(bytes([_ERROR_CHANNEL]) + message.encode())
        await ws.close()
        return ws

    # --- port-forward ----------------------------------------------------------------------

    async def port_forward(self, request: web.Request, pod: Json) -> web.StreamResponse:
        upgrade = request.headers.get("Upgrade", "").lower()
        if not upgrade:
            raise bad_request("Upgrade request required")
        if upgrade == "websocket" and TUNNEL_PROTOCOL not in request.headers.get(
                "Sec-WebSocket-Protocol", ""):
            raise bad_request(f"port-forward over a websocket needs the {TUNNEL_PROTOCOL} "
                              "subprotocol (SPDY tunneled in the websocket)")
        if upgrade not in ("websocket", "spdy/3.1"):
            raise bad_request(f"unsupported upgrade {upgrade!r}: SPDY/3.1 or websocket")
        meta = pod["metadata"]
        key = (meta["namespace"], meta["name"])

        def resolve(port: int) -> tuple[str, str | None]:
            run = self.kubelet.runs.get(key)
            if run is None or run.stage != RUNNING:
                return "", "the pod's containers are not running"
            return run.ip, None

        name = f"{meta['name']}_{meta['namespace']}"
        if upgrade == "websocket":
            return await serve_websocket(request, resolve, name)
        return await serve_spdy(request, resolve, name)


def _is_websocket(request: web.Request) -> bool:
    return request.headers.get("Upgrade", "").lower() == "websocket"


def _flag(value: str | None) -> bool:
    return (value or "").lower() in ("true", "1")


def _int(query: Any, name: str) -> int | None:
    raw = query.get(name)
    if raw is None or raw == "":
        return None
    try:
        value = int(raw)
    except ValueError:
        raise bad_request(f"{name}: invalid integer {raw!r}") from None
    if value < 0:
        raise ApiError(422, "Invalid", f'PodLogOptions "{name}" is invalid: {name}: Invalid '
                                       f"value: {value}: must be greater than or equal to 0")
    return value


def _since(seconds: str | None, time: str | None) -> datetime | None:
    if seconds:
        try:
            return datetime.now(UTC) - timedelta(seconds=int(seconds))
        except ValueError:
            raise bad_request(f"sinceSeconds: invalid integer {seconds!r}") from None
    return parse_rfc3339(time)
