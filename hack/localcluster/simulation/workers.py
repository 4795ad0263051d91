"""Simulated Dynamo workers and frontends: each running one answers HTTP on its own IP and port.

A pod is a Dynamo worker here when it carries `nvidia.com/dynamo-component-type` and declares
a container port named `system` (9090 as the operator builds it). While its container runs,
the pod's address serves what a Dynamo worker's system server answers and the operator or the
probes call (`/health`, `/live`, `/engine/v1/load_lora`, `/engine/v1/unload_lora`; see
`worker_routes`). A pod of component type `frontend` with a port named `http` (8000) is a
frontend: it answers `/health`, `/live` and `/localcluster/serving-pairs`, the worker
generations it sees and their complete prefill+decode pairs (`generations`), computed from
the live pods `pods` gives (the in-process kubelet's store, nodesim's pod watch);
`serving_pairs` is the same view for in-process tests.

The kubelet drives it (`sync` on every look at a pod, `stop` when the pod is gone): the
endpoint appears when the container starts, disappears when it stops, and a restarted
container starts with no adapters, as a real engine's memory would. Each start is also told to
`on_start` (the in-process kubelet publishes the worker's DynamoWorkerMetadata there, see
`worker_metadata`). Tests read each pod's
adapters and calls (`loaded`, `calls`) and set faults (`faults`, see `worker_faults`).
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
import socket
from collections.abc import Callable, Iterable
from typing import Any

import structlog
from aiohttp import web

from .addresses import PodAddresses
from .container_logs import ContainerLogs
from .generations import frontend_view
from .worker_faults import Fault, Faults
from .worker_routes import FRONTEND, WORKER, Call, WorkerEndpoint, frontend_app, worker_app

Json = dict[str, Any]
Key = tuple[str, ...]
log = structlog.get_logger("localcluster.workers")

COMPONENT_TYPE_LABEL = "nvidia.com/dynamo-component-type"
SYSTEM_PORT_NAME = "system"
HTTP_PORT_NAME = "http"
#: Tries to find a pod address whose system port no other process on this host holds.
_ADDRESS_TRIES = 64
#: Stopped endpoints kept for tests to read.
_HISTORY = 1000
#: Open files left to the API server (its clients' connections, watches) when the workers'
#: sockets are counted against the process's limit: a quarter of it, at most this many.
_FILES_FOR_THE_SERVER = 4096


def endpoint_budget() -> int:
    """How many worker sockets (served or reserved) this process may hold.

    Every simulated worker listens on a socket of this process, where a real one is a process
    of its own: at 10,000 graphs (30,000 pods) they would take every file descriptor and the
    API server could accept no connection. The soft limit is first raised to the hard one, as
    Go's runtime does for kube-apiserver at start; workers past the budget run without an
    endpoint (nothing probes it: readiness is simulated), and the API server keeps its room.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
    if soft == resource.RLIM_INFINITY:
        return 1 << 20
    return max(0, soft - min(_FILES_FOR_THE_SERVER, soft // 4))


def served_port(pod: Json) -> int | None:
    """The port a Dynamo worker (system) or frontend (http) pod serves; None for any other."""
    found = _served_container(pod)
    return found[1] if found is not None else None


def _served_container(pod: Json) -> tuple[str, int, str] | None:
    """The container of a Dynamo worker or frontend pod that serves, its port, and WORKER or
    FRONTEND."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    if COMPONENT_TYPE_LABEL not in labels:
        return None
    frontend = labels[COMPONENT_TYPE_LABEL] == FRONTEND
    for name, kind in ((SYSTEM_PORT_NAME, WORKER), (HTTP_PORT_NAME, FRONTEND)):
        if kind == FRONTEND and not frontend:
            continue
        for container in (pod.get("spec") or {}).get("containers") or ():
            for port in container.get("ports") or ():
                if port.get("name") == name and port.get("containerPort"):
                    return str(container.get("name", "")), int(port["containerPort"]), kind
    return None


def _bound(ip: str, port: int, reuse: bool = False) -> socket.socket | None:
    """A socket bound to the address (not listening yet), or None when it is taken.

    While bound, another local cluster's attempt at the address fails, so two clusters on
    one host never hand the same worker address out (both count pods from 127.0.1.1).
    `reuse` (a restarted container) binds despite the last run's closing connections."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if reuse:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((ip, port))
    except OSError:
        sock.close()
        return None
    # Set after the bind: the run's closed connections (TIME_WAIT) then let a restart bind.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    return sock


class Workers:
    """Every simulated worker endpoint of one cluster; owns their server tasks."""

    def __init__(self, logs: ContainerLogs | None = None,
                 on_start: Callable[[Json], None] | None = None,
                 pods: Callable[[str], Iterable[Json]] | None = None) -> None:
        #: Where the workers' containers print (the kubelet's logs); None: nowhere.
        self.logs = logs or ContainerLogs()
        #: Called with the pod each time a worker's container starts serving.
        self.on_start = on_start
        #: The live pods of a Kubernetes namespace, as the API server has them (what a
        #: frontend's view is computed from); None: frontends see nothing.
        self.pods = pods
        self.endpoints: dict[Key, WorkerEndpoint] = {}
        #: Endpoints that stopped, kept so tests can read what they received.
        self.history: list[WorkerEndpoint] = []
        self.faults = Faults()
        #: Addresses held for worker pods that are not running yet, by pod key.
        self._reserved: dict[Key, socket.socket] = {}
        #: Sockets this cluster's workers may hold (`endpoint_budget`).
        self.budget = endpoint_budget()
        self._over_budget = 0
        #: Workers running without an endpoint (past the budget): (uid, restarts) by key.
        self._unserved: dict[Key, tuple[str, int]] = {}

    def _within_budget(self, pod: Json) -> bool:
        if len(self.endpoints) + len(self._reserved) < self.budget:
            return True
        self._over_budget += 1
        if self._over_budget == 1:
            log.warning("worker endpoints at the open-files budget: later workers run without "
                        "one", budget=self.budget, pod=pod["metadata"].get("name"))
        return False

    # --- the kubelet's side ----------------------------------------------------------------

    def allocate(self, pod: Json, addresses: PodAddresses) -> str:
        """A pod address; for a worker, one whose system port is free on this host (other
        local clusters may run beside this one), held until the worker serves on it."""
        port = served_port(pod)
        if port is None:
            return addresses.allocate()
        meta = pod["metadata"]
        if not self._within_budget(pod):
            return addresses.allocate()
        skipped: list[str] = []
        try:
            for _ in range(_ADDRESS_TRIES):
                ip = addresses.allocate()
                sock = _bound(ip, port)
                if sock is not None:
                    self._unreserve((meta["namespace"], meta["name"]))
                    self._reserved[(meta["namespace"], meta["name"])] = sock
                    return ip
                skipped.append(ip)
            return addresses.allocate()
        finally:
            for ip in skipped:
                addresses.release(ip)

    def sync(self, key: Key, pod: Json, ip: str, running: bool, restarts: int) -> None:
        """Serve while the pod's container runs; a new run starts with an empty engine."""
        current = self.endpoints.get(key)
        uid = str(pod["metadata"].get("uid", ""))
        if current is not None and (not running or current.restarts != restarts
                                    or current.uid != uid or current.ip != ip):
            self.stop(key)
            current = None
        found = _served_container(pod)
        if not running:
            self._unserved.pop(key, None)
        if not running or current is not None or found is None:
            return
        container, port, kind = found
        meta = pod["metadata"]
        logs = self.logs

        def write_line(line: str) -> None:
            logs.write(key, container, line)

        endpoint = WorkerEndpoint(namespace=meta["namespace"], name=meta["name"], uid=uid,
                                  labels=dict(meta.get("labels") or {}), ip=ip, port=port,
                                  restarts=restarts, kind=kind, log=write_line)
        reserved = self._reserved.pop(key, None)
        if reserved is None and not self._within_budget(pod):
            if self._unserved.get(key) != (uid, restarts):
                self._unserved[key] = (uid, restarts)
                if self.on_start is not None:
                    self.on_start(pod)  # the worker runs, only unreachable
            return
        sock = reserved if reserved is not None and reserved.getsockname() == (ip, port) \
            else _bound(ip, port, reuse=True)
        if reserved is not None and sock is not reserved:
            reserved.close()
        if sock is None:
            log.warning("worker endpoint cannot listen: address taken", pod=meta["name"],
                        ip=ip, port=port)
            return
        sock.listen(128)
        sock.setblocking(False)
        if kind == FRONTEND:
            write_line(f"INFO dynamo_llm::http::service::service_v2: Starting HTTP service on: "
                       f"0.0.0.0:{port} (simulated frontend at {ip}:{port})")
        else:
            write_line(f"INFO dynamo_runtime::system_status_server: System status server "
                       f"listening on 0.0.0.0:{port} (simulated worker at {ip}:{port})")
        endpoint.task = asyncio.get_running_loop().create_task(
            self._serve(endpoint, sock), name=f"worker {meta['namespace']}/{meta['name']}")
        self.endpoints[key] = endpoint
        if self.on_start is not None:
            self.on_start(pod)

    def stop(self, key: Key) -> None:
        """The container stopped or the pod is gone: its endpoint disappears."""
        self._unreserve(key)
        self._unserved.pop(key, None)
        endpoint = self.endpoints.pop(key, None)
        if endpoint is None:
            return
        self.history.append(endpoint)
        del self.history[:-_HISTORY]
        if endpoint.task is not None:
            endpoint.task.cancel()

    def _unreserve(self, key: Key) -> None:
        sock = self._reserved.pop(key, None)
        if sock is not None:
            sock.close()

    async def close(self) -> None:
        """Stop every endpoint and wait for their servers to close."""
        tasks = [e.task for e in [*self.endpoints.values(), *self.history]
                 if e.task is not None and not e.task.done()]
        for key in [*self.endpoints, *self._reserved]:
            self.stop(key)
        await asyncio.gather(*tasks, return_exceptions=True)

    # --- the test's side -------------------------------------------------------------------

    def endpoint(self, namespace: str, name: str) -> WorkerEndpoint | None:
        return next((e for e in self.endpoints.values()
                     if e.namespace == namespace and e.name == name), None)

    def loaded(self, namespace: str, name: str) -> set[str]:
        """The adapters the pod's running engine holds (empty when it is not running)."""
        endpoint = self.endpoint(namespace, name)
        return set(endpoint.loras) if endpoint is not None else set()

    def calls(self, namespace: str | None = None, path: str | None = None) -> list[Call]:
        """Calls received by workers (of one namespace, on one path), stopped ones included."""
        everyone = [*self.history, *self.endpoints.values()]
        return [c for e in everyone if namespace is None or e.namespace == namespace
                for c in e.calls if path is None or c.path == path]

    def serving_pairs(self, namespace: str, frontend: str) -> Json | None:
        """What frontend pod `frontend` sees: the worker generations of its graph and their
        complete prefill+decode pairs (`generations.frontend_view`, the frontend's
        `/localcluster/serving-pairs`); None when the pod is not there or no pods are seen."""
        if self.pods is None:
            return None
        pods = list(self.pods(namespace))
        found = next((p for p in pods if (p.get("metadata") or {}).get("name") == frontend),
                     None)
        return frontend_view(found, pods) if found is not None else None

    def set_fault(self, namespace: str, fault: Fault, *, name: str | None = None,
                  selector: str | None = None) -> None:
        """Make one pod (`name`) or the pods matching `selector` (all if neither) misbehave."""
        self.faults.add(namespace, fault, name=name, selector=selector)

    # --- serving ---------------------------------------------------------------------------

    async def _serve(self, endpoint: WorkerEndpoint, sock: socket.socket) -> None:
        app = worker_app(endpoint, self.faults) if endpoint.kind == WORKER else frontend_app(
            endpoint, lambda: self.serving_pairs(endpoint.namespace, endpoint.name))
        runner = web.AppRunner(app, handle_signals=False,
                               access_log=None, shutdown_timeout=0.1)
        await runner.setup()
        try:
            await web.SockSite(runner, sock).start()
            await asyncio.Event().wait()
        finally:
            with contextlib.suppress(Exception):
                await runner.cleanup()
            sock.close()


