"""`dynamo_operator_graph_gpus{namespace,graph,state}`: the GPUs each graph's pods take, state
`requested` (at the desired replicas) or `running` (of the ready replicas), read from the
graphs' `status.gpus` in the shared cache at each scrape (no state of its own). Ours alone:
the original has no such series."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from controller.cache import Cache
from reconcilers.machinery.resources import GRAPH_DEPLOYMENTS

__all__ = ["GraphGpuCollector"]

GRAPH_GPUS = "dynamo_operator_graph_gpus"
STATES = ("requested", "running")


class GraphGpuCollector(Collector):
    """The GPU gauge of every cached graph with `status.gpus`, outside skipped namespaces."""

    def __init__(self, cache: Cache, skip_namespace: Callable[[str], bool]) -> None:
        self.cache = cache
        self.skip_namespace = skip_namespace

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(GRAPH_GPUS, "GPUs a graph's pods request and run",
                                   labels=["namespace", "graph", "state"])
        for informer in self.cache.informers:
            if informer.resource != GRAPH_DEPLOYMENTS or informer.field_selector:
                continue
            for obj in sorted(informer.store.list(), key=_key):
                namespace, name = _key(obj)
                gpus = (obj.get("status") or {}).get("gpus")
                if self.skip_namespace(namespace) or not isinstance(gpus, dict):
                    continue
                for state in STATES:
                    value = gpus.get(state)
                    if isinstance(value, int):
                        family.add_metric([namespace, name, state], value)
            break
        yield family


def _key(obj: dict[str, object]) -> tuple[str, str]:
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    return str(meta.get("namespace", "")), str(meta.get("name", ""))
