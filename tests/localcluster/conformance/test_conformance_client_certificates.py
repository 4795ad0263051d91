"""Client-certificate authentication, as kind's and kubeadm's admin kubeconfigs use it.

The admin kubeconfig carries a client certificate of the cluster's CA (CN kubernetes-admin,
O system:masters) instead of a token; the server maps a verified certificate's common name to
the user and its organizations to groups. Bearer tokens (the static admin token, ServiceAccount
tokens) keep working.
"""

from __future__ import annotations

import json
import ssl
from pathlib import Path

import aiohttp
import pytest
import yaml
from kubernetes_asyncio import client

from hack.localcluster import tls
from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import Kubectl, api_client, running_cluster

WHOAMI = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
REVIEW = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}


def _kubeconfig_user(path: Path) -> dict[str, str]:
    user = yaml.safe_load(path.read_text())["users"][0]["user"]
    assert isinstance(user, dict)
    return user


def _client_context(cluster: LocalCluster, cert: bytes, key: bytes,
                    tmp_path: Path) -> ssl.SSLContext:
    (tmp_path / "c.crt").write_bytes(cert)
    (tmp_path / "c.key").write_bytes(key)
    ctx = ssl.create_default_context(cadata=cluster.certs.ca_pem.decode())
    ctx.load_cert_chain(tmp_path / "c.crt", tmp_path / "c.key")
    return ctx


async def _whoami(cluster: LocalCluster, cert: bytes, key: bytes, tmp_path: Path) -> dict[
        str, object]:
    ctx = _client_context(cluster, cert, key, tmp_path)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ctx)) as session, \
            session.post(cluster.url + WHOAMI, json=REVIEW) as resp:
        assert resp.status == 201, await resp.text()
        body = await resp.json()
    user = body["status"]["userInfo"]
    assert isinstance(user, dict)
    return user


async def test_admin_kubeconfig_uses_a_client_certificate(
        cluster: LocalCluster, kubeconfig: Path, kubectl: Kubectl,
        api: client.ApiClient) -> None:
    user = _kubeconfig_user(kubeconfig)
    assert set(user) == {"client-certificate-data", "client-key-data"}
    whoami = json.loads(await kubectl("auth", "whoami", "-o", "json"))
    assert whoami["status"]["userInfo"] == {
        "username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]}
    names = [n.metadata.name for n in (await client.CoreV1Api(api).list_namespace()).items]
    assert "default" in names


async def test_certificates_of_the_cluster_ca_name_their_user(
        cluster: LocalCluster, tmp_path: Path) -> None:
    cert, key = tls.issue_client_certificate(cluster.certs, "jane", ("devs", "qa"))
    assert await _whoami(cluster, cert, key, tmp_path) == {
        "username": "jane", "groups": ["devs", "qa", "system:authenticated"]}


async def test_a_certificate_of_another_ca_is_refused(
        cluster: LocalCluster, tmp_path: Path) -> None:
    other = tls.generate()
    with pytest.raises(aiohttp.ClientError):
        await _whoami(cluster, other.admin_cert_pem, other.admin_key_pem, tmp_path)


async def test_tokens_still_authenticate(cluster: LocalCluster, tmp_path: Path) -> None:
    kubeconfig = cluster.write_kubeconfig(tmp_path / "token.kubeconfig",
                                          token=cluster.config.token)
    assert _kubeconfig_user(kubeconfig) == {"token": cluster.config.token}
    api = await api_client(kubeconfig)
    try:
        await client.CoreV1Api(api).list_namespace()
    finally:
        await api.close()


async def test_rbac_mode_lets_the_certificate_admin_do_everything(tmp_path: Path) -> None:
    async with running_cluster(tmp_path, authorization_mode="RBAC") as rbac_cluster:
        kubectl = Kubectl(tmp_path / "kubeconfig", tmp_path / "cache")
        assert (await kubectl("auth", "can-i", "*", "*")).strip() == "yes"
        await kubectl("create", "namespace", "made-by-cert")
        assert rbac_cluster.storage.get(("", "namespaces"), "", "made-by-cert") is not None
