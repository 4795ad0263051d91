"""How simulated pods behave, as tests choose: readiness, crash loops, image pulls, job results,
how long a container takes to become ready and to stop.

Each behaviour can be set on the pod itself (an annotation, which also works from kubectl and
in e2e runs) or in-process by a test through `Behaviors` (by pod name or label selector). An
in-process rule wins over an annotation; among rules, the latest wins. The two delays
(`READY_AFTER`, `STOP_AFTER`) fall back on the cluster-wide defaults of the simulation's
config (`Delays.pod_ready`, `Delays.container_stop`; nodesim's `PodDelays`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..selectors import LabelSelector
from .objects import annotations_of, labels_of, name_of, namespace_of

Json = dict[str, Any]

#: "false" keeps the pod's containers unready (running); "true" forces them ready once running.
READY = "localcluster.dev/ready"
#: "crashloop": containers exit after a short run and restart with growing back-off.
#: "image-pull-failure": the image never pulls (ErrImagePull, then ImagePullBackOff).
MODE = "localcluster.dev/mode"
#: On a Job (or its pod template, or a bare pod with restartPolicy Never/OnFailure):
#: "succeed" (default for Jobs) or "fail"; and how long the pod runs, in seconds.
JOB_OUTCOME = "localcluster.dev/job-outcome"
JOB_DURATION = "localcluster.dev/job-duration"
#: "ignore-sigterm": on a graceful delete the containers run on until the grace period ends
#: and are killed (exit code 137); "exit" (default): they stop at once on SIGTERM.
STOP = "localcluster.dev/stop"

#: Seconds from the container's (latest) start until its readiness probe passes; it applies to
#: a pod with or without a probe (the cluster-wide default, `Delays.pod_ready`, only to pods
#: with one). Rolling updates become observable with a few seconds here.
READY_AFTER = "localcluster.dev/ready-after"
#: Seconds a container takes to exit after SIGTERM (draining): the pod stays Terminating that
#: long. Longer than the pod's grace period (terminationGracePeriodSeconds, or the delete's
#: gracePeriodSeconds) it is killed when the grace ends (exit code 137).
STOP_AFTER = "localcluster.dev/stop-after"

MODES = ("run", "crashloop", "image-pull-failure")
OUTCOMES = ("succeed", "fail")
STOPS = ("exit", "ignore-sigterm")


@dataclass(frozen=True)
class _Rule:
    namespace: str
    name: str | None
    selector: LabelSelector | None
    value: str

    def matches(self, obj: Json) -> bool:
        if namespace_of(obj) != self.namespace:
            return False
        if self.name is not None:
            return name_of(obj) == self.name
        return self.selector is None or self.selector.matches(labels_of(obj))


@dataclass(frozen=True)
class JobRun:
    """What a run-to-completion pod does: its outcome and how long it runs."""

    outcome: str
    duration: float


class Behaviors:
    """The in-process switches; `changed` is called after every change so pods re-sync."""

    def __init__(self, changed: Callable[[], None] | None = None) -> None:
        self._ready: list[_Rule] = []
        self._mode: list[_Rule] = []
        self._jobs: list[_Rule] = []
        self._stop: list[_Rule] = []
        self._ready_after: list[_Rule] = []
        self._stop_after: list[_Rule] = []
        self.changed = changed or (lambda: None)

    # --- the test API --------------------------------------------------------------------

    def set_ready(self, namespace: str, ready: bool, *, name: str | None = None,
                  selector: str | None = None) -> None:
        """Force readiness of one pod (`name`) or of pods matching `selector` (all if neither)."""
        self._ready.append(_rule(namespace, name, selector, "true" if ready else "false"))
        self.changed()

    def set_mode(self, namespace: str, mode: str, *, name: str | None = None,
                 selector: str | None = None) -> None:
        """Put pods in a failure mode (see MODES); "run" switches them back to normal."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        self._mode.append(_rule(namespace, name, selector, mode))
        self.changed()

    def set_stop(self, namespace: str, stop: str, *, name: str | None = None,
                 selector: str | None = None) -> None:
        """How pods react to SIGTERM on a graceful delete (see STOPS)."""
        if stop not in STOPS:
            raise ValueError(f"stop must be one of {STOPS}")
        self._stop.append(_rule(namespace, name, selector, stop))
        self.changed()

    def set_ready_after(self, namespace: str, seconds: float, *, name: str | None = None,
                        selector: str | None = None) -> None:
        """Pods become ready `seconds` after their container starts (see READY_AFTER)."""
        self._ready_after.append(_rule(namespace, name, selector, str(_seconds(seconds))))
        self.changed()

    def set_stop_after(self, namespace: str, seconds: float, *, name: str | None = None,
                       selector: str | None = None) -> None:
        """Pods' containers take `seconds` to exit on SIGTERM (see STOP_AFTER)."""
        self._stop_after.append(_rule(namespace, name, selector, str(_seconds(seconds))))
        self.changed()

    def set_job_outcome(self, namespace: str, job: str, outcome: str,
                        duration: float | None = None) -> None:
        """How the pods of Job `job` end, and (optionally) how long each runs."""
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {OUTCOMES}")
        value = outcome if duration is None else f"{outcome}:{duration}"
        self._jobs.append(_Rule(namespace, job, None, value))
        self.changed()

    def clear(self) -> None:
        self._ready.clear()
        self._mode.clear()
        self._jobs.clear()
        self._stop.clear()
        self._ready_after.clear()
        self._stop_after.clear()
        self.changed()

    # --- what the kubelet asks -----------------------------------------------------------

    def ready_override(self, pod: Json) -> bool | None:
        value = _latest(self._ready, pod)
        if value is None:
            value = annotations_of(pod).get(READY)
        if value is None:
            return None
        return value.strip().lower() == "true"

    def mode(self, pod: Json) -> str:
        value = _latest(self._mode, pod) or annotations_of(pod).get(MODE, "run")
        return value if value in MODES else "run"

    def ignores_sigterm(self, pod: Json) -> bool:
        value = _latest(self._stop, pod) or annotations_of(pod).get(STOP, "exit")
        return value == "ignore-sigterm"

    def ready_after(self, pod: Json) -> float | None:
        """Seconds from container start to ready the pod asks for (None: the default)."""
        return _delay(_latest(self._ready_after, pod), annotations_of(pod).get(READY_AFTER))

    def stop_after(self, pod: Json) -> float | None:
        """Seconds from SIGTERM to exit the pod asks for (None: the default)."""
        return _delay(_latest(self._stop_after, pod), annotations_of(pod).get(STOP_AFTER))

    def job_run(self, pod: Json, job: Json | None, default_duration: float) -> JobRun | None:
        """The run of a pod that runs to completion, or None for one that runs until deleted."""
        policy = (pod.get("spec") or {}).get("restartPolicy", "Always")
        if policy == "Always":
            return None
        outcome: str | None = None
        duration: float | None = None
        if job is not None:
            value = _latest(self._jobs, job)
            if value is not None:
                outcome, _, dur = value.partition(":")
                duration = float(dur) if dur else None
        sources = [annotations_of(pod)] + ([annotations_of(job)] if job is not None else [])
        for found in sources:
            if outcome is None and found.get(JOB_OUTCOME) in OUTCOMES:
                outcome = found[JOB_OUTCOME]
            if duration is None and found.get(JOB_DURATION):
                with contextlib.suppress(ValueError):
                    duration = float(found[JOB_DURATION])
        if outcome is None:
            if job is None:
                return None
            outcome = "succeed"
        return JobRun(outcome, default_duration if duration is None else duration)


def _rule(namespace: str, name: str | None, selector: str | None, value: str) -> _Rule:
    return _Rule(namespace, name, LabelSelector.parse(selector) if selector else None, value)


def _seconds(value: float) -> float:
    seconds = float(value)
    if not seconds >= 0:  # negative or NaN
        raise ValueError(f"seconds must be a number >= 0, not {value!r}")
    return seconds


def _delay(rule: str | None, annotation: str | None) -> float | None:
    """The rule's delay, else the annotation's; an unreadable or negative one counts as unset
    (a typo in a manifest should not stop the pod)."""
    for value in (rule, annotation):
        if value is None:
            continue
        try:
            return _seconds(float(value.strip().removesuffix("s")))
        except ValueError:
            continue
    return None


def _latest(rules: list[_Rule], obj: Json) -> str | None:
    for rule in reversed(rules):
        if rule.matches(obj):
            return rule.value
    return None
