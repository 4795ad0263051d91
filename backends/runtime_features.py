"""Rendering gated by the Dynamo runtime version a component declares
(`runtimeVersionOverride`, `MAJOR.MINOR.PATCH`).

The original enables some defaults only from a runtime version on, and keeps them off when
the version is unknown: the frontend's startup probe (1.6.0), which lets the frontend finish
its NATS and etcd connections before liveness may restart it, and the worker's liveness
failure threshold of 3 instead of 1 (1.5.0). The original also reads the version from the
image tag; here only the declared version counts, so a graph that does not declare one
renders as it always has (an operator upgrade rewrites nothing).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from backends import constants

Json = dict[str, Any]

__all__ = ["FRONTEND_STARTUP_PROBE", "INCREASED_WORKER_FAILURE_THRESHOLD", "Gate",
           "apply_runtime_gates", "parse_version"]

Version = tuple[int, int, int]

#: The override's form (as the DGDR's rule states it): MAJOR.MINOR.PATCH, no `v`, prerelease
#: or build metadata.
_VERSION = re.compile(r"(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})")


@dataclass(frozen=True)
class Gate:
    """A rendering default enabled from a runtime version on."""

    name: str
    min_version: Version

    def enabled(self, version: Version | None) -> bool:
        """On for a known version at or above the threshold; off when unknown."""
        return version is not None and version >= self.min_version


FRONTEND_STARTUP_PROBE = Gate("FrontendStartupProbe", (1, 6, 0))
INCREASED_WORKER_FAILURE_THRESHOLD = Gate("IncreasedWorkerFailureThreshold", (1, 5, 0))

_WORKERS = (constants.WORKER, constants.PREFILL, constants.DECODE)


def parse_version(text: str | None) -> Version | None:
    """`MAJOR.MINOR.PATCH`, or None when `text` is not one (the gates then stay off, as for
    an unknown version: a graph whose override does not parse renders as before)."""
    if not text:
        return None
    match = _VERSION.fullmatch(text)
    if match is None:
        return None
    major, minor, patch = (int(g) for g in match.groups())
    return major, minor, patch


def apply_runtime_gates(container: Json, component_type: str | None,
                        version: Version | None) -> None:
    """The version-gated defaults of a component's generated main container, in place."""
    if component_type == constants.FRONTEND and FRONTEND_STARTUP_PROBE.enabled(version):
        container["startupProbe"] = {
            "httpGet": {"path": "/live", "port": constants.FRONTEND_PORT_NAME},
            "periodSeconds": 10,
            "timeoutSeconds": 1,
            "failureThreshold": 30,
        }
    if component_type in _WORKERS and INCREASED_WORKER_FAILURE_THRESHOLD.enabled(version):
        liveness = container.get("livenessProbe")
        if isinstance(liveness, dict):
            liveness["failureThreshold"] = 3
