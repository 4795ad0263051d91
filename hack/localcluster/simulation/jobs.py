"""The Job controller: run pods to completion, count them, and finish the Job.

Keeps up to `parallelism` pods running until `completions` have succeeded (Indexed jobs get a
completion index per pod), replaces failed pods after a back-off until more than
`backoffLimit` failures (restarts count for OnFailure pods), and writes active / ready /
succeeded / failed / terminating / startTime / completionTime with the conditions of a 1.3x
controller: SuccessCriteriaMet then Complete, or FailureTarget then Failed. Suspended Jobs
run nothing; ttlSecondsAfterFinished deletes finished Jobs; activeDeadlineSeconds fails them.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from ..storage import Change
from .clock import parse_rfc3339, rfc3339
from .loop import Context, ControlLoop, Key
from .objects import (
    condition_true,
    controller_ref,
    pod_from_template,
    pod_phase,
    pod_ready,
    set_condition,
    terminating,
)
from .pod_creation import CreateAttempts
from .writer import JOBS, PODS

Json = dict[str, Any]

INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
INDEX_LABEL = "batch.kubernetes.io/job-completion-index"


def _failures(pods: list[Json], policy: str) -> int:
    """Failed pods, plus container restarts of OnFailure pods (they count as failures too)."""
    n = sum(1 for p in pods if pod_phase(p) == "Failed")
    if policy == "OnFailure":
        n += sum(int(c.get("restartCount") or 0) for p in pods
                 for c in (p.get("status") or {}).get("containerStatuses") or ())
    return n


class JobController(ControlLoop):
    """Runs Jobs to completion or failure."""

    component = "job-controller"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.creates = CreateAttempts(self.writer, self.delays)

    def initial_keys(self) -> Iterable[Key]:
        return [(o["metadata"]["namespace"], o["metadata"]["name"])
                for o in self.writer.list_objects(JOBS)]

    def keys_for(self, change: Change) -> Iterable[Key]:
        if change.resource == JOBS:
            return [(change.obj["metadata"]["namespace"], change.obj["metadata"]["name"])]
        if change.resource == PODS:
            ref = controller_ref(change.obj)
            if ref is not None and ref.get("kind") == "Job":
                return [(change.obj["metadata"]["namespace"], ref.get("name", ""))]
        return ()

    def reconcile(self, key: Key) -> float | None:
        namespace, name = key
        job = self.writer.get(JOBS, namespace, name)
        if job is None:
            return None
        spec = job.get("spec") or {}
        old = job.get("status") or {}
        pods = self.writer.owned(PODS, job)
        policy = ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy", "Never")
        now = rfc3339()
        conditions = copy.deepcopy(old.get("conditions") or [])
        finished = condition_true(conditions, "Complete") or condition_true(conditions, "Failed")
        if finished:
            return self._after_finish(job, old)
        # Counts never go down, even when finished pods are deleted (the real controller keeps
        # them with tracking finalizers).
        succeeded = max(sum(1 for p in pods if pod_phase(p) == "Succeeded"),
                        int(old.get("succeeded") or 0))
        failed = max(_failures(pods, policy), int(old.get("failed") or 0))
        running = [p for p in pods if not terminating(p) and pod_phase(p) not in (
            "Succeeded", "Failed")]
        completions = spec.get("completions")
        suspended = bool(spec.get("suspend"))
        wake: float | None = None
        status: Json = {}
        start = old.get("startTime")
        if not suspended and not start:
            start = now
        if start:
            status["startTime"] = start
        target = ""
        if completions is not None and succeeded >= int(completions):
            target = "success"
        elif failed > int(spec.get("backoffLimit", 6)):
            target = "BackoffLimitExceeded"
        elif spec.get("activeDeadlineSeconds") is not None and start:
            began = parse_rfc3339(start)
            if began is not None:
                left = float(spec["activeDeadlineSeconds"]) - (
                    datetime.now(UTC) - began).total_seconds()
                if left <= 0:
                    target = "DeadlineExceeded"
                else:
                    wake = left
        elif completions is None and succeeded > 0 and not running:
            target = "success"  # a work queue Job is done when any pod succeeded and none run
        if target:
            # Terminal: stop what still runs; the final condition comes once they are gone.
            for pod in running:
                self.writer.delete(PODS, pod)
            if target == "success":
                set_condition(conditions, "SuccessCriteriaMet", "True", now, probe_time=True,
                              reason="CompletionsReached",
                              message="Reached expected number of succeeded pods")
            else:
                message = ("Job has reached the specified backoff limit"
                           if target == "BackoffLimitExceeded"
                           else "Job was active longer than specified deadline")
                set_condition(conditions, "FailureTarget", "True", now, probe_time=True,
                              reason=target, message=message)
            lingering = [p for p in pods if pod_phase(p) not in ("Succeeded", "Failed")]
            if not lingering:
                if target == "success":
                    set_condition(conditions, "Complete", "True", now, probe_time=True,
                                  reason="CompletionsReached",
                                  message="Reached expected number of succeeded pods")
                    status["completionTime"] = now
                    self.events.normal(job, "Completed", "Job completed")
                else:
                    c = next(c for c in conditions if c["type"] == "FailureTarget")
                    set_condition(conditions, "Failed", "True", now, probe_time=True,
                                  reason=c["reason"], message=c["message"])
                    self.events.warning(job, c["reason"], c["message"])
            running = []
        elif suspended:
            for pod in running:
                self.writer.delete(PODS, pod)
            running = []
            set_condition(conditions, "Suspended", "True", now, probe_time=True,
                          reason="JobSuspended", message="Job suspended")
        else:
            if condition_true(conditions, "Suspended"):
                set_condition(conditions, "Suspended", "False", now, probe_time=True,
                              reason="JobResumed", message="Job resumed")
            wake = self._start_pods(job, pods, running, succeeded, failed, wake)
            running = [p for p in self.writer.owned(PODS, job)
                       if not terminating(p) and pod_phase(p) not in ("Succeeded", "Failed")]
        status["active"] = len(running)
        status["ready"] = sum(1 for p in running if pod_ready(p))
        status["succeeded"] = succeeded
        status["failed"] = failed
        status["terminating"] = sum(1 for p in pods if terminating(p) and pod_phase(p) not in (
            "Succeeded", "Failed"))
        status = {k: v for k, v in status.items()
                  if v or k in ("ready", "terminating")}
        if spec.get("completionMode") == "Indexed":
            done = sorted({int(p["metadata"].get("annotations", {}).get(INDEX_ANNOTATION, -1))
                           for p in pods if pod_phase(p) == "Succeeded"})
            if done:
                status["completedIndexes"] = _ranges(done)
        status["uncountedTerminatedPods"] = {}
        if conditions:
            status["conditions"] = conditions
        self.writer.update_status(JOBS, job, status)
        retry = self.creates.retry_after(job)
        return retry if wake is None else wake if retry is None else min(wake, retry)

    def _start_pods(self, job: Json, pods: list[Json], running: list[Json], succeeded: int,
                    failed: int, wake: float | None) -> float | None:
        spec = job["spec"]
        parallelism = int(spec.get("parallelism", 1))
        completions = spec.get("completions")
        want = parallelism
        if completions is not None:
            want = min(parallelism, int(completions) - succeeded)
        missing = want - len(running)
        if missing <= 0:
            return wake
        if failed:
            # Back off before replacing failed pods, longer for each failure.
            last = max((parse_rfc3339(p["metadata"].get("creationTimestamp"))
                        for p in pods if pod_phase(p) == "Failed"), default=None,
                       key=lambda t: t or datetime.min.replace(tzinfo=UTC))
            backoff = float(self.delays.job_backoff * 2 ** (failed - 1))
            if last is not None:
                since = (datetime.now(UTC) - last).total_seconds()
                if since < backoff:
                    return backoff - since
        indexed = spec.get("completionMode") == "Indexed"
        taken = {p["metadata"].get("annotations", {}).get(INDEX_ANNOTATION)
                 for p in pods if pod_phase(p) == "Succeeded" or p in running}
        next_index = 0
        for _ in range(missing):
            labels: dict[str, str] = {}
            annotations: dict[str, str] = {}
            name = job["metadata"]["name"]
            generate = f"{name}-"
            if indexed:
                while str(next_index) in taken:
                    next_index += 1
                if completions is not None and next_index >= int(completions):
                    break
                taken.add(str(next_index))
                labels[INDEX_LABEL] = annotations[INDEX_ANNOTATION] = str(next_index)
                generate = f"{name}-{next_index}-"
            body = pod_from_template(spec.get("template") or {},
                                     namespace=job["metadata"]["namespace"], owner=job,
                                     generate_name=generate, labels=labels,
                                     annotations=annotations)
            created, refusal = self.creates.create(job, body)
            if refusal is not None:
                self.events.warning(job, "FailedCreate", f"Error creating: {refusal.message}")
                return wake
            if created is not None:
                self.events.normal(job, "SuccessfulCreate",
                                   f"Created pod: {created['metadata']['name']}")
        return wake

    def _after_finish(self, job: Json, status: Json) -> float | None:
        ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
        if ttl is None:
            return None
        finished = parse_rfc3339(status.get("completionTime")) or max(
            (parse_rfc3339(c.get("lastTransitionTime")) for c in status.get("conditions") or ()
             if c.get("type") in ("Complete", "Failed")),
            default=None, key=lambda t: t or datetime.min.replace(tzinfo=UTC))
        if finished is None:
            return None
        left = float(ttl) - (datetime.now(UTC) - finished).total_seconds()
        if left > 0:
            return left
        if not terminating(job):
            self.writer.delete(JOBS, job, propagation="Foreground")
        return None


def _ranges(indexes: list[int]) -> str:
    """"1,3-5,7": how completedIndexes lists indexes."""
    out: list[str] = []
    start = prev = indexes[0]
    i: int | None
    for i in [*indexes[1:], None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if i is not None:
            start = prev = i
    return ",".join(out)
