"""How a simulated Dynamo worker misbehaves, as tests choose: refuse, hang, or fail at first.

A `Fault` applies to the LoRA calls (`/engine/v1/load_lora`, `/engine/v1/unload_lora`, or
only those `paths` it names) of the pods a rule selects: one pod by name, or pods by label
selector. Among rules, the latest that matches wins; `Fault.none()` switches pods back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..selectors import LabelSelector

Json = dict[str, Any]

LOAD_PATH = "/engine/v1/load_lora"
UNLOAD_PATH = "/engine/v1/unload_lora"
LORA_PATHS = (LOAD_PATH, UNLOAD_PATH)

NONE, REFUSE, HANG, FAIL_FIRST = "none", "refuse", "hang", "fail-first"


@dataclass(frozen=True)
class Fault:
    """What the selected workers do with a LoRA call."""

    kind: str
    status: int = 500
    body: str = '{"status": "error", "message": "simulated failure"}'
    #: fail-first: how many calls fail (per pod) before the worker behaves.
    count: int = 0
    paths: tuple[str, ...] = LORA_PATHS

    @classmethod
    def none(cls) -> Fault:
        return cls(NONE)

    @classmethod
    def refuse(cls, status: int = 500, body: str | None = None,
               paths: tuple[str, ...] = LORA_PATHS) -> Fault:
        """Answer every call with `status` and `body`."""
        return cls(REFUSE, status, body or cls.body, paths=paths)

    @classmethod
    def hang(cls, paths: tuple[str, ...] = LORA_PATHS) -> Fault:
        """Never answer (until the pod stops or the client gives up)."""
        return cls(HANG, paths=paths)

    @classmethod
    def fail_first(cls, count: int, status: int = 500, body: str | None = None,
                   paths: tuple[str, ...] = LORA_PATHS) -> Fault:
        """Answer the first `count` calls of each pod with `status`, then behave."""
        return cls(FAIL_FIRST, status, body or cls.body, count=count, paths=paths)


@dataclass
class FaultRule:
    namespace: str
    name: str | None
    selector: LabelSelector | None
    fault: Fault
    #: fail-first: calls failed so far, per pod name.
    failed: dict[str, int] = field(default_factory=dict)

    def matches(self, namespace: str, name: str, labels: dict[str, str]) -> bool:
        if namespace != self.namespace:
            return False
        if self.name is not None:
            return name == self.name
        return self.selector is None or self.selector.matches(labels)


class Faults:
    """The rules in force, latest first when looked up."""

    def __init__(self) -> None:
        self._rules: list[FaultRule] = []

    def add(self, namespace: str, fault: Fault, *, name: str | None = None,
            selector: str | None = None) -> None:
        self._rules.append(FaultRule(namespace, name,
                                     LabelSelector.parse(selector) if selector else None, fault))

    def clear(self) -> None:
        self._rules.clear()

    def for_call(self, namespace: str, name: str, labels: dict[str, str],
                 path: str) -> Fault | None:
        """The fault that applies to this call now (a fail-first rule counts it)."""
        for rule in reversed(self._rules):
            if not rule.matches(namespace, name, labels):
                continue
            fault = rule.fault
            if fault.kind == NONE or path not in fault.paths:
                return None
            if fault.kind == FAIL_FIRST:
                done = rule.failed.get(name, 0)
                if done >= fault.count:
                    return None
                rule.failed[name] = done + 1
            return fault
        return None
