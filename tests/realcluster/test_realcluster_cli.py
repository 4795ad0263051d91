"""`python -m hack.realcluster` keeps the local cluster's contract: `ready <url>` on stdout once
it serves, an admin kubeconfig that works, and on SIGTERM every child stopped and exit 0."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from hack.localcluster.testing import Kubectl
from hack.realcluster.inputs import CachedBuild

pytestmark = pytest.mark.timeout(180, func_only=True)
ROOT = Path(__file__).parents[2]


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def _alive(pids: list[int]) -> list[int]:
    """Those of `pids` still running (a zombie has stopped)."""
    alive = []
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except FileNotFoundError:
            continue
        if "(zombie)" not in status:
            alive.append(pid)
    return alive


async def test_ready_line_kubeconfig_and_clean_stop(real_binaries: CachedBuild,
                                                    tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hack.realcluster", "--port", "0", "--kubeconfig",
        str(kubeconfig), "--authorization-mode", "RBAC", cwd=ROOT,
        env={**os.environ, "DYNAMO_REALCLUSTER_BUILD": "0"},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), timeout=120)).decode()
        assert line.startswith("ready https://127.0.0.1:"), line
        kubectl = Kubectl(kubeconfig, tmp_path / "cache")
        assert (await kubectl("get", "--raw", "/readyz")).strip() == "ok"
        assert (await kubectl("auth", "can-i", "*", "*")).strip() == "yes"
        children = _children(proc.pid)
        assert len(children) == 4  # etcd, kube-apiserver, controller-manager, scheduler
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), timeout=60) == 0
        assert _alive(children) == []
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
