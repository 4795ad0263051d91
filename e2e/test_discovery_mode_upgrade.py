"""A graph in container discovery mode (`nvidia.com/dynamo-kube-discovery-mode: container`) the
previous release made keeps its pods when this operator takes over (`backends.discovery_mode`).

The previous release is the operator of commit 8aceee7, the last before a graph's discovery
mode was passed on to its components (40ceb24; the commit right before that one does not
import). It runs with its webhooks and makes the aggregated example, annotated, Ready; it
stops; the current operator starts with its webhooks and reconciles it. Then no Deployment has
a new generation or pod template, no DCD a new generation or spec hash, and every pod is the
one that ran before: the graph is stamped 0.1.0, under the gate's 0.2.0.

Runs the local cluster only (the webhooks are called on 127.0.0.1); needs git history.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess

import aiohttp
import pytest
import yaml
from e2e_support import EXAMPLES, Env, eventually
from old_operator_support import git, operator_tree, shows_a_bug
from upgrade_support import (
    DCD_BETA,
    DGD_BETA,
    Json,
    count_all,
    create,
    dcds,
    operator,
    pods,
    ready_or_bug,
    reconciled_all,
    webhooks_configured,
    workloads,
)

from hack.localcluster.server import LocalCluster
from hack.processes import free_port

PREVIOUS_RELEASE = "8aceee7"
MODE = "nvidia.com/dynamo-kube-discovery-mode"


def container_mode_graph(name: str) -> Json:
    graph: Json = yaml.safe_load((EXAMPLES / "v1beta1" / "vllm-agg.yaml").read_text())
    graph["metadata"] = {"name": name, "annotations": {MODE: "container"}}
    return graph


def main_env(template: Json) -> dict[str, str]:
    main = next(c for c in template["spec"]["containers"] if c["name"] == "main")
    return {e["name"]: e.get("value", "") for e in main.get("env") or []}


@pytest.mark.timeout(240)
async def test_a_container_mode_graph_of_the_previous_release_keeps_its_pods(
        env: Env, needs_local: LocalCluster) -> None:
    try:
        git("cat-file", "-e", f"{PREVIOUS_RELEASE}^{{commit}}")
    except subprocess.CalledProcessError:
        pytest.skip(f"commit {PREVIOUS_RELEASE} is not in this clone")
    tree = operator_tree(PREVIOUS_RELEASE, env.tmp / "previous-release")
    old_metrics, new_metrics = free_port(), free_port()
    old = operator(env, "previous-release", old_metrics, tree=tree)
    new = operator(env, "new", new_metrics)
    try:
        await old.start()
        await webhooks_configured(env, old, mutating=True)
        await create(env, container_mode_graph("disc"))
        assert await ready_or_bug(env, old, ["disc"]), old.tail()
        total_graphs, total_dcds = await count_all(env, DGD_BETA), await count_all(env, DCD_BETA)
        await eventually(reconciled_all(old_metrics, total_graphs, total_dcds), within=30,
                         what="the previous operator idle", tolerate=(aiohttp.ClientError,))
        await asyncio.sleep(1)  # its last writes (status) are in

        workloads_before, dcds_before, pods_before = (
            await workloads(env), await dcds(env), await pods(env))
        # The previous release left the mode alone: no container env on any pod.
        assert workloads_before and all(
            "DYN_KUBE_DISCOVERY_MODE" not in main_env(w["template"])
            for w in workloads_before.values()), workloads_before

        await old.kill(signal.SIGTERM)
        await new.start()
        await eventually(reconciled_all(new_metrics, total_graphs, total_dcds), within=60,
                         what="the current operator reconciling every graph and DCD",
                         tolerate=(aiohttp.ClientError,))
        await asyncio.sleep(1)  # a write it made would have reached the controllers

        assert await dcds(env) == dcds_before
        after = await workloads(env)
        changed = sorted(k for k in workloads_before if after.get(k) != workloads_before[k])
        assert changed == [], f"pod templates changed by the upgrade: {changed}"
        assert await pods(env) == pods_before
        assert not shows_a_bug(new.log_path)
    finally:
        for op in (old, new):
            await op.kill(signal.SIGTERM)
            print(f"--- {op.name} log (tail) ---\n{op.tail()}")
