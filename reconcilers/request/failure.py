"""Why a profiling Job failed, in one sentence a user can act on.

`kubectl describe dgdr` should be enough: the message names the Job's own reason, the pod,
the container that failed with its exit code and reason, and the profiler's message from
`profiler_status.yaml` (or the container's termination message) when there is one.
"""

from __future__ import annotations

from typing import Any

Json = dict[str, Any]

PROFILER_CONTAINER = "profiler"


def condition_true(obj: Json, ctype: str) -> bool:
    return any(c.get("type") == ctype and c.get("status") == "True"
               for c in (obj.get("status") or {}).get("conditions") or [])


def _owned_by(pod: Json, job: Json) -> bool:
    uid = job["metadata"].get("uid")
    return any(r.get("uid") == uid for r in pod["metadata"].get("ownerReferences") or [])


def _terminated(pod: Json) -> list[tuple[str, Json]]:
    """(container, terminated state) of the pod's failed containers, profiler first."""
    out = []
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        term = (status.get("state") or {}).get("terminated") or (
            status.get("lastState") or {}).get("terminated")
        if term and term.get("exitCode"):
            out.append((str(status.get("name")), term))
    return sorted(out, key=lambda item: item[0] != PROFILER_CONTAINER)


def job_failure_message(job: Json, pods: list[Json], profiler_message: str = "") -> str:
    """"profiling job failed: <job message>. Details: Pod: <p>, Container: <c>, ExitCode: <n>,
    Reason: <r>[, Message: <m>]" from the Job and its pods (the latest failed one)."""
    failed: Json = next((c for c in (job.get("status") or {}).get("conditions") or []
                   if c.get("type") == "Failed"), {})
    text = f"profiling job failed: {failed.get('message') or failed.get('reason') or 'failed'}"
    mine = [p for p in pods if _owned_by(p, job) and _terminated(p)]
    mine.sort(key=lambda p: str(p["metadata"].get("creationTimestamp") or ""))
    if mine:
        pod = mine[-1]
        container, term = _terminated(pod)[0]
        text += (f". Details: Pod: {pod['metadata']['name']}, Container: {container}, "
                 f"ExitCode: {term.get('exitCode')}, Reason: {term.get('reason') or 'Error'}")
        message = profiler_message or str(term.get("message") or "").strip()
        if message:
            text += f", Message: {message}"
    elif profiler_message:
        text += f". Details: Message: {profiler_message}"
    return text
