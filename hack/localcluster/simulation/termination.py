"""How the simulated kubelet ends a deleted pod's containers, in the real kubelet's steps.

On a graceful delete the kubelet sends each running container SIGTERM (a `Killing` event) and
waits for it to exit, at most the pod's `deletionGracePeriodSeconds` (the delete's grace, else
the pod's `terminationGracePeriodSeconds`), then kills it (exit code 137). A simulated service
container exits on SIGTERM with code 0 after its stop time: `localcluster.dev/stop-after`
seconds (or a test's `Behaviors.set_stop_after`), else `Delays.container_stop` (a drain: the
pod stays Terminating, and endpoints show it serving, not ready and terminating meanwhile); a
stop time beyond the grace ends in the kill. A run-to-completion (Job) container dies of the
signal (143, which the Job controller counts as a failure, as the real one counts deleted
pods); a container whose pod says `localcluster.dev/stop: ignore-sigterm` (or a test's
`Behaviors.set_stop`) runs on until the grace period ends and is killed (137).

Once they have stopped, the pod's status shows them `terminated`, Ready and ContainersReady
False, and a terminal phase (kubelet 1.27 and later: Succeeded when every container exited 0,
else Failed); `Delays.pod_termination` later the kubelet removes the pod (a delete with grace
0). Watchers, and `kubectl wait --for=condition=Ready=false`, see that step before the pod
goes.
"""

from __future__ import annotations

from typing import Any

Json = dict[str, Any]

#: A process ended by SIGTERM (128 + 15) or killed at the end of the grace (128 + 9).
SIGTERM_EXIT = 143
SIGKILL_EXIT = 137
#: What a pod's grace period is when the delete did not record one.
DEFAULT_GRACE = 30.0


def grace_period(pod: Json) -> float:
    """The grace the delete gave the pod (metadata.deletionGracePeriodSeconds)."""
    grace = (pod.get("metadata") or {}).get("deletionGracePeriodSeconds")
    if isinstance(grace, int) and not isinstance(grace, bool):
        return float(max(grace, 0))
    return DEFAULT_GRACE


def stop_plan(*, ignores_sigterm: bool, runs_to_completion: bool, grace: float,
              stop_delay: float) -> tuple[float, int]:
    """Seconds from SIGTERM until the containers have stopped, and their exit code: killed
    when the grace ends first."""
    if ignores_sigterm or stop_delay > grace:
        return grace, SIGKILL_EXIT
    return stop_delay, SIGTERM_EXIT if runs_to_completion else 0


def stop_message(exit_code: int, grace: float) -> str:
    """The container's last log line."""
    if exit_code == SIGKILL_EXIT:
        return (f"still running {grace:g}s after SIGTERM (the grace period): killed "
                f"(exit code {SIGKILL_EXIT})")
    if exit_code == SIGTERM_EXIT:
        return f"terminated by SIGTERM (exit code {SIGTERM_EXIT})"
    return "received SIGTERM: shutting down cleanly (exit code 0)"
