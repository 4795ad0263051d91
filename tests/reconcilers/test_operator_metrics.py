"""The operator's `dynamo_operator_*` metrics: reconciles by result and error type, admission
requests by result, and `--metrics-bind-address=0` serving no /metrics at all. (The series
after a graph's whole life through the operator process: e2e/test_metrics.py.)"""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest
from operator_harness import eventually, install_crds, setup_client
from prometheus_client import CollectorRegistry
from test_operator_process import free_port, http_get
from test_operator_startup import start_operator, stop

from controller.errors import ApiError, Conflict, TerminalError
from controller.reconcile import Request, Result
from controller.webhook import AdmissionRequest, AdmissionResponse
from hack.localcluster.server import LocalCluster
from reconcilers.operator.flags import parse_options
from reconcilers.operator.metrics import OperatorMetrics, error_type, instrument_webhook

KIND = "DynamoGraphDeployment"


def sample(registry: CollectorRegistry, name: str, **labels: str) -> float:
    return registry.get_sample_value(name, labels) or 0.0


@pytest.mark.parametrize("err,expected", [
    (ApiError.from_status(404, {"reason": "NotFound"}), "not_found"),
    (ApiError.from_status(409, {"reason": "AlreadyExists"}), "already_exists"),
    (ApiError.from_status(409, {"reason": "Conflict"}), "conflict"),
    (ApiError.from_status(422, {"reason": "Invalid"}), "validation"),
    (ApiError.from_status(400, {"reason": "BadRequest"}), "bad_request"),
    (ApiError.from_status(401, {}), "unauthorized"),
    (ApiError.from_status(403, {"reason": "Forbidden"}), "forbidden"),
    (ApiError.from_status(429, {}), "rate_limited"),
    (ApiError.from_status(500, {}), "internal"),
    (ApiError.from_status(503, {}), "unavailable"),
    (ApiError.from_status(504, {}), "server_timeout"),
    (TimeoutError(), "timeout"),
    (ConnectionRefusedError(), "unavailable"),
    (TerminalError("bad spec"), "validation"),
    (KeyError("bug"), "internal"),
])
def test_error_types(err: BaseException, expected: str) -> None:
    assert error_type(err) == expected


async def test_reconciles_are_counted_by_result_and_error_type() -> None:
    registry = CollectorRegistry()
    metrics = OperatorMetrics(registry)
    outcomes: list[BaseException | Result | None] = [
        None, Result(requeue_after=1.0), Conflict(409, "Conflict"),
        ApiError.from_status(403, {"reason": "Forbidden"})]

    async def reconcile(request: Request) -> Result | None:
        outcome = outcomes.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    measured = metrics.instrument(KIND, reconcile)
    request = Request("ns", "g")
    assert await measured(request) is None
    assert await measured(request) == Result(requeue_after=1.0)
    with pytest.raises(Conflict):
        await measured(request)
    with pytest.raises(ApiError):
        await measured(request)

    def total(result: str) -> float:
        return sample(registry, "dynamo_operator_reconcile_total", resource_type=KIND,
                      namespace="ns", result=result)

    assert (total("success"), total("requeue"), total("error")) == (1, 2, 1)
    assert sample(registry, "dynamo_operator_reconcile_errors_total", resource_type=KIND,
                  namespace="ns", error_type="forbidden") == 1
    assert sample(registry, "dynamo_operator_reconcile_errors_total", resource_type=KIND,
                  namespace="ns", error_type="conflict") == 1
    assert sample(registry, "dynamo_operator_reconcile_duration_seconds_count",
                  resource_type=KIND, namespace="ns", result="success") == 1


async def test_admission_requests_are_counted_by_result() -> None:
    registry = CollectorRegistry()
    metrics = OperatorMetrics(registry)

    async def handler(request: AdmissionRequest) -> AdmissionResponse:
        if request.name == "boom":
            raise RuntimeError("handler bug")
        return AdmissionResponse(allowed=request.name == "good")

    measured = instrument_webhook(metrics, KIND, handler)

    def request(name: str) -> AdmissionRequest:
        return AdmissionRequest(uid="u", operation="CREATE", resource="dynamographdeployments",
                                subresource="", name=name, namespace="ns", username="me",
                                groups=(), object=None, old_object=None, dry_run=False, raw={})

    assert (await measured(request("good"))).allowed
    assert not (await measured(request("bad"))).allowed
    with pytest.raises(RuntimeError):
        await measured(request("boom"))
    labels = {"resource_type": KIND, "operation": "CREATE"}
    assert sample(registry, "dynamo_operator_webhook_requests_total", result="allowed",
                  **labels) == 1
    assert sample(registry, "dynamo_operator_webhook_requests_total", result="denied",
                  **labels) == 2
    assert sample(registry, "dynamo_operator_webhook_denials_total", **labels) == 2
    assert sample(registry, "dynamo_operator_webhook_duration_seconds_count", **labels) == 3


def test_metrics_bind_address_zero_is_off() -> None:
    off = parse_options(["--leader-elect=false", "--metrics-bind-address=0"])
    assert off.metrics_address is None
    address = parse_options(["--leader-elect=false", "--metrics-bind-address=:0"]).metrics_address
    assert address is not None and address.port == 0


async def test_process_without_metrics_serves_probes_only(cluster: LocalCluster,
                                                          kubeconfig: Path,
                                                          tmp_path: Path) -> None:
    kube = await setup_client(kubeconfig)
    await install_crds(kube)
    probes = free_port()
    log_path = tmp_path / "operator.log"
    proc = await start_operator(kubeconfig, log_path, probes, "--metrics-bind-address=0")
    try:
        async def ready() -> bool:
            assert proc.returncode is None, log_path.read_text()[-3000:]
            try:
                return (await http_get(probes, "/readyz"))[0] == 200
            except aiohttp.ClientError:
                return False

        await eventually(ready, within=60)
        assert (await http_get(probes, "/metrics"))[0] == 404
    finally:
        await stop(proc)
        await kube.close()
