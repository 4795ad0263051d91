"""The DGDR profiler for nodesim's kubelets: what the profiler image and its output copier do.

A profiling pod (the in-process simulation's rule: a `profiler` container with
`--profile-config` or `--config`) runs for the profiler's duration and ends as the rule of
`hack.localcluster.simulation.profiler` says (feasible SLA: exit 0; infeasible: 1); as it
ends, its output ConfigMap `dgdr-output-<dgdr>` is written through the API, before the pod's
status says it has ended, so a finished Job always has its output.
"""

from __future__ import annotations

import contextlib
from typing import Any

from controller.client import KubeClient
from controller.errors import AlreadyExists
from controller.resource import Resource
from hack.localcluster.simulation.behaviors import JOB_DURATION, JobRun
from hack.localcluster.simulation.objects import annotations_of
from hack.localcluster.simulation.profiler import _dgdr_of, run_output

CONFIG_MAPS = Resource("", "v1", "configmaps", "ConfigMap")
#: The in-process simulation's profiler run (`Delays.profiler_run`).
PROFILER_RUN = 0.2

Json = dict[str, Any]


def profiling_run(pod: Json, duration: float = PROFILER_RUN) -> JobRun | None:
    """How a profiling pod runs (None for any other pod)."""
    outcome = run_output(pod)
    if outcome is None:
        return None
    value = annotations_of(pod).get(JOB_DURATION)
    if value:
        with contextlib.suppress(ValueError):
            duration = float(value)
    return JobRun("succeed" if outcome[0] else "fail", duration)


async def write_output(client: KubeClient, pod: Json) -> None:
    """The output ConfigMap of a profiling pod that has ended, as the copier writes it."""
    outcome = run_output(pod)
    if outcome is None:
        return
    dgdr = _dgdr_of(pod)
    namespace = str(pod["metadata"]["namespace"])
    body = {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"dgdr-output-{dgdr}", "namespace": namespace,
                         "labels": {"dgdr.nvidia.com/name": dgdr,
                                    "nvidia.com/managed-by": "dynamo-operator"}},
            "data": outcome[1]}
    try:
        await client.create(CONFIG_MAPS, body)
    except AlreadyExists:  # a retried pod's earlier run wrote it: this run's output replaces it
        await client.patch(CONFIG_MAPS, namespace, f"dgdr-output-{dgdr}",
                           {"data": outcome[1]})
