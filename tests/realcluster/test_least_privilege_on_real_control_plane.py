"""Least privilege judged by the real authorizer: the chart's RBAC, Kubernetes 1.20's RBAC.

The same run as e2e/test_least_privilege.py (`e2e/least_privilege.py`: helm installs both
charts, the operator runs with a token of the chart's ServiceAccount and the chart's
arguments, through the same scenarios, and the same rule-by-rule report), against a control
plane of its own: kube-apiserver with `--authorization-mode=RBAC`, the admission plugins the
local run enables (OwnerReferencesPermissionEnforcement, beside kubeadm's NodeRestriction) and
its audit log, with hack.nodesim's simulated nodes and kubelets.

What the operator asked and was granted is read from kube-apiserver's audit log (each request
with the authorizer's decision; the escalation, `bind` and owner-reference checks inside a
granted write derived from the written objects: `least_privilege.usage_from_audit`), not
from the operator. Every request must be allowed; every rule used, except those only the
scenarios 1.20 cannot run would use (`LEFT_OUT`, `UNUSED_ON_1_20`).

The chart's webhook Service reaches the operator on this host through Endpoints the test
writes (its selector removed, so the endpoints controller leaves them): kube-apiserver 1.20
resolves Services through Endpoints, which may not hold a loopback address, so they hold
this host's own address, where the operator's webhook server listens too.
"""

from __future__ import annotations

import json
import signal
import socket
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from e2e.e2e_support import Env, OperatorProcess, eventually, free_port
from e2e.least_privilege import (
    DRA,
    GRPC_PROBES,
    HELM,
    RELEASE_NS,
    SERVICE_ACCOUNT,
    STORED_BEFORE,
    WEBHOOK_SERVICE,
    chart_args,
    install_charts,
    metrics,
    refusals,
    report,
    reviews_in,
    run_scenarios,
    storage_migrated,
    usage_from_audit,
    webhook_ready,
    webhook_service,
)
from hack.localcluster.rbac import OWNER_REFERENCES_PLUGIN
from hack.localcluster.testing import Kubectl
from hack.nodesim import NodeSim, NodeSimConfig, PodDelays, nodes
from hack.realcluster.audit import read_events
from hack.realcluster.control_plane import ControlPlane
from hack.realcluster.inputs import CachedBuild
from hack.realcluster.testing import running_control_plane

pytestmark = [pytest.mark.timeout(600, func_only=True),
              pytest.mark.skipif(not HELM.exists(), reason="helm is not installed (make venv)")]

#: What this cluster lacks for a scenario of the shared run, and why.
MISSING: dict[str, str] = {
    DRA: "1.20 serves no resource.k8s.io/v1 (DRA, GA in 1.34): GPU memory service is refused",
    GRPC_PROBES: "the EPP's Deployment has gRPC probes (Kubernetes 1.24+): 1.20 drops the"
                 " unknown `grpc` handler and refuses the probe (422 \"must specify a handler"
                 " type\")",
}
#: The rules only the scenarios left out would use, each with the reason.
UNUSED_ON_1_20: dict[str, str] = {
    'ClusterRole/dyn-dynamo-operator-manager (cluster) {APIGroups:["resource.k8s.io"], '
    'Resources:["deviceclasses" "resourceslices" "resourceclaims"], Verbs:["list" "watch"]}':
        "1.20 serves no resource.k8s.io/v1 (DRA, GA in 1.34): the operator starts no DRA "
        "informer",
    'ClusterRole/dyn-dynamo-operator-manager (cluster) {APIGroups:["resource.k8s.io"], '
    'Resources:["resourceclaimtemplates"], '
    'Verbs:["get" "list" "watch" "create" "update" "patch" "delete"]}':
        "1.20 serves no resource.k8s.io/v1: no GMS claim template is written or read",
}


def host_address() -> str | None:
    """This host's own IPv4 address on its default route (not loopback), if it has one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.254", 9))  # no packet is sent: only a route is chosen
        except OSError:
            return None
        address = str(probe.getsockname()[0])
    return None if address.startswith("127.") or address == "0.0.0.0" else address


@pytest.fixture
def rbac_plane(real_binaries: CachedBuild, tmp_path: Path) -> Iterator[ControlPlane]:
    with running_control_plane(
            tmp_path, build=real_binaries, authorization_mode="RBAC",
            admission_plugins=("NodeRestriction", OWNER_REFERENCES_PLUGIN),
            audit=True) as plane:
        yield plane


@pytest.fixture
async def sim(rbac_plane: ControlPlane, tmp_path: Path) -> AsyncIterator[NodeSim]:
    config = NodeSimConfig(nodes=nodes(4, 8, f"lp-{uuid.uuid4().hex[:4]}"),
                           delays=PodDelays(ready_delay=0.5))
    async with NodeSim(tmp_path / "kubeconfig", config) as running:
        yield running


async def _route_webhook_service(admin: Kubectl, docs: list[dict[str, Any]], host: str,
                                 port: int) -> None:
    service = webhook_service(docs)
    await admin("-n", RELEASE_NS, "patch", "service", WEBHOOK_SERVICE, "--type=json", "-p",
                json.dumps([{"op": "remove", "path": "/spec/selector"}]))
    await admin("apply", "-f", "-", stdin=json.dumps({
        "apiVersion": "v1", "kind": "Endpoints",
        "metadata": {"name": WEBHOOK_SERVICE, "namespace": RELEASE_NS},
        "subsets": [{"addresses": [{"ip": host}],
                     "ports": [{"name": service["spec"]["ports"][0]["name"], "port": port,
                                "protocol": "TCP"}]}]}))


async def _plain_metrics(port: int) -> tuple[int, str]:
    async with aiohttp.ClientSession() as session, session.get(
            f"http://127.0.0.1:{port}/metrics",
            timeout=aiohttp.ClientTimeout(total=10)) as response:
        return response.status, await response.text()


async def test_the_real_authorizer_grants_the_operator_everything_on_the_charts_rbac(
        rbac_plane: ControlPlane, sim: NodeSim, tmp_path: Path) -> None:
    host = host_address()
    if host is None:
        pytest.skip(reason="this host has no address outside loopback for the webhook's"
                           " Endpoints (kube-apiserver 1.20 refuses loopback endpoints)")
    kubeconfig = tmp_path / "kubeconfig"
    admin = Kubectl(kubeconfig, tmp_path / "kubectl-cache")
    env = Env(admin, "default", kubeconfig, None, tmp_path)
    await eventually(lambda: env.get("serviceaccount", "default"), within=60,
                     what="the default ServiceAccount")
    # kubectl and helm 1.20's schema checks do not know x-kubernetes-validations (CEL, read
    # from 1.25 on); the server accepts the CRDs and drops those rules.
    docs = await install_charts(tmp_path, kubeconfig, admin, crd_apply=("--validate=false",),
                                helm_flags=("--disable-openapi-validation",))
    webhook_port = free_port()
    await _route_webhook_service(admin, docs, host, webhook_port)
    token = (await admin("create", "token", SERVICE_ACCOUNT, "-n", RELEASE_NS,
                         "--duration", "2h")).strip()
    operator_kubeconfig = rbac_plane.write_token_kubeconfig(
        tmp_path / "operator-kubeconfig", token, RELEASE_NS)
    await admin("patch", "crd", STORED_BEFORE, "--subresource=status", "--type=merge", "-p",
                json.dumps({"status": {"storedVersions": ["v1alpha1", "v1beta1"]}}))
    audit_log = rbac_plane.layout.audit_log
    metrics_port = free_port()
    args = chart_args(docs, webhook_port)
    operator = OperatorProcess(operator_kubeconfig, RELEASE_NS, tmp_path / "operator.log", "op",
                               [*args, f"--metrics-bind-address=127.0.0.1:{metrics_port}"])
    await operator.start()
    try:
        await webhook_ready(env)
        await storage_migrated(admin)
        left_out = await run_scenarios(env, MISSING)
        await metrics(admin, metrics_port, lambda: reviews_in(read_events(audit_log)))
    finally:
        await operator.kill(signal.SIGTERM)
        print(f"--- operator log (tail) ---\n{operator.tail()}")
    # The flag for plain HTTP: /metrics without a token, and no review asked of the server.
    plain_port = free_port()
    plain = OperatorProcess(operator_kubeconfig, RELEASE_NS, tmp_path / "plain.log", "plain",
                            [*args, f"--metrics-bind-address=127.0.0.1:{plain_port}",
                             "--metrics-secure=false"])
    await plain.start()
    try:
        status, body = await eventually(lambda: _plain_metrics(plain_port), within=60,
                                        tolerate=(aiohttp.ClientError, OSError),
                                        what="plain /metrics")
        assert status == 200 and "rest_client_requests_total" in body, (status, body[:300])
        # (its start asks one TokenReview, of its own token: its identity on 1.20)
        access_reviews = reviews_in(read_events(audit_log), ("subjectaccessreviews",))
        for _ in range(3):
            assert (await _plain_metrics(plain_port))[0] == 200
        assert reviews_in(read_events(audit_log), ("subjectaccessreviews",)) == access_reviews
    finally:
        await plain.kill(signal.SIGTERM)
    events = read_events(audit_log)
    usage = usage_from_audit(events, docs)
    text, unused = report(docs, usage)
    print(f"--- the chart's RBAC rules, as kube-apiserver 1.20's audit log shows them used ---\n"
          f"{text}\n{len(unused)} rule(s) not used by this run; scenarios left out:"
          f" {left_out or 'none'}\n{len(events)} audited requests")
    assert not usage.denied, usage.denied
    assert not refusals(events), refusals(events)
    assert sorted(unused) == sorted(UNUSED_ON_1_20), (
        "rules of the chart this run did not use, beyond those only the left-out scenarios"
        f" use: {sorted(set(unused) - set(UNUSED_ON_1_20))}; listed as unused but used:"
        f" {sorted(set(UNUSED_ON_1_20) - set(unused))}")
