"""The fuzz run: draw objects (`specs`), create each over HTTP against a local cluster with the
operator process (and its admission webhooks) running, and judge what happens.

For every object one of these must hold:
- refused by the API server or a webhook (4xx) with a message that names a field;
- accepted and settled: a successful state, or a failed one whose condition names a field
  (for DGDRs, DynamoModels and adapters: a status written by the operator).
And for every object: the operator logs no error and no traceback, is still running, and makes
a bounded number of writes in the object's namespace, none once it has settled (no hot loop).
Each object gets a namespace of its own, so writes are counted per object.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from controller.client import KubeClient
from controller.errors import ApiError
from controller.resource import Resource
from hack.fuzz.specs import Drawn
from hack.localcluster.request_stats import WRITE_VERBS
from hack.localcluster.server import LocalCluster

Json = dict[str, Any]
GROUP, VERSION = "nvidia.com", "v1alpha1"
NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False)
RESOURCES = {kind: Resource(GROUP, VERSION, plural, kind) for kind, plural in (
    ("DynamoGraphDeployment", "dynamographdeployments"),
    ("DynamoComponentDeployment", "dynamocomponentdeployments"),
    ("DynamoGraphDeploymentRequest", "dynamographdeploymentrequests"),
    ("DynamoModel", "dynamomodels"),
    ("DynamoGraphDeploymentScalingAdapter", "dynamographdeploymentscalingadapters"))}
OPERATOR_AGENT = "dynamo-operator"
#: Words that show a message names a field: a dotted path into the object, or a JSON path.
_FIELD = re.compile(r"(spec|metadata)(\.|\[|\b)|\.[A-Za-z]+\b|unknown field|body")
#: Reasons of a component's failure that only a new spec ends.
_COMPONENT_FAILURES = {"ValidationFailed", "GenerationFailed", "ReconcileFailed",
                       "NameConflict"}


@dataclass
class FuzzSettings:
    """Bounds of one run."""

    settle_timeout: float = 20.0
    #: Writes in an object's namespace (the object, its children, their statuses, events).
    max_writes: int = 200
    #: How long an object must stay quiet once settled.
    quiet_window: float = 0.5
    max_quiet_writes: int = 2


@dataclass
class Outcome:
    kind: str
    name: str
    mutation: str
    path: str
    result: str  # refused, successful, failed, settled
    message: str = ""
    writes: int = 0


@dataclass
class FuzzReport:
    outcomes: list[Outcome] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)

    def figures(self) -> Json:
        by_result = Counter(o.result for o in self.outcomes)
        by_kind = Counter(o.kind for o in self.outcomes)
        by_mutation = Counter(o.mutation or "none" for o in self.outcomes)
        writes = [o.writes for o in self.outcomes]
        return {"examples": len(self.outcomes), "violations": len(self.violations),
                "results": dict(sorted(by_result.items())),
                "kinds": dict(sorted(by_kind.items())),
                "mutations": dict(sorted(by_mutation.items())),
                "maxWritesPerObject": max(writes, default=0)}


class FuzzRun:
    """Judges drawn objects one at a time against a running operator."""

    def __init__(self, kube: KubeClient, cluster: LocalCluster, log_path: Path,
                 operator: asyncio.subprocess.Process,
                 settings: FuzzSettings | None = None) -> None:
        self.kube = kube
        self.cluster = cluster
        self.log_path = log_path
        self.operator = operator
        self.settings = settings or FuzzSettings()
        self.report = FuzzReport()
        self._log_offset = 0
        self._count = 0

    async def check(self, drawn: Drawn) -> Outcome:
        """Create one object in a namespace of its own and judge it; violations are added
        to the report (the run goes on)."""
        self._count += 1
        namespace = f"fz-{self._count}"
        await self.kube.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                            "metadata": {"name": namespace}})
        obj = json.loads(json.dumps(drawn.obj))
        obj.setdefault("metadata", {})["namespace"] = namespace
        outcome = Outcome(drawn.kind, drawn.name, drawn.mutation, drawn.path, "")
        problems: list[str] = []
        try:
            await self.kube.create(RESOURCES[drawn.kind], obj)
        except (aiohttp.ClientError, TimeoutError) as err:
            outcome.result, outcome.message = "unanswered", repr(err)[:300]
            problems.append(f"the create got no usable answer: {outcome.message}")
        except ApiError as err:
            outcome.result, outcome.message = "refused", err.message or err.reason
            if err.code >= 500:
                problems.append(f"create answered {err.code}: {outcome.message[:300]}")
            elif err.code != 413 and not _FIELD.search(outcome.message):
                problems.append(f"refused without naming a field: {outcome.message[:300]}")
        else:
            problems += await self._settle(drawn.kind, namespace, drawn.name, outcome)
            problems += await self._quiet(namespace)
        outcome.writes = self._writes(namespace)
        if outcome.writes > self.settings.max_writes:
            problems.append(f"{outcome.writes} writes (bound {self.settings.max_writes})")
        problems += self._operator_health()
        for problem in problems:
            self.report.violations.append(
                f"{drawn.kind} {namespace}/{drawn.name} [{drawn.mutation or 'valid'}"
                f"{' at ' + drawn.path if drawn.path else ''}]: {problem}")
        self.report.outcomes.append(outcome)
        with contextlib.suppress(ApiError):
            await self.kube.delete(NAMESPACES, None, namespace)
        return outcome

    # --- judging -----------------------------------------------------------------------------

    async def _settle(self, kind: str, namespace: str, name: str, outcome: Outcome) -> list[str]:
        deadline = time.monotonic() + self.settings.settle_timeout
        last: Json = {}
        while time.monotonic() < deadline:
            try:
                last = await self.kube.get(RESOURCES[kind], namespace, name)
            except ApiError as err:
                return [f"cannot read it back: {err}"]
            verdict = _verdict(kind, last)
            if verdict is not None:
                outcome.result, outcome.message = verdict
                if (verdict[0] == "failed" and not _FIELD.search(verdict[1])
                        and _PROFILER_VERDICT not in verdict[1]):
                    return [f"failed without naming a field: {verdict[1][:300]}"]
                return []
            await asyncio.sleep(0.1)
        status = json.dumps(last.get("status") or {})[:400]
        if kind == "DynamoGraphDeploymentRequest" and (last.get("status") or {}).get(
                "state") == "Profiling":
            # Waiting on the profiler, a program of its own (the simulated one takes its
            # time with odd configs): the operator has done its part.
            outcome.result = "profiling"
            return []
        if _waiting_on_cluster(kind, last):
            # Pending for a reason the operator reports (no capacity left in the simulated
            # nodes after hundreds of objects, an image that does not pull): its verdict.
            outcome.result = "waiting"
            return []
        outcome.result = "stuck"
        return [f"no state within {self.settings.settle_timeout:g}s: {status}"]

    async def _quiet(self, namespace: str) -> list[str]:
        before = self._writes(namespace)
        await asyncio.sleep(self.settings.quiet_window)
        more = self._writes(namespace) - before
        if more > self.settings.max_quiet_writes:
            return [f"{more} writes within {self.settings.quiet_window:g}s of settling"]
        return []

    def _writes(self, namespace: str) -> int:
        return self.cluster.stats.count(verbs=WRITE_VERBS, namespace=namespace,
                                        user_agent=OPERATOR_AGENT)

    def _operator_health(self) -> list[str]:
        problems = []
        if self.operator.returncode is not None:
            problems.append(f"the operator exited ({self.operator.returncode})")
        for line in self._new_log_lines():
            if line.get("level") == "error" or "exception" in line or "exc_info" in line:
                problems.append(f"operator logged: {json.dumps(line)[:500]}")
        return problems

    def _new_log_lines(self) -> Iterator[Json]:
        with self.log_path.open("rb") as log:
            log.seek(self._log_offset)
            data = log.read()
        end = data.rfind(b"\n") + 1
        self._log_offset += end
        for raw in data[:end].splitlines():
            try:
                line = json.loads(raw)
            except json.JSONDecodeError:
                line = {"level": "error", "event": raw.decode(errors="replace")}
            if isinstance(line, dict):
                yield line


#: A DGDR failed by its profiler, whose own message (an SLA no configuration meets...) the
#: operator passes on: the profiler's verdict, not a field of the spec.
_PROFILER_VERDICT = "profiling job failed"
_CLUSTER_REASONS = {"insufficient_capacity", "image_pull_failed", "Unschedulable",
                    "ErrImagePull", "ImagePullBackOff", "InvalidImageName"}


def _waiting_on_cluster(kind: str, obj: Json) -> bool:
    if kind == "DynamoGraphDeployment":
        return (_condition(obj, "Ready") or {}).get("reason") in _CLUSTER_REASONS
    if kind == "DynamoComponentDeployment":
        return (_condition(obj, "Available") or {}).get("reason") in _CLUSTER_REASONS
    return False


def _condition(obj: Json, kind: str) -> Json | None:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == kind:
            return c
    return None


def _verdict(kind: str, obj: Json) -> tuple[str, str] | None:
    """(result, message) once the object has settled; None while it has not."""
    status = obj.get("status") or {}
    if kind == "DynamoGraphDeployment":
        state = status.get("state")
        ready = _condition(obj, "Ready") or {}
        if state == "successful":
            return "successful", ""
        if state == "failed":
            return "failed", str(ready.get("message", ""))
        return None
    if kind == "DynamoComponentDeployment":
        valid = _condition(obj, "Valid") or {}
        available = _condition(obj, "Available") or {}
        if valid.get("status") == "False":
            return "failed", str(valid.get("message", ""))
        if available.get("status") == "True":
            return "successful", ""
        if available.get("reason") in _COMPONENT_FAILURES:
            return "failed", str(available.get("message", ""))
        return None
    if kind == "DynamoGraphDeploymentRequest":
        # A state machine: settled in a state where it waits for nobody.
        state = str(status.get("state") or "")
        message = " ".join(str(c.get("message", "")) for c in status.get("conditions") or []
                           if isinstance(c, dict) and c.get("status") == "False")
        if state == "Failed":
            return "failed", message
        if state in ("Ready", "DeploymentDeleted"):
            return "successful", ""
        return None
    # Models and adapters: the operator has looked at it and said something.
    if status:
        state = str(status.get("state") or "")
        message = " ".join(str(c.get("message", "")) for c in status.get("conditions") or []
                           if isinstance(c, dict))
        return ("failed" if state.lower() == "failed" else "settled"), message
    return None
