"""The cluster subcommands against a running operator: `dynamo-operator diff -f FILE` says
what applying a graph would change, child by child, and whether it starts a worker rollout.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from e2e_support import DGD, OPERATOR, Env, OperatorProcess, disaggregated_graph, eventually

from controller.client import KubeClient
from e2e.rollout_sampler import RolloutSampler

GRAPH = "cli"
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1"
WORKERS = ("VllmDecodeWorker", "VllmPrefillWorker")


def graph(image: str = IMAGE, replicas: int = 2, gpus: int = 2) -> dict[str, Any]:
    """A disaggregated graph: a frontend, and decode and prefill workers of `gpus` GPUs."""
    return disaggregated_graph(GRAPH, image, frontend_image=IMAGE, replicas=replicas, gpus=gpus)


async def cli(env: Env, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    """`dynamo-operator ARGS` against the test's cluster; exit status, stdout, stderr."""
    environ = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "POD_NAMESPACE")}
    proc = await asyncio.create_subprocess_exec(
        str(OPERATOR), *args, "--kubeconfig", str(env.kubeconfig), "-n", env.namespace,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=environ)
    out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin else None), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def diff(env: Env, manifest: dict[str, Any]) -> tuple[int, str, str]:
    return await cli(env, "diff", "-f", "-", stdin=json.dumps(manifest))


async def test_diff_says_nothing_changes_then_names_the_rollout_and_its_gpus(
        env: Env, operator: OperatorProcess) -> None:
    await env.k("apply", "-f", "-", stdin=json.dumps(graph()))
    await env.wait_ready(GRAPH, seconds=90)

    code, out, err = await diff(env, graph())
    assert code == 0, (out, err)
    assert "unchanged" in out and "worker rollout: none" in out, out

    code, out, err = await diff(env, graph(image="nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0"))
    assert code == 1, (out, err)
    assert f"DynamoGraphDeployment {env.namespace}/{GRAPH}: changed" in out, out
    assert "+          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0" in out, out
    assert "worker rollout: starts generation" in out, out
    assert "rolls: VllmDecodeWorker, VllmPrefillWorker" in out, out
    # 2 replicas at 25% surge: one extra replica of 2 GPUs per worker; 4 nodes x 8 GPUs, of
    # which the running graph takes 8.
    assert "surge VllmDecodeWorker: +1 replica(s) x 2 GPU(s) = 2 GPU(s)" in out, out
    assert "GPUs: the surge needs 4, 24 free of 32 allocatable (fits)" in out, out
    assert ": created" in out, out  # the new generation's DCDs

    code, out, err = await diff(env, graph(replicas=3))
    assert code == 1, (out, err)
    assert "worker rollout: none (the workers stay in generation" in out, out
    assert "-  replicas: 2\n+  replicas: 3" in out, out
    assert ": created" not in out and ": deleted" not in out, out

    # A graph not in the cluster yet: it and every child are created, nothing rolls.
    other = graph()
    other["metadata"]["name"] = "fresh"
    code, out, err = await diff(env, other)
    assert code == 1, (out, err)
    assert f"DynamoGraphDeployment {env.namespace}/fresh: created" in out, out
    assert f"DynamoComponentDeployment {env.namespace}/fresh-frontend: created" in out, out
    assert f"ControllerRevision {env.namespace}/fresh-" in out, out
    assert "worker rollout: none (the workers start in generation" in out, out
    assert ": changed" not in out and ": deleted" not in out, out
    assert await env.names(DGD) == [GRAPH]  # a dry run: nothing was written


async def revisions(env: Env) -> dict[str, tuple[int, str]]:
    """The graph's ControllerRevisions: name -> (revision, change-cause)."""
    listing = json.loads(await env.k("get", "controllerrevisions", "-o", "json",
                                     "-l", f"nvidia.com/dynamo-graph-deployment-name={GRAPH}"))
    return {r["metadata"]["name"]: (r["revision"], (r["metadata"].get("annotations") or {})
                                    .get("kubernetes.io/change-cause", ""))
            for r in listing["items"]}


async def change(env: Env, image: str, cause: str) -> None:
    """A new worker image, with its change-cause, as `kubectl annotate --record` would."""
    patch = {"metadata": {"annotations": {"kubernetes.io/change-cause": cause}},
             "spec": {"services": {w: {"extraPodSpec": {"mainContainer": {"image": image}}}
                                   for w in WORKERS}}}
    await env.k("patch", DGD, GRAPH, "--type=merge", "-p", json.dumps(patch))


async def test_each_worker_configuration_is_kept_as_a_controller_revision(
        env: Env, operator: OperatorProcess) -> None:
    await env.k("apply", "-f", "-", stdin=json.dumps(graph()))
    await env.wait_ready(GRAPH, seconds=90)
    [first] = await revisions(env)
    revision = json.loads(await env.k("get", "controllerrevisions", first, "-o", "json"))
    assert revision["revision"] == 1
    [owner] = revision["metadata"]["ownerReferences"]
    assert owner["kind"] == "DynamoGraphDeployment" and owner["controller"] is True
    assert first == f"{GRAPH}-{revision['metadata']['labels']['nvidia.com/dynamo-worker-hash']}"
    assert {c["name"] for c in revision["data"]["components"]} == set(WORKERS)

    await change(env, "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0", "bump to 0.7.0")

    async def two() -> bool:
        return len(await revisions(env)) == 2
    await eventually(two, within=60, what="a second revision")
    history = await revisions(env)
    [second] = set(history) - {first}
    assert history == {first: (1, ""), second: (2, "bump to 0.7.0")}

    # Back to the first configuration: its revision is used again, with the next number.
    await change(env, IMAGE, "back to 0.6.1")

    async def renumbered() -> bool:
        return (await revisions(env)).get(first, (0, ""))[0] == 3
    await eventually(renumbered, within=60, what="the first revision renumbered")
    assert await revisions(env) == {first: (3, "back to 0.6.1"), second: (2, "bump to 0.7.0")}

    # A history limit of one keeps the current revision alone, once the old generation is gone.
    await env.k("annotate", DGD, GRAPH, "nvidia.com/revision-history-limit=1")

    async def one() -> bool:
        return list(await revisions(env)) == [first]
    await eventually(one, within=90, what="the history pruned to its limit")


async def workers_image(env: Env) -> set[str]:
    obj = await env.get(DGD, GRAPH)
    return {obj["spec"]["services"][w]["extraPodSpec"]["mainContainer"]["image"]
            for w in WORKERS}


async def test_rollout_status_history_and_undo(env: Env, operator: OperatorProcess,
                                               kube: KubeClient) -> None:
    manifest = graph()
    manifest["metadata"]["annotations"] = {"kubernetes.io/change-cause": "first"}
    await env.k("apply", "-f", "-", stdin=json.dumps(manifest))
    await env.wait_ready(GRAPH, seconds=90)
    code, out, err = await cli(env, "rollout", "status", f"dgd/{GRAPH}")
    assert code == 0 and "no worker rollout has run" in out, (out, err)
    assert "VllmDecodeWorker 2/2 ready, VllmPrefillWorker 2/2 ready" in out, out

    await change(env, "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0", "bump")
    code, out, err = await cli(env, "rollout", "status", "--watch", "--timeout", "120",
                               f"dgd/{GRAPH}")
    assert code == 0, (out, err)
    assert "rollout Completed" in out.splitlines()[-2], out
    assert "updated components: VllmDecodeWorker, VllmPrefillWorker" in out, out

    code, out, err = await cli(env, "rollout", "history", f"dgd/{GRAPH}")
    assert code == 0, err
    rows = [line.split() for line in out.splitlines()[1:]]
    assert [r[0] for r in rows] == ["REVISION", "1", "2"], out
    assert [r[2] for r in rows[1:]] == ["first", "bump"], out
    code, out, _ = await cli(env, "rollout", "history", "--revision", "1", f"dgd/{GRAPH}")
    assert code == 0 and "image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1" in out, out

    # Undo: the previous revision's workers are written back into the graph's spec, and the
    # rollout back keeps the budgets, sampled every 100 ms.
    async with RolloutSampler(kube, env.namespace, GRAPH) as sampler:
        code, out, err = await cli(env, "rollout", "undo", f"dgd/{GRAPH}")
        assert code == 0 and "rolled back to revision 1" in out, (out, err)
        assert await workers_image(env) == {IMAGE}
        code, out, err = await cli(env, "rollout", "status", "-w", "--timeout", "120",
                                   f"dgd/{GRAPH}")
        assert code == 0, (out, err)
    report = sampler.report()
    assert report.samples and not report.breaches and not report.violations, report
    assert report.min_capacity >= 1.0 - 1e-9 and report.max_generations <= 2, report
    assert report.ready_beside_old_pods == 0, report
    code, out, _ = await cli(env, "rollout", "history", f"dgd/{GRAPH}")
    assert [line.split()[:3] for line in out.splitlines()[2:]] == [
        ["2", rows[2][1], "bump"], ["3", rows[1][1], "first"]], out
    await env.wait_ready(GRAPH, seconds=60)
    obj = await env.get(DGD, GRAPH)
    assert obj["spec"]["services"]["VllmDecodeWorker"]["replicas"] == 2

    code, out, _ = await cli(env, "rollout", "undo", "--to-revision", "3", f"dgd/{GRAPH}")
    assert code == 0 and "skipped rollback" in out, out
    code, _, err = await cli(env, "rollout", "undo", "--to-revision", "9", f"dgd/{GRAPH}")
    assert code == 2 and "revision 9 not found" in err, err


async def test_rollout_status_exits_1_on_a_failed_rollout_and_undo_recovers(
        env: Env, operator: OperatorProcess) -> None:
    manifest = graph()
    manifest["metadata"]["annotations"] = {"nvidia.com/rollout-progress-deadline": "4s"}
    await env.k("apply", "-f", "-", stdin=json.dumps(manifest))
    await env.wait_ready(GRAPH, seconds=90)
    crash = {"spec": {"services": {w: {
        "extraPodMetadata": {"annotations": {"localcluster.dev/mode": "crashloop"}},
        "extraPodSpec": {"mainContainer": {"image": "example.com/broken:1"}}}
        for w in WORKERS}}}
    await env.k("patch", DGD, GRAPH, "--type=merge", "-p", json.dumps(crash))
    code, out, err = await cli(env, "rollout", "status", "-w", "--timeout", "120",
                               f"dgd/{GRAPH}")
    assert code == 1 and "rollout Failed" in out, (out, err)

    code, out, err = await cli(env, "rollout", "undo", f"dgd/{GRAPH}")
    assert code == 0 and "rolled back to revision 1" in out, (out, err)
    code, out, err = await cli(env, "rollout", "status", "-w", "--timeout", "120",
                               f"dgd/{GRAPH}")
    assert code == 0 and "rollout Completed" in out, (out, err)
    assert await workers_image(env) == {IMAGE}
