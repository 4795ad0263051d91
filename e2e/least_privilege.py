"""The least-privilege run, shared by both servers: the charts installed with helm, the
operator on the chart's RBAC alone, the scenarios it goes through, and the rule-by-rule report.

`e2e/test_least_privilege.py` runs it against the local cluster, whose authorizer reports each
decision; `tests/realcluster/test_least_privilege_on_real_control_plane.py` against the real
Kubernetes 1.20 control plane, whose audit log says what the operator asked and was granted
(`usage_from_audit`). A scenario 1.20 cannot run is left out there with its reason
(`Scenario.needs`), and the rules only it uses are named.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import yaml

from e2e.e2e_support import DGD, DGDR, DGDSA, EXAMPLES, ROOT, Env, eventually, worker_dcd
from hack.localcluster.rbac import RequestAttributes
from hack.localcluster.rbac.rules import Rule, breakdown, uncovered
from hack.localcluster.testing import Kubectl
from hack.realcluster.audit import RBAC_GROUP, AuditEvent

Json = dict[str, Any]
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
METRICS_READER = f"{RELEASE}-dynamo-operator-metrics-reader"
REVIEWS = ("tokenreviews", "subjectaccessreviews")


@dataclass
class Usage:
    """What the operator's identity asked the authorizer, and the rules it delegated."""

    allowed: set[RequestAttributes] = field(default_factory=set)
    denied: list[RequestAttributes] = field(default_factory=list)
    delegated: list[Rule] = field(default_factory=list)

    def record(self, username: str, attrs: RequestAttributes, allowed: bool) -> None:
        if username != OPERATOR_USER:
            return
        if allowed:
            self.allowed.add(attrs)
        elif attrs.verb not in ("escalate", "bind"):  # probes of the escalation check
            self.denied.append(attrs)

    def grant(self, username: str, rules: list[Rule]) -> None:
        if username == OPERATOR_USER:
            self.delegated.extend(rules)


# --- the charts ---------------------------------------------------------------------------

async def helm(tmp: Path, kubeconfig: Path, *args: str) -> str:
    """Run the real helm against the cluster of `kubeconfig`; its stdout."""
    env = {**os.environ, "KUBECONFIG": str(kubeconfig), "HOME": str(tmp),
           "XDG_CACHE_HOME": str(tmp / "helm-cache"), "XDG_CONFIG_HOME": str(tmp / "helm-config"),
           "XDG_DATA_HOME": str(tmp / "helm-data")}
    proc = await asyncio.create_subprocess_exec(
        str(HELM), *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env=env)
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    return out.decode()


async def install_charts(tmp: Path, kubeconfig: Path, admin: Kubectl,
                         crd_apply: Iterable[str] = ("--server-side",),
                         helm_flags: Iterable[str] = ()) -> list[Json]:
    """`helm install` both charts (default values; no operator pods: it runs on this host),
    the third-party CRDs the operator uses (`kubectl apply` with `crd_apply`); the operator
    chart's manifest as installed."""
    await helm(tmp, kubeconfig, "install", "dynamo-crds", str(CRDS_CHART), "--wait",
               *helm_flags)
    await admin("apply", *crd_apply, *[a for path in THIRD_PARTY_CRDS
                                       for a in ("-f", str(path))])
    await admin("wait", "--for=condition=Established", "--timeout=30s", "crd", "--all")
    await helm(tmp, kubeconfig, "install", RELEASE, str(CHART), "-n", RELEASE_NS,
               "--create-namespace", "--set", "replicaCount=0",
               "--set", "podDisruptionBudget.enabled=false", *helm_flags)
    manifest = await helm(tmp, kubeconfig, "get", "manifest", RELEASE, "-n", RELEASE_NS)
    return [d for d in yaml.safe_load_all(manifest) if d]


def chart_args(docs: list[Json], webhook_port: int) -> list[str]:
    (deployment,) = [d for d in docs if d["kind"] == "Deployment"]
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    return [a for a in args if not a.startswith(OWN_ARGS)] + [f"--webhook-port={webhook_port}"]


def webhook_service(docs: list[Json]) -> Json:
    (service,) = [d for d in docs if d["kind"] == "Service"
                  and d["metadata"]["name"] == WEBHOOK_SERVICE]
    return service


def webhook_endpoints(docs: list[Json], webhook_port: int) -> Json:
    """An EndpointSlice of the chart's webhook Service to the operator on this host."""
    port_name = webhook_service(docs)["spec"]["ports"][0]["name"]
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": f"{WEBHOOK_SERVICE}-host", "namespace": RELEASE_NS,
                         "labels": {"kubernetes.io/service-name": WEBHOOK_SERVICE}},
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": True}}],
            "ports": [{"name": port_name, "port": webhook_port, "protocol": "TCP"}]}


# --- the report ---------------------------------------------------------------------------

@dataclass(frozen=True)
class BoundRule:
    """A rule of a role bound to the operator's ServiceAccount."""

    role: Json
    rule: Rule

    @property
    def cluster_wide(self) -> bool:
        return bool(self.role["kind"] == "ClusterRole")

    def allows(self, attrs: RequestAttributes) -> bool:
        return self.rule.allows(attrs) and (self.cluster_wide or attrs.namespace == RELEASE_NS)

    def name(self) -> str:
        scope = "cluster" if self.cluster_wide else f"in {self.role['metadata']['namespace']}"
        return (f"{self.role['kind']}/{self.role['metadata']['name']} ({scope})"
                f" {self.rule.compact_string()}")


def bound_rules(docs: list[Json]) -> list[BoundRule]:
    bound = {(b["roleRef"]["kind"], b["roleRef"]["name"]) for b in docs
             if b["kind"] in ("ClusterRoleBinding", "RoleBinding")
             and any(s.get("name") == SERVICE_ACCOUNT for s in b.get("subjects") or [])}
    return [BoundRule(role, Rule.from_json(raw)) for role in docs
            if (role["kind"], role["metadata"]["name"]) in bound
            for raw in role.get("rules") or []]


def report(docs: list[Json], usage: Usage) -> tuple[str, list[str]]:
    """A line per rule of the roles bound to the operator, and the rules nothing used."""
    lines, unused = [], []
    for bound in bound_rules(docs):
        requests = sorted({_describe(a) for a in usage.allowed if bound.allows(a)})
        delegated = any(not uncovered([bound.rule], [piece])
                        for wanted in usage.delegated for piece in breakdown(wanted))
        used = ", ".join(requests) if requests else ""
        if delegated:
            used += ("; " if used else "") + "delegated in Roles it wrote"
        name = bound.name()
        lines.append(f"{'USED  ' if used else 'UNUSED'} {name}" + (f": {used}" if used else ""))
        if not used:
            unused.append(name)
    return "\n".join(lines), unused


def _describe(attrs: RequestAttributes) -> str:
    sub = f"/{attrs.subresource}" if attrs.subresource else ""
    return f"{attrs.verb} {attrs.resource}{sub}"


# --- the real server's account: its audit log ---------------------------------------------

def _attributes(event: AuditEvent) -> RequestAttributes:
    ref = event.object_ref
    if ref is None:
        return RequestAttributes(event.verb, False, path=event.path)
    return RequestAttributes(event.verb, True, api_group=str(ref.get("apiGroup") or ""),
                             api_version=str(ref.get("apiVersion") or ""),
                             namespace=str(ref.get("namespace") or ""),
                             resource=str(ref.get("resource") or ""),
                             subresource=str(ref.get("subresource") or ""),
                             name=str(ref.get("name") or ""))


def usage_from_audit(events: list[AuditEvent], docs: list[Json]) -> Usage:
    """What the operator was granted, from kube-apiserver's audit log: each request with the
    authorizer's decision; and what the API server checked inside a granted write, which the
    log does not list as requests of their own:

    - a Role the operator wrote: RBAC's storage asks `escalate`, else its rules must be held
      (delegation);
    - a RoleBinding: `bind` of its role, else the role's rules must be held;
    - an object created with `blockOwnerDeletion` owner references: the
      OwnerReferencesPermissionEnforcement plugin asks `update` of the owner's `finalizers`.

    A write the server answered with success passed those checks."""
    usage = Usage()
    mine = [e for e in events if e.username == OPERATOR_USER]
    for event in mine:
        if event.decision:
            usage.record(event.username, _attributes(event), event.decision == "allow")
    held = bound_rules(docs)
    roles = _roles_written(events, docs)
    for event in mine:
        ref, obj = event.object_ref, event.response_object
        if ref is None or obj is None or not 200 <= event.code < 300:
            continue
        if event.verb not in ("create", "update", "patch"):
            continue
        namespace = str(ref.get("namespace") or "")
        if ref.get("apiGroup") == RBAC_GROUP:
            _rbac_write(usage, held, roles, str(ref.get("resource")), namespace, obj)
        if event.verb == "create":
            for owner in obj.get("metadata", {}).get("ownerReferences") or ():
                if owner.get("blockOwnerDeletion"):
                    usage.record(OPERATOR_USER, _finalizers(owner, namespace), True)
    return usage


def _finalizers(owner: Json, namespace: str) -> RequestAttributes:
    group = str(owner.get("apiVersion", "")).rpartition("/")[0]
    # Every owner kind here pluralizes as lower-case kind + "s" (Deployment, LeaderWorkerSet,
    # DynamoGraphDeployment, DynamoGraphDeploymentRequest, ...).
    return RequestAttributes("update", True, api_group=group, api_version="*",
                             namespace=namespace, resource=f"{str(owner['kind']).lower()}s",
                             subresource="finalizers", name=str(owner.get("name", "")))


def _roles_written(events: list[AuditEvent], docs: list[Json]) -> dict[tuple[str, str, str],
                                                                           Json]:
    """Roles and ClusterRoles by (kind, namespace, name): the chart's, then as last written."""
    roles = {(d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]): d
             for d in docs if d["kind"] in ("Role", "ClusterRole")}
    for event in events:
        obj = event.response_object
        if obj and obj.get("kind") in ("Role", "ClusterRole") and 200 <= event.code < 300:
            meta = obj["metadata"]
            roles[(obj["kind"], meta.get("namespace", ""), meta["name"])] = obj
    return roles


def _rbac_write(usage: Usage, held: list[BoundRule], roles: dict[tuple[str, str, str], Json],
                resource: str, namespace: str, obj: Json) -> None:
    name = str(obj["metadata"]["name"])
    if resource in ("roles", "clusterroles"):
        probe = RequestAttributes("escalate", True, api_group=RBAC_GROUP, api_version="*",
                                  namespace=namespace, resource=resource, name=name)
        wanted = obj.get("rules") or []
    elif resource in ("rolebindings", "clusterrolebindings"):
        ref = obj.get("roleRef") or {}
        kind = str(ref.get("kind", ""))
        probe = RequestAttributes("bind", True, api_group=str(ref.get("apiGroup", "")),
                                  api_version="*", namespace=namespace,
                                  resource=f"{kind.lower()}s", name=str(ref.get("name", "")))
        role = roles.get((kind, namespace if kind == "Role" else "", str(ref.get("name"))))
        wanted = (role or {}).get("rules") or []
    else:
        return
    if any(b.allows(probe) for b in held):
        usage.record(OPERATOR_USER, probe, True)
    else:
        usage.grant(OPERATOR_USER, [Rule.from_json(r) for r in wanted])


def refusals(events: list[AuditEvent]) -> list[str]:
    """The operator's requests the server answered 401 or 403."""
    return [f"{e.code} {e.verb} {e.raw.get('requestURI')}" for e in events
            if e.user_agent.startswith("dynamo-operator") and e.code in (401, 403)]


def reviews_in(events: list[AuditEvent], kinds: tuple[str, ...] = REVIEWS) -> int:
    """TokenReviews and SubjectAccessReviews (or `kinds`) the operator created."""
    return sum(1 for e in events if e.username == OPERATOR_USER and e.verb == "create"
               and (e.object_ref or {}).get("resource") in kinds)


# --- the scenarios ------------------------------------------------------------------------

@dataclass(frozen=True)
class Scenario:
    """One step of the run; `needs` names what a cluster must offer for it (see SKIPPED)."""

    name: str
    run: Callable[[Env], Awaitable[None]]
    needs: frozenset[str] = frozenset()


async def storage_migrated(admin: Kubectl) -> None:
    """The storage migration (controller/storage_migration.py) trims storedVersions."""
    async def trimmed() -> bool:
        crd = json.loads(await admin("get", "crd", STORED_BEFORE, "-o", "json"))
        return bool(crd["status"]["storedVersions"] == ["v1beta1"])
    await eventually(trimmed, within=60, what="storedVersions trimmed by the operator")


async def metrics(admin: Kubectl, port: int, reviews: Callable[[], int]) -> None:
    """The chart's secure /metrics: the operator checks each scraper's token and rights with
    the API server (its metrics-auth ClusterRole); the metrics-reader role lets one in.
    `reviews` counts the TokenReviews and SubjectAccessReviews the server got from it."""
    for name in ("scraper", "nobody"):
        await admin("create", "serviceaccount", name, "-n", RELEASE_NS)
    await admin("create", "clusterrolebinding", "scraper", f"--clusterrole={METRICS_READER}",
                f"--serviceaccount={RELEASE_NS}:scraper")
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
    before = reviews()
    for _ in range(3):  # a scraper's token and rights are remembered, as the filter does
        assert (await scrape(tokens["scraper"]))[0] == 200
    assert reviews() == before > 0


async def webhook_ready(env: Env) -> None:
    async def injected() -> bool:
        config = await env.get("validatingwebhookconfiguration", WEBHOOK_CONFIGURATION)
        return all(h["clientConfig"].get("caBundle") for h in config["webhooks"])
    await eventually(injected, what="the operator's CA in the webhook configuration")

    async def refused() -> str:
        # a mistake is refused by the operator's webhook, through the chart's Service (the
        # API server may take a moment to see the CA)
        code, out = await env.k_result("apply", "-f", "-", stdin=json.dumps({
            "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": "bad"}, "spec": {"backendFramework": "vllm", "services": {
                "AServiceNameThatIsFarTooLongForGroveObjectNames": {
                    "componentType": "frontend", "replicas": 1}}}}))
        assert code != 0, out  # never admitted
        # (until the API server trusts the new CA, the call fails rather than being refused)
        return out if 'webhook "vdynamographdeployment.kb.io" denied' in out else ""
    await eventually(refused, what="the graph refused by the operator's webhook")


async def conversion(env: Env) -> None:
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


async def lifecycle(env: Env) -> None:
    await env.apply_example("vllm-agg")
    await env.wait_ready("vllm-agg", 90)
    worker = await worker_dcd(env, "vllm-agg", "VllmDecodeWorker")
    await env.k("patch", DGD, "vllm-agg", "--type=merge", "-p", json.dumps(
        {"spec": {"services": {"VllmDecodeWorker": {"replicas": 2}}}}))

    async def two() -> bool:
        dep = await env.get("deploy", worker)
        return bool(dep) and dep["spec"].get("replicas") == 2
    await eventually(two, what="the worker Deployment at 2 replicas")
    # A new image is a new worker generation: rolled out, the old generation deleted.
    await env.k("patch", DGD, "vllm-agg", "--type=json", "-p", json.dumps([{
        "op": "replace",
        "path": "/spec/services/VllmDecodeWorker/extraPodSpec/mainContainer/image",
        "value": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0"}]))
    assert await worker_dcd(env, "vllm-agg", "VllmDecodeWorker", within=90) != worker
    await env.wait_ready("vllm-agg", 90)
    await env.k("delete", DGD, "vllm-agg", "--wait=true", "--timeout=60s")

    async def pruned() -> bool:
        return not await env.names("deploy", "nvidia.com/dynamo-graph-deployment-name=vllm-agg")
    await eventually(pruned, within=60, what="the graph's Deployments pruned")


async def scaling(env: Env) -> None:
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


async def planner(env: Env) -> None:
    await env.apply_example("vllm-planner")

    async def bound() -> bool:
        return bool(await env.names("rolebinding"))
    await eventually(bound, what="the planner's RoleBinding")
    await asyncio.sleep(1)


async def epp(env: Env) -> None:
    """An EPP graph: its InferencePool, and the EPP's Role and RoleBinding (the EPP's probes
    are gRPC probes)."""
    await env.apply_example("vllm-epp")
    await env.wait_ready("vllm-epp", 90)


async def profiled_request(env: Env) -> None:
    """A DGDR that profiles and applies its graph."""
    await env.apply_example("dgdr-auto-apply")
    await env.k("wait", "--for=jsonpath={.status.state}=Ready", f"{DGDR}/qwen-sla",
                "--timeout=90s")


async def discovering_request(env: Env) -> None:
    """A request that discovers its GPUs from the nodes' labels."""
    request = yaml.safe_load((EXAMPLES / "dgdr-spec-only.yaml").read_text())
    request["metadata"]["name"] = "discovered"
    request["spec"]["enableGpuDiscovery"] = True
    await env.k("apply", "-f", "-", stdin=json.dumps(request))
    await env.k("wait", "--for=jsonpath={.status.state}=Ready", f"{DGDR}/discovered",
                "--timeout=90s")


async def kv_transfer_policy(env: Env) -> None:
    """A graph whose worker gets its node's zone: the topology label controller reads the
    pod's node and patches the pod."""
    graph = yaml.safe_load((EXAMPLES / "v1beta1" / "vllm-agg.yaml").read_text())
    graph["metadata"]["name"] = "zoned"
    graph["spec"]["experimental"] = {"kvTransferPolicy": {
        "labelKey": "topology.kubernetes.io/zone", "domain": "zone"}}
    await env.k("apply", "-f", "-", stdin=json.dumps(graph))

    async def labelled() -> bool:
        pods = await env.get("pods", selector="nvidia.com/dynamo-graph-deployment-name=zoned,"
                                              "nvidia.com/dynamo-component=VllmDecodeWorker")
        return bool(pods["items"]) and all(
            "topology.kubernetes.io/zone" in (p["metadata"].get("labels") or {})
            for p in pods["items"])
    await eventually(labelled, within=90, what="the worker pod's zone label")


async def gpu_memory_service(env: Env) -> None:
    """A GMS graph: the operator writes its ResourceClaimTemplate, whose claims the cluster
    allocates to the worker pods."""
    graph = yaml.safe_load((ROOT / "tests" / "backends" / "fixtures" / "gms" /
                            "gms.v1beta1.yaml").read_text())
    graph["metadata"].pop("namespace", None)
    await env.k("apply", "-f", "-", stdin=json.dumps(graph))
    await env.wait_ready("vllm-agg-gms", 90)


#: What a scenario may need beyond the operator's core kinds. (Multinode graphs need LWS or
#: Grove, which the chart's defaults leave off.)
PROFILER, GRPC_PROBES, DRA = "profiler", "grpc-probes", "dra"
SCENARIOS = [
    Scenario("conversion", conversion),
    Scenario("lifecycle", lifecycle),
    Scenario("scaling", scaling),
    Scenario("planner", planner),
    Scenario("epp", epp, frozenset({GRPC_PROBES})),
    Scenario("kv-transfer-policy", kv_transfer_policy),
    Scenario("gpu-memory-service", gpu_memory_service, frozenset({DRA})),
    Scenario("profiled-request", profiled_request, frozenset({PROFILER})),
    Scenario("discovering-request", discovering_request, frozenset({PROFILER})),
]


async def run_scenarios(env: Env, missing: dict[str, str]) -> list[str]:
    """Every scenario whose needs the cluster meets; a line per scenario left out, with the
    reason `missing` gives for what it needs."""
    left_out = []
    for scenario in SCENARIOS:
        reasons = [missing[n] for n in sorted(scenario.needs) if n in missing]
        if reasons:
            left_out.append(f"{scenario.name}: {'; '.join(reasons)}")
            continue
        await scenario.run(env)
    return left_out
