"""Admission webhooks with the operator process (`--enable-webhooks --webhook-url`) and kubectl:
mistakes refused at apply and patch with the webhook's name and the field, adapter-owned
replicas, deprecation warnings, deletes never blocked, a request frozen once profiled, two
replicas with one killed, and a short-lived certificate rotated under traffic.

The operator runs as a ServiceAccount identity of its own (a token of the local cluster), so
that kubectl's admin user is someone else to the replica-ownership rule: these tests need the
local cluster (`needs_local`).
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import AsyncIterator

import pytest
from e2e_support import DGD, DGDR, DGDSA, Env, OperatorProcess, eventually, free_port
from webhooks_support import LONG_SERVICE, bad_graph, graph, serving

from hack.localcluster.server import LocalCluster
from hack.localcluster.users import service_account

WEBHOOK = "vdynamographdeployment.kb.io"
CONFIGURATION = "dynamo-operator-validating"


class Operators:
    """Operator processes serving webhooks on one shared port, as their own identity."""

    def __init__(self, env: Env, local: LocalCluster) -> None:
        self.env = env
        self.port = free_port()
        token = local.add_user(service_account(env.namespace, "dynamo-operator"))
        self.kubeconfig = local.write_kubeconfig(env.tmp / "operator-kubeconfig",
                                                 env.namespace, token)
        self.started: list[OperatorProcess] = []

    async def start(self, *extra: str) -> OperatorProcess:
        op = OperatorProcess(self.kubeconfig, self.env.namespace,
                             self.env.tmp / f"op{len(self.started)}.log",
                             f"op{len(self.started)}",
                             ["--enable-webhooks", "--webhook-port", str(self.port),
                              "--webhook-url", f"https://127.0.0.1:{self.port}", *extra])
        await op.start()
        self.started.append(op)
        return op

    async def stop(self) -> None:
        for op in self.started:
            await op.kill(signal.SIGTERM)
        for op in self.started:
            print(f"--- {op.name} log (tail) ---\n{op.tail()}")


@pytest.fixture
async def webhooks(env: Env, needs_local: LocalCluster) -> AsyncIterator[Operators]:
    ops = Operators(env, needs_local)
    try:
        yield ops
    finally:
        await ops.stop()


async def refused(env: Env, *args: str, stdin: str | None = None) -> str:
    """kubectl's error, which must come from a webhook."""
    code, err = await env.k_result(*args, stdin=stdin)
    assert code != 0 and "admission webhook" in err, err
    return err


async def test_mistakes_are_refused_at_apply_and_patch(env: Env, webhooks: Operators) -> None:
    await webhooks.start()
    await serving(env)
    err = await refused(env, "apply", "-f", "-", stdin=bad_graph("bad"))
    assert f'admission webhook "{WEBHOOK}" denied the request: ' in err
    assert f"spec.services.{LONG_SERVICE}" in err
    assert await env.get(DGD, "bad") is None

    await env.k("apply", "-f", "-", stdin=graph())
    err = await refused(env, "patch", DGD, "web", "--type", "merge",
                        "-p", '{"spec":{"backendFramework":"sglang"}}')
    assert "spec.backendFramework: is immutable" in err
    dgd = await env.get(DGD, "web")
    assert dgd is not None and dgd["spec"]["backendFramework"] == "vllm"

    # A deprecated field: admitted, with kubectl's Warning line.
    result = await env.kubectl.run("-n", env.namespace, "apply", "-f", "-",
                                   stdin=graph("old", dynamoNamespace="legacy"))
    assert result.code == 0, result.stderr
    assert "Warning: spec.services.Frontend.dynamoNamespace: deprecated" in result.stderr
    config = await env.get("validatingwebhookconfiguration", CONFIGURATION)
    assert config is not None
    assert all(w["clientConfig"]["caBundle"] for w in config["webhooks"])


async def test_v1beta1_mistakes_name_the_fields_as_written(env: Env,
                                                          webhooks: Operators) -> None:
    """The operator registers both versions: a v1beta1 graph reaches it as written, and its
    errors name v1beta1's fields in v1beta1's words, its own shape rules included."""
    await webhooks.start()
    await serving(env)
    config = await env.get("validatingwebhookconfiguration", CONFIGURATION)
    assert config is not None
    assert {tuple(w["rules"][0]["apiVersions"]) for w in config["webhooks"]} == {
        ("v1alpha1", "v1beta1")}
    beta = json.loads(graph("beta"))
    beta["apiVersion"] = "nvidia.com/v1beta1"
    service = beta["spec"].pop("services")["Frontend"]
    image = service["extraPodSpec"]["mainContainer"]["image"]
    component = {"type": "frontend", "replicas": 1, "podTemplate": {"spec": {
        "containers": [{"name": "main", "image": image}]}}}
    beta["spec"]["components"] = [{"name": "Frontend", **component},
                                  {"name": "frontend", **component}]
    err = await refused(env, "apply", "-f", "-", stdin=json.dumps(beta))
    assert f'admission webhook "{WEBHOOK}" denied the request: spec.components[1].name: ' \
           'Duplicate value: "frontend"' in err, err
    beta["spec"]["components"] = [{"name": LONG_SERVICE, **component}]
    err = await refused(env, "apply", "-f", "-", stdin=json.dumps(beta))
    # In v1beta1's words (components), as the v1alpha1 request's error is in its own.
    assert "denied the request: spec.components[0].name: graph and component names give" in err


async def test_adapter_owned_replicas_and_deletes(env: Env, webhooks: Operators) -> None:
    await webhooks.start()
    await serving(env)
    await env.k("apply", "-f", "-", stdin=graph(scalingAdapter={"enabled": True}))
    await eventually(lambda: env.get(DGDSA, "web-frontend"), what="the adapter")
    err = await refused(env, "patch", DGD, "web", "--type", "merge", "-p",
                        '{"spec":{"services":{"Frontend":{"replicas":3}}}}')
    assert "spec.services.Frontend.replicas: cannot be changed directly" in err

    await env.k("scale", DGDSA, "web-frontend", "--replicas=2")

    async def scaled() -> bool:
        dgd = await env.get(DGD, "web")
        return dgd is not None and dgd["spec"]["services"]["Frontend"]["replicas"] == 2

    await eventually(scaled, what="the operator writing the adapter's replicas")

    dgd = await env.get(DGD, "web")
    # No finalizer on a graph (issue 20): garbage collection does the cleanup.
    assert dgd is not None and not dgd["metadata"].get("finalizers")
    await env.k("delete", DGD, "web", "--wait=true", "--timeout=30s")
    assert await env.get(DGD, "web") is None


async def test_two_replicas_one_killed_admission_goes_on(env: Env,
                                                        webhooks: Operators) -> None:
    first = await webhooks.start()
    await serving(env)
    second = await webhooks.start()
    # The second one listens too (same port) before the first dies; under load its start
    # takes seconds, so its own word is awaited rather than a fixed pause.
    await eventually(lambda: "webhook server listening" in second.tail(100_000),
                     within=60, what="the second replica listening")
    await first.kill(signal.SIGKILL)
    for i in range(6):
        err = await refused(env, "apply", "-f", "-", stdin=bad_graph(f"bad{i}"))
        assert "connection refused" not in err


async def test_a_short_lived_certificate_rotates_under_traffic(env: Env,
                                                               webhooks: Operators) -> None:
    await webhooks.start("--webhook-cert-validity", "3s")
    await serving(env)
    secret = await env.get("secret", "dynamo-operator-webhook-server-cert")
    assert secret is not None
    first = secret["data"]["tls.crt"]
    for i in range(16):  # about 8 s: more than two lifetimes of the certificate
        err = await refused(env, "apply", "-f", "-", stdin=bad_graph(f"bad{i}"))
        assert "x509" not in err
        await asyncio.sleep(0.5)
    secret = await env.get("secret", "dynamo-operator-webhook-server-cert")
    assert secret is not None and secret["data"]["tls.crt"] != first


async def test_a_request_is_frozen_once_profiling_started(env: Env,
                                                          webhooks: Operators) -> None:
    await webhooks.start("--dgdr-profiling-cluster-role-name", "dynamo-dgdr-profiling")
    await serving(env)
    await env.k("apply", "-f", "-", stdin=json.dumps({
        "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": "req"},
        "spec": {"model": "Qwen/Qwen3-0.6B", "backend": "vllm", "profilingConfig": {
            "profilerImage": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.8.0",
            "config": {"sla": {"ttft": 200, "itl": 20}}}}}))
    await env.k("wait", "--for=jsonpath={.status.state}=Ready", f"{DGDR}/req", "--timeout=60s")
    err = await refused(env, "patch", DGDR, "req", "--type", "merge",
                        "-p", '{"spec":{"model":"Qwen/Qwen3-8B"}}')
    assert ('admission webhook "vdynamographdeploymentrequest.kb.io" denied the request: '
            "spec: is immutable once profiling has started") in err
    # Metadata is not frozen.
    await env.k("label", DGDR, "req", "team=a")
