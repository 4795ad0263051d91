"""The conversion benchmark's webhook: a `dynamo-operator` process serving `/convert`.

The operator runs as it is deployed, an OS process of its own beside the API server's
(`python -m reconcilers.operator --enable-webhooks`), its webhook server on the port of
`--webhook-url` with a mounted certificate (`--webhook-cert-dir`: `tls.crt`, `tls.key` and
`ca.crt`, made here for 127.0.0.1). It is restricted to a namespace of its own that holds
nothing, so that it reconciles none of the graphs the benchmark lists: serving conversion
reviews is the only work it does. A namespace-restricted operator leaves the CRDs' conversion
stanza to the cluster-wide one, so the benchmark points the CRD at it (`client_config`), as the
chart does.

The handler's own time per review comes from the operator's
`conversion_webhook_duration_seconds` histogram (`handler_times`). `FloorWebhook` runs the
benchmark's second floor, `floor_webhook`, as a process of its own.
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import os
import ssl
import sys
from pathlib import Path
from typing import Any

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from controller.certificates import new_authority, serving_certificate
from hack.processes import cpu_seconds, free_port
from reconcilers.operator.conversion_setup import CONVERSION_PATH

Json = dict[str, Any]

__all__ = ["FloorWebhook", "HandlerTimes", "Scrape", "WebhookOperator", "write_certificates"]

#: The operator's namespace, holding no graphs.
NAMESPACE = "bench-conversion-operator"
HISTOGRAM = "conversion_webhook_duration_seconds"
_START_TIMEOUT = 60.0
_START_ATTEMPTS = 3


class _PortTaken(Exception):
    """The operator exited because a port picked for it was taken meanwhile."""


class HandlerTimes:
    """Cumulative counts of the handler histogram's buckets (upper bound -> count), its sum and
    count: what a scrape of /metrics says."""

    def __init__(self, buckets: dict[float, float], total: float, count: float) -> None:
        self.buckets = buckets
        self.total = total
        self.count = count

    def since(self, before: HandlerTimes) -> HandlerTimes:
        """The reviews handled between `before` and this scrape."""
        return HandlerTimes({le: n - before.buckets.get(le, 0.0) for le, n in
                             self.buckets.items()}, self.total - before.total,
                            self.count - before.count)

    def quantile(self, share: float) -> float:
        """Prometheus's histogram_quantile: linear within the bucket the rank falls in."""
        if self.count <= 0:
            return 0.0
        rank = share * self.count
        lower, below = 0.0, 0.0
        for upper, cumulative in sorted(self.buckets.items()):
            if cumulative >= rank:
                if upper == float("inf"):
                    return lower
                inside = cumulative - below
                return lower + (upper - lower) * ((rank - below) / inside if inside else 1.0)
            lower, below = upper, cumulative
        return lower


def write_certificates(cert_dir: Path) -> bytes:
    """A serving certificate for 127.0.0.1 and its CA, as the operator reads a mounted one
    (`tls.crt`, `tls.key`, `ca.crt` in `cert_dir`); the CA's PEM."""
    ca = new_authority("bench-conversion-ca", datetime.timedelta(days=1))
    cert = serving_certificate(ca, ["localhost"], ["127.0.0.1"])
    cert_dir.mkdir(parents=True, exist_ok=True)
    (cert_dir / "tls.crt").write_bytes(cert.cert_pem)
    (cert_dir / "tls.key").write_bytes(cert.key_pem)
    (cert_dir / "ca.crt").write_bytes(ca.cert_pem)
    return ca.cert_pem


class WebhookOperator:
    """One operator process with webhooks on 127.0.0.1, started and stopped by the benchmark."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.metrics_port = free_port()
        self.log_path = workdir / "operator.log"
        self.cert_dir = workdir / "webhook-certs"
        self.ca_pem = write_certificates(self.cert_dir)
        self.proc: asyncio.subprocess.Process | None = None

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def client_config(self) -> Json:
        """The CRD's `spec.conversion.webhook.clientConfig` calling this operator."""
        return {"url": self.url + CONVERSION_PATH,
                "caBundle": base64.b64encode(self.ca_pem).decode()}

    def command(self, kubeconfig: Path) -> list[str]:
        return [sys.executable, "-m", "reconcilers.operator", "--kubeconfig", str(kubeconfig),
                "--restricted-namespace", NAMESPACE, "--leader-elect=false",
                "--enable-webhooks", "--webhook-port", str(self.port),
                "--webhook-url", self.url, "--webhook-cert-dir", str(self.cert_dir),
                "--health-probe-bind-address", f"127.0.0.1:{free_port()}",
                "--metrics-bind-address", f"127.0.0.1:{self.metrics_port}",
                "--metrics-secure=false", "--log-format", "json", "--log-level", "warning"]

    async def start(self, kubeconfig: Path) -> None:
        """Start the process and return once /metrics answers (its servers are up). Ports
        are picked free but may be taken before the process binds them (an outgoing
        connection's ephemeral port): then it starts again on new ones, and the caller points
        the CRD at `port` again."""
        for attempt in range(_START_ATTEMPTS):
            try:
                await self._start_once(kubeconfig)
                return
            except _PortTaken:
                if attempt == _START_ATTEMPTS - 1:
                    raise RuntimeError(f"the operator exited:\n{self.log_tail()}") from None
                self.port, self.metrics_port = free_port(), free_port()

    async def _start_once(self, kubeconfig: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "POD_NAMESPACE")}
        env["POD_NAME"] = "bench-conversion-operator"
        logged = self.log_path.stat().st_size if self.log_path.exists() else 0
        with self.log_path.open("ab") as log:
            self.proc = await asyncio.create_subprocess_exec(
                *self.command(kubeconfig), stdin=asyncio.subprocess.DEVNULL, stdout=log,
                stderr=log, env=env)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _START_TIMEOUT
        while True:
            if self.proc.returncode is not None:
                if "address already in use" in self.log_path.read_text(errors="replace")[
                        logged:]:
                    raise _PortTaken()
                raise RuntimeError(f"the operator exited:\n{self.log_tail()}")
            try:
                await self.handler_times()
                return
            except (aiohttp.ClientError, OSError):
                if loop.time() > deadline:
                    raise RuntimeError(f"the operator did not start:\n{self.log_tail()}")\
                        from None
                await asyncio.sleep(0.2)

    async def stop(self) -> None:
        if self.proc is None or self.proc.returncode is not None:
            return
        self.proc.terminate()
        try:
            await asyncio.wait_for(self.proc.wait(), 15)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()

    def cpu_seconds(self) -> float:
        """The process's user and system CPU seconds so far."""
        return cpu_seconds(self.proc.pid) if self.proc is not None else 0.0

    def log_tail(self, chars: int = 3000) -> str:
        if not self.log_path.exists():
            return ""
        return self.log_path.read_text(errors="replace")[-chars:]

    async def handler_times(self) -> HandlerTimes:
        """The operator's conversion handler histogram, now."""
        return (await self.scrape()).histogram(HISTOGRAM)

    async def scrape(self) -> Scrape:
        """The operator's /metrics, now."""
        return await Scrape.of(f"http://127.0.0.1:{self.metrics_port}/metrics")


class Scrape:
    """One scrape of a /metrics page: a histogram's buckets, a counter's total."""

    def __init__(self, text: str) -> None:
        self.families = list(text_string_to_metric_families(text))

    @classmethod
    async def of(cls, url: str, ssl_context: ssl.SSLContext | None = None) -> Scrape:
        async with aiohttp.ClientSession() as session, session.get(
                url, ssl=ssl_context if ssl_context is not None else True,
                timeout=aiohttp.ClientTimeout(total=10)) as response:
            response.raise_for_status()
            return cls(await response.text())

    def histogram(self, name: str, **labels: str) -> HandlerTimes:
        """The histogram `name` summed over the series whose labels include `labels`."""
        buckets: dict[float, float] = {}
        total = count = 0.0
        for sample in self._samples(name, labels):
            if sample.name == f"{name}_bucket":
                le = float(sample.labels["le"])
                buckets[le] = buckets.get(le, 0.0) + sample.value
            elif sample.name == f"{name}_sum":
                total += sample.value
            elif sample.name == f"{name}_count":
                count += sample.value
        return HandlerTimes(buckets, total, count)

    def total(self, name: str, **labels: str) -> float:
        """The counter `name` (without `_total`) summed over the series matching `labels`."""
        return float(sum(s.value for s in self._samples(name, labels)
                         if s.name == f"{name}_total"))

    def _samples(self, name: str, labels: dict[str, str]) -> list[Any]:
        return [sample for family in self.families if family.name == name
                for sample in family.samples
                if all(sample.labels.get(k) == v for k, v in labels.items())]


class FloorWebhook:
    """`hack.bench.conversion.floor_webhook` as a process, on the operator's certificate."""

    def __init__(self, proc: asyncio.subprocess.Process, port: int,
                 metrics_port: int | None = None) -> None:
        self.proc = proc
        self.port = port
        self.metrics_port = metrics_port

    @classmethod
    async def start(cls, cert_dir: Path, *, metrics: bool = False) -> FloorWebhook:
        """Start it and return once it accepts connections (on another port when it exited:
        the one picked was taken meanwhile). With `metrics`, it also serves its conversion
        metrics on `metrics_port` (plain HTTP, a thread of its own)."""
        for _ in range(_START_ATTEMPTS - 1):
            try:
                return await cls._start_once(cert_dir, metrics)
            except _PortTaken:
                pass
        try:
            return await cls._start_once(cert_dir, metrics)
        except _PortTaken:
            raise RuntimeError("the floor webhook exited") from None

    @classmethod
    async def _start_once(cls, cert_dir: Path, metrics: bool) -> FloorWebhook:
        port = free_port()
        metrics_port = free_port() if metrics else None
        extra = [str(metrics_port)] if metrics_port is not None else []
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "hack.bench.conversion.floor_webhook", str(cert_dir),
            str(port), *extra, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _START_TIMEOUT
        while True:
            if proc.returncode is not None:
                raise _PortTaken()
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                if metrics_port is not None:
                    _, writer = await asyncio.open_connection("127.0.0.1", metrics_port)
                    writer.close()
                return cls(proc, port, metrics_port)
            except OSError:
                if loop.time() > deadline:
                    proc.kill()
                    await proc.wait()
                    raise RuntimeError("the floor webhook did not start") from None
                await asyncio.sleep(0.1)

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.proc.pid)

    async def scrape(self) -> Scrape:
        """Its /metrics, now (started with `metrics`)."""
        if self.metrics_port is None:
            raise RuntimeError("the floor webhook serves no metrics")
        return await Scrape.of(f"http://127.0.0.1:{self.metrics_port}/metrics")

    async def stop(self) -> None:
        if self.proc.returncode is None:
            self.proc.terminate()
            await self.proc.wait()
