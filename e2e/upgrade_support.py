"""Helpers of the operator-upgrade tests: an operator process with its webhooks, creating
objects through them, what an upgrade must leave alone (each Deployment's and
LeaderWorkerSet's generation and pod template, each DCD's generation and spec hash, every
pod), and whether an operator has reconciled everything (its metrics) or shows a bug."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from e2e_support import Env, OperatorProcess, eventually
from metrics_support import scrape, value
from old_operator_support import shows_a_bug

from hack.processes import free_port

Json = dict[str, Any]
DGD_BETA = "dynamographdeployments.v1beta1.nvidia.com"
DCD_BETA = "dynamocomponentdeployments.v1beta1.nvidia.com"
LWS = "leaderworkersets.leaderworkerset.x-k8s.io"
HASH = "nvidia.com/last-applied-hash"


async def create(env: Env, obj: Json) -> None:
    """Create `obj` through the operator's webhooks (retried while they start)."""
    async def created() -> bool:
        code, out = await env.k_result("create", "-f", "-", stdin=json.dumps(obj))
        assert code == 0 or "failed calling webhook" in out, out
        return code == 0
    await eventually(created, within=30, what=f"{obj['metadata']['name']} created")


async def webhooks_configured(env: Env, op: OperatorProcess, *, mutating: bool) -> None:
    """The operator's webhook configurations (the mutating one too, when it has one) call
    it, with its CA."""
    url = op.extra[op.extra.index("--webhook-url") + 1]
    kinds = [("validatingwebhookconfiguration", "dynamo-operator-validating")]
    if mutating:
        kinds.append(("mutatingwebhookconfiguration", "dynamo-operator-mutating"))

    async def configured() -> bool:
        for kind, name in kinds:
            code, out = await env.k_result("get", kind, name, "-o", "json")
            if code != 0:
                return False
            hooks = json.loads(out[out.index("{"):])["webhooks"]
            if not all(h["clientConfig"].get("caBundle")
                       and h["clientConfig"]["url"].startswith(url) for h in hooks):
                return False
        return True
    await eventually(configured, within=30, what=f"{op.name}'s webhook configurations")


async def listed(env: Env, resource: str) -> dict[str, Json]:
    listing = json.loads(await env.k("get", resource, "-o", "json"))
    return {o["metadata"]["name"]: o for o in listing["items"]}


async def workloads(env: Env) -> dict[str, Json]:
    """Each Deployment's and LeaderWorkerSet's generation and pod template(s)."""
    out: dict[str, Json] = {}
    for name, d in (await listed(env, "deployments")).items():
        out[f"deployment/{name}"] = {"generation": d["metadata"]["generation"],
                                     "template": d["spec"]["template"]}
    for name, lws in (await listed(env, LWS)).items():
        out[f"lws/{name}"] = {"generation": lws["metadata"]["generation"],
                              "template": lws["spec"]["leaderWorkerTemplate"]}
    return out


async def dcds(env: Env) -> dict[str, Json]:
    return {name: {"generation": d["metadata"]["generation"],
                   "hash": d["metadata"]["annotations"].get(HASH)}
            for name, d in (await listed(env, DCD_BETA)).items()}


async def pods(env: Env) -> dict[str, str]:
    return {name: p["metadata"]["uid"] for name, p in (await listed(env, "pods")).items()
            if not p["metadata"].get("deletionTimestamp")}


def reconciled_all(port: int, graphs: int, components: int
                   ) -> Callable[[], Awaitable[bool]]:
    """Whether the operator at `port` has reconciled as many graphs and DCDs as there are,
    with nothing queued or running."""
    async def check() -> bool:
        samples = await scrape(port)
        return (value(samples, "controller_runtime_reconcile_total",
                      controller="DynamoGraphDeployment", result="success") >= graphs
                and value(samples, "controller_runtime_reconcile_total",
                          controller="DynamoComponentDeployment", result="success")
                >= components
                and value(samples, "workqueue_depth") == 0
                and value(samples, "controller_runtime_active_workers") == 0)
    return check


def operator(env: Env, name: str, metrics: int, **kw: Any) -> OperatorProcess:
    """An operator with webhooks (with `tree=`, an earlier commit's)."""
    hook = free_port()
    return OperatorProcess(env.kubeconfig, env.namespace, env.tmp / f"{name}.log", name, [
        "--metrics-bind-address", f"127.0.0.1:{metrics}",
        "--enable-webhooks", "--webhook-port", str(hook),
        "--webhook-url", f"https://127.0.0.1:{hook}"], **kw)


def stamps(tree: Path) -> bool:
    """Whether the operator of `tree` stamps graphs (has the mutating webhook)."""
    return (tree / "reconcilers" / "operator" / "defaulting.py").exists()


async def count_all(env: Env, resource: str) -> int:
    listing = json.loads((await env.kubectl.run("get", resource, "-A", "-o", "json")).stdout)
    return len(listing["items"])


async def ready_or_bug(env: Env, op: OperatorProcess, names: list[str]) -> bool:
    """True once every graph is Ready; False as soon as the operator logs a bug."""
    async def settled() -> bool | None:
        if shows_a_bug(op.log_path):
            return None
        for name in names:
            graph = json.loads(await env.k("get", DGD_BETA, name, "-o", "json"))
            conditions = (graph.get("status") or {}).get("conditions") or []
            if not any(c["type"] == "Ready" and c["status"] == "True" for c in conditions):
                return False
        return True

    async def done() -> bool:
        return await settled() is not False
    await eventually(done, within=90, interval=0.5, what=f"{names} Ready under {op.name}")
    return await settled() is True
