"""An upgrade from the previous CRDs (v1alpha1 only, stored as v1alpha1) with live graphs.

The dynamo-crds chart is installed with the CRDs as they were before v1beta1 existed
(`e2e/fixtures/crds-v1alpha1-only/`, written by the generator of commit 802a6d3) and the
operator of the commit before the storage flip (its product packages, `git archive`d from the
merge base with main) makes two graphs Ready. Then the operator stops, `helm upgrade` brings
the current CRDs (v1beta1 stored, webhook conversion), and the current operator starts with
its webhooks. It migrates the stored objects (`controller.storage_migration`), so
`status.storedVersions` ends as ["v1beta1"] for the DGD, DCD and DGDR; nothing is lost (each
graph and DCD reads the same in v1alpha1, and reads in v1beta1 too); no child is rewritten
(the Deployments and Services keep their resourceVersions, the pods their uids, the DCDs their
spec, generation and hash: their only write is the migration's, once); and the graphs stay
Ready. The old operator predates worker generations, so its worker DCDs keep their legacy
names (`<graph>-<component>`) through the upgrade; the disaggregated graph's next real change
(a worker's new image) then rolls them to a worker generation (issue #28 item 1): the worker
DCDs are `<graph>-<component>-<hash>` with the worker-hash label and the new image, and the
legacy DCDs, their Deployments and their pods are gone.

Needs helm (`make venv`) and git (the old operator's code); skipped on a real cluster.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_support import (
    EXAMPLES,
    ROOT,
    WORKER_HASH_LABEL,
    Env,
    OperatorProcess,
    component_selector,
    eventually,
    worker_dcd,
)
from old_operator_support import git, operator_tree

from backends.worker_generation import worker_dcd_name
from hack.localcluster.simulation import SimulationConfig
from hack.localcluster.testing import Kubectl, running_cluster
from hack.processes import free_port

HELM = Path(sys.executable).parent / "helm"
CRDS_CHART = ROOT / "deploy" / "helm" / "dynamo-crds"
OLD_CRDS = Path(__file__).parent / "fixtures" / "crds-v1alpha1-only"
GRAPHS = ("vllm-agg.yaml", "vllm-disagg.yaml")
MIGRATED = ("dynamographdeployments.nvidia.com", "dynamocomponentdeployments.nvidia.com",
            "dynamographdeploymentrequests.nvidia.com")
DGD_ALPHA = "dynamographdeployments.v1alpha1.nvidia.com"
DGD_BETA = "dynamographdeployments.v1beta1.nvidia.com"
DCD_ALPHA = "dynamocomponentdeployments.v1alpha1.nvidia.com"
DCD_BETA = "dynamocomponentdeployments.v1beta1.nvidia.com"
HASH = "nvidia.com/last-applied-hash"
#: The disaggregated graph, its rolled workers, and the image its next change gives one of them.
DISAGG = "vllm-disagg"
WORKERS = ("VllmDecodeWorker", "VllmPrefillWorker")
OLD_IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1"
NEW_IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0"

pytestmark = [
    pytest.mark.skipif(not HELM.exists(), reason="helm is not installed (make venv)"),
    pytest.mark.skipif(bool(os.environ.get("E2E_KUBECONFIG")),
                       reason="installs and upgrades cluster-wide CRDs: the local cluster only"),
]


def old_operator_tree(dest: Path) -> Path:
    """The product packages of the commit before the storage flip, unpacked into `dest`."""
    return operator_tree(_before_flip(), dest)


def _before_flip() -> str:
    """The newest commit whose DGD CRD still stores v1alpha1: the first parent of the flip,
    found among the commits that changed that CRD (parsing the CRD of every commit since the
    flip outgrew the test's time as history grew)."""
    path = "deploy/crds/nvidia.com_dynamographdeployments.yaml"
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    newer = "HEAD"
    for commit in git("rev-list", "-n", "400", "HEAD", "--", path).decode().split():
        versions = yaml.load(git("show", f"{commit}:{path}"), Loader=loader)["spec"]["versions"]
        if any(v["name"] == "v1alpha1" and v["storage"] for v in versions):
            if newer == "HEAD":
                return str(commit)
            return git("rev-parse", f"{newer}^").decode().strip()
        newer = commit
    raise AssertionError("no commit with v1alpha1 stored in the last 400 changes of the CRD")


async def helm(env: Env, *args: str) -> str:
    """The real helm against the test's cluster; its stdout."""
    tmp = env.tmp
    proc_env = {**os.environ, "KUBECONFIG": str(env.kubeconfig), "HOME": str(tmp),
                "XDG_CACHE_HOME": str(tmp / "helm-cache"),
                "XDG_CONFIG_HOME": str(tmp / "helm-config"),
                "XDG_DATA_HOME": str(tmp / "helm-data")}
    proc = await asyncio.create_subprocess_exec(
        str(HELM), *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env=proc_env)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    return out.decode()


def old_chart(tmp: Path) -> Path:
    """The dynamo-crds chart holding the previous CRDs."""
    chart = tmp / "dynamo-crds-old"
    shutil.copytree(CRDS_CHART, chart)
    for path in (chart / "files").glob("*.yaml"):
        path.unlink()
    for path in OLD_CRDS.glob("*.yaml"):
        shutil.copy(path, chart / "files" / path.name)
    return chart


@pytest.fixture
async def bare_env(tmp_path: Path) -> AsyncIterator[Env]:
    """A local cluster (simulation on) without our CRDs."""
    async with running_cluster(tmp_path, bookmark_interval=0.5,
                               simulation=SimulationConfig()) as cluster:
        yield Env(Kubectl(tmp_path / "kubeconfig", tmp_path / "kubectl-cache"), "default",
                  tmp_path / "kubeconfig", cluster, tmp_path)


async def objects(env: Env, resource: str) -> dict[str, dict[str, Any]]:
    listing = json.loads(await env.k("get", resource, "-o", "json"))
    return {o["metadata"]["name"]: o for o in listing["items"]}


async def stored_versions(env: Env) -> dict[str, list[str]]:
    return {name: json.loads(await env.k("get", "crd", name, "-o", "json"))["status"]
            ["storedVersions"] for name in MIGRATED}


def children(snapshot: dict[str, dict[str, Any]]) -> dict[str, str]:
    return {name: obj["metadata"]["resourceVersion"] for name, obj in snapshot.items()}


def without_status_and_rv(obj: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in obj["metadata"].items()
            if k not in ("resourceVersion", "managedFields")}
    return {**{k: v for k, v in obj.items() if k != "status"}, "metadata": meta}


async def rolls_legacy_workers_to_a_generation(env: Env) -> None:
    """The disaggregated graph's legacy worker DCDs (adopted as they are) roll to a worker
    generation on a worker's new image: afterwards each worker has one DCD
    `<graph>-<component>-<hash>` with the worker-hash label (`worker_dcd`), the decode
    worker's with the new image and the prefill worker's with its old one (the hash covers
    every worker, so both roll), and the legacy DCDs, their Deployments and pods are gone."""
    legacy = {w: worker_dcd_name(DISAGG, w, "") for w in WORKERS}
    assert set(legacy.values()) <= set(await objects(env, DCD_ALPHA)), "no legacy worker DCD"
    old_deployments: set[str] = set()
    old_pods: set[str] = set()
    for service in WORKERS:
        selector = component_selector(DISAGG, service)
        old_deployments |= {d["metadata"]["name"] for d in
                            (await env.get("deployments", selector=selector))["items"]}
        pods = (await env.get("pods", selector=selector))["items"]
        assert all(WORKER_HASH_LABEL not in (p["metadata"].get("labels") or {})
                   for p in pods), "the old operator's pods carry a worker hash"
        old_pods |= {p["metadata"]["uid"] for p in pods}
    assert old_deployments == set(legacy.values()) and len(old_pods) == len(WORKERS)

    patch = {"spec": {"services": {WORKERS[0]: {
        "extraPodSpec": {"mainContainer": {"image": NEW_IMAGE}}}}}}
    await env.k("patch", DGD_ALPHA, DISAGG, "--type=merge", "-p", json.dumps(patch))
    observed: dict[str, Any] = {}

    async def completed() -> bool:
        nonlocal observed
        graph = json.loads(await env.k("get", DGD_ALPHA, DISAGG, "-o", "json"))
        observed = graph.get("status") or {}
        return (observed.get("observedGeneration") == graph["metadata"]["generation"]
                and (observed.get("rollingUpdate") or {}).get("phase") == "Completed")
    try:
        await eventually(completed, within=120, what="the rollout from the legacy workers")
    except AssertionError as err:
        raise AssertionError(f"{err}; status: {observed}") from None

    dcds = await objects(env, DCD_ALPHA)
    for service, image in zip(WORKERS, (NEW_IMAGE, OLD_IMAGE), strict=True):
        name = await worker_dcd(env, DISAGG, service, within=60)
        assert name.startswith(legacy[service] + "-"), name
        dcd = dcds.get(name) or json.loads(await env.k("get", DCD_ALPHA, name, "-o", "json"))
        assert dcd["spec"]["extraPodSpec"]["mainContainer"]["image"] == image, (name, image)

    async def legacy_gone() -> bool:
        dcd_names = set(await objects(env, DCD_ALPHA))
        deployments = set(await objects(env, "deployments"))
        uids = {p["metadata"]["uid"] for p in (await objects(env, "pods")).values()}
        return (not dcd_names & set(legacy.values()) and not deployments & old_deployments
                and not uids & old_pods)
    await eventually(legacy_gone, within=60, what="the legacy DCDs, Deployments and pods gone")
    await env.k("wait", "--for=condition=Ready", f"{DGD_ALPHA}/{DISAGG}", "--timeout=60s")


async def test_an_upgrade_migrates_storage_and_rewrites_no_child(bare_env: Env) -> None:
    env = bare_env
    await helm(env, "install", "dynamo-crds", str(old_chart(env.tmp)), "--wait")
    await env.k("wait", "--for=condition=Established", "--timeout=30s", "crd", "--all")
    assert all(v == ["v1alpha1"] for v in (await stored_versions(env)).values())

    # The previous operator makes the graphs Ready.
    old_tree = old_operator_tree(env.tmp / "old-operator")
    old_log = env.tmp / "old-operator.log"
    with old_log.open("ab") as log:
        old = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "reconcilers.operator", "--kubeconfig", str(env.kubeconfig),
            "--leader-elect=false", "--health-probe-bind-address", f"127.0.0.1:{free_port()}",
            "--metrics-bind-address", "0", "--kube-api-qps", "0", "--log-format", "json",
            stdin=asyncio.subprocess.DEVNULL, stdout=log, stderr=log, cwd=old_tree,
            env={**{k: v for k, v in os.environ.items() if k != "KUBECONFIG"},
                 "PYTHONPATH": str(old_tree), "POD_NAME": "old"})
    new: OperatorProcess | None = None
    try:
        for name in GRAPHS:
            await env.k("apply", "-f", str(EXAMPLES / name))
        for graph in ("vllm-agg", "vllm-disagg"):
            await env.k("wait", "--for=condition=Ready", f"dgd/{graph}", "--timeout=120s")
        # Everything settled: the old operator's last writes are in.
        await asyncio.sleep(2)
        old.terminate()
        await asyncio.wait_for(old.wait(), 30)

        graphs_before = await objects(env, DGD_ALPHA)
        dcds_before = await objects(env, DCD_ALPHA)
        deployments_before = children(await objects(env, "deployments"))
        services_before = children(await objects(env, "services"))
        pods_before = {n: p["metadata"]["uid"] for n, p in (await objects(env, "pods")).items()}
        assert len(dcds_before) >= 4 and deployments_before and pods_before

        # The upgrade: the current CRDs, then the current operator with its webhooks.
        await helm(env, "upgrade", "dynamo-crds", str(CRDS_CHART), "--wait")
        assert (await stored_versions(env))[MIGRATED[0]] == ["v1alpha1", "v1beta1"]
        port = free_port()
        new = OperatorProcess(env.kubeconfig, env.namespace, env.tmp / "new-operator.log",
                              "new", ["--enable-webhooks", "--webhook-port", str(port),
                                      "--webhook-url", f"https://127.0.0.1:{port}"])
        await new.start()

        async def migrated() -> bool:
            return all(v == ["v1beta1"] for v in (await stored_versions(env)).values())
        await eventually(migrated, within=90, what="storedVersions trimmed to v1beta1")

        # Nothing lost: each graph and DCD reads as it did in v1alpha1, and in v1beta1 too.
        graphs_after = await objects(env, DGD_ALPHA)
        dcds_after = await objects(env, DCD_ALPHA)
        assert {n: without_status_and_rv(o) for n, o in graphs_after.items()} == {
            n: without_status_and_rv(o) for n, o in graphs_before.items()}
        assert {n: without_status_and_rv(o) for n, o in dcds_after.items()} == {
            n: without_status_and_rv(o) for n, o in dcds_before.items()}
        assert set(await objects(env, DGD_BETA)) == set(graphs_before)
        assert set(await objects(env, DCD_BETA)) == set(dcds_before)
        for name, dcd in dcds_after.items():
            before = dcds_before[name]["metadata"]
            assert dcd["metadata"]["generation"] == before["generation"]
            assert dcd["metadata"]["annotations"][HASH] == before["annotations"][HASH]

        # Give the new operator time to reconcile everything, then: no child rewritten.
        for graph in ("vllm-agg", "vllm-disagg"):
            await env.k("wait", "--for=condition=Ready", f"dgd/{graph}", "--timeout=60s")
        settled = children(await objects(env, DCD_ALPHA))
        await asyncio.sleep(3)
        assert children(await objects(env, DCD_ALPHA)) == settled, "a DCD was rewritten"
        assert children(await objects(env, "deployments")) == deployments_before
        assert children(await objects(env, "services")) == services_before
        assert {n: p["metadata"]["uid"] for n, p in (await objects(env, "pods")).items()} \
            == pods_before
        assert new.running, new.tail()

        # The next real change to the workers rolls the legacy DCDs to a worker generation.
        await rolls_legacy_workers_to_a_generation(env)
        assert new.running, new.tail()
    finally:
        if old.returncode is None:
            old.kill()
            await old.wait()
        if new is not None:
            await new.kill(15)
            print(f"--- new operator log (tail) ---\n{new.tail()}")
        print(f"--- old operator log (tail) ---\n{old_log.read_text(errors='replace')[-3000:]}")
