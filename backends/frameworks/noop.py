"""The backend of components that run no inference engine (frontend, planner...): it changes
nothing."""

from __future__ import annotations

from dataclasses import dataclass

from backends.frameworks.base import BackendContext, Json
from backends.frameworks.registry import NOOP, register


@dataclass(frozen=True)
class NoopBackend:
    """Leaves the pod as the component defaults made it."""

    name: str = NOOP
    default_cache_mount: str | None = None

    def update_container(self, container: Json, ctx: BackendContext) -> None:
        pass

    def update_pod_spec(self, pod_spec: Json, ctx: BackendContext) -> None:
        pass


register(NoopBackend())
