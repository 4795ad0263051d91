"""Server-side printing: the meta.k8s.io Table kube-apiserver returns for `as=Table` requests.

Three convertors exist in the real server and all three are reproduced here:

* custom resources use the apiextensions table convertor: a NAME column, then the version's
  additionalPrinterColumns evaluated with the kubectl JSONPath dialect (only the first result of
  a column is shown), or a single AGE column when the CRD declares none;
* built-in kinds use the printers of pkg/printers/internalversion, which the server always runs
  in wide mode, so priority-1 cells are present and clients drop them unless `-o wide`;
* kinds without a printer (Role, ClusterRole, CustomResourceDefinition, ...) get the default
  convertor: NAME and CREATED AT, the latter an RFC 3339 timestamp.

Ages and durations use apimachinery's HumanDuration ("5m10s", "3h12m", "2d3h", "4y12d").
"""

from __future__ import annotations

import copy
import functools
import ipaddress
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

from .errors import ApiError, bad_request
from .registry import PrinterColumn, ResourceType
from .selectors import LabelSelector, go_format_float, go_quote

Json = dict[str, Any]

__all__ = [
    "JSONPath",
    "JSONPathError",
    "check_include_object",
    "human_duration",
    "jsonpath",
    "parse_time",
    "to_table",
]

# --------------------------------------------------------------------------------------------
# Time
# --------------------------------------------------------------------------------------------

_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})"
)
_ZERO_TIME = datetime(1, 1, 1, tzinfo=UTC)


def _parse_rfc3339(value: str) -> datetime | None:
    """time.Parse(time.RFC3339, value); None where Go returns an error."""
    m = _RFC3339.fullmatch(value)
    if not m:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    fraction, zone = m.group(7), m.group(8)
    micro = int((fraction or "0")[:6].ljust(6, "0"))
    if zone == "Z":
        tz = UTC
    else:
        sign = 1 if zone[0] == "+" else -1
        hours, minutes = int(zone[1:3]), int(zone[4:6])
        if hours > 23 or minutes > 59:
            return None
        tz = timezone(sign * timedelta(hours=hours, minutes=minutes))
    try:
        return datetime(year, month, day, hour, minute, second, micro, tzinfo=tz)
    except ValueError:
        return None


def parse_time(value: Any) -> datetime | None:
    """An RFC 3339 timestamp; None for absent, unparsable or Go's zero time."""
    if not isinstance(value, str):
        return None
    parsed = _parse_rfc3339(value)
    if parsed is None or parsed == _ZERO_TIME:
        return None
    return parsed


def _nanoseconds(delta: timedelta) -> int:
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000


def human_duration(delta: timedelta) -> str:
    """apimachinery duration.HumanDuration: ~2-3 significant figures, "<invalid>" if negative."""
    ns = _nanoseconds(delta)
    seconds = int(ns / 1_000_000_000)
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 60 * 2:
        return f"{seconds}s"
    minutes = ns // 60_000_000_000
    if minutes < 10:
        s = (ns // 1_000_000_000) % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = ns // 3_600_000_000_000
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def _since(value: Any, now: datetime) -> str:
    """translateTimestampSince: "<unknown>" for a missing timestamp."""
    ts = parse_time(value)
    if ts is None:
        return "<unknown>"
    return human_duration(now - ts)


# --------------------------------------------------------------------------------------------
# JSONPath (the k8s.io/client-go/util/jsonpath dialect, with missing keys allowed)
# --------------------------------------------------------------------------------------------


class JSONPathError(ValueError):
    """The expression is not valid JSONPath."""


class _EvalError(Exception):
    """Evaluation failed the way client-go's FindResults fails (bad index, bad comparison)."""


@dataclass(frozen=True)
class _Field:
    name: str


@dataclass(frozen=True)
class _Wildcard:
    pass


@dataclass(frozen=True)
class _Recursive:
    pass


@dataclass(frozen=True)
class _Slice:
    start: int | None
    end: int | None
    step: int | None
    end_derived: bool = False


@dataclass(frozen=True)
class _Literal:
    value: Any


@dataclass(frozen=True)
class _Filter:
    left: tuple[Any, ...] | _Literal
    operator: str
    right: tuple[Any, ...] | _Literal | None


_Step = _Field | _Wildcard | _Recursive | _Slice | _Filter
_TERMINATORS = frozenset(".,[]$@{}") | frozenset(" \t\r\n")
_FILTER_OPERATORS = ("==", "!=", "<=", ">=", "<", ">")
_SLICE = re.compile(r"\s*(-?\d+)?\s*(?::\s*(-?\d+)?\s*(?::\s*(-?\d+)?\s*)?)?")


class _PathParser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def parse_steps(self, *, stop: str = "") -> tuple[_Step, ...]:
        steps: list[_Step] = []
        while self.pos < len(self.text) and self.text[self.pos] not in stop:
            ch = self.text[self.pos]
            if self.text.startswith("..", self.pos):
                self.pos += 1
                steps.append(_Recursive())
                if self.pos + 1 < len(self.text) and self.text[self.pos + 1] == "[":
                    self.pos += 1
                continue
            if ch == ".":
                self.pos += 1
                name = self._field_name()
                if name == "*":
                    steps.append(_Wildcard())
                elif name:
                    steps.append(_Field(name))
            elif ch == "[":
                steps.append(self._bracket())
            elif ch in " \t":
                self.pos += 1
            else:
                raise JSONPathError(f"unrecognized character in action: {go_quote(ch)}")
        return tuple(steps)

    def _field_name(self) -> str:
        out = []
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if ch == "\\" and self.pos + 1 < len(self.text):
                out.append(self.text[self.pos + 1])
                self.pos += 2
                continue
            if ch in _TERMINATORS:
                break
            out.append(ch)
            self.pos += 1
        return "".join(out)

    def _bracket(self) -> _Step:
        end = self._matching_bracket(self.pos)
        inner = self.text[self.pos + 1 : end].strip()
        self.pos = end + 1
        if inner.startswith("?"):
            body = inner[1:].strip()
            if not (body.startswith("(") and body.endswith(")")):
                raise JSONPathError(f"invalid filter: {inner}")
            return self._filter(body[1:-1].strip())
        if len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "'\"":
            return _Field(inner[1:-1])
        if inner == "*":
            return _Slice(None, None, None)
        m = _SLICE.fullmatch(inner)
        if not m or not inner:
            raise JSONPathError(f"invalid array index {inner}")
        start, end_text, step = m.groups()
        if ":" not in inner:
            if start is None:
                raise JSONPathError(f"invalid array index {inner}")
            return _Slice(int(start), int(start) + 1, None, end_derived=True)
        return _Slice(
            int(start) if start is not None else None,
            int(end_text) if end_text is not None else None,
            int(step) if step is not None else None,
        )

    def _matching_bracket(self, start: int) -> int:
        depth = 0
        quote = ""
        i = start
        while i < len(self.text):
            ch = self.text[i]
            if quote:
                if ch == "\\":
                    i += 2
                    continue
                if ch == quote:
                    quote = ""
            elif ch in "'\"":
                quote = ch
            elif ch == "[":
                depth += 1
            elif ch == "]":
                depth -= 1
                if depth == 0:
                    return i
            i += 1
        raise JSONPathError("unterminated array")

    def _filter(self, body: str) -> _Filter:
        split = _split_filter(body)
        if split is None:
            return _Filter(_operand(body), "exists", None)
        left, op, right = split
        return _Filter(_operand(left), op, _operand(right))


def _split_filter(body: str) -> tuple[str, str, str] | None:
    quote = ""
    i = 0
    while i < len(body):
        ch = body[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        else:
            for op in _FILTER_OPERATORS:
                if body.startswith(op, i):
                    return body[:i].strip(), op, body[i + len(op) :].strip()
        i += 1
    return None


def _operand(text: str) -> tuple[Any, ...] | _Literal:
    if text.startswith("@"):
        return _PathParser(text[1:]).parse_steps()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return _Literal(text[1:-1])
    if text in ("true", "false"):
        return _Literal(text == "true")
    if re.fullmatch(r"[+-]?\d+", text):
        return _Literal(int(text))
    if re.fullmatch(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?", text):
        return _Literal(float(text))
    raise JSONPathError(f"unrecognized filter operand {text}")


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    return "other"


def _compare(left: Any, op: str, right: Any) -> bool:
    # text/template's eq/lt on the decoded JSON values: mixed kinds are an error, not false.
    kl, kr = _kind(left), _kind(right)
    if kl != kr or kl == "other":
        raise _EvalError("incompatible types for comparison")
    if op == "==":
        return bool(left == right)
    if op == "!=":
        return bool(left != right)
    if kl == "bool":
        raise _EvalError("invalid type for comparison")
    if op == "<":
        return bool(left < right)
    if op == ">":
        return bool(left > right)
    if op == "<=":
        return bool(left <= right)
    return bool(left >= right)


def _descendants(value: Any) -> list[Any]:
    children: list[Any]
    if isinstance(value, dict):
        children = list(value.values())
    elif isinstance(value, list):
        children = list(value)
    else:
        return []
    if not children:
        return []
    out = [value]
    for child in children:
        out.extend(_descendants(child))
    return out


def _apply(step: _Step, values: list[Any]) -> list[Any]:
    out: list[Any] = []
    if isinstance(step, _Field):
        for v in values:
            if isinstance(v, dict) and step.name in v:
                out.append(v[step.name])
        return out
    if isinstance(step, _Wildcard):
        for v in values:
            if isinstance(v, dict):
                out.extend(v.values())
            elif isinstance(v, list):
                out.extend(v)
        return out
    if isinstance(step, _Recursive):
        for v in values:
            out.extend(_descendants(v))
        return out
    if isinstance(step, _Slice):
        for v in values:
            if v is None:
                continue
            if not isinstance(v, list):
                raise _EvalError("not array or slice")
            n = len(v)
            start = 0 if step.start is None else step.start
            if start < 0:
                start += n
            end = n if step.end is None else step.end
            if end < 0 or (end == 0 and step.end_derived):
                end += n
            if start == end:
                return out
            if start >= n or start < 0 or end > n or end < 0 or start > end:
                raise _EvalError("array index out of bounds")
            stride = 1
            if step.step is not None:
                if step.step <= 0:
                    raise _EvalError("step must be > 0")
                stride = step.step
            out.extend(v[start:end:stride])
        return out
    for v in values:
        if v is None:
            continue
        if not isinstance(v, list):
            raise _EvalError("not array or slice and cannot be filtered")
        for item in v:
            if _filter_passes(step, item):
                out.append(item)
    return out


def _side(operand: tuple[Any, ...] | _Literal, item: Any) -> list[Any]:
    if isinstance(operand, _Literal):
        return [operand.value]
    return _evaluate(operand, [item])


def _filter_passes(step: _Filter, item: Any) -> bool:
    lefts = _side(step.left, item)
    if step.operator == "exists":
        return bool(lefts)
    if not lefts:
        return False
    if len(lefts) > 1:
        raise _EvalError("can only compare one element at a time")
    assert step.right is not None
    rights = _side(step.right, item)
    if not rights:
        return False
    if len(rights) > 1:
        raise _EvalError("can only compare one element at a time")
    return _compare(lefts[0], step.operator, rights[0])


def _evaluate(steps: tuple[Any, ...], values: list[Any]) -> list[Any]:
    for step in steps:
        if not values:
            return []
        values = _apply(step, values)
    return values


class JSONPath:
    """A compiled printer-column path such as `.status.conditions[?(@.type=="Ready")].status`."""

    def __init__(self, expr: str) -> None:
        text = expr.strip()
        if text.startswith("{") and text.endswith("}"):
            text = text[1:-1].strip()
        if text.startswith("$"):
            text = text[1:]
        if text and text[0] not in ".[":
            raise JSONPathError(f"unrecognized identifier {text}")
        self.expr = expr
        self._steps = _PathParser(text).parse_steps()

    def find(self, obj: Any) -> list[Any]:
        """All matches, in document order; [] when nothing matches or evaluation fails."""
        try:
            return _evaluate(self._steps, [obj])
        except _EvalError:
            return []


@functools.lru_cache(maxsize=512)
def _compiled(expr: str) -> JSONPath:
    return JSONPath(expr)


def jsonpath(obj: Any, expr: str) -> list[Any]:
    """Evaluate a kubectl-dialect JSONPath against decoded JSON; JSONPathError if malformed."""
    return _compiled(expr).find(obj)


# --------------------------------------------------------------------------------------------
# Go-compatible text of JSON values (what client-go's PrintResults writes into string cells)
# --------------------------------------------------------------------------------------------


def _go_json_float(value: float) -> str:
    """encoding/json's float64 text: plain decimal, exponent form below 1e-6 or from 1e21."""
    if math.isnan(value) or math.isinf(value):
        return "null"
    if value == 0:
        return "0"
    sign, digit_tuple, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(str(d) for d in digit_tuple)
    point = len(digits) + exponent
    prefix = "-" if sign else ""
    if abs(value) < 1e-6 or abs(value) >= 1e21:
        exp = point - 1
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp)}"
    if point <= 0:
        return prefix + "0." + "0" * -point + digits
    if point >= len(digits):
        return prefix + digits + "0" * (point - len(digits))
    return prefix + digits[:point] + "." + digits[point:]


def _go_json(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_json_float(value)
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        for raw, escaped in (
            ("<", "\\u003c"),
            (">", "\\u003e"),
            ("&", "\\u0026"),
            ("\u2028", "\\u2028"),
            ("\u2029", "\\u2029"),
        ):
            text = text.replace(raw, escaped)
        return text
    if isinstance(value, list):
        return "[" + ",".join(_go_json(v) for v in value) + "]"
    if isinstance(value, dict):
        members = (f"{_go_json(str(k))}:{_go_json(value[k])}" for k in sorted(value))
        return "{" + ",".join(members) + "}"
    return _go_json(str(value))


def _print_value(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return _go_json(value)
    if value is None:
        return "<no value>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_format_float(value)
    return str(value)


# --------------------------------------------------------------------------------------------
# Column descriptions
# --------------------------------------------------------------------------------------------

NAME_DESCRIPTION = (
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name automatically. "
    "Name is primarily intended for creation idempotence and configuration definition. Cannot be "
    "updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names"
    "#names"
)
CREATION_TIMESTAMP_DESCRIPTION = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. "
    "It is not guaranteed to be set in happens-before order across separate operations. Clients "
    "may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the "
    "system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#metadata"
)
_CONTAINERS = "Names of each container in the template."
_IMAGES = "Images referenced by each container in the template."
_READY_PODS = "Number of the pod with ready state"
_SELECTOR_DOC = (
    "A label query over pods that should match the replica count. It must match the pod "
    "template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-"
    "objects/labels/#label-selectors"
)
# The descriptions below are the API field docs the printers cite (SwaggerDoc of the field).
_D = {
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
    "rs.desired": "Replicas is the number of desired replicas. This is a pointer to distinguish "
    "between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/"
    "concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller",
    "rs.current": "Replicas is the most recently observed number of replicas. More info: "
    "https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/"
    "#what-is-a-replicationcontroller",
    "rs.ready": "readyReplicas is the number of pods targeted by this ReplicaSet with a Ready "
    "Condition.",
    "deploy.updated": "Total number of non-terminated pods targeted by this deployment that have "
    "the desired template spec.",
    "deploy.available": "Total number of available pods (ready for at least minReadySeconds) "
    "targeted by this deployment.",
    "deploy.selector": "Label selector for pods. Existing ReplicaSets whose pods are selected by "
    "this will be the ones affected by this deployment.",
    "job.succeeded": "The number of pods which reached phase Succeeded. The value increases "
    "monotonically for a given spec. However, it may decrease in reaction to scale down of "
    "elastic indexed jobs.",
    "job.selector": "A label query over pods that should match the pod count. Normally, the system "
    "sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-"
    "with-objects/labels/#label-selectors",
    "ds.desired": "The total number of nodes that should be running the daemon pod (including "
    "nodes correctly running the daemon pod). More info: https://kubernetes.io/docs/concepts/"
    "workloads/controllers/daemonset/",
    "ds.current": "The number of nodes that are running at least 1 daemon pod and are supposed to "
    "run the daemon pod. More info: https://kubernetes.io/docs/concepts/workloads/controllers/"
    "daemonset/",
    "ds.ready": "numberReady is the number of nodes that should be running the daemon pod and have "
    "one or more of the daemon pod running with a Ready Condition.",
    "ds.updated": "The total number of nodes that are running updated daemon pod",
    "ds.available": "The number of nodes that should be running the daemon pod and have one or "
    "more of the daemon pod running and available (ready for at least spec.minReadySeconds)",
    "ds.nodeSelector": "NodeSelector is a selector which must be true for the pod to fit on a "
    "node. Selector which must match a node's labels for the pod to be scheduled on that node. "
    "More info: https://kubernetes.io/docs/concepts/configuration/assign-pod-node/",
    "svc.type": "type determines how the Service is exposed. Defaults to ClusterIP. Valid options "
    "are ExternalName, ClusterIP, NodePort, and LoadBalancer.",
    "svc.clusterIP": "clusterIP is the IP address of the service and is usually assigned randomly.",
    "svc.externalIPs": "externalIPs is a list of IP addresses for which nodes in the cluster will "
    "also accept traffic for this service.",
    "svc.ports": "The list of ports that are exposed by this service. More info: https://"
    "kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies",
    "svc.selector": "Route service traffic to pods with label keys and values matching this "
    "selector. More info: https://kubernetes.io/docs/concepts/services-networking/service/",
    "node.kubelet": "Kubelet Version reported by the node.",
    "node.addresses": "List of addresses reachable to the node. Queried from cloud provider, if "
    "available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses",
    "node.os": "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 "
    "(wheezy)).",
    "node.kernel": "Kernel Version reported by the node from 'uname -r' (e.g. "
    "3.16.0-0.bpo.4-amd64).",
    "node.runtime": "ContainerRuntime Version reported by the node through runtime remote API "
    "(e.g. containerd://1.4.2).",
    "event.last": "The time at which the most recent occurrence of this event was recorded.",
    "event.type": "Type of this event (Normal, Warning), new types could be added in the future",
    "event.reason": "This should be a short, machine understandable string that gives the reason "
    "for the transition into the object's current status.",
    "event.object": "The object that this event is about.",
    "event.fieldPath": "If referring to a piece of an object instead of an entire object, this "
    "string should contain a valid JSON/Go field access statement, such as "
    "desiredState.manifest.containers[2].",
    "event.source": "The component reporting this event. Should be a short machine understandable "
    "string.",
    "event.message": "A human-readable description of the status of this operation.",
    "event.first": "The time at which the event was first recorded. (Time of server receipt is in "
    "TypeMeta.)",
    "event.count": "The number of times this event has occurred.",
    "secret.type": "Used to facilitate programmatic handling of secret data.",
    "secret.data": "Data contains the secret data.",
    "sa.secrets": "Secrets is a list of the secrets in the same namespace that pods running using "
    "this ServiceAccount are allowed to use.",
    "cm.data": "Data contains the configuration data.",
    "pvc.phase": "phase represents the current phase of PersistentVolumeClaim.",
    "pvc.volume": "volumeName is the binding reference to the PersistentVolume backing this claim.",
    "pvc.capacity": "capacity represents the actual resources of the underlying volume.",
    "pvc.accessModes": "accessModes contains the actual access modes the volume backing the PVC "
    "has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1",
    "pvc.volumeMode": "volumeMode defines what type of volume is required by the claim. Value of "
    "Filesystem is implied when not included in claim spec.",
    "pv.capacity": "capacity is the description of the persistent volume's resources and capacity.",
    "pv.accessModes": "accessModes contains all ways the volume can be mounted.",
    "pv.reclaim": "persistentVolumeReclaimPolicy defines what happens to a persistent volume when "
    "released from its claim.",
    "pv.phase": "phase indicates if a volume is available, bound to a claim, or released by a "
    "claim.",
    "pv.claim": "claimRef is part of a bi-directional binding between PersistentVolume and "
    "PersistentVolumeClaim.",
    "pv.reason": "reason is a brief CamelCase string that describes any failure and is meant for "
    "machine parsing and tidy display in the CLI.",
    "pv.volumeMode": "volumeMode defines if a volume is intended to be used with a formatted "
    "filesystem or to remain in raw block state. Value of Filesystem is implied when not included "
    "in spec.",
    "endpoints.subsets": "The set of all endpoints is the union of all subsets.",
    "slice.addressType": "addressType specifies the type of address carried by this EndpointSlice.",
    "slice.ports": "ports specifies the list of network ports exposed by each endpoint in this "
    "slice.",
    "slice.endpoints": "endpoints is a list of unique endpoints in this slice.",
    "lease.holder": "holderIdentity contains the identity of the holder of a current lease.",
    "hpa.reference": "scaleTargetRef points to the target resource to scale, and is used to the "
    "pods for which metrics should be collected, as well as to actually change the replica count.",
    "hpa.metrics": "metrics contains the specifications for which to use to calculate the desired "
    "replica count (the maximum replica count across all metrics will be used).",
    "hpa.min": "minReplicas is the lower limit for the number of replicas to which the autoscaler "
    "can scale down.",
    "hpa.max": "maxReplicas is the upper limit for the number of replicas to which the autoscaler "
    "can scale up. It cannot be less that minReplicas.",
    "hpa.current": "currentReplicas is current number of replicas of pods managed by this "
    "autoscaler, as last seen by the autoscaler.",
    "rb.roleRef": "RoleRef can reference a Role in the current namespace or a ClusterRole in the "
    "global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.",
    "crb.roleRef": "RoleRef can only reference a ClusterRole in the global namespace. If the "
    "RoleRef cannot be resolved, the Authorizer must return an error.",
    "sc.provisioner": "Provisioner indicates the type of the provisioner.",
    "sc.reclaim": "Dynamically provisioned PersistentVolumes of this storage class are created "
    "with this reclaimPolicy. Defaults to Delete.",
    "sc.binding": "VolumeBindingMode indicates how PersistentVolumeClaims should be provisioned "
    "and bound.  When unset, VolumeBindingImmediate is used. This field is only honored by "
    "servers that enable the VolumeScheduling feature.",
    "sc.expansion": "AllowVolumeExpansion shows whether the storage class allow volume expand",
    "pc.value": "The value of this priority class. This is the actual priority that pods receive "
    "when they have the name of this class in their pod spec.",
    "pc.default": "globalDefault specifies whether this PriorityClass should be considered as the "
    "default priority for pods that do not have any priority class.",
    "pc.preemption": "PreemptionPolicy is the Policy for preempting pods with lower priority.",
}


@dataclass(frozen=True)
class _Col:
    name: str
    type: str
    description: str
    priority: int = 0
    format: str = ""

    def to_json(self) -> Json:
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }


_NAME = _Col("Name", "string", NAME_DESCRIPTION, format="name")
_AGE = _Col("Age", "string", CREATION_TIMESTAMP_DESCRIPTION)

# --------------------------------------------------------------------------------------------
# Helpers shared by the built-in printers
# --------------------------------------------------------------------------------------------

_Row = tuple[list[Any], list[Json] | None]
_Printer = Callable[[Json, datetime], _Row]


def _d(value: Any) -> Json:
    return value if isinstance(value, dict) else {}


def _l(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _s(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _i(value: Any) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    return 0


def _name(obj: Json) -> str:
    return _s(_d(obj.get("metadata")).get("name"))


def _age(obj: Json, now: datetime) -> str:
    return _since(_d(obj.get("metadata")).get("creationTimestamp"), now)


def _deleting(obj: Json) -> bool:
    return _d(obj.get("metadata")).get("deletionTimestamp") is not None


def _layout_containers(containers: list[Any]) -> tuple[str, str]:
    names = ",".join(_s(_d(c).get("name")) for c in containers)
    images = ",".join(_s(_d(c).get("image")) for c in containers)
    return names, images


def _template_containers(obj: Json) -> list[Any]:
    return _l(_d(_d(_d(obj.get("spec")).get("template")).get("spec")).get("containers"))


def _format_labels(labels: Any) -> str:
    """labels.FormatLabels: sorted k=v pairs, "<none>" when empty."""
    pairs = _d(labels)
    text = ",".join(f"{k}={pairs[k]}" for k in sorted(pairs))
    return text or "<none>"


def _selector_string(selector: Any) -> str | None:
    """LabelSelectorAsSelector(sel).String(), or None when the selector is invalid."""
    try:
        parsed = LabelSelector.from_label_selector(selector if isinstance(selector, dict) else None)
        return str(parsed)
    except ApiError:
        return None


def _format_label_selector(selector: Any) -> str:
    """metav1.FormatLabelSelector."""
    text = _selector_string(selector)
    if text is None:
        return "<error>"
    return text or "<none>"


def _replicas(spec: Json) -> int:
    # Stored objects are defaulted; 1 is the default the apiserver would have filled in.
    value = spec.get("replicas")
    return 1 if value is None else _i(value)


def _access_modes(modes: Any) -> str:
    have = set(_l(modes))
    out = [
        short
        for mode, short in (
            ("ReadWriteOnce", "RWO"),
            ("ReadOnlyMany", "ROX"),
            ("ReadWriteMany", "RWX"),
            ("ReadWriteOncePod", "RWOP"),
        )
        if mode in have
    ]
    return ",".join(out)


def _storage_class(obj: Json) -> str:
    annotations = _d(_d(obj.get("metadata")).get("annotations"))
    if "volume.beta.kubernetes.io/storage-class" in annotations:
        return _s(annotations["volume.beta.kubernetes.io/storage-class"])
    return _s(_d(obj.get("spec")).get("storageClassName"))


def _quantity(value: Any, *, pointer: bool = False) -> str:
    """Quantity.String() of a stored quantity; a nil *Quantity prints "<nil>", a zero one "0"."""
    if value is None:
        return "<nil>" if pointer else "0"
    if isinstance(value, float):
        return go_format_float(value)
    return str(value)


def _join_host_port(host: str, port: int) -> str:
    try:
        is_v6 = isinstance(ipaddress.ip_address(host), ipaddress.IPv6Address)
    except ValueError:
        is_v6 = ":" in host
    return f"[{host}]:{port}" if is_v6 else f"{host}:{port}"


def _list_with_more(items: list[str], more: bool, count: int, limit: int) -> str:
    text = ",".join(items)
    if more:
        return f"{text} + {count - limit} more..."
    return text or "<unset>"


# --------------------------------------------------------------------------------------------
# Built-in printers (pkg/printers/internalversion/printers.go)
# --------------------------------------------------------------------------------------------

_POD_COLUMNS = [
    _NAME,
    _Col("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
    _Col("Status", "string", "The aggregate status of the containers in this pod."),
    _Col(
        "Restarts",
        "string",
        "The number of times the containers in this pod have been restarted and when the last "
        "container in this pod has restarted.",
    ),
    _AGE,
    _Col("IP", "string", _D["pod.ip"], 1),
    _Col("Node", "string", _D["pod.node"], 1),
    _Col("Nominated Node", "string", _D["pod.nominated"], 1),
    _Col("Readiness Gates", "string", _D["pod.gates"], 1),
]


def _later(current: datetime | None, candidate: datetime | None) -> datetime | None:
    if candidate is not None and (current is None or current < candidate):
        return candidate
    return current


def _restartable(container: Any) -> bool:
    return isinstance(container, dict) and container.get("restartPolicy") == "Always"


def _terminated_reason(term: Json, prefix: str) -> str:
    if term.get("reason"):
        return prefix + _s(term.get("reason"))
    if _i(term.get("signal")) != 0:
        return f"{prefix}Signal:{_i(term.get('signal'))}"
    return f"{prefix}ExitCode:{_i(term.get('exitCode'))}"


def _condition_true(conditions: Any, kind: str) -> bool:
    for cond in _l(conditions):
        if _d(cond).get("type") == kind:
            return _d(cond).get("status") == "True"
    return False


def _print_pod(pod: Json, now: datetime) -> _Row:
    spec, status = _d(pod.get("spec")), _d(pod.get("status"))
    restarts = 0
    restartable_init_restarts = 0
    total = len(_l(spec.get("containers")))
    ready = 0
    last_restart: datetime | None = None
    last_restartable_init_restart: datetime | None = None

    phase = _s(status.get("phase"))
    reason = phase
    if status.get("reason"):
        reason = _s(status.get("reason"))
    for cond in _l(status.get("conditions")):
        c = _d(cond)
        if c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"

    conditions: list[Json] | None = None
    if phase == "Succeeded":
        conditions = [
            {
                "type": "Completed",
                "status": "True",
                "reason": "Succeeded",
                "message": "The pod has completed successfully.",
            }
        ]
    elif phase == "Failed":
        conditions = [
            {
                "type": "Completed",
                "status": "True",
                "reason": "Failed",
                "message": "The pod failed.",
            }
        ]

    init_specs = _l(spec.get("initContainers"))
    init_by_name = {_s(_d(c).get("name")): c for c in init_specs}
    total += sum(1 for c in init_specs if _restartable(c))

    initializing = False
    for i, raw in enumerate(_l(status.get("initContainerStatuses"))):
        cs = _d(raw)
        restartable = _restartable(init_by_name.get(_s(cs.get("name"))))
        restarts += _i(cs.get("restartCount"))
        last_term = _d(cs.get("lastState")).get("terminated")
        if isinstance(last_term, dict):
            finished = parse_time(last_term.get("finishedAt"))
            last_restart = _later(last_restart, finished)
            if restartable:
                last_restartable_init_restart = _later(last_restartable_init_restart, finished)
        if restartable:
            restartable_init_restarts += _i(cs.get("restartCount"))
        state = _d(cs.get("state"))
        term, waiting = state.get("terminated"), state.get("waiting")
        if isinstance(term, dict) and _i(term.get("exitCode")) == 0:
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
            reason = "Init:" + _s(waiting.get("reason"))
        else:
            reason = f"Init:{i}/{len(init_specs)}"
        initializing = True
        break

    if not initializing or _condition_true(status.get("conditions"), "Initialized"):
        restarts = restartable_init_restarts
        last_restart = last_restartable_init_restart
        has_running = False
        for raw in reversed(_l(status.get("containerStatuses"))):
            cs = _d(raw)
            restarts += _i(cs.get("restartCount"))
            last_term = _d(cs.get("lastState")).get("terminated")
            if isinstance(last_term, dict):
                last_restart = _later(last_restart, parse_time(last_term.get("finishedAt")))
            state = _d(cs.get("state"))
            term, waiting = state.get("terminated"), state.get("waiting")
            if isinstance(waiting, dict) and waiting.get("reason"):
                reason = _s(waiting.get("reason"))
            elif isinstance(term, dict):
                reason = _terminated_reason(term, "")
            elif cs.get("ready") is True and isinstance(state.get("running"), dict):
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running" if _condition_true(status.get("conditions"), "Ready") else "NotReady"

    if _deleting(pod) and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif _deleting(pod) and phase not in ("Failed", "Succeeded"):
        reason = "Terminating"

    restarts_text = str(restarts)
    if restarts != 0 and last_restart is not None:
        restarts_text = f"{restarts} ({human_duration(now - last_restart)} ago)"

    pod_ip = ""
    pod_ips = _l(status.get("podIPs"))
    if pod_ips:
        pod_ip = _s(_d(pod_ips[0]).get("ip"))
    elif status.get("podIP"):
        pod_ip = _s(status.get("podIP"))
    gates = _l(spec.get("readinessGates"))
    gates_text = "<none>"
    if gates:
        true_count = 0
        for gate in gates:
            for cond in _l(status.get("conditions")):
                if _d(cond).get("type") == _d(gate).get("conditionType"):
                    if _d(cond).get("status") == "True":
                        true_count += 1
                    break
        gates_text = f"{true_count}/{len(gates)}"
    cells = [
        _name(pod),
        f"{ready}/{total}",
        reason,
        restarts_text,
        _age(pod, now),
        pod_ip or "<none>",
        _s(spec.get("nodeName")) or "<none>",
        _s(status.get("nominatedNodeName")) or "<none>",
        gates_text,
    ]
    return cells, conditions


_DEPLOYMENT_COLUMNS = [
    _NAME,
    _Col("Ready", "string", _READY_PODS),
    _Col("Up-to-date", "string", _D["deploy.updated"]),
    _Col("Available", "string", _D["deploy.available"]),
    _AGE,
    _Col("Containers", "string", _CONTAINERS, 1),
    _Col("Images", "string", _IMAGES, 1),
    _Col("Selector", "string", _D["deploy.selector"], 1),
]


def _print_deployment(obj: Json, now: datetime) -> _Row:
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))
    names, images = _layout_containers(_template_containers(obj))
    selector = _selector_string(spec.get("selector"))
    cells = [
        _name(obj),
        f"{_i(status.get('readyReplicas'))}/{_replicas(spec)}",
        _i(status.get("updatedReplicas")),
        _i(status.get("availableReplicas")),
        _age(obj, now),
        names,
        images,
        "<invalid>" if selector is None else selector,
    ]
    return cells, None


_REPLICASET_COLUMNS = [
    _NAME,
    _Col("Desired", "integer", _D["rs.desired"]),
    _Col("Current", "integer", _D["rs.current"]),
    _Col("Ready", "integer", _D["rs.ready"]),
    _AGE,
    _Col("Containers", "string", _CONTAINERS, 1),
    _Col("Images", "string", _IMAGES, 1),
    _Col("Selector", "string", _SELECTOR_DOC, 1),
]


def _print_replicaset(obj: Json, now: datetime) -> _Row:
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))
    names, images = _layout_containers(_template_containers(obj))
    cells = [
        _name(obj),
        _replicas(spec),
        _i(status.get("replicas")),
        _i(status.get("readyReplicas")),
        _age(obj, now),
        names,
        images,
        _format_label_selector(spec.get("selector")),
    ]
    return cells, None


_STATEFULSET_COLUMNS = [
    _NAME,
    _Col("Ready", "string", _READY_PODS),
    _AGE,
    _Col("Containers", "string", _CONTAINERS, 1),
    _Col("Images", "string", _IMAGES, 1),
]


def _print_statefulset(obj: Json, now: datetime) -> _Row:
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))
    names, images = _layout_containers(_template_containers(obj))
    cells = [
        _name(obj),
        f"{_i(status.get('readyReplicas'))}/{_replicas(spec)}",
        _age(obj, now),
        names,
        images,
    ]
    return cells, None


_DAEMONSET_COLUMNS = [
    _NAME,
    _Col("Desired", "integer", _D["ds.desired"]),
    _Col("Current", "integer", _D["ds.current"]),
    _Col("Ready", "integer", _D["ds.ready"]),
    _Col("Up-to-date", "integer", _D["ds.updated"]),
    _Col("Available", "integer", _D["ds.available"]),
    _Col("Node Selector", "string", _D["ds.nodeSelector"]),
    _AGE,
    _Col("Containers", "string", _CONTAINERS, 1),
    _Col("Images", "string", _IMAGES, 1),
    _Col("Selector", "string", _SELECTOR_DOC, 1),
]


def _print_daemonset(obj: Json, now: datetime) -> _Row:
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))
    pod_spec = _d(_d(spec.get("template")).get("spec"))
    names, images = _layout_containers(_l(pod_spec.get("containers")))
    cells = [
        _name(obj),
        _i(status.get("desiredNumberScheduled")),
        _i(status.get("currentNumberScheduled")),
        _i(status.get("numberReady")),
        _i(status.get("updatedNumberScheduled")),
        _i(status.get("numberAvailable")),
        _format_labels(pod_spec.get("nodeSelector")),
        _age(obj, now),
        names,
        images,
        _format_label_selector(spec.get("selector")),
    ]
    return cells, None


_JOB_COLUMNS = [
    _NAME,
    _Col("Status", "string", "Status of the job."),
    _Col("Completions", "string", _D["job.succeeded"]),
    _Col("Duration", "string", "Time required to complete the job."),
    _AGE,
    _Col("Containers", "string", _CONTAINERS, 1),
    _Col("Images", "string", _IMAGES, 1),
    _Col("Selector", "string", _D["job.selector"], 1),
]


def _print_job(obj: Json, now: datetime) -> _Row:
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))
    succeeded = _i(status.get("succeeded"))
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{_i(spec.get('completions'))}"
    else:
        parallelism = _i(spec.get("parallelism"))
        completions = f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"
    start, finish = parse_time(status.get("startTime")), parse_time(status.get("completionTime"))
    duration = ""
    if start is not None:
        duration = human_duration((finish or now) - start)
    conditions = status.get("conditions")
    if _condition_true(conditions, "Complete"):
        state = "Complete"
    elif _condition_true(conditions, "Failed"):
        state = "Failed"
    elif _deleting(obj):
        state = "Terminating"
    elif _condition_true(conditions, "Suspended"):
        state = "Suspended"
    elif _condition_true(conditions, "FailureTarget"):
        state = "FailureTarget"
    else:
        state = "Running"
    names, images = _layout_containers(_template_containers(obj))
    cells = [
        _name(obj),
        state,
        completions,
        duration,
        _age(obj, now),
        names,
        images,
        _format_label_selector(spec.get("selector")),
    ]
    return cells, None


_SERVICE_COLUMNS = [
    _NAME,
    _Col("Type", "string", _D["svc.type"]),
    _Col("Cluster-IP", "string", _D["svc.clusterIP"]),
    _Col("External-IP", "string", _D["svc.externalIPs"]),
    _Col("Port(s)", "string", _D["svc.ports"]),
    _AGE,
    _Col("Selector", "string", _D["svc.selector"], 1),
]


def _load_balancer_ingress(status: Json) -> str:
    hosts = set()
    for entry in _l(_d(status.get("loadBalancer")).get("ingress")):
        e = _d(entry)
        if e.get("ip"):
            hosts.add(_s(e.get("ip")))
        elif e.get("hostname"):
            hosts.add(_s(e.get("hostname")))
    # The server prints wide, so the 16-character clipping kubectl applies is not done here.
    return ",".join(sorted(hosts))


def _service_external_ip(spec: Json, status: Json, svc_type: str) -> str:
    external = [_s(ip) for ip in _l(spec.get("externalIPs"))]
    if svc_type in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else "<none>"
    if svc_type == "LoadBalancer":
        lb = _load_balancer_ingress(status)
        if external:
            return ",".join(([*lb.split(",")] if lb else []) + external)
        return lb or "<pending>"
    if svc_type == "ExternalName":
        return _s(spec.get("externalName"))
    return "<unknown>"


def _print_service(obj: Json, now: datetime) -> _Row:
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))
    svc_type = _s(spec.get("type")) or "ClusterIP"
    cluster_ips = _l(spec.get("clusterIPs"))
    cluster_ip = _s(cluster_ips[0]) if cluster_ips else _s(spec.get("clusterIP"))
    ports = []
    for raw in _l(spec.get("ports")):
        p = _d(raw)
        protocol = _s(p.get("protocol")) or "TCP"
        if _i(p.get("nodePort")) > 0:
            ports.append(f"{_i(p.get('port'))}:{_i(p.get('nodePort'))}/{protocol}")
        else:
            ports.append(f"{_i(p.get('port'))}/{protocol}")
    cells = [
        _name(obj),
        svc_type,
        cluster_ip or "<none>",
        _service_external_ip(spec, status, svc_type),
        ",".join(ports) or "<none>",
        _age(obj, now),
        _format_labels(spec.get("selector")),
    ]
    return cells, None


_NODE_COLUMNS = [
    _NAME,
    _Col("Status", "string", "The status of the node"),
    _Col("Roles", "string", "The roles of the node"),
    _AGE,
    _Col("Version", "string", _D["node.kubelet"]),
    _Col("Internal-IP", "string", _D["node.addresses"], 1),
    _Col("External-IP", "string", _D["node.addresses"], 1),
    _Col("OS-Image", "string", _D["node.os"], 1),
    _Col("Kernel-Version", "string", _D["node.kernel"], 1),
    _Col("Container-Runtime", "string", _D["node.runtime"], 1),
]


def _node_address(status: Json, kind: str) -> str:
    for addr in _l(status.get("addresses")):
        if _d(addr).get("type") == kind:
            return _s(_d(addr).get("address"))
    return "<none>"


def _print_node(obj: Json, now: datetime) -> _Row:
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))
    states: list[str] = []
    ready = None
    for cond in _l(status.get("conditions")):
        if _d(cond).get("type") == "Ready":
            ready = _d(cond)
    if ready is not None:
        states.append("Ready" if ready.get("status") == "True" else "NotReady")
    if not states:
        states.append("Unknown")
    if spec.get("unschedulable") is True:
        states.append("SchedulingDisabled")
    roles = set()
    for key, value in _d(_d(obj.get("metadata")).get("labels")).items():
        if key.startswith("node-role.kubernetes.io/"):
            role = key[len("node-role.kubernetes.io/") :]
            if role:
                roles.add(role)
        elif key == "kubernetes.io/role" and value:
            roles.add(_s(value))
    info = _d(status.get("nodeInfo"))
    cells = [
        _name(obj),
        ",".join(states),
        ",".join(sorted(roles)) or "<none>",
        _age(obj, now),
        _s(info.get("kubeletVersion")),
        _node_address(status, "InternalIP"),
        _node_address(status, "ExternalIP"),
        _s(info.get("osImage")) or "<unknown>",
        _s(info.get("kernelVersion")) or "<unknown>",
        _s(info.get("containerRuntimeVersion")) or "<unknown>",
    ]
    return cells, None


_NAMESPACE_COLUMNS = [_NAME, _Col("Status", "string", "The status of the namespace"), _AGE]


def _print_namespace(obj: Json, now: datetime) -> _Row:
    return [_name(obj), _s(_d(obj.get("status")).get("phase")), _age(obj, now)], None


_CONFIGMAP_COLUMNS = [_NAME, _Col("Data", "string", _D["cm.data"]), _AGE]


def _print_configmap(obj: Json, now: datetime) -> _Row:
    count = len(_d(obj.get("data"))) + len(_d(obj.get("binaryData")))
    return [_name(obj), count, _age(obj, now)], None


_SECRET_COLUMNS = [
    _NAME,
    _Col("Type", "string", _D["secret.type"]),
    _Col("Data", "string", _D["secret.data"]),
    _AGE,
]


def _print_secret(obj: Json, now: datetime) -> _Row:
    # stringData is merged into data on write; count the union in case it was stored as sent.
    keys = set(_d(obj.get("data"))) | set(_d(obj.get("stringData")))
    secret_type = _s(obj.get("type")) or "Opaque"
    return [_name(obj), secret_type, len(keys), _age(obj, now)], None


_SERVICEACCOUNT_COLUMNS = [_NAME, _Col("Secrets", "string", _D["sa.secrets"]), _AGE]


def _print_serviceaccount(obj: Json, now: datetime) -> _Row:
    return [_name(obj), len(_l(obj.get("secrets"))), _age(obj, now)], None


_PVC_COLUMNS = [
    _NAME,
    _Col("Status", "string", _D["pvc.phase"]),
    _Col("Volume", "string", _D["pvc.volume"]),
    _Col("Capacity", "string", _D["pvc.capacity"]),
    _Col("Access Modes", "string", _D["pvc.accessModes"]),
    _Col("StorageClass", "string", "StorageClass of the pvc"),
    _Col("VolumeAttributesClass", "string", "VolumeAttributesClass of the pvc"),
    _AGE,
    _Col("VolumeMode", "string", _D["pvc.volumeMode"], 1),
]


def _print_pvc(obj: Json, now: datetime) -> _Row:
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))
    phase = "Terminating" if _deleting(obj) else _s(status.get("phase"))
    capacity = access = ""
    if spec.get("volumeName"):
        access = _access_modes(status.get("accessModes"))
        capacity = _quantity(_d(status.get("capacity")).get("storage"))
    vac = spec.get("volumeAttributesClassName")
    mode = spec.get("volumeMode")
    cells = [
        _name(obj),
        phase,
        _s(spec.get("volumeName")),
        capacity,
        access,
        _storage_class(obj),
        "<unset>" if vac is None else _s(vac),
        _age(obj, now),
        "<unset>" if mode is None else _s(mode),
    ]
    return cells, None


_PV_COLUMNS = [
    _NAME,
    _Col("Capacity", "string", _D["pv.capacity"]),
    _Col("Access Modes", "string", _D["pv.accessModes"]),
    _Col("Reclaim Policy", "string", _D["pv.reclaim"]),
    _Col("Status", "string", _D["pv.phase"]),
    _Col("Claim", "string", _D["pv.claim"]),
    _Col("StorageClass", "string", "StorageClass of the pv"),
    _Col("VolumeAttributesClass", "string", "VolumeAttributesClass of the pv"),
    _Col("Reason", "string", _D["pv.reason"]),
    _AGE,
    _Col("VolumeMode", "string", _D["pv.volumeMode"], 1),
]


def _print_pv(obj: Json, now: datetime) -> _Row:
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))
    claim = ""
    if isinstance(spec.get("claimRef"), dict):
        ref = _d(spec.get("claimRef"))
        claim = f"{_s(ref.get('namespace'))}/{_s(ref.get('name'))}"
    phase = "Terminating" if _deleting(obj) else _s(status.get("phase"))
    vac = spec.get("volumeAttributesClassName")
    mode = spec.get("volumeMode")
    cells = [
        _name(obj),
        _quantity(_d(spec.get("capacity")).get("storage")),
        _access_modes(spec.get("accessModes")),
        _s(spec.get("persistentVolumeReclaimPolicy")),
        phase,
        claim,
        _storage_class(obj),
        "<unset>" if vac is None else _s(vac),
        _s(status.get("reason")),
        _age(obj, now),
        "<unset>" if mode is None else _s(mode),
    ]
    return cells, None


_EVENT_COLUMNS = [
    _Col("Last Seen", "string", _D["event.last"]),
    _Col("Type", "string", _D["event.type"]),
    _Col("Reason", "string", _D["event.reason"]),
    _Col("Object", "string", _D["event.object"]),
    _Col("Subobject", "string", _D["event.fieldPath"], 1),
    _Col("Source", "string", _D["event.source"], 1),
    _Col("Message", "string", _D["event.message"]),
    _Col("First Seen", "string", _D["event.first"], 1),
    _Col("Count", "string", _D["event.count"], 1),
    _Col("Name", "string", NAME_DESCRIPTION, 1, "name"),
]


def _core_event(obj: Json) -> Json:
    """An events.k8s.io/v1 Event seen through the core fields the printer reads."""
    if "regarding" not in obj and "note" not in obj and "deprecatedSource" not in obj:
        return obj
    return {
        "metadata": obj.get("metadata"),
        "involvedObject": obj.get("regarding"),
        "reason": obj.get("reason"),
        "message": obj.get("note"),
        "source": obj.get("deprecatedSource"),
        "firstTimestamp": obj.get("deprecatedFirstTimestamp"),
        "lastTimestamp": obj.get("deprecatedLastTimestamp"),
        "count": obj.get("deprecatedCount"),
        "type": obj.get("type"),
        "eventTime": obj.get("eventTime"),
        "series": obj.get("series"),
        "reportingComponent": obj.get("reportingController"),
        "reportingInstance": obj.get("reportingInstance"),
    }


def _print_event(raw: Json, now: datetime) -> _Row:
    obj = _core_event(raw)
    first_ts = parse_time(obj.get("firstTimestamp"))
    if first_ts is None:
        first = _since(obj.get("eventTime"), now)
    else:
        first = human_duration(now - first_ts)
    last_ts = parse_time(obj.get("lastTimestamp"))
    last = first if last_ts is None else human_duration(now - last_ts)
    count = _i(obj.get("count"))
    series = obj.get("series")
    if isinstance(series, dict):
        last = _since(series.get("lastObservedTime"), now)
        count = _i(series.get("count"))
    elif count == 0:
        count = 1
    involved = _d(obj.get("involvedObject"))
    kind = _s(involved.get("kind")).lower()
    target = f"{kind}/{_s(involved.get('name'))}" if involved.get("name") else kind
    source = _d(obj.get("source"))
    component = _s(source.get("component")) or _s(obj.get("reportingComponent"))
    instance = _s(source.get("host")) or _s(obj.get("reportingInstance"))
    source_text = component if not instance else f"{component}, {instance}"
    cells = [
        last,
        _s(obj.get("type")),
        _s(obj.get("reason")),
        target,
        _s(involved.get("fieldPath")),
        source_text,
        _s(obj.get("message")).strip(),
        first,
        count,
        _name(obj),
    ]
    return cells, None


_ENDPOINTS_COLUMNS = [_NAME, _Col("Endpoints", "string", _D["endpoints.subsets"]), _AGE]


def _print_endpoints(obj: Json, now: datetime) -> _Row:
    subsets = _l(obj.get("subsets"))
    if not subsets:
        return [_name(obj), "<none>", _age(obj, now)], None
    shown: list[str] = []
    limit, more, count = 3, False, 0
    for raw in subsets:
        subset = _d(raw)
        addresses = _l(subset.get("addresses"))
        ports = _l(subset.get("ports"))
        if not ports:
            count += len(addresses)
            for addr in addresses:
                if len(shown) == limit:
                    more = True
                    break
                shown.append(_s(_d(addr).get("ip")))
            continue
        for port in ports:
            count += len(addresses)
            for addr in addresses:
                if len(shown) == limit:
                    more = True
                    break
                shown.append(_join_host_port(_s(_d(addr).get("ip")), _i(_d(port).get("port"))))
    text = ",".join(shown)
    if more:
        text = f"{text} + {count - limit} more..."
    return [_name(obj), text, _age(obj, now)], None


_ENDPOINTSLICE_COLUMNS = [
    _NAME,
    _Col("AddressType", "string", _D["slice.addressType"]),
    _Col("Ports", "string", _D["slice.ports"]),
    _Col("Endpoints", "string", _D["slice.endpoints"]),
    _AGE,
]


def _print_endpointslice(obj: Json, now: datetime) -> _Row:
    limit = 3
    ports: list[str] = []
    more, count = False, 0
    for raw in _l(obj.get("ports")):
        port = _d(raw)
        if len(ports) < limit:
            if port.get("port") is not None:
                ports.append(str(_i(port.get("port"))))
            elif port.get("name") is not None:
                ports.append(_s(port.get("name")))
            else:
                ports.append("*")
        elif len(ports) == limit:
            more = True
        count += 1
    port_text = _list_with_more(ports, more, count, limit)
    addrs: list[str] = []
    more, count = False, 0
    for raw in _l(obj.get("endpoints")):
        for address in _l(_d(raw).get("addresses")):
            if len(addrs) < limit:
                addrs.append(_s(address))
            elif len(addrs) == limit:
                more = True
            count += 1
    cells = [
        _name(obj),
        _s(obj.get("addressType")),
        port_text,
        _list_with_more(addrs, more, count, limit),
        _age(obj, now),
    ]
    return cells, None


_LEASE_COLUMNS = [_NAME, _Col("Holder", "string", _D["lease.holder"]), _AGE]


def _print_lease(obj: Json, now: datetime) -> _Row:
    holder = _s(_d(obj.get("spec")).get("holderIdentity"))
    return [_name(obj), holder, _age(obj, now)], None


_INGRESS_COLUMNS = [
    _NAME,
    _Col(
        "Class",
        "string",
        "The name of the IngressClass resource that should be used for additional configuration",
    ),
    _Col(
        "Hosts",
        "string",
        "Hosts that incoming requests are matched against before the ingress rule",
    ),
    _Col("Address", "string", "Address is a list containing ingress points for the load-balancer"),
    _Col("Ports", "string", "Ports of TLS configurations that open"),
    _AGE,
]


def _print_ingress(obj: Json, now: datetime) -> _Row:
    spec = _d(obj.get("spec"))
    class_name = spec.get("ingressClassName")
    rules = _l(spec.get("rules"))
    hosts: list[str] = []
    more = False
    for rule in rules:
        if len(hosts) == 3:
            more = True
        if not more and _d(rule).get("host"):
            hosts.append(_s(_d(rule).get("host")))
    if not hosts:
        host_text = "*"
    else:
        host_text = ",".join(hosts)
        if more:
            host_text = f"{host_text} + {len(rules) - 3} more..."
    cells = [
        _name(obj),
        "<none>" if class_name is None else _s(class_name),
        host_text,
        _load_balancer_ingress(_d(obj.get("status"))),
        "80, 443" if _l(spec.get("tls")) else "80",
        _age(obj, now),
    ]
    return cells, None


_INGRESSCLASS_COLUMNS = [
    _NAME,
    _Col("Controller", "string", "Controller that is responsible for handling this class"),
    _Col("Parameters", "string", "A reference to a resource with additional parameters"),
    _AGE,
]


def _print_ingressclass(obj: Json, now: datetime) -> _Row:
    spec = _d(obj.get("spec"))
    params = spec.get("parameters")
    text = "<none>"
    if isinstance(params, dict):
        text = _s(params.get("kind"))
        if params.get("apiGroup") is not None:
            text += "." + _s(params.get("apiGroup"))
        text += "/" + _s(params.get("name"))
    return [_name(obj), _s(spec.get("controller")), text, _age(obj, now)], None


_HPA_COLUMNS = [
    _NAME,
    _Col("Reference", "string", _D["hpa.reference"]),
    _Col("Targets", "string", _D["hpa.metrics"]),
    _Col("MinPods", "string", _D["hpa.min"]),
    _Col("MaxPods", "string", _D["hpa.max"]),
    _Col("Replicas", "string", _D["hpa.current"]),
    _AGE,
]


def _metric_target(spec: Json, status: Json | None, source: str) -> str:
    target = _d(_d(spec.get(source)).get("target"))
    current = _d(_d(status.get(source)).get("current")) if status is not None else None
    if target.get("averageValue") is not None:
        have = "<unknown>"
        if current is not None and current.get("averageValue") is not None:
            have = _quantity(current.get("averageValue"), pointer=True)
        return f"{have}/{_quantity(target.get('averageValue'))} (avg)"
    have = "<unknown>"
    if current is not None:
        have = _quantity(current.get("value"), pointer=True)
    return f"{have}/{_quantity(target.get('value'), pointer=True)}"


def _resource_target(spec: Json, status: Json | None, source: str) -> str:
    body = _d(spec.get(source))
    target = _d(body.get("target"))
    name = _s(body.get("name"))
    current = _d(_d(status.get(source)).get("current")) if status is not None else None
    if target.get("averageValue") is not None:
        have = "<unknown>"
        if current is not None:
            have = _quantity(current.get("averageValue"), pointer=True)
        return f"{name}: {have}/{_quantity(target.get('averageValue'))}"
    have = "<unknown>"
    if current is not None and current.get("averageUtilization") is not None:
        have = f"{_i(current.get('averageUtilization'))}%"
    want = "<auto>"
    if target.get("averageUtilization") is not None:
        want = f"{_i(target.get('averageUtilization'))}%"
    return f"{name}: {have}/{want}"


def _hpa_metrics(obj: Json) -> tuple[list[Json], list[Json]]:
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))
    v1_shape = "targetCPUUtilizationPercentage" in spec or (
        "metrics" not in spec and "currentCPUUtilizationPercentage" in status
    )
    if v1_shape:
        # autoscaling/v1 shape: one CPU utilization target.
        specs: list[Json] = []
        statuses: list[Json] = []
        if spec.get("targetCPUUtilizationPercentage") is not None:
            specs.append(
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {
                            "type": "Utilization",
                            "averageUtilization": spec["targetCPUUtilizationPercentage"],
                        },
                    },
                }
            )
        if status.get("currentCPUUtilizationPercentage") is not None:
            statuses.append(
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "current": {
                            "averageUtilization": status["currentCPUUtilizationPercentage"]
                        },
                    },
                }
            )
        return specs, statuses
    return [_d(m) for m in _l(spec.get("metrics"))], [
        _d(m) for m in _l(status.get("currentMetrics"))
    ]


def _format_hpa_metrics(obj: Json) -> str:
    specs, statuses = _hpa_metrics(obj)
    if not specs:
        return "<none>"
    shown: list[str] = []
    for i, spec in enumerate(specs):
        status = statuses[i] if i < len(statuses) else None
        kind = spec.get("type")
        source = {
            "External": "external",
            "Pods": "pods",
            "Object": "object",
            "Resource": "resource",
            "ContainerResource": "containerResource",
        }.get(_s(kind))
        if source is None:
            shown.append("<unknown type>")
            continue
        present = status if status is not None and isinstance(status.get(source), dict) else None
        if source == "pods":
            have = "<unknown>"
            if present is not None:
                current = _d(_d(present.get("pods")).get("current"))
                have = _quantity(current.get("averageValue"), pointer=True)
            target = _d(_d(spec.get("pods")).get("target"))
            want = _quantity(target.get("averageValue"), pointer=True)
            shown.append(f"{have}/{want}")
        elif source in ("external", "object"):
            shown.append(_metric_target(spec, present, source))
        else:
            shown.append(_resource_target(spec, present, source))
    limit = 2
    if len(shown) > limit:
        return ", ".join(shown[:limit]) + f" + {len(shown) - limit} more..."
    return ", ".join(shown)


def _print_hpa(obj: Json, now: datetime) -> _Row:
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))
    ref = _d(spec.get("scaleTargetRef"))
    min_pods = "<unset>" if spec.get("minReplicas") is None else str(_i(spec.get("minReplicas")))
    cells = [
        _name(obj),
        f"{_s(ref.get('kind'))}/{_s(ref.get('name'))}",
        _format_hpa_metrics(obj),
        min_pods,
        _i(spec.get("maxReplicas")),
        _i(status.get("currentReplicas")),
        _age(obj, now),
    ]
    return cells, None


_PDB_COLUMNS = [
    _NAME,
    _Col("Min Available", "string", "The minimum number of pods that must be available."),
    _Col("Max Unavailable", "string", "The maximum number of pods that may be unavailable."),
    _Col(
        "Allowed Disruptions",
        "integer",
        "Calculated number of pods that may be disrupted at this time.",
    ),
    _AGE,
]


def _int_or_string(value: Any) -> str:
    if value is None:
        return "N/A"
    if isinstance(value, bool):
        return str(int(value))
    return str(value)


def _print_pdb(obj: Json, now: datetime) -> _Row:
    spec, status = _d(obj.get("spec")), _d(obj.get("status"))
    cells = [
        _name(obj),
        _int_or_string(spec.get("minAvailable")),
        _int_or_string(spec.get("maxUnavailable")),
        _i(status.get("disruptionsAllowed")),
        _age(obj, now),
    ]
    return cells, None


_WEBHOOK_COLUMNS = [
    _NAME,
    _Col(
        "Webhooks",
        "integer",
        "Webhooks indicates the number of webhooks registered in this configuration",
    ),
    _AGE,
]


def _print_webhooks(obj: Json, now: datetime) -> _Row:
    return [_name(obj), len(_l(obj.get("webhooks"))), _age(obj, now)], None


def _binding_columns(kind: str, role_ref_doc: str) -> list[_Col]:
    return [
        _NAME,
        _Col("Role", "string", role_ref_doc),
        _AGE,
        _Col("Users", "string", f"Users in the {kind}", 1),
        _Col("Groups", "string", f"Groups in the {kind}", 1),
        _Col("ServiceAccounts", "string", f"ServiceAccounts in the {kind}", 1),
    ]


def _print_binding(obj: Json, now: datetime) -> _Row:
    ref = _d(obj.get("roleRef"))
    users: list[str] = []
    groups: list[str] = []
    accounts: list[str] = []
    for raw in _l(obj.get("subjects")):
        subject = _d(raw)
        kind, name = subject.get("kind"), _s(subject.get("name"))
        if kind == "ServiceAccount":
            accounts.append(f"{_s(subject.get('namespace'))}/{name}")
        elif kind == "User":
            users.append(name)
        elif kind == "Group":
            groups.append(name)
    cells = [
        _name(obj),
        f"{_s(ref.get('kind'))}/{_s(ref.get('name'))}",
        _age(obj, now),
        ", ".join(users),
        ", ".join(groups),
        ", ".join(accounts),
    ]
    return cells, None


_STORAGECLASS_COLUMNS = [
    _NAME,
    _Col("Provisioner", "string", _D["sc.provisioner"]),
    _Col("ReclaimPolicy", "string", _D["sc.reclaim"]),
    _Col("VolumeBindingMode", "string", _D["sc.binding"]),
    _Col("AllowVolumeExpansion", "string", _D["sc.expansion"]),
    _AGE,
]


def _print_storageclass(obj: Json, now: datetime) -> _Row:
    annotations = _d(_d(obj.get("metadata")).get("annotations"))
    name = _name(obj)
    if (
        annotations.get("storageclass.kubernetes.io/is-default-class") == "true"
        or annotations.get("storageclass.beta.kubernetes.io/is-default-class") == "true"
    ):
        name += " (default)"
    cells = [
        name,
        _s(obj.get("provisioner")),
        _s(obj.get("reclaimPolicy")) or "Delete",
        _s(obj.get("volumeBindingMode")) or "Immediate",
        obj.get("allowVolumeExpansion") is True,
        _age(obj, now),
    ]
    return cells, None


_PRIORITYCLASS_COLUMNS = [
    _NAME,
    _Col("Value", "integer", _D["pc.value"]),
    _Col("Global-Default", "boolean", _D["pc.default"]),
    _AGE,
    _Col("PreemptionPolicy", "string", _D["pc.preemption"]),
]


def _print_priorityclass(obj: Json, now: datetime) -> _Row:
    cells = [
        _name(obj),
        _i(obj.get("value")),
        obj.get("globalDefault") is True,
        _age(obj, now),
        _s(obj.get("preemptionPolicy")),
    ]
    return cells, None


_PRINTERS: dict[tuple[str, str], tuple[list[_Col], _Printer]] = {
    ("", "Pod"): (_POD_COLUMNS, _print_pod),
    ("", "Service"): (_SERVICE_COLUMNS, _print_service),
    ("", "Node"): (_NODE_COLUMNS, _print_node),
    ("", "Namespace"): (_NAMESPACE_COLUMNS, _print_namespace),
    ("", "ConfigMap"): (_CONFIGMAP_COLUMNS, _print_configmap),
    ("", "Secret"): (_SECRET_COLUMNS, _print_secret),
    ("", "ServiceAccount"): (_SERVICEACCOUNT_COLUMNS, _print_serviceaccount),
    ("", "PersistentVolumeClaim"): (_PVC_COLUMNS, _print_pvc),
    ("", "PersistentVolume"): (_PV_COLUMNS, _print_pv),
    ("", "Event"): (_EVENT_COLUMNS, _print_event),
    ("", "Endpoints"): (_ENDPOINTS_COLUMNS, _print_endpoints),
    ("events.k8s.io", "Event"): (_EVENT_COLUMNS, _print_event),
    ("discovery.k8s.io", "EndpointSlice"): (_ENDPOINTSLICE_COLUMNS, _print_endpointslice),
    ("apps", "Deployment"): (_DEPLOYMENT_COLUMNS, _print_deployment),
    ("apps", "ReplicaSet"): (_REPLICASET_COLUMNS, _print_replicaset),
    ("apps", "StatefulSet"): (_STATEFULSET_COLUMNS, _print_statefulset),
    ("apps", "DaemonSet"): (_DAEMONSET_COLUMNS, _print_daemonset),
    ("batch", "Job"): (_JOB_COLUMNS, _print_job),
    ("coordination.k8s.io", "Lease"): (_LEASE_COLUMNS, _print_lease),
    ("networking.k8s.io", "Ingress"): (_INGRESS_COLUMNS, _print_ingress),
    ("networking.k8s.io", "IngressClass"): (_INGRESSCLASS_COLUMNS, _print_ingressclass),
    ("autoscaling", "HorizontalPodAutoscaler"): (_HPA_COLUMNS, _print_hpa),
    ("policy", "PodDisruptionBudget"): (_PDB_COLUMNS, _print_pdb),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): (
        _WEBHOOK_COLUMNS,
        _print_webhooks,
    ),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): (
        _WEBHOOK_COLUMNS,
        _print_webhooks,
    ),
    ("rbac.authorization.k8s.io", "RoleBinding"): (
        _binding_columns("roleBinding", _D["rb.roleRef"]),
        _print_binding,
    ),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): (
        _binding_columns("clusterRoleBinding", _D["crb.roleRef"]),
        _print_binding,
    ),
    ("storage.k8s.io", "StorageClass"): (_STORAGECLASS_COLUMNS, _print_storageclass),
    ("scheduling.k8s.io", "PriorityClass"): (_PRIORITYCLASS_COLUMNS, _print_priorityclass),
}

# --------------------------------------------------------------------------------------------
# Custom resources (apiextensions tableconvertor) and the default convertor
# --------------------------------------------------------------------------------------------

_DEFAULT_CRD_COLUMNS = (
    PrinterColumn(
        name="Age",
        type="date",
        json_path=".metadata.creationTimestamp",
        description=CREATION_TIMESTAMP_DESCRIPTION,
    ),
)


def _crd_cell(column: PrinterColumn, obj: Json, now: datetime) -> Any:
    try:
        results = jsonpath(obj, column.json_path)
    except JSONPathError:
        return None
    if not results:
        return None
    value = results[0]
    kind = column.type
    if kind == "string":
        return _print_value(value)
    if value is None:
        return None
    if kind == "integer":
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            return value
        if isinstance(value, float):
            return int(value)
        return None
    if kind == "number":
        if isinstance(value, bool):
            return None
        if isinstance(value, (int, float)):
            return float(value)
        return None
    if kind == "boolean":
        return value if isinstance(value, bool) else None
    if kind == "date":
        if not isinstance(value, str):
            return None
        if value in ("", '""'):
            return "<unknown>"
        ts = _parse_rfc3339(value)
        if ts is None:
            return "<invalid>"
        return "<unknown>" if ts == _ZERO_TIME else human_duration(now - ts)
    return None


def _crd_columns(rt: ResourceType) -> tuple[PrinterColumn, ...]:
    return rt.printer_columns or _DEFAULT_CRD_COLUMNS


def _crd_column_defs(rt: ResourceType) -> list[Json]:
    defs = [_NAME.to_json()]
    for col in _crd_columns(rt):
        description = col.description or (
            f"Custom resource definition column (in JSONPath format): {col.json_path}"
        )
        defs.append(
            {
                "name": col.name,
                "type": col.type,
                "format": col.format,
                "description": description,
                "priority": col.priority,
            }
        )
    return defs


_DEFAULT_COLUMNS = [
    _NAME,
    _Col("Created At", "date", CREATION_TIMESTAMP_DESCRIPTION),
]


def _created_at(obj: Json) -> str:
    ts = parse_time(_d(obj.get("metadata")).get("creationTimestamp"))
    if ts is None:
        return "0001-01-01T00:00:00Z"
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --------------------------------------------------------------------------------------------
# Table assembly
# --------------------------------------------------------------------------------------------

_INCLUDE_OBJECT = ("", "Metadata", "None", "Object")


def check_include_object(value: str) -> None:
    """Validate the `includeObject` query parameter as the apiserver does before listing."""
    if value not in _INCLUDE_OBJECT:
        raise bad_request(
            "Unable to convert to Table as requested: includeObject: Invalid value: "
            f"{go_quote(value)}: must be 'Metadata', 'Object', 'None', or empty"
        )


def _row_object(obj: Json, include_object: str, group_version: str) -> Json | None:
    if include_object == "None":
        return None
    if include_object == "Object":
        return obj
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": group_version,
        "metadata": copy.deepcopy(_d(obj.get("metadata"))),
    }


def to_table(
    rt: ResourceType,
    objects: list[Json],
    *,
    include_object: str = "Metadata",
    now: datetime | None = None,
    list_metadata: Mapping[str, Any] | None = None,
    no_headers: bool = False,
    group_version: str = "meta.k8s.io/v1",
) -> Json:
    """The meta.k8s.io Table the apiserver returns for `objects` of resource type `rt`.

    `include_object` is TableOptions.includeObject ("" means "Metadata"); `list_metadata` is the
    ListMeta to report (resourceVersion, continue, remainingItemCount); `no_headers` mirrors
    TableOptions.noHeaders; `group_version` is the negotiated Table version (meta.k8s.io/v1 or
    meta.k8s.io/v1beta1), which the PartialObjectMetadata rows also carry.
    """
    check_include_object(include_object)
    when = now or datetime.now(UTC)
    columns: list[Json]
    rows: list[Json] = []
    if rt.custom:
        columns = _crd_column_defs(rt)
        crd_columns = _crd_columns(rt)
        for obj in objects:
            cells = [_name(obj), *(_crd_cell(c, obj, when) for c in crd_columns)]
            rows.append({"cells": cells})
    elif (rt.group, rt.kind) in _PRINTERS:
        defs, printer = _PRINTERS[(rt.group, rt.kind)]
        columns = [c.to_json() for c in defs]
        for obj in objects:
            cells, conditions = printer(obj, when)
            row: Json = {"cells": cells}
            if conditions:
                row["conditions"] = conditions
            rows.append(row)
    else:
        columns = [c.to_json() for c in _DEFAULT_COLUMNS]
        for obj in objects:
            rows.append({"cells": [_name(obj), _created_at(obj)]})
    for row, obj in zip(rows, objects, strict=True):
        row["object"] = _row_object(obj, include_object, group_version)
    # The default convertor appends to a nil slice, so an empty list encodes as null there.
    default_convertor = not rt.custom and (rt.group, rt.kind) not in _PRINTERS
    return {
        "kind": "Table",
        "apiVersion": group_version,
        "metadata": dict(list_metadata or {}),
        "columnDefinitions": None if no_headers else columns,
        "rows": None if default_convertor and not rows else rows,
    }
