"""The `dynamo-operator` process on the real Kubernetes 1.20 control plane, with hack.nodesim's
simulated GPU nodes and kubelets: the real scheduler, Deployment, ReplicaSet, garbage
collector and lease machinery do their part, and the operator must get along with them.

Our CRDs go in as `kubectl apply --validate=false`: kubectl 1.20's schema check does not know
`x-kubernetes-validations` (CEL, Kubernetes 1.25+; a server-side apply is refused for the same
reason), and the 1.20 server accepts the CRDs and silently drops those rules. These operators
serve no webhooks, while the DGD, DCD and DGDR are stored as v1beta1 and the tests write
v1alpha1 manifests (and kubectl, the garbage collector and the namespace controller prefer
v1beta1): the CRDs convert through the operator's conversion webhook served in-process by the
test bed (`hack.our_crds`), which the real API server on this host calls as it would the
operator's. `test_the_real_api_server_calls_the_webhooks` points them at the operator's own.

Each test has its own namespace, simulated nodes and operator processes (from
e2e/e2e_support.py, as the e2e tests start them).
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml

from backends.hub_graph import hub_graph
from backends.worker_generation import worker_dcd_name, worker_hash
from e2e.e2e_support import DCD, DGD, DGDSA, EXAMPLES, Env, OperatorProcess
from hack.localcluster.testing import Kubectl, eventually
from hack.nodesim import NodeSim, NodeSimConfig, PodDelays, nodes
from hack.processes import free_port
from hack.realcluster.testing import install_our_crds

pytestmark = pytest.mark.timeout(180, func_only=True)

Json = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
CRD_FILES = sorted((ROOT / "deploy" / "crds").glob("*.yaml"))
WITHIN = 90.0
WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")


@pytest.fixture
async def sim(real_kubeconfig: Path) -> AsyncIterator[NodeSim]:
    config = NodeSimConfig(nodes=nodes(3, 8, f"op-{uuid.uuid4().hex[:4]}"),
                           delays=PodDelays(ready_delay=0.5))
    async with NodeSim(real_kubeconfig, config) as running:
        yield running


# --- helpers -----------------------------------------------------------------------------

async def _ready(env: Env, graph: str) -> bool:
    obj = await env.get(DGD, graph)
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in ((obj or {}).get("status") or {}).get("conditions") or ())


async def _wait_ready(env: Env, graph: str) -> float:
    started = time.monotonic()
    await eventually(lambda: _ready(env, graph), within=WITHIN, interval=0.5,
                     what=f"{graph} Ready")
    return time.monotonic() - started


async def _apply_example(env: Env, name: str) -> None:
    await env.k("apply", "-f", str(EXAMPLES / f"{name}.yaml"))


def _ports() -> tuple[list[str], int, int]:
    """Flags giving the operator known probe and metrics ports (the later flag wins)."""
    probes, metrics = free_port(), free_port()
    return (["--health-probe-bind-address", f"127.0.0.1:{probes}",
             "--metrics-bind-address", f"127.0.0.1:{metrics}"], probes, metrics)


async def _http(port: int, path: str) -> tuple[int, str]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as session, \
            session.get(f"http://127.0.0.1:{port}{path}") as response:
        return response.status, await response.text()


async def _serving_ready(port: int) -> bool:
    try:
        return (await _http(port, "/readyz"))[0] == 200
    except (aiohttp.ClientError, OSError, TimeoutError):
        return False


def _log_events(op: OperatorProcess) -> list[Json]:
    events = []
    for line in op.log_path.read_text(errors="replace").splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return events


def _sum(metrics: str, name: str, **labels: str) -> float:
    total = 0.0
    for line in metrics.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        if all(f'{k}="{v}"' in line for k, v in labels.items()):
            total += float(line.rsplit(" ", 1)[1])
    return total


async def _writes(metrics_port: int) -> dict[str, float]:
    """The operator's write requests so far, by method, from its client's own counter."""
    text = (await _http(metrics_port, "/metrics"))[1]
    return {m: _sum(text, "rest_client_requests_total", method=m) for m in WRITE_METHODS}


# --- scenarios ---------------------------------------------------------------------------

async def test_a_disaggregated_graph_reaches_ready(
        env: Env, sim: NodeSim, operators: Callable[..., Awaitable[OperatorProcess]]) -> None:
    await operators()
    await _apply_example(env, "vllm-disagg")
    seconds = await _wait_ready(env, "vllm-disagg")
    # Real Deployments, their real ReplicaSets, pods bound by the real scheduler and run by
    # the simulated kubelets.
    deployments = (await env.get("deployments"))["items"]
    assert len(deployments) == 3, [d["metadata"]["name"] for d in deployments]
    for d in deployments:
        assert d["status"].get("readyReplicas") == d["spec"]["replicas"] == 1, d["status"]
        assert d["metadata"]["ownerReferences"][0]["kind"] == "DynamoComponentDeployment"
    replica_sets = (await env.get("replicasets"))["items"]
    assert {r["metadata"]["ownerReferences"][0]["name"] for r in replica_sets} == {
        d["metadata"]["name"] for d in deployments}
    pods = (await env.get("pods"))["items"]
    assert len(pods) == 3
    assert {p["spec"]["nodeName"] for p in pods} <= set(sim.node_names)
    gpus = sorted(int(c["resources"]["limits"].get("nvidia.com/gpu", 0))
                  for p in pods for c in p["spec"]["containers"]
                  if c.get("resources", {}).get("limits"))
    assert gpus.count(1) == 2, gpus  # the prefill and the decode worker, one GPU each
    print(f"vllm-disagg Ready in {seconds:.1f}s on the real control plane")


async def test_a_scaling_adapter_scales_through_the_real_scale_subresource(
        env: Env, sim: NodeSim, operators: Callable[..., Awaitable[OperatorProcess]]) -> None:
    graph, adapter = "vllm-scaling-adapter", "vllm-scaling-adapter-vllmdecodeworker"
    # The adapter keeps <graph>-<service>; the worker's DCD (and its Deployment) is named by
    # its generation, <graph>-<service>-<hash>.
    manifest = yaml.safe_load((EXAMPLES / f"{graph}.yaml").read_text())
    deployment_name = worker_dcd_name(graph, "VllmDecodeWorker", worker_hash(hub_graph(manifest)))
    await operators()
    await _apply_example(env, graph)
    await _wait_ready(env, graph)
    await eventually(lambda: env.get(DGDSA, adapter), within=WITHIN, interval=0.5,
                     what="the scaling adapter")
    started = time.monotonic()
    # kubectl scale goes through the real API server's scale subresource of our CRD.
    await env.k("scale", DGDSA, adapter, "--replicas=3")

    async def scaled() -> bool:
        deployment = await env.get("deployment", deployment_name)
        status = (deployment or {}).get("status") or {}
        return bool(deployment and deployment["spec"]["replicas"] == 3
                    and status.get("readyReplicas") == 3)

    await eventually(scaled, within=WITHIN, interval=0.5, what="3 ready decode workers")
    seconds = time.monotonic() - started
    scale = json.loads(await env.kubectl(
        "get", "--raw", f"/apis/nvidia.com/v1alpha1/namespaces/{env.namespace}/"
        f"dynamographdeploymentscalingadapters/{adapter}/scale"))
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 3, scale
    await eventually(lambda: _scale_status(env, adapter), within=WITHIN, interval=0.5,
                     what="the adapter's scale status at 3")
    await _wait_ready(env, graph)
    print(f"kubectl scale dgdsa to 3 -> 3 ready pods in {seconds:.1f}s")


async def _scale_status(env: Env, adapter: str) -> bool:
    scale = json.loads(await env.kubectl(
        "get", "--raw", f"/apis/nvidia.com/v1alpha1/namespaces/{env.namespace}/"
        f"dynamographdeploymentscalingadapters/{adapter}/scale"))
    return bool(scale.get("status", {}).get("replicas") == 3)


async def test_deleting_a_graph_cascades_through_the_garbage_collector(
        env: Env, sim: NodeSim, operators: Callable[..., Awaitable[OperatorProcess]]) -> None:
    flags, _, metrics = _ports()
    await operators("op", *flags)
    await _apply_example(env, "vllm-agg")
    await _wait_ready(env, "vllm-agg")
    graph_uid = (await env.get(DGD, "vllm-agg"))["metadata"]["uid"]
    components = (await env.get(DCD))["items"]
    assert components and all(c["metadata"]["ownerReferences"][0]["uid"] == graph_uid
                              for c in components)
    before = await _writes(metrics)
    started = time.monotonic()
    await env.k("delete", DGD, "vllm-agg", "--wait=false")

    async def all_gone() -> bool:
        for kind in (DCD, "deployments", "replicasets", "pods", "services"):
            if (await env.get(kind))["items"]:
                return False
        return await env.get(DGD, "vllm-agg") is None

    await eventually(all_gone, within=WITHIN, interval=0.5,
                     what="components, Deployments, ReplicaSets, pods and Services gone")
    seconds = time.monotonic() - started
    # The operator deleted none of it: the real garbage collector followed the owner
    # references (graph -> components -> Deployments -> ReplicaSets -> pods), and the
    # simulated kubelets ended the pods gracefully.
    after = await _writes(metrics)
    assert after["DELETE"] == before["DELETE"], (before, after)
    print(f"graph deleted, every dependent gone in {seconds:.1f}s")


async def _holder(env: Env) -> str:
    lease = await env.get("lease", "dynamo-operator-leader")
    return str(((lease or {}).get("spec") or {}).get("holderIdentity") or "")


async def test_leader_election_runs_on_real_leases(
        env: Env, sim: NodeSim, operators: Callable[..., Awaitable[OperatorProcess]]) -> None:
    first = await operators("op-a")
    await eventually(lambda: _holds(env, "op-a_"), within=WITHIN, interval=0.2,
                     what="op-a holding the lease")
    await operators("op-b")
    await _apply_example(env, "vllm-agg")
    await _wait_ready(env, "vllm-agg")
    assert (await _holder(env)).startswith("op-a_")
    await first.kill()  # SIGKILL: no release, op-b waits for the lease to expire
    killed = time.monotonic()
    await eventually(lambda: _holds(env, "op-b_"), within=WITHIN, interval=0.2,
                     what="op-b taking the lease over")
    took = time.monotonic() - killed
    lease = await env.get("lease", "dynamo-operator-leader")
    assert lease["spec"].get("leaseTransitions", 0) >= 1, lease["spec"]
    # The new leader reconciles: a spec edit reaches the Deployment.
    await env.k("patch", DGD, "vllm-agg", "--type=merge", "-p", json.dumps(
        {"spec": {"services": {"Frontend": {"replicas": 2}}}}))

    async def two_frontends() -> bool:
        deployments = (await env.get("deployments"))["items"]
        return any(d["metadata"]["name"].endswith("-frontend") and d["spec"]["replicas"] == 2
                   for d in deployments)

    await eventually(two_frontends, within=WITHIN, interval=0.5, what="2 frontends")
    print(f"op-b took the lease {took:.1f}s after op-a was killed (lease 3 s)")


async def _holds(env: Env, prefix: str) -> bool:
    return (await _holder(env)).startswith(prefix)


async def test_a_restarted_operator_makes_no_writes(
        env: Env, sim: NodeSim, operators: Callable[..., Awaitable[OperatorProcess]]) -> None:
    flags, _, metrics = _ports()
    first = await operators("op-1", *flags)
    await _apply_example(env, "vllm-disagg")
    await _wait_ready(env, "vllm-disagg")
    await asyncio.sleep(3)  # the last status writes land (the status pacer holds up to 2 s)
    # The counter counts: the first operator's creates, status writes and events.
    first_writes = await _writes(metrics)
    assert first_writes["POST"] >= 7 and first_writes["PUT"] + first_writes["PATCH"] >= 4, (
        first_writes)
    versions = await _versions(env)
    await first.kill(signal.SIGTERM)
    flags, probes, metrics = _ports()
    # Without leader election: lease renewals are the only writes an idle leader makes.
    await operators("op-2", "--leader-elect=false", *flags)
    await eventually(lambda: _serving_ready(probes), within=WITHIN, interval=0.2,
                     what="the restarted operator ready")

    async def reconciled_everything() -> bool:
        text = (await _http(metrics, "/metrics"))[1]
        graphs = _sum(text, "controller_runtime_reconcile_total",
                      controller="DynamoGraphDeployment")
        components = _sum(text, "controller_runtime_reconcile_total",
                          controller="DynamoComponentDeployment")
        return graphs >= 1 and components >= 3

    await eventually(reconciled_everything, within=WITHIN, interval=0.2,
                     what="the graph and its 3 components reconciled after the restart")
    await asyncio.sleep(3)  # anything the restart would write has been written by now
    writes = await _writes(metrics)
    text = (await _http(metrics, "/metrics"))[1]
    reads = _sum(text, "rest_client_requests_total", method="GET")
    assert sum(writes.values()) == 0, writes
    # The API server agrees: what only the operator writes kept its resourceVersion.
    assert await _versions(env) == versions
    assert await _ready(env, "vllm-disagg")
    print(f"first run: {int(sum(first_writes.values()))} writes; restart: {int(reads)} reads"
          " (discovery, lists and watches), 0 writes")


async def _versions(env: Env) -> dict[str, str]:
    """resourceVersions of what only the operator writes: the graph, its components and
    Services, and the Deployments' generation (their status is the controller-manager's)."""
    out = {}
    for kind in (DGD, DCD, "services"):
        for item in (await env.get(kind))["items"]:
            out[f"{kind}/{item['metadata']['name']}"] = item["metadata"]["resourceVersion"]
    for item in (await env.get("deployments"))["items"]:
        out[f"deployment/{item['metadata']['name']}"] = str(item["metadata"]["generation"])
    return out


async def test_missing_apis_are_named_once_and_the_operator_runs_on(
        env: Env, operators: Callable[..., Awaitable[OperatorProcess]]) -> None:
    versions = set((await env.kubectl("api-versions")).split())
    # What 1.20 serves instead: discovery.k8s.io/v1beta1, autoscaling/v2beta2, policy/v1beta1.
    assert {"discovery.k8s.io/v1beta1", "autoscaling/v2beta2", "policy/v1beta1"} <= versions
    assert not {"discovery.k8s.io/v1", "autoscaling/v2", "policy/v1"} & versions
    flags, probes, _ = _ports()
    op = await operators("op", *flags)
    await eventually(lambda: _serving_ready(probes), within=WITHIN, interval=0.2,
                     what="the operator ready")
    await asyncio.sleep(5)  # long enough for a retry loop to show
    assert op.running
    events = _log_events(op)
    missing = [e for e in events if e.get("event") ==
               "API not served by this cluster; controllers left out"]
    # The operator uses EndpointSlices (DynamoModel endpoints); HPAs and PDBs it never reads.
    assert [(e["api"], e["resource"], e["controllers"]) for e in missing] == [
        ("discovery.k8s.io/v1", "endpointslices", ["DynamoModel"])], missing
    assert "Kubernetes 1.21 or newer" in missing[0]["hint"]
    retries = [e for e in events if "endpointslices" in json.dumps(e) and e not in missing]
    assert retries == [], retries[:3]
    print(f"operator log: {missing[0]['event']}: {missing[0]['api']} {missing[0]['resource']}"
          f" ({missing[0]['hint']})")


WEBHOOK = "vdynamographdeployment.kb.io"
CONFIGURATION = "dynamo-operator-validating"
MUTATING_CONFIGURATION = "dynamo-operator-mutating"
LONG_SERVICE = "AServiceNameThatIsFarTooLongForGroveObjectNames"


async def test_the_real_api_server_calls_the_webhooks(
        env: Env, kubectl: Kubectl, sim: NodeSim,
        operators: Callable[..., Awaitable[OperatorProcess]]) -> None:
    """Admission and conversion webhooks served by the operator on this host (`--webhook-url`),
    called by kube-apiserver: a v1beta1 graph stored as v1alpha1 and read back in both, and a
    mistake refused with the operator's words."""
    docs = [yaml.safe_load(path.read_text()) for path in CRD_FILES]  # both versions served
    await kubectl("apply", "--validate=false", "-f", "-", stdin=yaml.safe_dump_all(docs))
    port = free_port()
    url = f"https://127.0.0.1:{port}"
    flags, _, metrics = _ports()
    op: OperatorProcess | None = None
    try:
        # Without leader election: lease renewals (every 0.5 s here) are writes too.
        op = await operators("op", "--enable-webhooks", "--webhook-port", str(port),
                             "--webhook-url", url, "--leader-elect=false", *flags)

        async def pointed() -> bool:
            crd = await env.get("crd", "dynamographdeployments.nvidia.com")
            config = crd["spec"]["conversion"].get("webhook", {}).get("clientConfig", {})
            vwc = await env.get("validatingwebhookconfiguration", CONFIGURATION)
            return (config.get("url") == f"{url}/convert" and bool(config.get("caBundle"))
                    and vwc is not None)

        await eventually(pointed, within=WITHIN, interval=0.5,
                         what="the CRD and the webhook configuration pointed at the operator")
        bad = json.dumps({
            "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
            "metadata": {"name": "bad"},
            "spec": {"backendFramework": "vllm", "services": {LONG_SERVICE: {
                "componentType": "frontend", "replicas": 1}}}})

        async def refused() -> str:
            code, err = await env.k_result("apply", "--dry-run=server", "-f", "-", stdin=bad)
            return err if code != 0 and "admission webhook" in err else ""

        err = await eventually(refused, within=WITHIN, interval=0.5, what="a refusal")
        assert f'admission webhook "{WEBHOOK}" denied the request: ' in err, err
        assert f"spec.services.{LONG_SERVICE}" in err, err
        # A v1beta1 graph is stored as it is, and read in v1alpha1 through the webhook.
        await env.k("apply", "-f", str(EXAMPLES / "v1beta1" / "vllm-agg.yaml"))
        await _wait_ready(env, "vllm-agg")
        beta = await env.get("dynamographdeployments.v1beta1.nvidia.com", "vllm-agg")
        alpha = await env.get(DGD, "vllm-agg")
        assert beta["apiVersion"] == "nvidia.com/v1beta1"
        assert alpha["apiVersion"] == "nvidia.com/v1alpha1" and alpha["spec"]["services"]
        # Settled, the keepers write nothing more (a 1.20 server drops fields it does not
        # know: a keeper comparing against them would rewrite forever).
        await asyncio.sleep(3)
        settled = await _writes(metrics)
        await asyncio.sleep(12)  # longer than the keepers' 10 s interval
        assert await _writes(metrics) == settled
    finally:
        # Nothing of this operator's outlives it: its webhook configurations (failure policy
        # Fail) and the CRDs' conversion pointing at it. Stopped first, so that its keepers
        # cannot write them back.
        if op is not None:
            await op.kill(signal.SIGTERM)
        await kubectl.run("delete", "validatingwebhookconfiguration", CONFIGURATION,
                          "--ignore-not-found")
        await kubectl.run("delete", "mutatingwebhookconfiguration", MUTATING_CONFIGURATION,
                          "--ignore-not-found")
        await install_our_crds(kubectl)
