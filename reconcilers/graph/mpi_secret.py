"""The MPI SSH Secret a graph's TRT-LLM multinode services mount: the source appearing (or
changing, or its copy being deleted) wakes the graphs that need it (the reading is
`reconcilers.machinery.mpi_secret`'s)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from backends.settings import OperatorSettings
from controller.informer import Informer
from controller.reconcile import Request

Json = dict[str, Any]

def secret_mapper(graphs: Informer, settings: OperatorSettings
                  ) -> Callable[[Json], list[Request]]:
    """A Secret event of the MPI Secret's name wakes the graphs that need it: all of them for
    the source, those of its namespace for a copy."""

    def mapper(obj: Json) -> list[Request]:
        meta = obj.get("metadata") or {}
        if meta.get("name") != settings.mpi_run_secret_name:
            return []
        namespace = meta.get("namespace", "")
        is_source = bool(settings.mpi_run_secret_namespace) and (
            namespace == settings.mpi_run_secret_namespace)
        return [Request(g["metadata"].get("namespace", ""), g["metadata"]["name"])
                for g in graphs.store.list()
                if (is_source or g["metadata"].get("namespace") == namespace)
                and _needs_secret(g)]

    return mapper


def _needs_secret(graph: Json) -> bool:
    spec = graph.get("spec") or {}
    if spec.get("backendFramework") != "trtllm":
        return False
    components = spec.get("components")
    return isinstance(components, list) and any(_nodes(c) > 1 for c in components)


def _nodes(service: Any) -> int:
    """As `backends.multinode.node_count`, on the raw object (an empty section: 2 nodes)."""
    multinode = service.get("multinode") if isinstance(service, dict) else None
    if not isinstance(multinode, dict):
        return 1
    count = multinode.get("nodeCount")
    return 2 if count is None else int(count)
