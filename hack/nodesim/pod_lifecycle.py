"""One pod's life on a simulated kubelet, step by step, written through the API.

It reuses the in-process simulation's pieces: `PodRun` and `pod_status` (the status a
kubelet reports), `termination` (SIGTERM, the containers' stop, exit codes), `Behaviors`
(readiness overrides, Job outcomes and durations, SIGTERM handling, from the pods'
`localcluster.dev/*` annotations) and `Workers` (a Dynamo worker pod answers HTTP on its
address and system port while its container runs).

A bound pod goes ContainerCreating -> Running after `pod_start`; it is ready at once, or
after `ready_delay` (or its probe's initial delay) when it has a readiness probe, or after
the pod's `localcluster.dev/ready-after` seconds (`Behaviors.set_ready_after`); a Job's
pod runs to completion, a DGDR's profiling pod as the profiler would (`profiler_output`). A
deleted pod's containers stop (SIGTERM) after `container_stop`, or the pod's
`localcluster.dev/stop-after` seconds, at most its grace period (else they are killed with
137 when it ends); its status shows them terminated and the pod NotReady, then the pod is
deleted with grace 0 and its UID as a precondition, as the kubelet's status manager does.
Crash loops, image-pull failures and volume checks are the in-process kubelet's alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from controller.client import KubeClient
from controller.errors import NotFound
from controller.resource import Resource
from hack.localcluster.simulation.addresses import PodAddresses
from hack.localcluster.simulation.behaviors import Behaviors, JobRun
from hack.localcluster.simulation.clock import rfc3339
from hack.localcluster.simulation.objects import controller_ref, terminating
from hack.localcluster.simulation.pod_status import (
    CREATING,
    FAILED,
    RUNNING,
    SUCCEEDED,
    PodRun,
    pod_status,
)
from hack.localcluster.simulation.termination import grace_period, stop_plan
from hack.localcluster.simulation.workers import Workers

from .config import PodDelays
from .profiler_output import profiling_run, write_output

Json = dict[str, Any]
Key = tuple[str, str]

PODS = Resource("", "v1", "pods", "Pod")
#: Seconds a resumed pod that was ready is taken to have been running.
_LONG_AGO = 86400.0
JOBS = Resource("batch", "v1", "jobs", "Job")


class PodLifecycle:
    """The runs of every pod on this simulator's nodes; `step` moves one pod on."""

    def __init__(self, client: KubeClient, delays: PodDelays, behaviors: Behaviors,
                 workers: Workers, host_ip: Callable[[str], str]) -> None:
        self.client = client
        self.delays = delays
        self.behaviors = behaviors
        self.workers = workers
        #: Node name -> the node's InternalIP.
        self.host_ip = host_ip
        self.addresses = PodAddresses()
        self.runs: dict[Key, PodRun] = {}
        self._jobs: dict[Key, Json | None] = {}
        self._written: dict[Key, Json] = {}
        self._deleted: set[Key] = set()
        #: Profiling pods whose output ConfigMap has been written.
        self._outputs: set[Key] = set()
        #: Pods a previous simulator ran, whose status is not written again if it says the
        #: same (`_summary`).
        self._resumed: set[Key] = set()
        #: Status writes and final deletes made, for figures.
        self.status_writes = 0
        self.deletes = 0

    def forget(self, key: Key) -> None:
        """The pod is gone: its worker endpoint and address go too."""
        run = self.runs.pop(key, None)
        self.workers.stop(key)
        self._jobs.pop(key, None)
        self._written.pop(key, None)
        self._deleted.discard(key)
        self._outputs.discard(key)
        self._resumed.discard(key)
        if run is not None:
            self.addresses.release(run.ip)

    async def step(self, key: Key, pod: Json) -> float | None:
        """Move the pod on as far as is due now; seconds until its next step (None: none
        is due until the pod changes)."""
        run = self.runs.get(key)
        if run is not None and run.uid != pod["metadata"]["uid"]:
            self.forget(key)
            run = None
        if run is None:
            run = await self._admit(key, pod)
        now = asyncio.get_running_loop().time()
        if terminating(pod):
            return await self._terminate(key, pod, run, now)
        wait = self._advance(key, pod, run, now)
        while wait == 0.0:
            wait = self._advance(key, pod, run, now)
        if run.stage in (SUCCEEDED, FAILED) and key not in self._outputs and \
                profiling_run(pod) is not None:
            await write_output(self.client, pod)  # before the status says it has ended
            self._outputs.add(key)
        ready, ready_wait = self._readiness(pod, run, now)
        self.workers.sync(key, pod, run.ip, run.stage == RUNNING, run.restarts)
        await self._write_status(key, pod, run, ready)
        waits = [w for w in (wait, ready_wait) if w is not None]
        return min(waits) if waits else None

    async def _admit(self, key: Key, pod: Json) -> PodRun:
        spec = pod.get("spec") or {}
        status = pod.get("status") or {}
        if spec.get("hostNetwork"):
            ip = self.host_ip(spec.get("nodeName", ""))
        elif status.get("podIP"):
            ip = str(status["podIP"])
            self.addresses.claim(ip)
        else:
            ip = self.workers.allocate(pod, self.addresses)
        run = PodRun(uid=pod["metadata"]["uid"], ip=ip,
                     since=asyncio.get_running_loop().time(),
                     start_time=status.get("startTime") or rfc3339())
        if _resume(run, status):
            self._resumed.add(key)
        self.runs[key] = run
        ref = controller_ref(pod)
        job: Json | None = None
        if ref is not None and ref.get("kind") == "Job":
            try:
                job = await self.client.get(JOBS, key[0], str(ref.get("name", "")))
            except NotFound:
                job = None
        self._jobs[key] = job
        return run

    def _job_run(self, key: Key, pod: Json) -> JobRun | None:
        profiling = profiling_run(pod)
        if profiling is not None:
            return profiling
        return self.behaviors.job_run(pod, self._jobs.get(key), self.delays.job_pod_duration)

    def _advance(self, key: Key, pod: Json, run: PodRun, now: float) -> float | None:
        """One step of the run if one is due; 0.0 when a step was taken."""
        if run.stage == CREATING:
            due = run.since + self.delays.pod_start
            if now < due:
                return due - now
            run.stage, run.since, run.started_at = RUNNING, now, rfc3339()
            return 0.0
        if run.stage == RUNNING:
            job_run = self._job_run(key, pod)
            if job_run is None:
                return None
            due = run.since + job_run.duration
            if now < due:
                return due - now
            code = 0 if job_run.outcome == "succeed" else 1
            self._stop(run, code, now)
            return None
        return None

    def _stop(self, run: PodRun, code: int, now: float) -> None:
        run.stage = SUCCEEDED if code == 0 else FAILED
        run.last_exit = code
        run.finished_at = rfc3339()
        run.since = now

    def _readiness(self, pod: Json, run: PodRun, now: float) -> tuple[bool, float | None]:
        if run.stage != RUNNING:
            return False, None
        override = self.behaviors.ready_override(pod)
        if override is not None:
            return override, None
        delay = self.behaviors.ready_after(pod)
        if delay is None:
            probes = [c["readinessProbe"] for c in (pod.get("spec") or {}).get("containers")
                      or () if c.get("readinessProbe")]
            if not probes:
                return True, None
            delay = self.delays.ready_delay
            if delay is None:
                delay = float(max(int(p.get("initialDelaySeconds") or 0) for p in probes))
        ready_at = run.since + delay
        return (True, None) if now >= ready_at else (False, ready_at - now)

    def _stop_delay(self, pod: Json) -> float:
        delay = self.behaviors.stop_after(pod)
        return self.delays.container_stop if delay is None else delay

    async def _terminate(self, key: Key, pod: Json, run: PodRun, now: float) -> float | None:
        if key in self._deleted:
            return None
        if run.stop_at is None:
            run.stop_at = now
            if run.stage == RUNNING:
                delay, run.stop_exit = stop_plan(
                    ignores_sigterm=self.behaviors.ignores_sigterm(pod),
                    runs_to_completion=self._job_run(key, pod) is not None,
                    grace=grace_period(pod), stop_delay=self._stop_delay(pod))
                run.stop_at = now + delay
        if run.stage == RUNNING:
            if now < run.stop_at:
                return run.stop_at - now
            self._stop(run, run.stop_exit, now)
        self.workers.sync(key, pod, run.ip, False, run.restarts)
        if run.stage in (SUCCEEDED, FAILED):
            await self._write_status(key, pod, run, False)
        if run.terminate_at is None:
            run.terminate_at = now + self.delays.pod_termination
        if now < run.terminate_at:
            return run.terminate_at - now
        try:
            await self.client.request(
                "DELETE", PODS.path(key[0], key[1]),
                body={"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0,
                      "preconditions": {"uid": run.uid}})
            self.deletes += 1
        except NotFound:
            pass
        self._deleted.add(key)
        return None

    async def _write_status(self, key: Key, pod: Json, run: PodRun, ready: bool) -> None:
        node = (pod.get("spec") or {}).get("nodeName", "")
        status = pod_status(pod, run, ready=ready, host_ip=self.host_ip(node), now=rfc3339(),
                            backoff=0.0)
        if self._written.get(key) == _comparable(status):
            return
        if key in self._resumed:
            self._resumed.discard(key)
            if _summary(status) == _summary(pod.get("status") or {}):
                self._written[key] = _comparable(status)
                return
        await self.client.patch(PODS, key[0], key[1], {"status": status}, subresource="status")
        self._written[key] = _comparable(status)
        self.status_writes += 1


def _resume(run: PodRun, status: Json) -> bool:
    """A pod a previous simulator ran (a restart with --keep-nodes) goes on where its status
    says it was, as a restarted kubelet finds its containers still running; True if it
    did."""
    first = (status.get("containerStatuses") or [{}])[0]
    state = first.get("state") or {}
    run.restarts = int(first.get("restartCount") or 0)
    if status.get("phase") == "Running" and "running" in state:
        run.stage = RUNNING
        run.started_at = str(state["running"].get("startedAt") or rfc3339())
        if any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in status.get("conditions") or ()):
            run.since -= _LONG_AGO  # its readiness delay (and a Job's run) long over
    elif status.get("phase") in ("Succeeded", "Failed"):
        terminated = state.get("terminated") or {}
        run.stage = SUCCEEDED if status["phase"] == "Succeeded" else FAILED
        run.last_exit = terminated.get("exitCode")
        run.started_at = str(terminated.get("startedAt") or "")
        run.finished_at = str(terminated.get("finishedAt") or "")
    else:
        return False
    return True


def _summary(status: Json) -> Json:
    """What a reader of a pod's status acts on: phase, address, conditions, container states."""
    return {"phase": status.get("phase"), "podIP": status.get("podIP"),
            "conditions": sorted((c.get("type"), c.get("status"))
                                 for c in status.get("conditions") or ()),
            "containers": [(c.get("name"), c.get("ready"), c.get("restartCount"),
                            sorted(c.get("state") or {}))
                           for c in status.get("containerStatuses") or ()]}


def _comparable(status: Json) -> Json:
    """The status without its transition times, which change on every build."""
    out = dict(status)
    out["conditions"] = [{k: v for k, v in c.items() if k != "lastTransitionTime"}
                         for c in status.get("conditions") or ()]
    return out
