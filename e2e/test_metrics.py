"""The operator's metrics after a graph's life, as the original's page names them: the
`dynamo_operator_*` series (reconciles, objects by state, a request by its v1beta1 phase,
admission requests, denials by reason, and our graphs' GPUs) beside controller-runtime's
(`controller` the kind),
scraped from /metrics of the `dynamo-operator` process."""

from __future__ import annotations

import signal

import aiohttp
from e2e_support import DGD, Env, OperatorProcess, eventually, free_port
from metrics_support import scrape, value
from webhooks_support import bad_graph, serving

from hack.localcluster.server import LocalCluster
from hack.localcluster.users import service_account

GRAPH = "vllm-agg"
KIND = "DynamoGraphDeployment"
REQUEST = """apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeploymentRequest
metadata:
  name: counted
spec:
  model: Qwen/Qwen3-0.6B
  autoApply: false
"""
PHASES = ("Pending", "Profiling", "Ready", "Deploying", "Deployed", "Failed")


async def test_metrics_after_a_graph_lifecycle(env: Env, needs_local: LocalCluster) -> None:
    metrics, hook = free_port(), free_port()
    token = needs_local.add_user(service_account(env.namespace, "dynamo-operator"))
    kubeconfig = needs_local.write_kubeconfig(env.tmp / "operator-kubeconfig", env.namespace,
                                              token)
    op = OperatorProcess(kubeconfig, env.namespace, env.tmp / "op.log", "op", [
        "--metrics-bind-address", f"127.0.0.1:{metrics}",
        "--enable-webhooks", "--webhook-port", str(hook),
        "--webhook-url", f"https://127.0.0.1:{hook}"])
    await op.start()
    try:
        await serving(env)
        await env.apply_example(GRAPH)
        await env.wait_ready(GRAPH)
        ns = env.namespace

        async def counted() -> dict[tuple[str, frozenset[tuple[str, str]]], float] | None:
            samples = await scrape(metrics)
            ready = value(samples, "dynamo_operator_resources_total", resource_type=KIND,
                          namespace=ns, status="successful")
            return samples if ready == 1 else None

        samples = await eventually(counted, what="the graph counted as successful",
                                   tolerate=(aiohttp.ClientError,))
        assert value(samples, "dynamo_operator_reconcile_total", resource_type=KIND,
                     namespace=ns, result="success") >= 1
        assert value(samples, "dynamo_operator_reconcile_duration_seconds_count",
                     resource_type=KIND, namespace=ns) >= 1
        assert value(samples, "dynamo_operator_resources_total",
                     resource_type="DynamoComponentDeployment", namespace=ns) == 2
        # The GPUs the graph takes (ours): one worker on one GPU, requested and running,
        # and as the GPUS column of `kubectl get dgd -o wide`.
        assert value(samples, "dynamo_operator_graph_gpus", namespace=ns, graph=GRAPH,
                     state="requested") == 1
        assert value(samples, "dynamo_operator_graph_gpus", namespace=ns, graph=GRAPH,
                     state="running") == 1
        header, row = (await env.k("get", DGD, GRAPH, "-o", "wide")).splitlines()[:2]
        assert row[header.index("GPUS"):].strip() == "1"  # the last column; RESTART is blank
        # The admission webhook saw the graph's create; controller-runtime's names stay.
        assert value(samples, "dynamo_operator_webhook_requests_total", resource_type=KIND,
                     operation="CREATE", result="allowed") >= 1
        # controller-runtime's series name the controller by its kind, as the original's.
        assert value(samples, "controller_runtime_reconcile_total", controller=KIND,
                     result="success") >= 1
        assert value(samples, "controller_runtime_reconcile_time_seconds_count",
                     controller=KIND) >= 1
        assert value(samples, "controller_runtime_reconcile_total",
                     controller="dynamographdeployment") == 0

        # A refused graph is a denial.
        code, err = await env.k_result("apply", "-f", "-", stdin=bad_graph("refused"))
        assert code != 0 and "admission webhook" in err, err
        samples = await scrape(metrics)
        assert value(samples, "dynamo_operator_webhook_denials_total", resource_type=KIND,
                     operation="CREATE", reason="invalid_config") >= 1
        assert value(samples, "dynamo_operator_webhook_requests_total", resource_type=KIND,
                     result="denied") >= 1
        # Changing what may not change is denied for that reason; the user reads the rule.
        code, err = await env.k_result("patch", DGD, GRAPH, "--type=merge",
                                       "-p", '{"spec":{"backendFramework":"sglang"}}')
        assert code != 0 and "spec.backendFramework: is immutable" in err, err
        samples = await scrape(metrics)
        assert value(samples, "dynamo_operator_webhook_denials_total", resource_type=KIND,
                     operation="UPDATE", reason="immutable_field_changed") == 1

        # A request is counted by its v1beta1 phase.
        await env.k("apply", "-f", "-", stdin=REQUEST)

        async def phase_counted() -> str | None:
            obj = await env.get("dynamographdeploymentrequests.v1beta1.nvidia.com", "counted")
            phase = ((obj or {}).get("status") or {}).get("phase")
            counted = value(await scrape(metrics), "dynamo_operator_resources_total",
                            resource_type="DynamoGraphDeploymentRequest", namespace=ns,
                            status=str(phase))
            return phase if phase in PHASES and counted == 1 else None

        await eventually(phase_counted, what="the request counted by its phase")
        await env.k("delete", "dynamographdeploymentrequests.v1beta1.nvidia.com", "counted",
                    "--wait=true", "--timeout=60s")

        await env.k("delete", DGD, GRAPH, "--wait=true", "--timeout=60s")

        async def forgotten() -> bool:
            samples = await scrape(metrics)
            return value(samples, "dynamo_operator_resources_total", resource_type=KIND,
                         namespace=ns) == 0
        await eventually(forgotten, what="the deleted graph no longer counted")
    finally:
        await op.kill(signal.SIGTERM)
        print(f"--- operator log (tail) ---\n{op.tail()}")

