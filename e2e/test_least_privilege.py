"""Least privilege, proven: the operator runs on the chart's RBAC alone and gets no 403.

The local cluster runs in RBAC mode, with OwnerReferencesPermissionEnforcement (some
distributions enable it; it makes `blockOwnerDeletion` need the owner's `finalizers`). The real
helm installs the dynamo-crds chart and the dynamo-operator chart (default values, except no
operator pods: the operator runs on this host instead, reached by the webhook Service through
an EndpointSlice to 127.0.0.1). The operator process runs with a TokenRequest token of the
chart's ServiceAccount (`kubectl create token`) and the chart's own arguments (webhooks on,
certificates self-managed), through: a refused
graph (its webhook), a v1beta1 graph (the CRDs pointed at the conversion webhook, with the
operator's CA), a graph's lifecycle (create, Ready, scale, new image, delete), scaling
through a DynamoGraphDeploymentScalingAdapter, a planner graph (its RoleBinding to the chart's
planner ClusterRole needs `bind`), an EPP graph, a DGDR that profiles and applies its graph,
and one that discovers GPUs from the nodes.

Every request of the operator must be allowed, and every rule of the chart's roles bound to
it must be used: by a request, by a `bind` check, or by delegation (covering a rule of a Role
the operator wrote, which RBAC's escalation check demands it holds). The rule-by-rule report is
printed (`pytest -s`).

The run (charts, scenarios, report) is `e2e/least_privilege.py`, shared with the real
Kubernetes 1.20 control plane's run
(tests/realcluster/test_least_privilege_on_real_control_plane.py).
Needs helm (`make venv` installs it into .venv/bin).
"""

from __future__ import annotations

import json
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from e2e.e2e_support import Env, OperatorProcess, free_port
from e2e.least_privilege import (
    HELM,
    RELEASE_NS,
    SERVICE_ACCOUNT,
    STORED_BEFORE,
    Usage,
    chart_args,
    install_charts,
    metrics,
    report,
    run_scenarios,
    storage_migrated,
    webhook_endpoints,
    webhook_ready,
)
from hack.localcluster.rbac import OWNER_REFERENCES_PLUGIN
from hack.localcluster.server import LocalCluster
from hack.localcluster.simulation import SimulationConfig
from hack.localcluster.testing import Kubectl, running_cluster

pytestmark = pytest.mark.skipif(not HELM.exists(), reason="helm is not installed (make venv)")


@pytest.fixture
async def local(tmp_path: Path) -> AsyncIterator[LocalCluster]:
    async with running_cluster(tmp_path, bookmark_interval=0.5, simulation=SimulationConfig(),
                               authorization_mode="RBAC",
                               enable_admission_plugins=(OWNER_REFERENCES_PLUGIN,)) as cluster:
        yield cluster


async def test_the_operator_needs_nothing_beyond_the_charts_rbac(
        local: LocalCluster, tmp_path: Path) -> None:
    admin = Kubectl(tmp_path / "kubeconfig", tmp_path / "kubectl-cache")
    env = Env(admin, "default", tmp_path / "kubeconfig", local, tmp_path)
    docs = await install_charts(tmp_path, tmp_path / "kubeconfig", admin)
    webhook_port = free_port()
    await admin("apply", "-f", "-", stdin=json.dumps(webhook_endpoints(docs, webhook_port)))
    token = (await admin("create", "token", SERVICE_ACCOUNT, "-n", RELEASE_NS,
                         "--duration", "2h")).strip()
    kubeconfig = local.write_kubeconfig(tmp_path / "operator-kubeconfig", RELEASE_NS, token)
    usage = Usage()
    assert local.authorizer is not None
    local.authorizer.on_decision = lambda u, a, d: usage.record(u.username, a, d.allowed)
    local.authorizer.on_grant = lambda u, rules: usage.grant(u.username, rules)
    # As after an upgrade from CRDs that stored v1alpha1: the operator migrates and trims.
    await admin("patch", "crd", STORED_BEFORE, "--subresource=status", "--type=merge", "-p",
                json.dumps({"status": {"storedVersions": ["v1alpha1", "v1beta1"]}}))
    metrics_port = free_port()
    operator = OperatorProcess(kubeconfig, RELEASE_NS, tmp_path / "operator.log", "op",
                               [*chart_args(docs, webhook_port),
                                f"--metrics-bind-address=127.0.0.1:{metrics_port}"])
    await operator.start()

    def reviews() -> int:
        return sum(local.stats.count(verbs=frozenset({"create"}), resource=r,
                                     user_agent="dynamo-operator")
                   for r in ("tokenreviews.authentication.k8s.io",
                             "subjectaccessreviews.authorization.k8s.io"))

    try:
        await webhook_ready(env)
        await storage_migrated(admin)
        assert await run_scenarios(env, missing={}) == []
        await metrics(admin, metrics_port, reviews)
    finally:
        await operator.kill(signal.SIGTERM)
        print(f"--- operator log (tail) ---\n{operator.tail()}")
    text, unused = report(docs, usage)
    print(f"--- the chart's RBAC rules, as the run used them ---\n{text}\n"
          f"{len(unused)} rule(s) not used by this run")
    forbidden = [s for s in local.stats.snapshot()
                 if str(s["userAgent"]).startswith("dynamo-operator") and s["code"] in (401, 403)]
    assert not usage.denied, usage.denied
    assert not forbidden, forbidden
    assert not unused, ("rules of the chart that this run did not use: exercise them here, or"
                        f" remove them from the chart: {unused}")
