"""`python -m hack.localcluster`: the simulation is on by default and switchable by flag."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from hack.localcluster.__main__ import parse_args, simulation_config
from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import Kubectl

ROOT = Path(__file__).resolve().parents[3]


def test_flags_switch_parts(tmp_path: Path) -> None:
    base = ["--kubeconfig", str(tmp_path / "kc")]
    on = simulation_config(parse_args(base))
    assert on is not None and "scheduler" in on.parts and len(on.nodes) == 4
    assert simulation_config(parse_args([*base, "--no-simulation"])) is None
    some = simulation_config(parse_args([*base, "--disable", "jobs,grove",
                                         "--time-scale", "2"]))
    assert some is not None
    assert "jobs" not in some.parts and "grove" not in some.parts and "kubelet" in some.parts
    assert some.delays.pod_start == pytest.approx(on.delays.pod_start * 2)
    with pytest.raises(SystemExit):
        simulation_config(parse_args([*base, "--disable", "nonsense"]))


def test_the_test_fixture_is_bare_by_default(cluster: LocalCluster) -> None:
    assert cluster.simulation is None
    assert cluster.storage.count(("", "nodes")) == 0


@pytest.mark.kubectl
async def test_command_line_cluster_with_a_node_file(tmp_path: Path) -> None:
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text("nodes: [{name: big, count: 2, gpus: 2, gpuProduct: NVIDIA-L40S}]\n")
    kubeconfig = tmp_path / "kubeconfig"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hack.localcluster", "--port", "0", "--kubeconfig",
        str(kubeconfig), "--nodes", str(nodes), stdout=asyncio.subprocess.PIPE,
        cwd=ROOT)
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 20)
        assert line.startswith(b"ready https://127.0.0.1:")
        kubectl = Kubectl(kubeconfig, tmp_path / "cache")
        for _ in range(100):
            out = await kubectl("get", "nodes", "-L", "nvidia.com/gpu.product")
            if out.count(" Ready ") == 2:
                break
            await asyncio.sleep(0.05)
        rows = [line.split() for line in out.splitlines()[1:]]
        assert [(r[0], r[1], r[-1]) for r in rows] == [("big-0", "Ready", "NVIDIA-L40S"),
                                                       ("big-1", "Ready", "NVIDIA-L40S")]
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 10)
