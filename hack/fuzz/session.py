"""One fuzz session: CRDs installed, the operator process started with its webhooks, hypothesis
drawing `examples` objects, each judged by `FuzzRun.check`, then the operator stopped.

Hypothesis runs its test function in a worker thread, and each example's check runs on the
session's event loop (`run_coroutine_threadsafe`): the cluster, the client and the operator
stay up for the whole session. Shrinking is off (an example is seconds of cluster time); every
violation is recorded with the mutation and the path that made it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings

from controller.client import ClientConfig, KubeClient
from controller.errors import NotFound
from controller.metrics import Metrics
from controller.resource import Resource
from hack.fuzz.run import FuzzReport, FuzzRun, FuzzSettings
from hack.fuzz.specs import Drawn, objects
from hack.localcluster.server import LocalCluster
from hack.our_crds import install_our_crds
from hack.processes import free_port

ROOT = Path(__file__).resolve().parents[2]
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                "CustomResourceDefinition", namespaced=False)
WEBHOOK_CONFIGURATIONS = Resource("admissionregistration.k8s.io", "v1",
                                  "validatingwebhookconfigurations",
                                  "ValidatingWebhookConfiguration", namespaced=False)



async def _eventually(check: object, within: float, what: str) -> None:
    deadline = asyncio.get_running_loop().time() + within
    while True:
        try:
            if await check():  # type: ignore[operator]
                return
        except NotFound:
            pass
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"{what} not within {within:g}s")
        await asyncio.sleep(0.1)


async def install_crds(kube: KubeClient) -> None:
    """Our CRDs, converting through the in-process webhook until an operator started with
    webhooks points them at its own."""
    await install_our_crds(kube)


async def start_operator(kubeconfig: Path, log_path: Path, webhooks: bool
                         ) -> tuple[asyncio.subprocess.Process, int]:
    """The operator process (leader election off) and its probe port."""
    probes, port = free_port(), free_port()
    args = ["--kubeconfig", str(kubeconfig), "--leader-elect=false", "--log-format", "json",
            "--health-probe-bind-address", f"127.0.0.1:{probes}",
            "--metrics-bind-address", f"127.0.0.1:{free_port()}", "--metrics-secure=false"]
    if webhooks:
        args += ["--enable-webhooks", "--webhook-port", str(port),
                 "--webhook-url", f"https://127.0.0.1:{port}"]
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "POD_NAMESPACE")}
    with log_path.open("wb") as log:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "reconcilers.operator", *args,
            stdout=asyncio.subprocess.DEVNULL, stderr=log, env=env)
    return proc, probes


async def _ready(port: int) -> bool:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(b"GET /readyz HTTP/1.0\r\nHost: localhost\r\n\r\n")
        await writer.drain()
        return (await reader.readline()).split()[1:2] == [b"200"]
    finally:
        writer.close()


async def fuzz_session(cluster: LocalCluster, kubeconfig: Path, work_dir: Path, examples: int,
                       *, seed: int | None = None, webhooks: bool = True,
                       fuzz_settings: FuzzSettings | None = None) -> FuzzReport:
    """Run `examples` drawn objects against a fresh operator; the report of what happened."""
    kube = await KubeClient.connect(kubeconfig, ClientConfig(qps=None, user_agent="fuzzer"),
                                    Metrics())
    log_path = work_dir / "operator.log"
    proc: asyncio.subprocess.Process | None = None
    try:
        await install_crds(kube)
        proc, probes = await start_operator(kubeconfig, log_path, webhooks)

        async def ready() -> bool:
            if proc is None or proc.returncode is not None:
                raise RuntimeError("the operator exited:\n" + log_path.read_text()[-3000:])
            try:
                return await _ready(probes)
            except OSError:
                return False

        await _eventually(ready, 30, "operator ready")
        if webhooks:
            await _eventually(lambda: kube.get(WEBHOOK_CONFIGURATIONS, None,
                                               "dynamo-operator-validating"), 30, "webhooks")
        run = FuzzRun(kube, cluster, log_path, proc, fuzz_settings)
        loop = asyncio.get_running_loop()
        await asyncio.to_thread(_drive, loop, run, examples, seed)
        return run.report
    finally:
        if proc is not None and proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), 15)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        await kube.close()


def _drive(loop: asyncio.AbstractEventLoop, run: FuzzRun, examples: int,
           seed: int | None) -> None:
    """Hypothesis in this (worker) thread; each check on the session's loop."""

    @settings(max_examples=examples, deadline=None, database=None, derandomize=seed is None,
              phases=[Phase.explicit, Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(objects("placeholder"))
    def one(drawn: Drawn) -> None:
        asyncio.run_coroutine_threadsafe(run.check(drawn), loop).result(timeout=120)

    if seed is not None:
        from hypothesis import seed as with_seed
        with_seed(seed)(one)()
    else:
        one()
