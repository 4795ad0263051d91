"""A passing failure of the API server is retried and never shown as a failed graph: the state
and Ready condition stay as they were, the log says it once, without a traceback."""

from __future__ import annotations

from pathlib import Path

from graph_harness import (
    NS,
    events,
    eventually,
    graph,
    install,
    operator,
    setup_client,
    worker_name,
)
from structlog.contextvars import merge_contextvars
from structlog.testing import capture_logs

from hack.localcluster.server import LocalCluster
from hack.our_crds import COMPONENT_DEPLOYMENTS, GRAPH_DEPLOYMENTS


async def test_server_errors_leave_the_graph_pending_and_are_retried(
        kubeconfig: Path, cluster: LocalCluster) -> None:
    client = await setup_client(kubeconfig)
    try:
        await install(client)
        # No Retry-After: the client gives the error to the reconcile, which must not
        # mistake it for a problem of the graph.
        rule = cluster.faults.error(500, verbs=("create",),
                                    resources=("dynamocomponentdeployments",), times=3)
        with capture_logs(processors=[merge_contextvars]) as lines:
            async with operator(kubeconfig):
                manifest = graph("g")
                await client.create(GRAPH_DEPLOYMENTS, manifest)
                await eventually(lambda: rule.hits >= 3)
                await eventually(lambda: client.get(COMPONENT_DEPLOYMENTS, NS,
                                                    worker_name(manifest, "decode")))

                async def pending() -> bool:
                    obj = await client.get(GRAPH_DEPLOYMENTS, NS, "g")
                    return (obj.get("status") or {}).get("state") == "pending"
                await eventually(pending)
        reasons = {e["reason"] for e in await events(client, "g")}
    finally:
        await client.close()
    # Never written as failed, not even for a moment: no failure event was recorded.
    assert "ReconcileFailed" not in reasons
    transient = [line for line in lines if line["event"] == "transient error, retrying"]
    assert transient and all(line["log_level"] in ("warning", "debug") for line in transient)
    assert transient[0]["log_level"] == "warning" and "500" in transient[0]["error"]
    assert not [line for line in lines if line["log_level"] == "error" or "exc_info" in line]
