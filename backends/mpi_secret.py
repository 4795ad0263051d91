"""The MPI SSH key Secret of TRT-LLM multinode services, copied into the graph's namespace.

TRT-LLM's leader launches `mpirun` over SSH into its workers; every pod of such a service
mounts the Secret named by `--mpi-run-ssh-secret-name`. The operator keeps it in
`--mpi-run-ssh-secret-namespace` and copies it into each namespace that runs such a service. The
copy carries a digest of the source's content in a label, since the operator's cache holds
Secrets without their data: a changed source gives a new digest, and the copy is rewritten.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from backends import constants
from backends.hub_component import HubComponent
from backends.hub_graph import HubGraph
from backends.multinode import node_count
from backends.settings import OperatorSettings

Json = dict[str, Any]

__all__ = ["DIGEST_LABEL", "component_needs_mpi_secret", "mpi_secret_copy", "mpi_services",
           "source_namespace"]

TRTLLM = "trtllm"
#: Label of a copy: digest of the source's type and data.
DIGEST_LABEL = "nvidia.com/mpi-ssh-secret-digest"


def mpi_services(graph: HubGraph) -> list[str]:
    """Services whose pods mount the MPI SSH Secret: TRT-LLM across several nodes."""
    if graph.model.spec.backend_framework != TRTLLM:
        return []
    return [name for name, spec in graph.components() if node_count(spec) > 1]


def component_needs_mpi_secret(hub: HubComponent) -> bool:
    """A DCD of its own running TRT-LLM across nodes (a graph's DCDs get it from the graph)."""
    spec = hub.model.spec
    return spec.backend_framework == TRTLLM and node_count(spec) > 1 and not hub.graph_name()


def source_namespace(settings: OperatorSettings, namespace: str) -> str:
    """Where the Secret is kept ("" in the settings: each namespace holds its own)."""
    return settings.mpi_run_secret_namespace or namespace


def mpi_secret_copy(source: Json, namespace: str) -> Json:
    """The copy of `source` for `namespace`: its type and data, our labels, no owner."""
    content = {"type": source.get("type") or "Opaque", "data": source.get("data") or {}}
    digest = hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:32]
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": str(source["metadata"]["name"]),
            "namespace": namespace,
            "labels": {"app.kubernetes.io/managed-by": constants.MANAGED_BY,
                       DIGEST_LABEL: digest},
        },
        **content,
    }
