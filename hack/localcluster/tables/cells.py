"""Cell values the built-in printers share, read from objects that may be malformed.

Stored built-in objects are not typed, so every reader tolerates a missing or wrongly typed field
the way a zero-valued Go field would read (`as_dict`, `as_list`, `as_str`, `as_int`). The rest are
the cells many printers show: the name and age framing a row, container names and images of a pod
template, label and selector text, quantities and load-balancer addresses.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..errors import ApiError
from ..go_format import go_float
from ..selectors import LabelSelector
from .time_format import since

Json = dict[str, Any]

__all__ = [
    "age_of",
    "as_dict",
    "as_int",
    "as_list",
    "as_str",
    "condition_true",
    "desired_replicas",
    "format_label_selector",
    "format_labels",
    "is_deleting",
    "load_balancer_ingress",
    "name_of",
    "named_row",
    "quantity",
    "selector_string",
    "template_cells",
]


def as_dict(value: Any) -> Json:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def as_int(value: Any) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    return 0


def name_of(obj: Json) -> str:
    return as_str(as_dict(obj.get("metadata")).get("name"))


def age_of(obj: Json, now: datetime) -> str:
    return since(as_dict(obj.get("metadata")).get("creationTimestamp"), now)


def named_row(obj: Json, now: datetime, *cells: Any, after_age: Sequence[Any] = ()) -> list[Any]:
    """The cells of a `named_columns` table: name, the kind's cells, age, the cells after it."""
    return [name_of(obj), *cells, age_of(obj, now), *after_age]


def is_deleting(obj: Json) -> bool:
    return as_dict(obj.get("metadata")).get("deletionTimestamp") is not None


def template_cells(obj: Json) -> list[str]:
    """The Containers and Images cells of an object with a pod template (`spec.template`)."""
    pod_spec = as_dict(as_dict(as_dict(obj.get("spec")).get("template")).get("spec"))
    containers = [as_dict(c) for c in as_list(pod_spec.get("containers"))]
    names = ",".join(as_str(c.get("name")) for c in containers)
    images = ",".join(as_str(c.get("image")) for c in containers)
    return [names, images]


def format_labels(labels: Any) -> str:
    """labels.FormatLabels: sorted k=v pairs, "<none>" when empty."""
    pairs = as_dict(labels)
    text = ",".join(f"{k}={pairs[k]}" for k in sorted(pairs))
    return text or "<none>"


def selector_string(selector: Any) -> str | None:
    """LabelSelectorAsSelector(sel).String(), or None when the selector is invalid."""
    try:
        parsed = LabelSelector.from_label_selector(selector if isinstance(selector, dict) else None)
        return str(parsed)
    except ApiError:
        return None


def format_label_selector(selector: Any) -> str:
    """metav1.FormatLabelSelector."""
    text = selector_string(selector)
    if text is None:
        return "<error>"
    return text or "<none>"


def desired_replicas(spec: Json) -> int:
    # Stored objects are defaulted; 1 is the default the apiserver would have filled in.
    value = spec.get("replicas")
    return 1 if value is None else as_int(value)


def condition_true(conditions: Any, kind: str) -> bool:
    """Whether the first condition of type `kind` has status True."""
    for cond in as_list(conditions):
        if as_dict(cond).get("type") == kind:
            return as_dict(cond).get("status") == "True"
    return False


def quantity(value: Any, *, pointer: bool = False) -> str:
    """Quantity.String() of a stored quantity; a nil *Quantity prints "<nil>", a zero one "0"."""
    if value is None:
        return "<nil>" if pointer else "0"
    if isinstance(value, float):
        return go_float(value)
    return str(value)


def load_balancer_ingress(status: Json) -> str:
    """The IPs (or else hostnames) of `status.loadBalancer.ingress`, sorted and comma-joined."""
    hosts = set()
    for entry in as_list(as_dict(status.get("loadBalancer")).get("ingress")):
        e = as_dict(entry)
        if e.get("ip"):
            hosts.add(as_str(e.get("ip")))
        elif e.get("hostname"):
            hosts.add(as_str(e.get("hostname")))
    # The server prints wide, so the 16-character clipping kubectl applies is not done here.
    return ",".join(sorted(hosts))
