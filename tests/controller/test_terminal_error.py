"""TerminalError through a running manager: handled once, counted, the backoff forgotten, not
retried until the object changes, or looked at again after its retry_after."""

from __future__ import annotations

import asyncio
import itertools
import time
from pathlib import Path

from harness import eventually, manager, running, widget

from controller.client import KubeClient
from controller.errors import TerminalError
from controller.manager import Manager
from controller.ratelimit import ItemExponentialFailureRateLimiter
from controller.reconcile import Request
from controller.resource import Resource


def sample(mgr: Manager, name: str, controller: str, **labels: str) -> float | None:
    return mgr.metrics.registry.get_sample_value(name, {"controller": controller, **labels})


class Validator:
    """A reconciler object, registered by its bound method: fails twice transiently, then
    terminally for as long as the widget's spec says `valid: false`."""

    def __init__(self, mgr: Manager, widgets: Resource) -> None:
        self.mgr = mgr
        self.widgets = widgets
        self.attempts = 0

    async def reconcile(self, request: Request) -> None:
        self.attempts += 1
        if self.attempts <= 2:
            raise RuntimeError("transient")
        obj = await self.mgr.cache.get(self.widgets, request.namespace, request.name)
        if not obj["spec"].get("valid"):
            raise TerminalError("spec.valid must be true", reason="InvalidSpec")


async def test_terminal_error_is_not_retried_until_the_object_changes(
        kubeconfig: Path, client: KubeClient, widgets: Resource) -> None:
    mgr = await manager(kubeconfig)
    validator = Validator(mgr, widgets)
    controller = mgr.add_controller("validator", validator.reconcile, for_=widgets,
                                    rate_limiter=ItemExponentialFailureRateLimiter(0.01, 1.0))
    key = Request("default", "w")
    await client.create(widgets, widget("w", valid=False))
    async with running(mgr):
        await eventually(lambda: validator.attempts == 3)
        await asyncio.sleep(0.3)
        assert validator.attempts == 3, "a terminal error is not retried"
        assert controller.queue.num_requeues(key) == 0, "the backoff was forgotten"
        assert sample(mgr, "controller_runtime_terminal_reconcile_errors_total",
                      "validator") == 1
        assert sample(mgr, "controller_runtime_reconcile_errors_total", "validator") == 3
        assert sample(mgr, "controller_runtime_reconcile_total", "validator",
                      result="error") == 3
        assert mgr.metrics.registry.get_sample_value("workqueue_retries_total",
                                                     {"name": "validator"}) == 2

        # A change to the object is what brings it back.
        await client.patch(widgets, "default", "w", {"spec": {"note": "still invalid"}})
        await eventually(lambda: validator.attempts == 4)
        await client.patch(widgets, "default", "w", {"spec": {"valid": True}})
        await eventually(lambda: sample(mgr, "controller_runtime_reconcile_total", "validator",
                                        result="success") == 1)
        assert sample(mgr, "controller_runtime_terminal_reconcile_errors_total",
                      "validator") == 2


async def test_terminal_error_with_retry_after_looks_again(
        kubeconfig: Path, client: KubeClient, widgets: Resource) -> None:
    mgr = await manager(kubeconfig)
    attempts: list[float] = []

    async def reconcile(request: Request) -> None:
        attempts.append(time.monotonic())
        if len(attempts) <= 2:
            raise TerminalError("waiting for something unwatched", reason="Waiting",
                                retry_after=0.15)

    controller = mgr.add_controller("patient", reconcile, for_=widgets)
    await client.create(widgets, widget("p"))
    async with running(mgr):
        await eventually(lambda: len(attempts) == 3)
        await asyncio.sleep(0.3)
        assert len(attempts) == 3, "success ends the looking"
        assert all(gap >= 0.15 * 0.9 for gap in
                   (b - a for a, b in itertools.pairwise(attempts))), attempts
        assert controller.queue.num_requeues(Request("default", "p")) == 0
        assert sample(mgr, "controller_runtime_terminal_reconcile_errors_total",
                      "patient") == 2
        assert mgr.metrics.registry.get_sample_value("workqueue_retries_total",
                                                     {"name": "patient"}) == 0


def test_terminal_error_carries_message_reason_and_retry_after() -> None:
    err = TerminalError("spec.x is wrong", reason="InvalidSpec", retry_after=5.0)
    assert str(err) == err.message == "spec.x is wrong"
    assert (err.reason, err.retry_after) == ("InvalidSpec", 5.0)
    plain = TerminalError("no")
    assert (plain.reason, plain.retry_after) == ("", None)
