"""The operator process starting against a busy, misconfigured or incomplete API server: it
waits out throttling (never ready meanwhile, never exiting), and exits with one clear line
on what waiting cannot fix (refused credentials, CRDs that do not come)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import aiohttp
import yaml
from operator_harness import eventually, install_crds, setup_client, wait_for
from test_operator_process import free_port, http_get

from hack.localcluster.server import LocalCluster
from hack.our_crds import COMPONENT_DEPLOYMENTS
from reconcilers.machinery.resources import DEPLOYMENTS

NS = "default"


async def start_operator(kubeconfig: Path, log_path: Path, probes: int,
                         *extra: str) -> asyncio.subprocess.Process:
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "POD_NAMESPACE")}
    with log_path.open("wb") as log:
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", "reconcilers.operator", "--kubeconfig", str(kubeconfig),
            "--leader-election-namespace", NS, "--log-format", "json",
            "--health-probe-bind-address", f"127.0.0.1:{probes}",
            "--metrics-bind-address", f"127.0.0.1:{free_port()}", "--metrics-secure=false",
            *extra,
            stdout=asyncio.subprocess.DEVNULL, stderr=log, env=env)


def log_lines(path: Path) -> list[dict[str, object]]:
    lines = []
    for raw in path.read_text().splitlines():
        try:
            lines.append(json.loads(raw))
        except json.JSONDecodeError:
            lines.append({"event": raw})
    return lines


async def stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.kill()
        await proc.wait()


async def test_start_under_throttling_reaches_ready(cluster: LocalCluster, kubeconfig: Path,
                                                    tmp_path: Path) -> None:
    kube = await setup_client(kubeconfig)
    await install_crds(kube)
    # About 20% of the operator's requests are refused: 10% 429, then 10% of the rest 503.
    cluster.faults.error(429, fraction=0.1, retry_after=1)
    cluster.faults.error(503, fraction=0.11, retry_after=1)
    probes = free_port()
    log_path = tmp_path / "operator.log"
    proc = await start_operator(kubeconfig, log_path, probes)
    try:
        async def ready() -> bool:
            assert proc.returncode is None, log_path.read_text()[-3000:]
            try:
                return (await http_get(probes, "/readyz"))[0] == 200
            except (aiohttp.ClientError, TimeoutError):  # a loaded machine: not yet
                return False

        await eventually(ready, within=60)
        cluster.faults.clear()
        await kube.create(COMPONENT_DEPLOYMENTS, {
            "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoComponentDeployment",
            "metadata": {"name": "w", "namespace": NS},
            "spec": {"componentType": "worker", "replicas": 1,
                     "extraPodSpec": {"mainContainer": {"image": "nvcr.io/x/y:1"}}}})
        await wait_for(kube, DEPLOYMENTS, NS, "w", within=20)
        assert proc.returncode is None
        text = log_path.read_text()
        assert "Traceback" not in text, text[-4000:]
        assert not [line for line in log_lines(log_path) if line.get("level") == "error"]
    finally:
        cluster.faults.clear()
        await stop(proc)
        await kube.close()


async def test_not_ready_while_discovery_fails(cluster: LocalCluster, kubeconfig: Path,
                                               tmp_path: Path) -> None:
    kube = await setup_client(kubeconfig)
    await install_crds(kube)
    rule = cluster.faults.error(500)  # every request, for now (no Retry-After)
    probes = free_port()
    log_path = tmp_path / "operator.log"
    proc = await start_operator(kubeconfig, log_path, probes)
    try:
        async def answers() -> bool:
            try:
                return (await http_get(probes, "/healthz"))[0] == 200
            except (aiohttp.ClientError, TimeoutError):  # a loaded machine: not yet
                return False

        await eventually(answers, within=20)
        await asyncio.sleep(1.0)
        assert (await http_get(probes, "/readyz"))[0] != 200
        assert proc.returncode is None
        cluster.faults.remove(rule)

        async def ready() -> bool:
            return (await http_get(probes, "/readyz"))[0] == 200

        await eventually(ready, within=30)
        retried = [line for line in log_lines(log_path)
                   if line.get("event") == "start-up call failed, retrying"]
        assert retried and all(line["level"] == "warning" for line in retried)
        assert "Traceback" not in log_path.read_text()
    finally:
        cluster.faults.clear()
        await stop(proc)
        await kube.close()


def unknown_token(kubeconfig: Path, tmp_path: Path) -> Path:
    """A copy of the kubeconfig whose only credential is a token the API server does not
    know (no client certificate)."""
    config = yaml.safe_load(kubeconfig.read_text())
    for user in config["users"]:
        user["user"] = {"token": "not-a-known-token"}
    bad = tmp_path / "bad-kubeconfig"
    bad.write_text(yaml.safe_dump(config))
    return bad


async def test_refused_credentials_exit_with_one_line(kubeconfig: Path, tmp_path: Path) -> None:
    bad = unknown_token(kubeconfig, tmp_path)
    log_path = tmp_path / "operator.log"
    proc = await start_operator(bad, log_path, free_port())
    try:
        assert await asyncio.wait_for(proc.wait(), 20) == 1
    finally:
        await stop(proc)
    errors = [line for line in log_lines(log_path) if line.get("level") == "error"]
    assert len(errors) == 1, errors
    assert errors[0]["event"] == "cannot start"
    assert "credentials (401 Unauthorized)" in str(errors[0]["error"])
    assert "Traceback" not in log_path.read_text()


async def test_missing_crds_exit_after_the_wait(kubeconfig: Path, tmp_path: Path) -> None:
    log_path = tmp_path / "operator.log"
    proc = await start_operator(kubeconfig, log_path, free_port(), "--crd-wait", "1s")
    try:
        assert await asyncio.wait_for(proc.wait(), 20) == 1
    finally:
        await stop(proc)
    errors = [line for line in log_lines(log_path) if line.get("level") == "error"]
    assert len(errors) == 1, errors
    assert "not installed after 1s" in str(errors[0]["error"])
    assert "dynamographdeployments" in str(errors[0]["error"])
    assert "Traceback" not in log_path.read_text()
