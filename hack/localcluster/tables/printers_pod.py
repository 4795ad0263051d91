"""The Pod printer: READY, STATUS and RESTARTS as kubectl computes them from container states."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .cells import as_dict, as_int, as_list, as_str, condition_true, is_deleting, named_row
from .columns import Col, Printer, Row, named_columns
from .time_format import human_duration, parse_time

Json = dict[str, Any]

__all__ = ["PRINTERS"]

_DOCS = {
    "pod.ip": "podIP address allocated to the pod. Routable at least within the cluster. Empty if "
    "not yet allocated.",
    "pod.node": "NodeName is a request to schedule this pod onto a specific node. If it is "
    "non-empty, the scheduler simply schedules this pod onto that node, assuming that it fits "
    "resource requirements.",
    "pod.nominated": "nominatedNodeName is set only when this pod preempts other pods on the node, "
    "but it cannot be scheduled right away as preemption victims receive their graceful "
    "termination periods. This field does not guarantee that the pod will be scheduled on this "
    "node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. "
    "Scheduler may also decide to give the resources on this node to a higher priority pod that "
    "is created after preemption. As a result, this field may be different than PodSpec.nodeName "
    "when the pod is scheduled.",
    "pod.gates": "If specified, all readiness gates will be evaluated for pod readiness. A pod is "
    "ready when all its containers are ready AND all conditions specified in the readiness gates "
    'have status equal to "True" More info: https://git.k8s.io/enhancements/keps/sig-network/'
    "580-pod-readiness-gates",
}

_COLUMNS = named_columns(
    Col("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
    Col("Status", "string", "The aggregate status of the containers in this pod."),
    Col(
        "Restarts",
        "string",
        "The number of times the containers in this pod have been restarted and when the last "
        "container in this pod has restarted.",
    ),
    after_age=(
        Col("IP", "string", _DOCS["pod.ip"], 1),
        Col("Node", "string", _DOCS["pod.node"], 1),
        Col("Nominated Node", "string", _DOCS["pod.nominated"], 1),
        Col("Readiness Gates", "string", _DOCS["pod.gates"], 1),
    ),
)


def _later(current: datetime | None, candidate: datetime | None) -> datetime | None:
    if candidate is not None and (current is None or current < candidate):
        return candidate
    return current


def _restartable(container: Any) -> bool:
    return isinstance(container, dict) and container.get("restartPolicy") == "Always"


def _terminated_reason(term: Json, prefix: str) -> str:
    if term.get("reason"):
        return prefix + as_str(term.get("reason"))
    if as_int(term.get("signal")) != 0:
        return f"{prefix}Signal:{as_int(term.get('signal'))}"
    return f"{prefix}ExitCode:{as_int(term.get('exitCode'))}"


def _completed_conditions(phase: str) -> list[Json] | None:
    """The Completed condition a finished pod's row carries."""
    messages = {"Succeeded": "The pod has completed successfully.", "Failed": "The pod failed."}
    if phase not in messages:
        return None
    return [{"type": "Completed", "status": "True", "reason": phase, "message": messages[phase]}]


def _readiness_gates(spec: Json, status: Json) -> str:
    gates = as_list(spec.get("readinessGates"))
    if not gates:
        return "<none>"
    true_count = 0
    for gate in gates:
        for cond in as_list(status.get("conditions")):
            if as_dict(cond).get("type") == as_dict(gate).get("conditionType"):
                if as_dict(cond).get("status") == "True":
                    true_count += 1
                break
    return f"{true_count}/{len(gates)}"


def _pod_ip(status: Json) -> str:
    pod_ips = as_list(status.get("podIPs"))
    if pod_ips:
        return as_str(as_dict(pod_ips[0]).get("ip"))
    return as_str(status.get("podIP")) if status.get("podIP") else ""


def _print_pod(pod: Json, now: datetime) -> Row:
    spec, status = as_dict(pod.get("spec")), as_dict(pod.get("status"))
    restarts = 0
    restartable_init_restarts = 0
    total = len(as_list(spec.get("containers")))
    ready = 0
    last_restart: datetime | None = None
    last_restartable_init_restart: datetime | None = None

    phase = as_str(status.get("phase"))
    reason = phase
    if status.get("reason"):
        reason = as_str(status.get("reason"))
    for cond in as_list(status.get("conditions")):
        c = as_dict(cond)
        if c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"

    init_specs = as_list(spec.get("initContainers"))
    init_by_name = {as_str(as_dict(c).get("name")): c for c in init_specs}
    total += sum(1 for c in init_specs if _restartable(c))

    initializing = False
    for i, raw in enumerate(as_list(status.get("initContainerStatuses"))):
        cs = as_dict(raw)
        restartable = _restartable(init_by_name.get(as_str(cs.get("name"))))
        restarts += as_int(cs.get("restartCount"))
        last_term = as_dict(cs.get("lastState")).get("terminated")
        if isinstance(last_term, dict):
            finished = parse_time(last_term.get("finishedAt"))
            last_restart = _later(last_restart, finished)
            if restartable:
                last_restartable_init_restart = _later(last_restartable_init_restart, finished)
        if restartable:
            restartable_init_restarts += as_int(cs.get("restartCount"))
        state = as_dict(cs.get("state"))
        term, waiting = state.get("terminated"), state.get("waiting")
        if isinstance(term, dict) and as_int(term.get("exitCode")) == 0:
            continue
        if restartable and cs.get("started") is True:
            if cs.get("ready") is True:
                ready += 1
            continue
        if isinstance(term, dict):
            reason = _terminated_reason(term, "Init:")
        elif (
            isinstance(waiting, dict)
            and waiting.get("reason")
            and waiting.get("reason") != "PodInitializing"
        ):
            reason = "Init:" + as_str(waiting.get("reason"))
        else:
            reason = f"Init:{i}/{len(init_specs)}"
        initializing = True
        break

    if not initializing or condition_true(status.get("conditions"), "Initialized"):
        restarts = restartable_init_restarts
        last_restart = last_restartable_init_restart
        has_running = False
        for raw in reversed(as_list(status.get("containerStatuses"))):
            cs = as_dict(raw)
            restarts += as_int(cs.get("restartCount"))
            last_term = as_dict(cs.get("lastState")).get("terminated")
            if isinstance(last_term, dict):
                last_restart = _later(last_restart, parse_time(last_term.get("finishedAt")))
            state = as_dict(cs.get("state"))
            term, waiting = state.get("terminated"), state.get("waiting")
            if isinstance(waiting, dict) and waiting.get("reason"):
                reason = as_str(waiting.get("reason"))
            elif isinstance(term, dict):
                reason = _terminated_reason(term, "")
            elif cs.get("ready") is True and isinstance(state.get("running"), dict):
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running" if condition_true(status.get("conditions"), "Ready") else "NotReady"

    if is_deleting(pod) and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif is_deleting(pod) and phase not in ("Failed", "Succeeded"):
        reason = "Terminating"

    restarts_text = str(restarts)
    if restarts != 0 and last_restart is not None:
        restarts_text = f"{restarts} ({human_duration(now - last_restart)} ago)"

    cells = named_row(
        pod,
        now,
        f"{ready}/{total}",
        reason,
        restarts_text,
        after_age=[
            _pod_ip(status) or "<none>",
            as_str(spec.get("nodeName")) or "<none>",
            as_str(status.get("nominatedNodeName")) or "<none>",
            _readiness_gates(spec, status),
        ],
    )
    return cells, _completed_conditions(phase)


PRINTERS: dict[tuple[str, str], Printer] = {("", "Pod"): Printer(_COLUMNS, _print_pod)}
