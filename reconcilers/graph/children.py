"""What the graph controller watches beside its graphs, and what it says about pruned
children."""

from __future__ import annotations

from typing import Any

from backends.hub_graph import HubGraph
from controller.events import EventRecorder
from reconcilers.machinery.children import Synced
from reconcilers.machinery.resources import SCALING_ADAPTERS
from reconcilers.machinery.spec_views import inputs_of

Json = dict[str, Any]


def claimed_names(obj: Json) -> list[str]:
    """Index of graphs by the `<namespace>/<name>` of PVCs they use without creating them, so
    that such a PVC appearing wakes the graphs waiting for it."""
    namespace = obj["metadata"].get("namespace", "")
    # `pvcs` exist in v1alpha1 only: read from the graph's render inputs. A graph whose saved
    # ones do not fit their model fails validation, and waits for no claim.
    try:
        pvcs = inputs_of(obj).pvcs
    except ValueError:
        return []
    return [f"{namespace}/{p.name}" for p in pvcs if p.name and not p.create]


async def report_orphaned_adapters(recorder: EventRecorder, live: Json,
                                   graph: HubGraph, synced: Synced) -> None:
    """An event for each pruned scaling adapter whose service left the graph."""
    services = {name for name, _ in graph.components()}
    for child in synced.pruned.get((SCALING_ADAPTERS.api_version, SCALING_ADAPTERS.kind), []):
        service = ((child.get("spec") or {}).get("dgdRef") or {}).get("serviceName", "")
        if service not in services:
            await recorder.normal(
                live, "AdapterDeleted",
                f"Deleted orphaned scaling adapter {child['metadata']['name']} for removed "
                f"service {service}")
