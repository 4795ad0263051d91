"""Every log line of a reconcile says which controller, object and reconcile it belongs to;
lines logged outside a reconcile carry none of it."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import structlog
from harness import eventually, manager, running, widget
from structlog.contextvars import get_contextvars, merge_contextvars
from structlog.testing import capture_logs

from controller.client import KubeClient
from controller.errors import TerminalError
from controller.reconcile import Request
from controller.resource import CONFIG_MAPS, Resource

RECONCILE_KEYS = ("controller", "namespace", "name", "reconcile_id")
INSIDE = {"reconciling", "reconciled", "reconcile failed, not retrying until the object changes"}

log = structlog.get_logger("test.reconciler")


async def test_reconcile_lines_carry_controller_object_and_reconcile_id(
        kubeconfig: Path, client: KubeClient, widgets: Resource) -> None:
    with capture_logs(processors=[merge_contextvars]) as lines:
        mgr = await manager(kubeconfig)

        async def reconcile(request: Request) -> None:
            log.info("reconciling")
            await asyncio.sleep(0.01)  # let the other worker's reconcile interleave
            log.info("reconciled")
            if request.name == "bad":
                raise TerminalError("spec is wrong", reason="InvalidSpec")

        def mapper(obj: dict[str, Any]) -> list[Request]:
            log.info("mapped")  # runs on the informer's task, outside any reconcile
            return []

        mgr.add_controller("logged", reconcile, for_=widgets, max_concurrent_reconciles=2,
                           watches=[(CONFIG_MAPS, mapper)])
        for name in ("a", "b", "bad"):
            await client.create(widgets, widget(name))
        async with running(mgr):
            await eventually(lambda: {line.get("name") for line in lines
                                      if line["event"] == "reconciled"} == {"a", "b", "bad"})
            await client.patch(widgets, "default", "a", {"spec": {"n": 1}})
            await eventually(lambda: sum(line["event"] == "reconciled" and line["name"] == "a"
                                         for line in lines) == 2)
            await client.create(CONFIG_MAPS, {"metadata": {"name": "c", "namespace": "default"}})
            await eventually(lambda: any(line["event"] == "mapped" for line in lines))
        log.info("after")
        assert get_contextvars() == {}

    inside = [line for line in lines if line["event"] in INSIDE]
    for line in inside:
        assert all(line.get(k) for k in RECONCILE_KEYS), line
        assert line["controller"] == "logged" and line["namespace"] == "default"

    by_id: dict[str, list[MutableMapping[str, Any]]] = defaultdict(list)
    for line in inside:
        by_id[line["reconcile_id"]].append(line)
    assert len(by_id) == sum(line["event"] == "reconciling" for line in inside) >= 4
    for group in by_id.values():
        assert len({line["name"] for line in group}) == 1, "one reconcile, one object"
        assert [line["event"] for line in group][:2] == ["reconciling", "reconciled"]
    a_ids = {line["reconcile_id"] for line in inside if line["name"] == "a"}
    assert len(a_ids) == 2, "each reconcile of one object gets its own id"

    # The loop's own line for a terminal error: a warning, once, with no traceback.
    (terminal,) = [line for line in inside if line["log_level"] == "warning"]
    assert terminal["name"] == "bad"
    assert (terminal["message"], terminal["reason"]) == ("spec is wrong", "InvalidSpec")
    assert "exc_info" not in terminal

    outside = [line for line in lines if line["event"] not in INSIDE]
    assert {"mapped", "after", "starting workers"} <= {line["event"] for line in outside}
    for line in outside:
        assert "reconcile_id" not in line and "name" not in line, line


async def test_a_terminal_error_that_asks_for_a_later_look_says_so_and_gets_it(
        kubeconfig: Path, client: KubeClient, widgets: Resource) -> None:
    """A name taken by someone else's object: the line says the reconcile runs again after
    the delay, and it does, with no change to the object."""
    calls: list[float] = []
    with capture_logs(processors=[merge_contextvars]) as lines:
        mgr = await manager(kubeconfig)

        async def reconcile(request: Request) -> None:
            calls.append(asyncio.get_running_loop().time())
            raise TerminalError("name taken", reason="NotOwned", retry_after=0.2)

        mgr.add_controller("delayed", reconcile, for_=widgets)
        await client.create(widgets, widget("taken"))
        async with running(mgr):
            await eventually(lambda: len(calls) >= 2)
    assert calls[1] - calls[0] >= 0.15
    warned = [line for line in lines if line["log_level"] == "warning"]
    assert warned and all(line["event"] == "reconcile failed, retrying once after a delay or "
                          "when the object changes" and line["retry_after"] == 0.2
                          for line in warned)
    assert not any("not retrying" in line["event"] for line in lines)
