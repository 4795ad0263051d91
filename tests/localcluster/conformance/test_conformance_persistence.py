"""A cluster with a data directory keeps its objects, CRDs, versions, CA and token across
restarts (in-process, and through `python -m hack.localcluster --data-dir`)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

import yaml
from conformance_support import GROUP, PLURAL, Raw, install_crd, widget
from kubernetes_asyncio import client

from hack.localcluster.testing import api_client, running_cluster

Json = dict[str, Any]
NS = "default"
REPO = Path(__file__).resolve().parents[3]


async def test_restart_keeps_objects_crds_and_versions(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with running_cluster(tmp_path / "first", data_dir=data) as first:
        api = await api_client(tmp_path / "first" / "kubeconfig")
        try:
            core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
            await install_crd(api)
            cm = await core.create_namespaced_config_map(NS, {"metadata": {"name": "kept"},
                                                              "data": {"a": "1"}})
            await core.create_namespaced_config_map(NS, {"metadata": {"name": "dropped"}})
            await core.delete_namespaced_config_map("dropped", NS)
            await core.create_namespace({"metadata": {"name": "team"}})
            w = await custom.create_namespaced_custom_object(GROUP, "v1", "team", PLURAL,
                                                             widget("w", namespace="team"))
            await first.settle()
            last_rv = first.storage.rv
            ca = first.certs.ca_pem
        finally:
            await api.close()

    async with running_cluster(tmp_path / "second", data_dir=data) as second:
        api = await api_client(tmp_path / "second" / "kubeconfig")
        try:
            core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
            assert second.certs.ca_pem == ca
            # Only default/kubernetes follows the new port (Service, Endpoints, EndpointSlice).
            assert last_rv <= second.storage.rv <= last_rv + 3
            got = await core.read_namespaced_config_map("kept", NS)
            assert (got.metadata.uid, got.metadata.resource_version, got.data) == (
                cm.metadata.uid, cm.metadata.resource_version, {"a": "1"})
            names = [c.metadata.name for c in (await core.list_namespaced_config_map(NS)).items]
            assert "dropped" not in names
            # The CRD is served again without being re-created, with its objects.
            again = await custom.get_namespaced_custom_object(GROUP, "v1", "team", PLURAL, "w")
            assert again["metadata"]["uid"] == w["metadata"]["uid"]
            assert again["spec"]["replicas"] == 1
            # New writes continue above the old versions.
            updated = await core.patch_namespaced_config_map("kept", NS, {"data": {"a": "2"}})
            assert int(updated.metadata.resource_version) > last_rv
            listed = await core.list_namespaced_config_map(NS)
            assert int(listed.metadata.resource_version) > last_rv
            # The watch cache starts empty: resuming from before the restart is 410 Gone.
            raw = Raw(second)
            try:
                events = await raw.watch(f"/api/v1/namespaces/{NS}/configmaps",
                                         {"resourceVersion": cm.metadata.resource_version},
                                         within=2)
            finally:
                await raw.close()
            assert events[0]["type"] == "ERROR" and events[0]["object"]["code"] == 410
        finally:
            await api.close()


async def _serve_cli(data: Path, kubeconfig: Path) -> asyncio.subprocess.Process:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hack.localcluster", "--port", "0", "--no-simulation",
        "--data-dir", str(data), "--kubeconfig", str(kubeconfig),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        cwd=str(REPO), env={**os.environ})
    assert proc.stdout is not None
    async with asyncio.timeout(30):
        line = (await proc.stdout.readline()).decode()
    assert line.startswith("ready https://"), line
    return proc


async def _stop(proc: asyncio.subprocess.Process) -> None:
    proc.send_signal(signal.SIGTERM)
    async with asyncio.timeout(10):
        await proc.wait()


async def test_cli_restart_keeps_token_ca_and_objects(tmp_path: Path) -> None:
    data, kubeconfig = tmp_path / "data", tmp_path / "kubeconfig"
    proc = await _serve_cli(data, kubeconfig)
    try:
        first = yaml.safe_load(kubeconfig.read_text())
        api = await api_client(kubeconfig)
        try:
            await client.CoreV1Api(api).create_namespaced_config_map(
                NS, {"metadata": {"name": "cli"}})
        finally:
            await api.close()
    finally:
        await _stop(proc)
    proc = await _serve_cli(data, kubeconfig)
    try:
        second = yaml.safe_load(kubeconfig.read_text())
        assert second["users"] == first["users"]  # the same token
        assert (second["clusters"][0]["cluster"]["certificate-authority-data"]
                == first["clusters"][0]["cluster"]["certificate-authority-data"])
        api = await api_client(kubeconfig)
        try:
            got = await client.CoreV1Api(api).read_namespaced_config_map("cli", NS)
            assert got.metadata.name == "cli"
        finally:
            await api.close()
    finally:
        await _stop(proc)
