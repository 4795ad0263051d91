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

Needs helm (`make venv` installs it into .venv/bin).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from e2e_support import (
    DGD,
    DGDR,
    DGDSA,
    EXAMPLES,
    ROOT,
    Env,
    OperatorProcess,
    eventually,
    free_port,
)

from hack.localcluster.rbac import OWNER_REFERENCES_PLUGIN, RequestAttributes
from hack.localcluster.rbac.rules import Rule, breakdown, uncovered
from hack.localcluster.server import LocalCluster
from hack.localcluster.simulation import SimulationConfig
from hack.localcluster.testing import Kubectl, running_cluster
from hack.localcluster.users import UserInfo

HELM = Path(sys.executable).parent / "helm"
#: A CRD made to look as if it had stored v1alpha1 before (the storage migration's RBAC).
STORED_BEFORE = "dynamographdeployments.nvidia.com"
CHART = ROOT / "deploy" / "helm" / "dynamo-operator"
CRDS_CHART = ROOT / "deploy" / "helm" / "dynamo-crds"
THIRD_PARTY_CRDS = [ROOT / "hack" / "crds" / "leaderworkerset.yaml",
                    ROOT / "hack" / "crds" / "inferencepool.yaml"]
RELEASE, RELEASE_NS = "dyn", "dynamo-system"
SERVICE_ACCOUNT = f"{RELEASE}-dynamo-operator"
OPERATOR_USER = f"system:serviceaccount:{RELEASE_NS}:{SERVICE_ACCOUNT}"
#: Arguments OperatorProcess sets itself (addresses, lease timings, QPS, log format), and the
#: webhook port (a free one on this host).
OWN_ARGS = ("--health-probe-bind-address", "--metrics-bind-address",
            "--leader-election-namespace", "--leader-election-lease-duration",
            "--leader-election-renew-deadline", "--leader-election-retry-period",
            "--kube-api-qps", "--kube-api-burst", "--log-format", "--webhook-port")
WEBHOOK_SERVICE = f"{RELEASE}-dynamo-operator-webhook"
WEBHOOK_CONFIGURATION = f"{RELEASE}-dynamo-operator-validating"

pytestmark = pytest.mark.skipif(not HELM.exists(), reason="helm is not installed (make venv)")


@dataclass
class Usage:
    """What the operator's identity asked the authorizer, and the rules it delegated."""

    allowed: set[RequestAttributes] = field(default_factory=set)
    denied: list[RequestAttributes] = field(default_factory=list)
    delegated: list[Rule] = field(default_factory=list)

    def record(self, user: UserInfo, attrs: RequestAttributes, allowed: bool) -> None:
        if user.username != OPERATOR_USER:
            return
        if allowed:
            self.allowed.add(attrs)
        elif attrs.verb not in ("escalate", "bind"):  # probes of the escalation check
            self.denied.append(attrs)

    def grant(self, user: UserInfo, rules: list[Rule]) -> None:
        if user.username == OPERATOR_USER:
            self.delegated.extend(rules)


async def helm(tmp: Path, kubeconfig: Path, *args: str) -> str:
    """Run the real helm against the local cluster; its stdout."""
    env = {**os.environ, "KUBECONFIG": str(kubeconfig), "HOME": str(tmp),
           "XDG_CACHE_HOME": str(tmp / "helm-cache"), "XDG_CONFIG_HOME": str(tmp / "helm-config"),
           "XDG_DATA_HOME": str(tmp / "helm-data")}
    proc = await asyncio.create_subprocess_exec(
        str(HELM), *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env=env)
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    return out.decode()


async def install_charts(tmp: Path, kubeconfig: Path, admin: Kubectl) -> list[dict[str, Any]]:
    """`helm install` both charts (default values; no operator pods: it runs on this host),
    the third-party CRDs the operator uses; the operator chart's manifest as installed."""
    await helm(tmp, kubeconfig, "install", "dynamo-crds", str(CRDS_CHART), "--wait")
    await admin("apply", "--server-side", *[a for path in THIRD_PARTY_CRDS
                                            for a in ("-f", str(path))])
    await admin("wait", "--for=condition=Established", "--timeout=30s", "crd", "--all")
    await helm(tmp, kubeconfig, "install", RELEASE, str(CHART), "-n", RELEASE_NS,
               "--create-namespace", "--set", "replicaCount=0",
               "--set", "podDisruptionBudget.enabled=false")
    manifest = await helm(tmp, kubeconfig, "get", "manifest", RELEASE, "-n", RELEASE_NS)
    return [d for d in yaml.safe_load_all(manifest) if d]


def chart_args(docs: list[dict[str, Any]], webhook_port: int) -> list[str]:
    (deployment,) = [d for d in docs if d["kind"] == "Deployment"]
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    return [a for a in args if not a.startswith(OWN_ARGS)] + [f"--webhook-port={webhook_port}"]


def webhook_endpoints(docs: list[dict[str, Any]], webhook_port: int) -> dict[str, Any]:
    """An EndpointSlice of the chart's webhook Service to the operator on this host."""
    (service,) = [d for d in docs if d["kind"] == "Service"
                  and d["metadata"]["name"] == WEBHOOK_SERVICE]
    port_name = service["spec"]["ports"][0]["name"]
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                 "metadata": {"name": f"{WEBHOOK_SERVICE}-host", "namespace": RELEASE_NS,
                              "labels": {"kubernetes.io/service-name": WEBHOOK_SERVICE}},
                 "addressType": "IPv4",
                 "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": True}}],
                 "ports": [{"name": port_name, "port": webhook_port, "protocol": "TCP"}]}


def report(docs: list[dict[str, Any]], usage: Usage) -> tuple[str, list[str]]:
    """A line per rule of the roles bound to the operator, and the rules nothing used."""
    bound = {(b["roleRef"]["kind"], b["roleRef"]["name"]) for b in docs
             if b["kind"] in ("ClusterRoleBinding", "RoleBinding")
             and any(s.get("name") == SERVICE_ACCOUNT for s in b.get("subjects") or [])}
    lines, unused = [], []
    for role in docs:
        if (role["kind"], role["metadata"]["name"]) not in bound:
            continue
        for raw in role.get("rules") or []:
            rule = Rule.from_json(raw)
            scope = (f"in {role['metadata']['namespace']}" if role["kind"] == "Role"
                     else "cluster")
            requests = sorted({_describe(a) for a in usage.allowed
                               if rule.allows(a) and (role["kind"] == "ClusterRole"
                                                      or a.namespace == RELEASE_NS)})
            delegated = any(not uncovered([rule], [piece])
                            for wanted in usage.delegated for piece in breakdown(wanted))
            used = ", ".join(requests) if requests else ""
            if delegated:
                used += ("; " if used else "") + "delegated in Roles it wrote"
            name = f"{role['kind']}/{role['metadata']['name']} ({scope}) {rule.compact_string()}"
            lines.append(f"{'USED  ' if used else 'UNUSED'} {name}" + (f": {used}" if used
                                                                       else ""))
            if not used:
                unused.append(name)
    return "\n".join(lines), unused


def _describe(attrs: RequestAttributes) -> str:
    sub = f"/{attrs.subresource}" if attrs.subresource else ""
    return f"{attrs.verb} {attrs.resource}{sub}"


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
    local.authorizer.on_decision = lambda u, a, d: usage.record(u, a, d.allowed)
    local.authorizer.on_grant = usage.grant
    # As after an upgrade from CRDs that stored v1alpha1: the operator migrates and trims.
    await admin("patch", "crd", STORED_BEFORE, "--subresource=status", "--type=merge", "-p",
                json.dumps({"status": {"storedVersions": ["v1alpha1", "v1beta1"]}}))
    metrics_port = free_port()
    operator = OperatorProcess(kubeconfig, RELEASE_NS, tmp_path / "operator.log", "op",
                               [*chart_args(docs, webhook_port),
                                f"--metrics-bind-address=127.0.0.1:{metrics_port}"])
    await operator.start()
    try:
        await _webhook_ready(env)
        await _storage_migrated(admin)
        await _conversion(env)
        await _lifecycle(env)
        await _scaling(env)
        await _planner(env)
        await _more_kinds(env)
        await _metrics(admin, metrics_port, local)
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


async def _storage_migrated(admin: Kubectl) -> None:
    """The storage migration (controller/storage_migration.py) trims storedVersions."""
    async def trimmed() -> bool:
        crd = json.loads(await admin("get", "crd", STORED_BEFORE, "-o", "json"))
        return bool(crd["status"]["storedVersions"] == ["v1beta1"])
    await eventually(trimmed, within=60, what="storedVersions trimmed by the operator")


async def _metrics(admin: Kubectl, port: int, local: LocalCluster) -> None:
    """The chart's secure /metrics: the operator checks each scraper's token and rights with
    the API server (its metrics-auth ClusterRole); the metrics-reader role lets one in."""
    for name in ("scraper", "nobody"):
        await admin("create", "serviceaccount", name, "-n", RELEASE_NS)
    await admin("create", "clusterrolebinding", "scraper", f"--clusterrole={RELEASE}-"
                "dynamo-operator-metrics-reader", f"--serviceaccount={RELEASE_NS}:scraper")
    tokens = {name: (await admin("create", "token", name, "-n", RELEASE_NS)).strip()
              for name in ("scraper", "nobody")}

    async def scrape(token: str | None) -> tuple[int, str]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with aiohttp.ClientSession() as session, session.get(
                f"https://127.0.0.1:{port}/metrics", headers=headers, ssl=False,
                timeout=aiohttp.ClientTimeout(total=10)) as response:
            return response.status, await response.text()

    status, body = await scrape(tokens["scraper"])
    assert status == 200 and "controller_runtime_reconcile_total" in body, (status, body)
    assert await scrape(None) == (401, "Unauthorized\n")
    assert await scrape("not-a-token") == (401, "Unauthorized\n")
    assert await scrape(tokens["nobody"]) == (
        403, f"Authorization denied for user system:serviceaccount:{RELEASE_NS}:nobody\n")

    def reviews() -> int:
        return sum(local.stats.count(verbs=frozenset({"create"}), resource=r,
                                     user_agent="dynamo-operator")
                   for r in ("tokenreviews.authentication.k8s.io",
                             "subjectaccessreviews.authorization.k8s.io"))
    before = reviews()
    for _ in range(3):  # a scraper's token and rights are remembered, as the filter does
        assert (await scrape(tokens["scraper"]))[0] == 200
    assert reviews() == before > 0


async def _webhook_ready(env: Env) -> None:
    async def injected() -> bool:
        config = await env.get("validatingwebhookconfiguration", WEBHOOK_CONFIGURATION)
        return all(h["clientConfig"].get("caBundle") for h in config["webhooks"])
    await eventually(injected, what="the operator's CA in the webhook configuration")
    # a mistake is refused by the operator's webhook, through the chart's Service
    code, out = await env.k_result("apply", "-f", "-", stdin=json.dumps({
        "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
        "metadata": {"name": "bad"}, "spec": {"backendFramework": "vllm", "services": {
            "AServiceNameThatIsFarTooLongForGroveObjectNames": {
                "componentType": "frontend", "replicas": 1}}}}))
    assert code != 0 and "vdynamographdeployment.kb.io" in out, out


async def _conversion(env: Env) -> None:
    """The operator points our CRDs' conversion at the chart's webhook Service, with its CA
    (get and patch of the CRDs); a v1beta1 graph is then stored, reconciled and read back."""
    async def pointed() -> bool:
        crd = await env.get("crd", "dynamographdeployments.nvidia.com")
        config = crd["spec"]["conversion"]["webhook"]["clientConfig"]
        return (config.get("service") or {}).get("name") == WEBHOOK_SERVICE and \
            config["service"].get("namespace") == RELEASE_NS and bool(config.get("caBundle"))
    await eventually(pointed, what="the CRD's conversion webhook at the chart's Service")
    graph = yaml.safe_load((EXAMPLES / "v1beta1" / "vllm-agg.yaml").read_text())
    graph["metadata"]["name"] = "beta-agg"
    await env.k("apply", "-f", "-", stdin=json.dumps(graph))
    await env.wait_ready("beta-agg", 90)
    beta = await env.get("dynamographdeployments.v1beta1.nvidia.com", "beta-agg")
    assert [c["name"] for c in beta["spec"]["components"]] == ["Frontend", "VllmDecodeWorker"]
    await env.k("delete", "dynamographdeployments.v1beta1.nvidia.com", "beta-agg",
                "--wait=true", "--timeout=60s")


async def _lifecycle(env: Env) -> None:
    await env.apply_example("vllm-agg")
    await env.wait_ready("vllm-agg", 90)
    await env.k("patch", DGD, "vllm-agg", "--type=merge", "-p", json.dumps(
        {"spec": {"services": {"VllmDecodeWorker": {"replicas": 2}}}}))

    async def two() -> bool:
        dep = await env.get("deploy", "vllm-agg-vllmdecodeworker")
        return bool(dep) and dep["spec"].get("replicas") == 2
    await eventually(two, what="the worker Deployment at 2 replicas")
    await env.k("patch", DGD, "vllm-agg", "--type=json", "-p", json.dumps([{
        "op": "replace",
        "path": "/spec/services/VllmDecodeWorker/extraPodSpec/mainContainer/image",
        "value": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0"}]))
    await env.wait_ready("vllm-agg", 90)
    await env.k("delete", DGD, "vllm-agg", "--wait=true", "--timeout=60s")

    async def pruned() -> bool:
        return not await env.names("deploy", "nvidia.com/dynamo-graph-deployment-name=vllm-agg")
    await eventually(pruned, what="the graph's Deployments pruned")


async def _scaling(env: Env) -> None:
    await env.apply_example("vllm-scaling-adapter")
    await env.wait_ready("vllm-scaling-adapter", 90)
    adapter = "vllm-scaling-adapter-vllmdecodeworker"
    await eventually(lambda: env.get(DGDSA, adapter), what="the scaling adapter")
    await env.k("scale", DGDSA, adapter, "--replicas=3")

    async def three() -> bool:
        dgd = await env.get(DGD, "vllm-scaling-adapter")
        return bool(dgd["spec"]["services"]["VllmDecodeWorker"].get("replicas") == 3)
    await eventually(three, what="the graph scaled through its adapter")
    await env.wait_ready("vllm-scaling-adapter", 90)


async def _more_kinds(env: Env) -> None:
    """An EPP graph (InferencePool, the EPP's Role), a DGDR that profiles and applies its
    graph, and one that discovers the GPUs from the nodes. (Multinode graphs need LWS or
    Grove, which the chart's defaults leave off.)"""
    await env.apply_example("vllm-epp")
    await env.wait_ready("vllm-epp", 90)
    await env.apply_example("dgdr-auto-apply")
    await env.k("wait", "--for=jsonpath={.status.state}=Ready", f"{DGDR}/qwen-sla",
                "--timeout=90s")
    # A request that discovers its GPUs from the nodes' labels.
    request = yaml.safe_load((EXAMPLES / "dgdr-spec-only.yaml").read_text())
    request["metadata"]["name"] = "discovered"
    request["spec"]["enableGpuDiscovery"] = True
    await env.k("apply", "-f", "-", stdin=json.dumps(request))
    await env.k("wait", "--for=jsonpath={.status.state}=Ready", f"{DGDR}/discovered",
                "--timeout=90s")


async def _planner(env: Env) -> None:
    await env.apply_example("vllm-planner")

    async def bound() -> bool:
        return bool(await env.names("rolebinding"))
    await eventually(bound, what="the planner's RoleBinding")
    await asyncio.sleep(1)
