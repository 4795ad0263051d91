"""A running control plane: etcd, kube-apiserver, kube-controller-manager and kube-scheduler as
child processes on loopback, started in order, each waited on until healthy, and stopped in
reverse order (SIGTERM, then SIGKILL after a grace period). Children also get SIGTERM should
this process die (PR_SET_PDEATHSIG), so none outlives a killed test run.
"""

from __future__ import annotations

import ctypes
import shutil
import signal
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..processes import free_port
from . import components, pki
from .audit import apiserver_flags, write_policy
from .inputs import CachedBuild

START_TIMEOUT = 120.0
STOP_GRACE = 10.0
DEFAULT_AUTHORIZATION_MODE = "Node,RBAC"
DEFAULT_ADMISSION_PLUGINS = ("NodeRestriction",)  # on top of the defaults, as kubeadm does


class StartError(RuntimeError):
    """A component exited or did not become healthy in time."""


def _die_with_parent() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


@dataclass
class _Child:
    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""


@dataclass
class ControlPlane:
    """Start with `start()`, stop with `stop()` (or use `hack.realcluster.testing`)."""

    binaries: CachedBuild
    data_dir: Path | None = None
    port: int = 0
    authorization_mode: str = DEFAULT_AUTHORIZATION_MODE
    admission_plugins: tuple[str, ...] = DEFAULT_ADMISSION_PLUGINS
    start_timeout: float = START_TIMEOUT
    #: Write kube-apiserver's audit log (`audit.POLICY`) to `layout.audit_log`.
    audit: bool = False
    _children: list[_Child] = field(default_factory=list)
    _temp: Path | None = None
    ports: components.Ports | None = None
    startup_seconds: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)  # seconds until each was healthy

    @property
    def layout(self) -> components.Layout:
        if self.data_dir is None:
            raise RuntimeError("not started")
        return components.Layout(self.data_dir)

    @property
    def url(self) -> str:
        if self.ports is None:
            raise RuntimeError("not started")
        return f"https://{components.LOOPBACK}:{self.ports.apiserver}"

    def start(self) -> None:
        started = time.monotonic()
        if self.data_dir is None:
            shm = Path("/dev/shm")  # etcd fsyncs: memory-backed is faster when there
            parent = shm if shm.is_dir() and shutil.disk_usage(shm).free > 2**30 else None
            self._temp = Path(tempfile.mkdtemp(prefix="realcluster-", dir=parent))
            self.data_dir = self._temp
        layout = self.layout
        layout.logs.mkdir(parents=True, exist_ok=True)
        keys = pki.ensure(layout.pki.directory)
        self.ports = ports = components.Ports(
            apiserver=self.port or free_port(), etcd_client=free_port(), etcd_peer=free_port(),
            controller_manager=free_port(), scheduler=free_port())
        for component, stem in (("controller-manager", "controller-manager"),
                                ("scheduler", "scheduler"), ("admin", "admin")):
            write_kubeconfig(layout.kubeconfig(component), keys.kubeconfig(self.url, stem))
        try:
            self._spawn("etcd", components.etcd(self.binaries.binary("etcd"), layout, ports))
            self._wait_healthy("etcd", f"http://{components.LOOPBACK}:{ports.etcd_client}"
                               "/health", None)
            extra: tuple[str, ...] = ()
            if self.audit:
                extra = tuple(apiserver_flags(write_policy(layout.audit_policy),
                                              layout.audit_log))
            self._spawn("kube-apiserver", components.kube_apiserver(
                self.binaries.binary("kube-apiserver"), layout, ports,
                self.authorization_mode, self.admission_plugins, extra))
            context = self.client_context()
            self._wait_healthy("kube-apiserver", f"{self.url}/readyz", context)
            self._spawn("kube-controller-manager", components.kube_controller_manager(
                self.binaries.binary("kube-controller-manager"), layout, ports))
            self._spawn("kube-scheduler", components.kube_scheduler(
                self.binaries.binary("kube-scheduler"), layout, ports))
            self._wait_healthy("kube-controller-manager", f"https://{components.LOOPBACK}:"
                               f"{ports.controller_manager}/healthz", context)
            self._wait_healthy("kube-scheduler", f"https://{components.LOOPBACK}:"
                               f"{ports.scheduler}/healthz", context)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - started

    def client_context(self) -> ssl.SSLContext:
        """TLS for the admin: trusts the CA, presents the admin's client certificate."""
        keys = self.layout.pki
        context = ssl.create_default_context(cafile=str(keys.path("ca.crt")))
        context.load_cert_chain(keys.path("admin.crt"), keys.path("admin.key"))
        return context

    def write_kubeconfig(self, path: Path, namespace: str = "default") -> Path:
        """An admin kubeconfig (group system:masters) for this control plane."""
        return write_kubeconfig(path, self.layout.pki.kubeconfig(
            self.url, "admin", namespace=namespace))

    def write_token_kubeconfig(self, path: Path, token: str, namespace: str = "default"
                               ) -> Path:
        """A kubeconfig that authenticates with a bearer token (a service account's)."""
        config = self.layout.pki.kubeconfig(self.url, "admin", namespace=namespace)
        config["users"] = [{"name": "token", "user": {"token": token}}]
        config["contexts"][0]["context"]["user"] = "token"
        return write_kubeconfig(path, config)

    def pid(self, name: str) -> int:
        """The process id of a running component ("etcd", "kube-apiserver", ...)."""
        return next(c.process.pid for c in self._children if c.name == name)

    def exited(self) -> list[str]:
        """The components that have exited since they were started."""
        return [c.name for c in self._children if c.process.poll() is not None]

    def _spawn(self, name: str, command: list[str]) -> None:
        log = self.layout.logs / f"{name}.log"
        with log.open("ab") as sink:
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=sink,
                                       stderr=subprocess.STDOUT, start_new_session=True,
                                       preexec_fn=_die_with_parent)
        self._children.append(_Child(name, process, log))

    def _wait_healthy(self, name: str, url: str, context: ssl.SSLContext | None) -> None:
        child = next(c for c in self._children if c.name == name)
        started = time.monotonic()
        deadline = started + self.start_timeout
        last = ""
        while time.monotonic() < deadline:
            if child.process.poll() is not None:
                raise StartError(f"{name} exited {child.process.returncode}:\n{child.tail()}")
            try:
                with urllib.request.urlopen(url, timeout=5, context=context) as response:
                    if response.status == 200:
                        self.phases[name] = round(time.monotonic() - started, 2)
                        return
            except (urllib.error.URLError, OSError) as error:
                last = str(error)
            time.sleep(0.1)
        raise StartError(f"{name} not healthy at {url} within {self.start_timeout:.0f}s"
                         f" ({last}):\n{child.tail()}")

    def stop(self) -> None:
        """Stop the children in reverse order, then remove a temporary data directory."""
        while self._children:
            child = self._children.pop()
            if child.process.poll() is None:
                child.process.send_signal(signal.SIGTERM)
                try:
                    child.process.wait(timeout=STOP_GRACE)
                except subprocess.TimeoutExpired:
                    child.process.kill()
                    child.process.wait(timeout=STOP_GRACE)
        if self._temp is not None:
            shutil.rmtree(self._temp, ignore_errors=True)
            self._temp = None
            self.data_dir = None


def write_kubeconfig(path: Path, config: dict[str, object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    path.chmod(0o600)
    return path
