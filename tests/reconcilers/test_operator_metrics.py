"""The operator's `dynamo_operator_*` metrics: reconciles by result and error type, admission
requests by result and denials by reason, objects by the state each kind reports, and
`--metrics-bind-address=0` serving no /metrics at all. (Over HTTP from the operator process:
the controllers' names and the objects' states in tests/reconcilers/test_operator_process.py,
the series after a graph's whole life and its denials in e2e/test_metrics.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
from reconcilers.operator.metrics import (
    OperatorMetrics,
    denial_reason,
    error_type,
    instrument_webhook,
    resource_state,
)

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


async def test_admission_requests_are_counted_by_result_and_denials_by_reason() -> None:
    registry = CollectorRegistry()
    metrics = OperatorMetrics(registry)

    async def handler(request: AdmissionRequest) -> AdmissionResponse:
        if request.name == "boom":
            raise RuntimeError("handler bug")
        if request.name == "frozen":
            return AdmissionResponse.deny("spec.backendFramework: is immutable", 422, "Invalid",
                                          cause="immutable_field_changed")
        return AdmissionResponse(allowed=request.name == "good", code=422)

    measured = instrument_webhook(metrics, KIND, handler)

    def request(name: str, operation: str = "CREATE") -> AdmissionRequest:
        return AdmissionRequest(uid="u", operation=operation,
                                resource="dynamographdeployments", subresource="", name=name,
                                namespace="ns", username="me", groups=(), object=None,
                                old_object=None, dry_run=False, raw={})

    assert (await measured(request("good"))).allowed
    assert not (await measured(request("bad"))).allowed
    assert not (await measured(request("frozen", "UPDATE"))).allowed
    with pytest.raises(RuntimeError):
        await measured(request("boom"))
    create = {"resource_type": KIND, "operation": "CREATE"}
    update = {"resource_type": KIND, "operation": "UPDATE"}
    assert sample(registry, "dynamo_operator_webhook_requests_total", result="allowed",
                  **create) == 1
    assert sample(registry, "dynamo_operator_webhook_requests_total", result="denied",
                  **create) == 2
    assert sample(registry, "dynamo_operator_webhook_requests_total", result="denied",
                  **update) == 1
    # A reason per denial: the handler's, else its code's, `internal` for an exception.
    assert sample(registry, "dynamo_operator_webhook_denials_total", reason="invalid_config",
                  **create) == 1
    assert sample(registry, "dynamo_operator_webhook_denials_total", reason="internal",
                  **create) == 1
    assert sample(registry, "dynamo_operator_webhook_denials_total",
                  reason="immutable_field_changed", **update) == 1
    assert sample(registry, "dynamo_operator_webhook_duration_seconds_count", **create) == 3


def test_denial_reasons_without_a_cause_follow_the_code() -> None:
    def reason(code: int, cause: str = "") -> str:
        return denial_reason(AdmissionResponse.deny("no", code, cause=cause))

    assert [reason(400), reason(403), reason(422), reason(500)] == [
        "bad_request", "forbidden", "invalid_config", "internal"]
    assert reason(422, "immutable_field_changed") == "immutable_field_changed"


def _ready(kind: str, status: str) -> dict[str, Any]:
    return {"status": {"conditions": [{"type": kind, "status": status}]}}


@pytest.mark.parametrize("kind,obj,state", [
    # The graph: its status.state as written; the request: its v1beta1 phase.
    ("DynamoGraphDeployment", {"status": {"state": "successful"}}, "successful"),
    ("DynamoGraphDeployment", {"status": {"state": "pending"}}, "pending"),
    ("DynamoGraphDeployment", {"status": {"state": "failed"}}, "failed"),
    ("DynamoGraphDeployment", {}, "unknown"),
    *[("DynamoGraphDeploymentRequest", {"status": {"phase": phase}}, phase)
      for phase in ("Pending", "Profiling", "Ready", "Deploying", "Deployed", "Failed")],
    ("DynamoGraphDeploymentRequest", {"status": {"observedGeneration": 1}}, "unknown"),
    # The others: ready, not_ready, and unknown before any status.
    ("DynamoComponentDeployment", _ready("Available", "True"), "ready"),
    ("DynamoComponentDeployment", _ready("Available", "False"), "not_ready"),
    ("DynamoComponentDeployment", _ready("Ready", "True"), "not_ready"),
    ("DynamoComponentDeployment", {}, "unknown"),
    ("DynamoModel", {"status": {"totalEndpoints": 2, "readyEndpoints": 2}}, "ready"),
    ("DynamoModel", {"status": {"totalEndpoints": 2, "readyEndpoints": 1}}, "not_ready"),
    ("DynamoModel", {"status": {"totalEndpoints": 0, "readyEndpoints": 0}}, "not_ready"),
    ("DynamoModel", {"status": {}}, "unknown"),
    ("DynamoGraphDeploymentScalingAdapter",
     {"status": {"replicas": 2, "selector": "app=x"}}, "ready"),
    ("DynamoGraphDeploymentScalingAdapter",
     {"status": {"replicas": 0, "selector": "app=x"}}, "not_ready"),
    ("DynamoGraphDeploymentScalingAdapter", {"status": {"replicas": 1}}, "not_ready"),
])
def test_resource_states_as_the_original_derives_them(kind: str, obj: dict[str, Any],
                                                      state: str) -> None:
    assert resource_state(kind, obj) == state


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
            except (aiohttp.ClientError, TimeoutError):  # a loaded machine: not yet
                return False

        await eventually(ready, within=60)
        assert (await http_get(probes, "/metrics"))[0] == 404
    finally:
        await stop(proc)
        await kube.close()
