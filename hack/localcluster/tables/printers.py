"""The built-in printers by (API group, kind), as pkg/printers/internalversion registers them.

The server always prints wide, so priority-1 cells are present and clients drop them unless
`-o wide`. Kinds without a printer get the default convertor (`default_table`).
"""

from __future__ import annotations

from . import (
    printers_apps,
    printers_autoscaling,
    printers_batch,
    printers_cluster,
    printers_cluster_apis,
    printers_core,
    printers_events,
    printers_networking,
    printers_pod,
    printers_storage,
)
from .columns import Printer

__all__ = ["PRINTERS"]

PRINTERS: dict[tuple[str, str], Printer] = {
    **printers_pod.PRINTERS,
    **printers_core.PRINTERS,
    **printers_events.PRINTERS,
    **printers_storage.PRINTERS,
    **printers_apps.PRINTERS,
    **printers_batch.PRINTERS,
    **printers_networking.PRINTERS,
    **printers_autoscaling.PRINTERS,
    **printers_cluster.PRINTERS,
    **printers_cluster_apis.PRINTERS,
}
