"""What a backend framework strategy is: the interface every backend module implements."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from api.v1alpha1 import Resources
from backends.multinode import MultinodeDeployer, Role

Json = dict[str, Any]

__all__ = ["Backend", "BackendContext", "remove_probes"]


@dataclass(frozen=True, kw_only=True)
class BackendContext:
    """What a backend may look at while adjusting one role's pod."""

    role: Role
    #: Name the multinode host names are built from (the service, or the DCD name).
    host_name: str
    deployer: MultinodeDeployer
    resources: Resources | None
    #: Mount path of the component's first compilation-cache volume, if any.
    cache_mount: str | None
    #: Secret with the SSH keys of multinode MPI launches.
    mpi_secret: str
    #: The pod carries `DYNAMO_RANK` and `DYNAMO_LEADER_ADDRESS`
    #: (`backends.portable_topology`), which generated launches then use.
    portable_topology: bool = False


class Backend(Protocol):
    """One inference framework (vLLM, SGLang, TRT-LLM...): how its pods differ from the
    component defaults. Implementations edit the dicts they are given in place."""

    @property
    def name(self) -> str:
        """Registry key, and the value of `backendFramework` that selects the backend."""
        ...

    @property
    def default_cache_mount(self) -> str | None:
        """Compilation-cache mount path used when a cache volume gives none."""
        ...

    def update_container(self, container: Json, ctx: BackendContext) -> None:
        """Adjust the main container: multinode commands, probes, environment."""
        ...

    def update_pod_spec(self, pod_spec: Json, ctx: BackendContext) -> None:
        """Adjust the pod spec after the main container is in place (volumes...)."""
        ...


def remove_probes(container: Json, *names: str) -> None:
    """Drop probes (by field name) from a container, in place."""
    for name in names or ("livenessProbe", "readinessProbe", "startupProbe"):
        container.pop(name, None)
