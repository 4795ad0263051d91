"""The generic admission webhook server and its self-managed certificates, called by the local
API server: handlers by path, readiness, caBundle injection, rotation without restart, and a
mounted certificate reloaded when its files change."""

from __future__ import annotations

import asyncio
import base64
import datetime
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from controller.certificates import lifetime, new_authority, serving_certificate
from controller.client import KubeClient
from controller.webhook import (
    AdmissionRequest,
    AdmissionResponse,
    TLSConfig,
    WebhookMetrics,
    WebhookServer,
)
from controller.webhook_certs import (
    SECRETS,
    VALIDATING_WEBHOOK_CONFIGURATIONS,
    ManagedCertificates,
    MountedCertificates,
)
from hack.localcluster.testing import Kubectl, eventually


async def _no_dashes(request: AdmissionRequest) -> AdmissionResponse:
    data = (request.object or {}).get("data") or {}
    if any("-" in v for v in data.values()):
        return AdmissionResponse.deny("data: dashes are not allowed",
                                      warnings=("dashes seen",))
    return AdmissionResponse.allow(warnings=("looked at " + request.name,))


async def _broken(request: AdmissionRequest) -> AdmissionResponse:
    raise RuntimeError("bug")


def _configuration(port: int, ca_bundle: str = "") -> str:
    config = {"url": f"https://127.0.0.1:{port}/check"}
    if ca_bundle:
        config["caBundle"] = ca_bundle
    return json.dumps({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "checks"},
        "webhooks": [{"name": "check.example.com", "clientConfig": config,
                      "rules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                 "operations": ["CREATE", "UPDATE"],
                                 "resources": ["configmaps"]}],
                      "admissionReviewVersions": ["v1"], "sideEffects": "None",
                      "timeoutSeconds": 5}]})


def _cm(name: str, value: str) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                       "data": {"v": value}})


@pytest.fixture
async def server() -> AsyncIterator[WebhookServer]:
    registry = CollectorRegistry()
    s = WebhookServer(TLSConfig(), WebhookMetrics(registry), host="127.0.0.1", port=0)
    s.register("/check", _no_dashes)
    s.register("/broken", _broken)
    await s.start()
    try:
        yield s
    finally:
        await s.stop()


async def test_managed_certificates_serve_inject_and_rotate(
        client: KubeClient, kubectl: Kubectl, server: WebhookServer) -> None:
    assert not server.ready  # listening, but no certificate yet
    await kubectl("apply", "-f", "-", stdin=_configuration(server.port))
    certs = ManagedCertificates(client, server.tls, "default", "hook-cert", ["localhost"],
                                ["127.0.0.1"], configurations=["checks"],
                                validity=datetime.timedelta(seconds=3),
                                ca_validity=datetime.timedelta(seconds=9), check_interval=0.2)
    runner = asyncio.create_task(certs.run())
    try:
        await asyncio.wait_for(certs.synced.wait(), 10)
        assert server.ready
        config = await client.get(VALIDATING_WEBHOOK_CONFIGURATIONS, None, "checks")
        secret = await client.get(SECRETS, "default", "hook-cert")
        assert config["webhooks"][0]["clientConfig"]["caBundle"] == secret["data"]["ca.crt"]

        result = await kubectl.run("apply", "-f", "-", stdin=_cm("a", "x-y"))
        assert ('admission webhook "check.example.com" denied the request: data: dashes are '
                'not allowed') in result.stderr
        assert "Warning: dashes seen" in result.stderr
        ok = await kubectl.run("apply", "-f", "-", stdin=_cm("a", "xy"))
        assert ok.code == 0 and "Warning: looked at a" in ok.stderr

        first = base64.b64decode(secret["data"]["tls.crt"])

        async def rotated() -> bool:
            now = await client.get(SECRETS, "default", "hook-cert")
            return base64.b64decode(now["data"]["tls.crt"]) != first

        await eventually(rotated, within=10, what="a renewed certificate")
        # Past the first certificate's expiry (and the CA's), admission still works.
        await asyncio.sleep(max(0.0, (lifetime(first)[1] - datetime.datetime.now(
            datetime.UTC)).total_seconds()) + 0.5)
        for i in range(3):
            ok = await kubectl.run("apply", "-f", "-", stdin=_cm(f"b{i}", "xy"))
            assert ok.code == 0, ok.stderr
            await asyncio.sleep(0.5)
        assert server.ready
    finally:
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)


async def test_a_handler_bug_refuses_and_is_counted(client: KubeClient, kubectl: Kubectl,
                                                    server: WebhookServer,
                                                    tmp_path: Path) -> None:
    ca = new_authority("t", datetime.timedelta(days=1))
    cert = serving_certificate(ca, ["localhost"], ["127.0.0.1"])
    (tmp_path / "certs").mkdir()
    (tmp_path / "certs" / "tls.crt").write_bytes(cert.cert_pem)
    (tmp_path / "certs" / "tls.key").write_bytes(cert.key_pem)
    assert MountedCertificates.present(tmp_path / "certs")
    MountedCertificates(tmp_path / "certs", server.tls).load()
    assert server.ready
    config = _configuration(server.port, base64.b64encode(ca.cert_pem).decode())
    await kubectl("apply", "-f", "-", stdin=config.replace("/check", "/broken"))
    result = await kubectl.run("apply", "-f", "-", stdin=_cm("a", "x"))
    assert 'denied the request: internal error: bug' in result.stderr
    denials = server.metrics.denials.labels("/broken", "configmaps", "CREATE")
    assert denials._value.get() == 1


async def test_a_mounted_certificate_is_reloaded_when_its_files_change(
        tmp_path: Path) -> None:
    ca = new_authority("t", datetime.timedelta(days=1))
    first = serving_certificate(ca, ["localhost"])
    second = serving_certificate(ca, ["localhost"])
    (tmp_path / "tls.crt").write_bytes(first.cert_pem)
    (tmp_path / "tls.key").write_bytes(first.key_pem)
    tls = TLSConfig()
    mounted = MountedCertificates(tmp_path, tls, poll_interval=0.05)
    runner = asyncio.create_task(mounted.run())
    try:
        await eventually(lambda: tls.valid, what="the first certificate")
        assert tls.load(first.cert_pem, first.key_pem) is False  # already serving it
        (tmp_path / "tls.key").write_bytes(second.key_pem)
        (tmp_path / "tls.crt").write_bytes(second.cert_pem)
        await eventually(lambda: tls.cert_pem == second.cert_pem,
                         what="the second certificate")
    finally:
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)
        tls.close()
