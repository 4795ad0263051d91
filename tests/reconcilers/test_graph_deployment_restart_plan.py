"""The restart decision (graph_restart) as a pure function: phases, tokens, fresh graphs, and
a cache that has not yet seen our own write."""

from __future__ import annotations

from api.v1alpha1 import Restart, RestartStrategy
from reconcilers.graph.restart import plan_restart

SERVICES = ["a", "b", "c"]


def seq(restart_id: str, order: list[str] | None = None) -> Restart:
    return Restart(id=restart_id, strategy=RestartStrategy(type="Sequential", order=order))


def par(restart_id: str) -> Restart:
    return Restart(id=restart_id, strategy=RestartStrategy(type="Parallel"))


def test_no_request_keeps_finished_and_drops_unfinished() -> None:
    done = {"observedID": "r1", "phase": "Completed"}
    plan = plan_restart(None, done, SERVICES, dict.fromkeys(SERVICES, "r1"), SERVICES)
    assert plan.status == done
    assert plan.tokens == dict.fromkeys(SERVICES, "r1")
    running = {"observedID": "r1", "phase": "Restarting", "inProgress": ["b"]}
    plan = plan_restart(None, running, SERVICES, {"a": "r1", "b": "r1", "c": None}, SERVICES)
    assert plan.status is None
    assert plan.tokens == {"a": "r1", "b": "r1", "c": None}


def test_fresh_graph_is_completed_at_once() -> None:
    plan = plan_restart(seq("r0"), None, SERVICES, {}, [])
    assert plan.status == {"observedID": "r0", "phase": "Completed"}
    assert plan.tokens == dict.fromkeys(SERVICES, "r0")
    assert plan.starts_new_request(None)


def test_sequential_steps_only_when_the_token_is_rolled_out() -> None:
    current = dict.fromkeys(SERVICES)
    plan = plan_restart(seq("r1"), None, SERVICES, current, SERVICES)
    assert plan.status == {"observedID": "r1", "phase": "Restarting", "inProgress": ["a"]}
    assert plan.tokens == {"a": "r1", "b": None, "c": None}
    # The cache still shows `a` ready without the token (our write not seen yet): no step.
    plan = plan_restart(seq("r1"), plan.status, SERVICES, current, SERVICES)
    assert plan.status is not None and plan.status["inProgress"] == ["a"]
    # Token on `a` but not ready yet: no step either.
    current = {"a": "r1", "b": None, "c": None}
    plan = plan_restart(seq("r1"), plan.status, SERVICES, current, ["b", "c"])
    assert plan.status is not None and plan.status["inProgress"] == ["a"]
    plan = plan_restart(seq("r1"), plan.status, SERVICES, current, SERVICES)
    assert plan.status == {"observedID": "r1", "phase": "Restarting", "inProgress": ["b"]}
    assert plan.tokens == {"a": "r1", "b": "r1", "c": None}


def test_sequential_order_and_completion() -> None:
    previous = {"observedID": "r1", "phase": "Restarting", "inProgress": ["a"]}
    current = dict.fromkeys(SERVICES, "r1")
    plan = plan_restart(seq("r1", ["c", "b", "a"]), previous, SERVICES, current, SERVICES)
    assert plan.status == {"observedID": "r1", "phase": "Completed"}
    plan = plan_restart(seq("r2", ["c", "b", "a"]), plan.status, SERVICES, current, SERVICES)
    assert plan.status == {"observedID": "r2", "phase": "Restarting", "inProgress": ["c"]}
    assert plan.tokens == {"a": "r1", "b": "r1", "c": "r2"}


def test_parallel_finishes_service_by_service() -> None:
    current = dict.fromkeys(SERVICES, "old")
    plan = plan_restart(par("p"), {"observedID": "old", "phase": "Completed"}, SERVICES,
                        current, SERVICES)
    assert plan.status == {"observedID": "p", "phase": "Restarting", "inProgress": SERVICES}
    assert plan.tokens == dict.fromkeys(SERVICES, "p")
    current = dict.fromkeys(SERVICES, "p")
    plan = plan_restart(par("p"), plan.status, SERVICES, current, ["a", "c"])
    assert plan.status == {"observedID": "p", "phase": "Restarting", "inProgress": ["b"]}
    plan = plan_restart(par("p"), plan.status, SERVICES, current, SERVICES)
    assert plan.status == {"observedID": "p", "phase": "Completed"}


def test_lost_status_write_is_not_taken_for_a_fresh_graph() -> None:
    # Children partly carry an older token: a new id is a real restart, not a fresh graph.
    plan = plan_restart(seq("r1"), None, SERVICES, {"a": None, "b": None}, SERVICES)
    assert plan.status is not None and plan.status["phase"] == "Restarting"
