"""A cluster-wide and a namespace-restricted operator on one cluster (spec §7.4, scenario 25):
each namespace is written by one of them only; a marker that runs out hands its namespace back
to the cluster-wide operator without any other event; ephemeral namespaces are left alone; a
restricted operator that cannot renew its marker exits 1, and a clean stop deletes it."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections.abc import Awaitable, Callable

from e2e_support import DGD, EXAMPLES, Env, OperatorProcess, eventually, example_worker_dcd

from hack.localcluster.request_stats import WRITE_VERBS
from hack.localcluster.server import LocalCluster
from reconcilers.operator.namespace_lease import LEASE_NAME, micro_time

Start = Callable[..., Awaitable[OperatorProcess]]
RESTRICTED, SHARED, EPHEMERAL = "team-a", "team-b", "ci-ephemeral-1"
MARKER_FLAGS = ("--namespace-scope-lease-duration", "3s",
                "--namespace-scope-lease-renew-interval", "1s")


async def restricted(operators: Start, *extra: str) -> OperatorProcess:
    return await operators("op-team-a", "--restricted-namespace", RESTRICTED,
                           "--leader-election-namespace", RESTRICTED, *MARKER_FLAGS, *extra)


async def kn(env: Env, namespace: str, *args: str, stdin: str | None = None) -> str:
    result = await env.kubectl.run("-n", namespace, *args, stdin=stdin)
    result.check()
    return result.stdout


async def get(env: Env, namespace: str, kind: str, name: str) -> dict[str, object] | None:
    result = await env.kubectl.run("-n", namespace, "get", kind, name, "-o", "json")
    return json.loads(result.stdout) if result.code == 0 else None


def written_namespaces(local: LocalCluster, pod: str) -> set[str]:
    """Namespaces one operator process wrote to, its leases left out."""
    return {str(row["namespace"]) for row in local.stats.snapshot()
            if row["verb"] in WRITE_VERBS and str(row["userAgent"]).endswith(f"({pod})")
            and not str(row["resource"]).startswith("leases")}


async def test_each_namespace_has_one_writer(env: Env, operators: Start,
                                             needs_local: LocalCluster) -> None:
    for ns in (RESTRICTED, SHARED):
        await env.kubectl.run("create", "namespace", ns)
    await operators("op-wide")
    team = await restricted(operators)
    await eventually(lambda: get(env, RESTRICTED, "lease", LEASE_NAME), what="the marker")
    needs_local.stats.reset()
    example = str(EXAMPLES / "vllm-agg.yaml")
    for ns in (RESTRICTED, SHARED):
        await kn(env, ns, "apply", "-f", example)
    for ns in (RESTRICTED, SHARED):
        await kn(env, ns, "wait", "--for=condition=Ready", f"{DGD}/vllm-agg", "--timeout=90s")
    await kn(env, RESTRICTED, "patch", DGD, "vllm-agg", "--type=json", "-p", json.dumps([
        {"op": "replace", "path": "/spec/services/VllmDecodeWorker/replicas", "value": 2}]))
    await eventually(lambda: _replicas(env, RESTRICTED, 2), within=60, what="2 workers")
    assert written_namespaces(needs_local, "op-team-a") == {RESTRICTED}
    assert RESTRICTED not in written_namespaces(needs_local, "op-wide")
    assert SHARED in written_namespaces(needs_local, "op-wide")

    # A clean stop deletes the marker: the cluster-wide operator takes team-a over.
    await team.kill(signal.SIGTERM)
    assert team.proc is not None and team.proc.returncode == 0, team.tail()
    assert await get(env, RESTRICTED, "lease", LEASE_NAME) is None
    await kn(env, RESTRICTED, "patch", DGD, "vllm-agg", "--type=json", "-p", json.dumps([
        {"op": "replace", "path": "/spec/services/VllmDecodeWorker/replicas", "value": 1}]))
    await eventually(lambda: _replicas(env, RESTRICTED, 1), within=60, what="1 worker")
    assert RESTRICTED in written_namespaces(needs_local, "op-wide")


async def _replicas(env: Env, namespace: str, count: int) -> bool:
    # scaling starts no worker generation: the name stays the one the manifest gives
    dep = await get(env, namespace, "deploy", example_worker_dcd("vllm-agg", "VllmDecodeWorker"))
    return dep is not None and dep["spec"]["replicas"] == count  # type: ignore[index]


async def test_expired_marker_hands_back_and_ephemeral_is_skipped(
        env: Env, operators: Start) -> None:
    for ns in (RESTRICTED, EPHEMERAL):
        await env.kubectl.run("create", "namespace", ns)
    # A marker left by a restricted operator that died: valid for 4 more seconds.
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
             "metadata": {"name": LEASE_NAME, "namespace": RESTRICTED},
             "spec": {"holderIdentity": "namespace-restricted-operator-old",
                      "leaseDurationSeconds": 4, "renewTime": micro_time(time.time())}}
    await kn(env, RESTRICTED, "apply", "-f", "-", stdin=json.dumps(lease))
    await operators("op-wide")
    example = str(EXAMPLES / "vllm-agg.yaml")
    for ns in (RESTRICTED, EPHEMERAL):
        await kn(env, ns, "apply", "-f", example)
    await asyncio.sleep(1.5)
    for ns in (RESTRICTED, EPHEMERAL):
        dgd = await get(env, ns, DGD, "vllm-agg")
        assert dgd is not None
        assert not dgd["metadata"].get("finalizers") and not dgd.get("status"), ns  # type: ignore[attr-defined]
    # No event after the marker runs out: the namespace is resynced on its own.
    await kn(env, RESTRICTED, "wait", "--for=condition=Ready", f"{DGD}/vllm-agg", "--timeout=60s")
    dgd = await get(env, EPHEMERAL, DGD, "vllm-agg")
    assert dgd is not None and not dgd.get("status")


async def test_restricted_operator_exits_when_it_cannot_renew(
        env: Env, operators: Start, needs_local: LocalCluster) -> None:
    await env.kubectl.run("create", "namespace", RESTRICTED)
    # Without leader election, whose lease the same fault would take away too.
    team = await restricted(operators, "--leader-elect=false")
    await eventually(lambda: get(env, RESTRICTED, "lease", LEASE_NAME), what="the marker")
    rule = needs_local.faults.error(500, verbs=("get", "update", "create"),
                                    resources=("leases",), namespace=RESTRICTED)
    assert team.proc is not None
    started = time.monotonic()
    code = await asyncio.wait_for(team.proc.wait(), 15)
    needs_local.faults.remove(rule)
    assert code == 1, team.tail()
    # 3 s marker, 1 s renewals: two failures in a row, about 2 s, well before expiry.
    assert time.monotonic() - started < 3.0
    assert "namespace scope lost" in team.tail()
