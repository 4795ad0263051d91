"""Every line a graph reconcile logs says which object it is about: controller, namespace,
name and reconcile id, bound once by the controller loop; decisions use consistent keys."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graph_harness import NS, eventually, graph, install, operator, setup_client, worker_name
from structlog.contextvars import merge_contextvars
from structlog.testing import capture_logs

from controller.client import KubeClient
from hack.our_crds import COMPONENT_DEPLOYMENTS, GRAPH_DEPLOYMENTS

#: The controller's name in the logs: the kind, as the original's `Named(...)`.
KIND = "DynamoGraphDeployment"


async def test_graph_reconcile_lines_name_their_object(kubeconfig: Path) -> None:
    client = await setup_client(kubeconfig)
    try:
        await install(client)
        lines = await _reconcile_one_graph(client, kubeconfig)
    finally:
        await client.close()
    created = [line for line in lines if line["event"] == "child created"]
    assert {(line["kind"], line["child"]) for line in created} >= {
        ("DynamoComponentDeployment", "g-frontend"),
        ("DynamoComponentDeployment", worker_name(graph("g"), "decode"))}
    changed = [line for line in lines if line["event"] == "state changed"]
    assert changed and changed[0]["state"] == "pending"
    for line in created + changed:
        assert (line["controller"], line["namespace"], line["name"]) == (KIND, NS, "g"), line
        assert len(line["reconcile_id"]) >= 8, line
    # The first reconcile creates every child: one id for all of them. (The pending state is
    # held for a moment, machinery.status_pacer, and written by a later reconcile.)
    assert len({line["reconcile_id"] for line in created}) == 1
    # No line of a reconcile carries a secret or a whole object.
    assert all("data" not in line and "spec" not in line for line in lines)


async def _reconcile_one_graph(client: KubeClient, kubeconfig: Path) -> list[dict[str, Any]]:
    """The log lines of an operator that takes one new graph to `pending`."""
    with capture_logs(processors=[merge_contextvars]) as lines:
        async with operator(kubeconfig):
            await client.create(GRAPH_DEPLOYMENTS, graph("g"))
            await eventually(lambda: client.get(COMPONENT_DEPLOYMENTS, NS,
                                                worker_name(graph("g"), "decode")))

            async def pending() -> bool:
                status = (await client.get(GRAPH_DEPLOYMENTS, NS, "g")).get("status") or {}
                return status.get("state") == "pending"
            await eventually(pending)
    return lines
