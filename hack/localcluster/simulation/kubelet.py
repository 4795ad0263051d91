"""The simulated kubelets: run the pods bound to simulated nodes and report their status.

A bound pod goes ContainerCreating -> Running after `Delays.pod_start`, becomes ready at once
(or after `Delays.pod_ready` when it has a readiness probe; after `localcluster.dev/ready-after`
seconds when the pod or a test's `Behaviors.set_ready_after` says so) unless a test holds it
unready;
crash-loops or fails its image pull when asked to (see `behaviors`); runs to completion when
its restartPolicy is Never/OnFailure and it belongs to a Job (or says so). A deleted pod's
containers get SIGTERM, stop (after `Delays.container_stop`, or `localcluster.dev/stop-after`
seconds, at most the grace period), show `terminated` with the pod NotReady and in a terminal
phase, and the pod is removed after that (`termination`). What the containers print is kept
in `logs` (`container_logs`). A node marked down has no working kubelet.

A pod stays in ContainerCreating with FailedMount events while a ConfigMap or Secret one of
its volumes needs is missing, and its containers wait in CreateContainerConfigError while an
env source is (`volumes`); both are tried again after a back-off and whenever a ConfigMap or
Secret of the namespace changes.

A running Dynamo worker pod answers HTTP on its address and system port (`workers`), and
publishes its DynamoWorkerMetadata when its discovery is Kubernetes (`worker_metadata`); a
running frontend pod answers on its http port, with the worker generations it can route to
(`generations`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..storage import DELETED, Change
from .behaviors import JobRun
from .clock import rfc3339
from .container_logs import ContainerLogs
from .loop import Context, ControlLoop, Key
from .node_objects import SIMULATED_LABEL
from .objects import controller_ref, terminating
from .pod_status import (
    CONFIG_ERROR,
    CRASH_BACKOFF,
    CREATING,
    FAILED,
    PULL_BACKOFF,
    PULL_ERROR,
    RUNNING,
    SUCCEEDED,
    PodRun,
    full_image,
    pod_status,
)
from .profiler import Profiler
from .termination import grace_period, stop_message, stop_plan
from .volumes import CONFIG_MAPS, SECRETS, env_problems, mount_problems
from .worker_metadata import MANAGER as WORKER_MANAGER
from .worker_metadata import MetadataPublisher
from .workers import Workers
from .writer import JOBS, NODES, PODS, Writer

Json = dict[str, Any]


class Kubelet(ControlLoop):
    """All simulated nodes' kubelets in one loop, keyed by pod."""

    manager = "kubelet"
    component = "kubelet"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.runs: dict[Key, PodRun] = {}
        #: Namespace -> pods waiting for a ConfigMap or Secret there.
        self.blocked: dict[str, set[Key]] = {}
        #: DGDR profiling pods: the profiler image's and output copier's part.
        self.profiler = Profiler(self.writer, self.delays.profiler_run)
        #: What the containers print (see `container_logs`).
        self.logs = ContainerLogs()
        #: Dynamo worker pods' HTTP endpoints (see `workers`).
        self.workers = Workers(self.logs, on_start=MetadataPublisher(
            Writer(ctx.ops, WORKER_MANAGER)).publish,
            pods=lambda namespace: self.writer.list_objects(PODS, namespace))

    def initial_keys(self) -> Iterable[Key]:
        return [(p["metadata"]["namespace"], p["metadata"]["name"])
                for p in self.writer.list_objects(PODS) if (p.get("spec") or {}).get("nodeName")]

    def keys_for(self, change: Change) -> Iterable[Key]:
        if change.resource == PODS:
            meta = change.obj["metadata"]
            if change.type == DELETED or (change.obj.get("spec") or {}).get("nodeName"):
                return [(meta["namespace"], meta["name"])]
        elif change.resource == NODES:
            return self.pods_on(change.obj["metadata"]["name"])
        elif change.resource in (CONFIG_MAPS, SECRETS):
            return self.blocked.pop(change.obj["metadata"].get("namespace", ""), set())
        return ()

    def pods_on(self, node: str | None = None) -> list[Key]:
        """Keys of the pods bound to `node` (None: to any node)."""
        pods = self.writer.list_objects(PODS) if node is None else self.writer.pods_on(node)
        return [(p["metadata"]["namespace"], p["metadata"]["name"])
                for p in pods if (p.get("spec") or {}).get("nodeName")]

    # --- reconcile -----------------------------------------------------------------------

    def reconcile(self, key: Key) -> float | None:
        namespace, name = key
        pod = self.writer.get(PODS, namespace, name)
        run = self.runs.get(key)
        if pod is None or (run is not None and run.uid != pod["metadata"]["uid"]):
            self._forget(key)
            run = None
            if pod is None:
                return None
        assert pod is not None
        node_name = (pod.get("spec") or {}).get("nodeName")
        node = self.writer.get(NODES, "", node_name) if node_name else None
        if node is None or SIMULATED_LABEL not in (node["metadata"].get("labels") or {}):
            return None
        if node_name in self.ctx.nodes_down:
            return None  # the kubelet there is gone; the node controller owns the pod's fate
        if run is None:
            run = self._admit(key, pod, node)
        if terminating(pod):
            return self._terminate(key, pod, run, node)
        wait = self._advance(pod, run, node_name or "")
        ready_wait = self._report(key, pod, run, node)
        waits = [w for w in (wait, ready_wait) if w is not None]
        return min(waits) if waits else None

    def _report(self, key: Key, pod: Json, run: PodRun, node: Json) -> float | None:
        """Write the pod's status as the run has it; seconds until readiness changes."""
        self.workers.sync(key, pod, run.ip, run.stage == RUNNING, run.restarts)
        ready, ready_wait = self._readiness(pod, run)
        status = pod_status(pod, run, ready=ready, host_ip=_node_ip(node), now=rfc3339(),
                            backoff=self._crash_backoff(run))
        self.writer.update_status(PODS, pod, status)
        return ready_wait

    def _admit(self, key: Key, pod: Json, node: Json) -> PodRun:
        status = pod.get("status") or {}
        now = self.ctx.clock.now()
        if (pod.get("spec") or {}).get("hostNetwork"):
            ip = _node_ip(node)
        elif status.get("podIP"):
            ip = status["podIP"]
            self.ctx.addresses.claim(ip)
        else:
            ip = self.workers.allocate(pod, self.ctx.addresses)
        run = PodRun(uid=pod["metadata"]["uid"], ip=ip, since=now,
                     start_time=status.get("startTime") or rfc3339())
        # A pod restored from disk resumes where its status says it was.
        phase = status.get("phase")
        first = (status.get("containerStatuses") or [{}])[0]
        run.restarts = int(first.get("restartCount") or 0)
        if phase == "Running":
            run.stage = RUNNING
            run.started_at = ((first.get("state") or {}).get("running") or {}).get(
                "startedAt", rfc3339())
        elif phase in ("Succeeded", "Failed"):
            run.stage = SUCCEEDED if phase == "Succeeded" else FAILED
            term = (first.get("state") or {}).get("terminated") or {}
            run.started_at = term.get("startedAt", "")
            run.finished_at = term.get("finishedAt", "")
            run.last_exit = term.get("exitCode")
        self.runs[key] = run
        return run

    def _forget(self, key: Key) -> None:
        run = self.runs.pop(key, None)
        self.workers.stop(key)
        self.logs.forget(key)
        if run is not None:
            self.ctx.addresses.release(run.ip)

    def _terminate(self, key: Key, pod: Json, run: PodRun, node: Json) -> float | None:
        """SIGTERM, the containers' stop (or SIGKILL at the end of the grace), the terminal
        status, then the pod's removal (see `termination`)."""
        now = self.ctx.clock.now()
        if run.stop_at is None:
            grace = grace_period(pod)
            run.stop_at = now
            if run.stage == RUNNING:
                delay, run.stop_exit = stop_plan(
                    ignores_sigterm=self.ctx.behaviors.ignores_sigterm(pod),
                    runs_to_completion=self._job_run(pod) is not None, grace=grace,
                    stop_delay=self._stop_delay(pod))
                run.stop_at = now + delay
                for c in _containers(pod):
                    self._event(pod, "Normal", "Killing", f"Stopping container {c.get('name')}")
        if run.stage == RUNNING:
            if now < run.stop_at:
                return run.stop_at - now
            code = run.stop_exit
            for c in _containers(pod):
                self.logs.write(key, c.get("name", ""), stop_message(code, grace_period(pod)))
            self._finish(pod, run, SUCCEEDED if code == 0 else FAILED, code, quiet=True)
        if run.stage in (SUCCEEDED, FAILED):
            self._report(key, pod, run, node)  # the terminal status, before the removal
        if run.terminate_at is None:
            run.terminate_at = now + self.delays.pod_termination
        if now < run.terminate_at:
            return run.terminate_at - now
        if self.writer.delete(PODS, pod, grace=0):
            self._forget(key)
        return None

    # --- the run's state machine ---------------------------------------------------------

    def _advance(self, pod: Json, run: PodRun, node_name: str) -> float | None:
        """Move the run on by at most one step; return seconds until the next step is due."""
        now = self.ctx.clock.now()
        mode = self.ctx.behaviors.mode(pod)
        d = self.delays
        stage = run.stage
        if stage == CREATING:
            problems = mount_problems(pod, self.writer.get)
            if problems:
                for volume, error in problems:
                    self._event(pod, "Warning", "FailedMount",
                                f'MountVolume.SetUp failed for volume "{volume}" : {error}')
                run.since = now  # the sandbox and pull begin only once every volume is set up
                return self._blocked(pod, run)
            due = run.since + d.pod_start
            if now < due:
                return due - now
            if mode == "image-pull-failure":
                self._enter(run, PULL_ERROR)
                self._pull_failed(pod)
            else:
                self._start(pod, run)
        elif stage in (PULL_ERROR, PULL_BACKOFF):
            if mode != "image-pull-failure":
                self._start(pod, run)
            else:
                due = run.since + (d.image_pull_backoff if stage == PULL_ERROR
                                   else self._pull_backoff(run))
                if now < due:
                    return due - now
                if stage == PULL_ERROR:
                    self._enter(run, PULL_BACKOFF)
                    for c in _containers(pod):
                        self._event(pod, "Normal", "BackOff",
                                    f'Back-off pulling image "{c.get("image")}"')
                    self._event(pod, "Warning", "Failed", "Error: ImagePullBackOff")
                else:
                    run.pull_attempts += 1
                    self._enter(run, PULL_ERROR)
                    self._pull_failed(pod)
        elif stage == RUNNING:
            job_run = self._job_run(pod)
            if mode == "crashloop":
                due = run.since + d.crash_run
                if now < due:
                    return due - now
                self._crash(pod, run, exit_code=1)
            elif job_run is not None:
                due = run.since + job_run.duration
                if now < due:
                    return due - now
                self.profiler.finish(pod)
                if job_run.outcome == "succeed":
                    self._finish(pod, run, SUCCEEDED, 0)
                elif (pod.get("spec") or {}).get("restartPolicy") == "OnFailure":
                    self._crash(pod, run, exit_code=1)
                else:
                    self._finish(pod, run, FAILED, 1)
            else:
                return None
        elif stage == CONFIG_ERROR:
            due = run.since + self._blocked_backoff(run)
            if now < due:
                return due - now
            self._start(pod, run)
        elif stage == CRASH_BACKOFF:
            if (pod.get("spec") or {}).get("restartPolicy") == "Never":
                return None
            due = run.since + self._crash_backoff(run)
            if now < due:
                return due - now
            self._start(pod, run)
        else:
            return None
        return 0.0  # a step was taken: look again at once for the next

    def _enter(self, run: PodRun, stage: str) -> None:
        run.stage = stage
        run.since = self.ctx.clock.now()

    def _blocked(self, pod: Json, run: PodRun) -> float:
        """Note the pod as waiting for a ConfigMap or Secret; seconds until it retries."""
        meta = pod["metadata"]
        self.blocked.setdefault(meta["namespace"], set()).add(
            (meta["namespace"], meta["name"]))
        delay = self._blocked_backoff(run)
        run.blocked_attempts += 1
        return delay

    def _blocked_backoff(self, run: PodRun) -> float:
        d = self.delays
        return float(min(d.mount_retry * 2 ** max(run.blocked_attempts - 1, 0),
                         d.mount_retry_max))

    def _start(self, pod: Json, run: PodRun) -> None:
        errors = env_problems(pod, self.writer.get)
        if errors:
            self._enter(run, CONFIG_ERROR)
            run.config_errors = errors
            self._blocked(pod, run)
            for c in _containers(pod):
                if c.get("name") in errors:
                    self._event(pod, "Normal", "Pulled", f'Container image "{c.get("image")}"'
                                                         " already present on machine")
                    self._event(pod, "Warning", "Failed", f"Error: {errors[c['name']]}")
            return
        run.config_errors = {}
        run.blocked_attempts = 0
        self._enter(run, RUNNING)
        run.started_at = rfc3339()
        key = _key(pod)
        for c in _containers(pod):
            if run.restarts == 0:
                self._event(pod, "Normal", "Pulled", f'Container image "{c.get("image")}"'
                                                     " already present on machine")
            self._event(pod, "Normal", "Created", f"Created container: {c.get('name')}")
            self._event(pod, "Normal", "Started", f"Started container {c.get('name')}")
            self.logs.start(key, run.uid, c.get("name", ""), run.restarts)
            self.logs.write(key, c.get("name", ""), start_message(c, run.restarts))

    def _crash(self, pod: Json, run: PodRun, exit_code: int) -> None:
        self._end_logs(pod, f"exiting with code {exit_code} (simulated crash, "
                            "localcluster.dev/mode: crashloop)")
        run.restarts += 1
        run.last_exit = exit_code
        run.finished_at = rfc3339()
        self._enter(run, CRASH_BACKOFF)
        meta = pod["metadata"]
        for c in _containers(pod):
            self._event(pod, "Warning", "BackOff",
                        f"Back-off restarting failed container {c.get('name')} in pod "
                        f"{meta['name']}_{meta['namespace']}({meta['uid']})")

    def _finish(self, pod: Json, run: PodRun, stage: str, exit_code: int,
                quiet: bool = False) -> None:
        self._end_logs(pod, None if quiet else f"run finished: exit code {exit_code}")
        run.last_exit = exit_code
        run.finished_at = rfc3339()
        self._enter(run, stage)

    def _end_logs(self, pod: Json, last_line: str | None) -> None:
        key = _key(pod)
        for c in _containers(pod):
            if last_line is not None:
                self.logs.write(key, c.get("name", ""), last_line)
            self.logs.end(key, c.get("name", ""))

    def _pull_failed(self, pod: Json) -> None:
        for c in _containers(pod):
            image = full_image(str(c.get("image", "")))
            self._event(pod, "Warning", "Failed", f'Failed to pull image "{c.get("image")}": '
                                                  f'failed to resolve reference "{image}": '
                                                  f"{image}: not found")
        self._event(pod, "Warning", "Failed", "Error: ErrImagePull")

    def _crash_backoff(self, run: PodRun) -> float:
        d = self.delays
        return float(min(d.crash_backoff * 2 ** max(run.restarts - 1, 0), d.crash_backoff_max))

    def _pull_backoff(self, run: PodRun) -> float:
        d = self.delays
        return float(min(d.image_pull_backoff * 2 ** run.pull_attempts, d.crash_backoff_max))

    def _readiness(self, pod: Json, run: PodRun) -> tuple[bool, float | None]:
        if run.stage != RUNNING:
            return False, None
        override = self.ctx.behaviors.ready_override(pod)
        if override is not None:
            return override, None
        delay = self.ctx.behaviors.ready_after(pod)
        if delay is None:
            probed = any(c.get("readinessProbe") for c in _containers(pod))
            delay = self.delays.pod_ready if probed else 0.0
        ready_at = run.since + delay
        now = self.ctx.clock.now()
        if now < ready_at:
            return False, ready_at - now
        return True, None

    def _stop_delay(self, pod: Json) -> float:
        """Seconds the pod's containers take to exit on SIGTERM."""
        delay = self.ctx.behaviors.stop_after(pod)
        return self.delays.container_stop if delay is None else delay

    def _job_run(self, pod: Json) -> JobRun | None:
        profiling = self.profiler.job_run(pod)
        if profiling is not None:
            return profiling
        ref = controller_ref(pod)
        job = None
        if ref is not None and ref.get("kind") == "Job":
            job = self.writer.get(JOBS, pod["metadata"]["namespace"], ref.get("name", ""))
        return self.ctx.behaviors.job_run(pod, job, self.delays.job_pod_duration)

    def _event(self, pod: Json, etype: str, reason: str, message: str) -> None:
        self.events.record(pod, etype, reason, message,
                           host=(pod.get("spec") or {}).get("nodeName", ""))


def _key(pod: Json) -> Key:
    return (pod["metadata"]["namespace"], pod["metadata"]["name"])


def start_message(container: Json, restarts: int) -> str:
    """The first line of a simulated container's log."""
    again = f" (restart {restarts})" if restarts else ""
    return (f"localcluster: container {container.get('name')!r} started{again} from image "
            f"{container.get('image')!r}; the simulated runtime runs no process")


def _containers(pod: Json) -> list[Json]:
    return list((pod.get("spec") or {}).get("containers") or ())


def _node_ip(node: Json) -> str:
    for address in (node.get("status") or {}).get("addresses") or ():
        if address.get("type") == "InternalIP":
            return str(address.get("address"))
    return "127.0.0.1"
