"""The status a kubelet reports for a pod, built from where the simulated run has got to.

`PodRun` is the kubelet's memory of one pod (stage, restarts, timestamps); `pod_status` turns
it into the JSON status: phase, conditions in the kubelet's order, container statuses with
state / lastState / restartCount / ready / started (an init container with restartPolicy
Always, a sidecar, runs on once the pod is initialized), addresses and start time.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from .objects import condition

Json = dict[str, Any]

#: Stages of a simulated pod.
CREATING = "creating"            # sandbox and image pull (Pending, ContainerCreating)
PULL_ERROR = "pull-error"        # ErrImagePull
PULL_BACKOFF = "pull-backoff"    # ImagePullBackOff
RUNNING = "running"
CRASH_BACKOFF = "crash-backoff"  # CrashLoopBackOff, or OnFailure restart back-off
CONFIG_ERROR = "config-error"    # CreateContainerConfigError (missing env sources)
SUCCEEDED = "succeeded"
FAILED = "failed"


@dataclass
class PodRun:
    """Where one pod's simulated run is."""

    uid: str
    ip: str
    stage: str = CREATING
    #: Clock time the stage began.
    since: float = 0.0
    start_time: str = ""
    #: Wall time the containers (last) started, and when they last ended.
    started_at: str = ""
    finished_at: str = ""
    restarts: int = 0
    pull_attempts: int = 0
    last_exit: int | None = None
    #: A deleted pod: when its containers stop (SIGTERM or, at the end of the grace, SIGKILL),
    #: their exit code, and when the kubelet removes the pod (see `termination`).
    stop_at: float | None = None
    stop_exit: int = 0
    terminate_at: float | None = None
    container_ids: dict[str, str] = field(default_factory=dict)
    #: Failed volume set-ups or container configs in a row (their retry back-off).
    blocked_attempts: int = 0
    #: Container -> its CreateContainerConfigError message, while in CONFIG_ERROR.
    config_errors: dict[str, str] = field(default_factory=dict)


def full_image(image: str) -> str:
    """How containerd names an image: registry/namespace/name:tag."""
    name = image
    if "@" not in name and ":" not in name.rsplit("/", 1)[-1]:
        name += ":latest"
    first = name.split("/", 1)[0]
    if "/" not in name:
        return f"docker.io/library/{name}"
    if "." not in first and ":" not in first and first != "localhost":
        return f"docker.io/{name}"
    return name


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _container_id(run: PodRun, container: str) -> str:
    key = f"{container}/{run.restarts}"
    if key not in run.container_ids:
        run.container_ids[key] = "containerd://" + _digest(f"{run.uid}/{key}")
    return run.container_ids[key]


def _container_status(c: Json, run: PodRun, ready: bool, pod_ref: str,
                      backoff: float) -> Json:
    name = c.get("name", "")
    image = full_image(str(c.get("image", "")))
    out: Json = {"name": name, "image": image, "imageID": "", "ready": False,
                 "started": False, "restartCount": run.restarts}
    stage = run.stage
    pulled = stage not in (CREATING, PULL_ERROR, PULL_BACKOFF, CONFIG_ERROR)
    if pulled:
        repo = image.rsplit(":", 1)[0] if "@" not in image else image.split("@")[0]
        out["imageID"] = f"{repo}@sha256:{_digest(image)}"
        out["containerID"] = _container_id(run, name)
    if stage == CREATING:
        out["state"] = {"waiting": {"reason": "ContainerCreating"}}
    elif stage == PULL_ERROR:
        out["state"] = {"waiting": {"reason": "ErrImagePull", "message": (
            f'failed to pull and unpack image "{image}": failed to resolve reference '
            f'"{image}": {image}: not found')}}
    elif stage == PULL_BACKOFF:
        out["state"] = {"waiting": {"reason": "ImagePullBackOff",
                                    "message": f'Back-off pulling image "{c.get("image")}"'}}
    elif stage == CONFIG_ERROR:
        # The kubelet starts a pod's other containers; here they wait with the failing one.
        error = run.config_errors.get(name)
        out["state"] = {"waiting": {"reason": "CreateContainerConfigError", "message": error}
                        if error else {"reason": "ContainerCreating"}}
    elif stage == RUNNING:
        out["state"] = {"running": {"startedAt": run.started_at}}
        out["started"] = True
        out["ready"] = ready
    elif stage == CRASH_BACKOFF:
        out["state"] = {"waiting": {"reason": "CrashLoopBackOff", "message": (
            f"back-off {_go_duration(backoff)} restarting failed container={name} "
            f"pod={pod_ref}")}}
    else:
        code = 0 if stage == SUCCEEDED else (run.last_exit or 1)
        out["state"] = {"terminated": {"exitCode": code,
                                       "reason": "Completed" if code == 0 else "Error",
                                       "startedAt": run.started_at,
                                       "finishedAt": run.finished_at,
                                       "containerID": out.get("containerID", "")}}
    if run.restarts and stage in (RUNNING, CRASH_BACKOFF):
        out["lastState"] = {"terminated": {
            "exitCode": run.last_exit or 1, "reason": "Error",
            "startedAt": run.started_at, "finishedAt": run.finished_at,
            "containerID": "containerd://" + _digest(f"{run.uid}/{name}/{run.restarts - 1}")}}
    else:
        out["lastState"] = {}
    out["volumeMounts"] = [{"name": m.get("name"), "mountPath": m.get("mountPath"),
                            **({"readOnly": True} if m.get("readOnly") else {})}
                           for m in c.get("volumeMounts") or ()]
    if not out["volumeMounts"]:
        del out["volumeMounts"]
    return out


def _go_duration(seconds: float) -> str:
    if seconds >= 60:
        return f"{int(seconds // 60)}m{int(seconds % 60)}s"
    if seconds == int(seconds):
        return f"{int(seconds)}s"
    return f"{seconds:g}s"


def pod_status(pod: Json, run: PodRun, *, ready: bool, host_ip: str, now: str,
               backoff: float) -> Json:
    """The kubelet's status for `pod` at `run`'s stage (`ready`: the readiness verdict)."""
    spec = pod.get("spec") or {}
    meta = pod["metadata"]
    old = pod.get("status") or {}
    pod_ref = f"{meta['name']}_{meta['namespace']}({meta['uid']})"
    containers = spec.get("containers") or []
    stage = run.stage
    finished = stage in (SUCCEEDED, FAILED)
    statuses = [_container_status(c, run, ready, pod_ref, backoff) for c in containers]
    unready = [s["name"] for s in statuses if not s["ready"]]
    phase = {SUCCEEDED: "Succeeded", FAILED: "Failed", RUNNING: "Running",
             CRASH_BACKOFF: "Running"}.get(stage, "Pending")
    if stage == CRASH_BACKOFF and spec.get("restartPolicy") == "Never":
        phase = "Failed"
    sandbox = stage != CREATING
    initialized = stage not in (CREATING, PULL_ERROR, PULL_BACKOFF) or not spec.get(
        "initContainers")
    all_ready = not unready and stage == RUNNING
    old_conditions = old.get("conditions") or []
    conditions: list[Json] = []

    def cond(ctype: str, ok: bool, reason: str | None = None,
             message: str | None = None) -> None:
        status = "True" if ok else "False"
        prev = condition(old_conditions, ctype)
        c: Json = {"type": ctype, "status": status, "lastProbeTime": None,
                   "lastTransitionTime": prev["lastTransitionTime"]
                   if prev and prev.get("status") == status else now}
        if ctype != "PodReadyToStartContainers":
            c["observedGeneration"] = meta.get("generation", 1)
        if reason:
            c["reason"] = reason
        if message:
            c["message"] = message
        conditions.append(c)

    done_reason = "PodCompleted" if stage == SUCCEEDED else "PodFailed"
    cond("PodReadyToStartContainers", sandbox and not finished)
    cond("Initialized", initialized, done_reason if finished and spec.get(
        "initContainers") else None)
    if finished:
        cond("Ready", False, done_reason)
        cond("ContainersReady", False, done_reason)
    else:
        message = f"containers with unready status: [{' '.join(unready)}]" if unready else None
        cond("Ready", all_ready, None if all_ready else "ContainersNotReady", message)
        cond("ContainersReady", all_ready, None if all_ready else "ContainersNotReady", message)
    scheduled = condition(old_conditions, "PodScheduled")
    conditions.append(scheduled or {"type": "PodScheduled", "status": "True",
                                    "lastProbeTime": None, "lastTransitionTime": now})
    status: Json = {"observedGeneration": meta.get("generation", 1), "phase": phase,
                    "conditions": conditions, "hostIP": host_ip,
                    "hostIPs": [{"ip": host_ip}]}
    if sandbox:
        status["podIP"] = run.ip
        status["podIPs"] = [{"ip": run.ip}]
    status["startTime"] = run.start_time
    if spec.get("initContainers"):
        status["initContainerStatuses"] = [_init_status(c, run, initialized)
                                           for c in spec["initContainers"]]
    status["containerStatuses"] = statuses
    if old.get("qosClass"):
        status["qosClass"] = old["qosClass"]
    if old.get("resourceClaimStatuses"):  # the resourceclaim controller's, never the kubelet's
        status["resourceClaimStatuses"] = old["resourceClaimStatuses"]
    return status


def _init_status(c: Json, run: PodRun, done: bool) -> Json:
    image = full_image(str(c.get("image", "")))
    out: Json = {"name": c.get("name", ""), "image": image, "imageID": "", "ready": done,
                 "started": False, "restartCount": 0, "lastState": {}}
    if done:
        out["imageID"] = f"{image.rsplit(':', 1)[0]}@sha256:{_digest(image)}"
        cid = "containerd://" + _digest(f"{run.uid}/init/{c.get('name')}")
        out["containerID"] = cid
        if c.get("restartPolicy") == "Always":
            # A sidecar (restartable init container) keeps running beside the containers:
            # started, and ready (its probes are not simulated), as the kubelet reports it.
            out["started"] = True
            out["state"] = {"running": {"startedAt": run.start_time}}
        else:
            out["state"] = {"terminated": {"exitCode": 0, "reason": "Completed",
                                           "startedAt": run.start_time,
                                           "finishedAt": run.start_time, "containerID": cid}}
    else:
        out["state"] = {"waiting": {"reason": "PodInitializing"}}
    return out
