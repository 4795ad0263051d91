"""`rollout undo` of a graph written in `v1alpha1` with what only `v1alpha1` says (a
service's annotations): the revision's services go back through `v1alpha1`, then its
components through `v1beta1`, and the graph runs the revision's configuration again, not a
third one (the `v1beta1` patch alone kept the undone configuration's payload)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from graph_harness import NS, eventually, install, operator, setup_client

from backends.hub_graph import hub_graph
from backends.worker_generation import worker_hash
from hack.our_crds import GRAPH_DEPLOYMENTS
from reconcilers.machinery.resources import CONTROLLER_REVISIONS
from reconcilers.machinery.resources import GRAPH_DEPLOYMENTS as HUB_GRAPHS

Json = dict[str, Any]


def decode(team: str, image: str) -> Json:
    return {"componentType": "worker", "subComponentType": "decode", "replicas": 2,
            "annotations": {"team": team},
            "extraPodSpec": {"mainContainer": {"image": image}}}


async def test_undo_restores_what_only_v1alpha1_says(kubeconfig: Path) -> None:
    client = await setup_client(kubeconfig)
    await install(client)
    try:
        async with operator(kubeconfig):
            await client.create(GRAPH_DEPLOYMENTS, {
                "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
                "metadata": {"name": "g", "namespace": NS},
                "spec": {"services": {"Frontend": {"componentType": "frontend"},
                                      "decode": decode("a", "img:1")}}})

            async def revisions(count: int) -> list[Json] | None:
                items = (await client.list(CONTROLLER_REVISIONS, NS))["items"]
                return items if len(items) == count else None
            [first] = await eventually(lambda: revisions(1))
            await client.patch(GRAPH_DEPLOYMENTS, NS, "g", {"spec": {"services": {
                "decode": decode("b", "img:2")}}})
            await eventually(lambda: revisions(2))

            undo = await asyncio.create_subprocess_exec(
                str(Path(sys.executable).parent / "dynamo-operator"), "rollout", "undo",
                "dgd/g", "--kubeconfig", str(kubeconfig), "-n", NS,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            out, err = await asyncio.wait_for(undo.communicate(), 60)
            assert undo.returncode == 0 and b"rolled back to revision 1" in out, (out, err)

            view = await client.get(GRAPH_DEPLOYMENTS, NS, "g")
            assert view["spec"]["services"]["decode"] == decode("a", "img:1")
            stored = await client.get(HUB_GRAPHS, NS, "g")
            wanted = first["metadata"]["labels"]["nvidia.com/dynamo-worker-hash"]
            assert worker_hash(hub_graph(stored)) == wanted
    finally:
        await client.close()
